#include "wavekit/preload/run.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/process.h"

namespace wavekit::preload {

Device default_device() {
  std::error_code error;
  return std::filesystem::exists("/dev/kfd", error) ? Device::hsa : Device::emulator;
}

namespace {

// The path list `variable` holds in this process's environment without the entries equal to
// `dropped` (the emulator's runtime directory: under --device kfd, ROCm's runtime must load).
std::string without_path(const std::string& variable, const std::string& dropped) {
  // "dir", "dir/" and "dir/." name the same directory.
  const auto normal = [](std::string_view path) {
    std::string text = std::filesystem::path(path).lexically_normal().string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
  };
  const char* old = std::getenv(variable.c_str());
  std::string kept;
  for (std::string_view rest = old ? old : ""; !rest.empty();) {
    const std::string_view entry = rest.substr(0, rest.find(':'));
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
    if (entry.empty() || normal(entry) == normal(dropped)) continue;
    kept += (kept.empty() ? "" : ":") + std::string(entry);
  }
  return kept;
}

// What a run writes into --tool-out: per dispatch KERNEL.N.json (+ .svg), or a directory
// KERNEL.N of per-wave files, and while a dispatch runs a subdirectory k<hex> of its probes.
bool is_run_result(const std::filesystem::directory_entry& entry) {
  std::string name = entry.path().filename().string();
  if (entry.is_directory() && name.size() > 1 && name[0] == 'k' &&
      name.find_first_not_of("0123456789abcdef", 1) == std::string::npos)
    return true;
  bool stripped = false;
  for (const char* extension : {".json", ".svg"})
    if (!stripped && entry.is_regular_file() && name.ends_with(extension)) {
      name.resize(name.size() - std::string_view(extension).size());
      stripped = true;
    }
  // KERNEL.N without an extension is a directory of per-wave files; a user's file so named is
  // not ours.
  if (!stripped && !entry.is_directory()) return false;
  const std::size_t dot = name.rfind('.');
  return dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
         name.find_first_not_of("0123456789", dot + 1) == std::string::npos;
}

// --tool-out holds this run's results alone: an earlier run with more dispatches would leave
// files this one does not overwrite, and they would read as this run's. They are removed, and
// the user is told; other files stay.
void remove_earlier_results(const std::string& directory) {
  std::error_code missing;
  if (directory.empty() || !std::filesystem::is_directory(directory, missing)) return;
  std::vector<std::filesystem::path> earlier;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (is_run_result(entry)) earlier.push_back(entry.path());
  for (const std::filesystem::path& path : earlier) std::filesystem::remove_all(path);
  if (!earlier.empty())
    std::fprintf(stderr, "wavekit run: --tool-out %s: removed %zu result%s of an earlier run\n",
                 directory.c_str(), earlier.size(), earlier.size() == 1 ? "" : "s");
}

// The reports of every process that used HSA, as one summary: the started process's first,
// then the others by pid; "processes" says how many reported.
nlohmann::json merge_reports(const std::filesystem::path& directory, pid_t root) {
  std::vector<nlohmann::json> reports;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() != ".json") continue;
    try {
      reports.push_back(nlohmann::json::parse(read_file(entry.path().string())));
    } catch (const std::exception&) {
      // A process killed while writing its report: its dispatches are not reported.
    }
  }
  if (reports.empty()) return nullptr;
  std::sort(reports.begin(), reports.end(),
            [root](const nlohmann::json& a, const nlohmann::json& b) {
              const long pa = a.value("pid", 0L), pb = b.value("pid", 0L);
              if ((pa == root) != (pb == root)) return pa == root;
              return pa < pb;
            });
  nlohmann::json merged = reports.front();
  merged["processes"] = reports.size();
  for (auto& dispatch : merged["dispatches"]) dispatch["pid"] = merged.value("pid", 0L);
  const auto append_new = [](nlohmann::json& into, const nlohmann::json& items) {
    if (!items.is_array()) return;
    if (!into.is_array()) into = nlohmann::json::array();
    for (const auto& item : items)
      if (std::find(into.begin(), into.end(), item) == into.end()) into.push_back(item);
  };
  for (std::size_t i = 1; i < reports.size(); ++i) {
    const nlohmann::json& other = reports[i];
    for (auto dispatch : other.value("dispatches", nlohmann::json::array())) {
      dispatch["pid"] = other.value("pid", 0L);
      merged["dispatches"].push_back(std::move(dispatch));
    }
    append_new(merged["objects"], other.value("objects", nlohmann::json::array()));
    append_new(merged["messages"], other.value("messages", nlohmann::json::array()));
    append_new(merged["kernels_not_selected"],
               other.value("kernels_not_selected", nlohmann::json::array()));
    append_new(merged["kernels_deferred"],
               other.value("kernels_deferred", nlohmann::json::array()));
    // Dispatch counts add up; each process's instrumented positions are its own, named by pid.
    const nlohmann::json kernels = other.value("kernels", nlohmann::json::object());
    for (const auto& [name, tally] : kernels.items()) {
      nlohmann::json& into = merged["kernels"][name];
      into["dispatches"] =
          into.value("dispatches", std::uint64_t{0}) + tally.value("dispatches", std::uint64_t{0});
      into["instrumented"] = into.value("instrumented", std::uint64_t{0}) +
                             tally.value("instrumented", std::uint64_t{0});
      const std::string ranges = tally.value("instrumented_dispatches", "");
      if (ranges.empty()) continue;
      const std::string before = into.value("instrumented_dispatches", "");
      into["instrumented_dispatches"] = before + (before.empty() ? "" : "; ") + "pid " +
                                        std::to_string(other.value("pid", 0L)) + ": " + ranges;
    }
  }
  return merged;
}

}  // namespace

RunResult run_application(const RunOptions& options, const Installation& installation) {
  if (options.command.empty()) throw Error("no application to run");
  if (!std::filesystem::exists(installation.preload_library))
    throw Error("the preload library is missing: " + installation.preload_library);

  ShimConfig shim = options.shim;
  remove_earlier_results(shim.tool_out);
  std::string report_template =
      (std::filesystem::temp_directory_path() / "wavekit-run-XXXXXX").string();
  if (!mkdtemp(report_template.data()))
    throw Error("cannot create a directory for the application's reports in " +
                std::filesystem::temp_directory_path().string() + ": " + std::strerror(errno));
  const std::filesystem::path reports = report_template;
  shim.report_directory = reports.string();

  std::map<std::string, std::string> environment = config_to_environment(shim);
  environment["LD_PRELOAD"] = prepend_path("LD_PRELOAD", installation.preload_library);
  if (options.device == Device::kfd) {
    if (installation.kfd_library.empty() || !std::filesystem::exists(installation.kfd_library))
      throw Error("--device kfd: the emulated KFD library is missing" +
                  (installation.kfd_library.empty() ? std::string(" (not built)")
                                                    : ": " + installation.kfd_library));
    // The device first, so that every library the application loads (ROCm's runtime and
    // thunk) reaches it; ROCm's runtime, not the emulator's, from the library path.
    environment["LD_PRELOAD"] = installation.kfd_library + ":" + environment["LD_PRELOAD"];
    environment["LD_LIBRARY_PATH"] =
        without_path("LD_LIBRARY_PATH", installation.emulator_runtime_dir);
    if (!options.emulated_target.empty())
      environment["WAVEKIT_KFD_TARGET"] = options.emulated_target;
  }
  if (options.device == Device::emulator) {
    environment["LD_LIBRARY_PATH"] =
        prepend_path("LD_LIBRARY_PATH", installation.emulator_runtime_dir);
    if (!options.emulated_target.empty())
      environment["WAVEKIT_EMU_TARGET"] = options.emulated_target;
  }

  ChildProgram program;
  program.command = options.command;
  program.environment = std::move(environment);
  program.own_pid_variable = "WAVEKIT_ROOT_PID";
  program.tool = "wavekit run";
  program.stdout_file = options.stdout_file;
  program.stderr_file = options.stderr_file;
  program.timeout_seconds = options.timeout_seconds;
  const ProgramExit ended = run_program(program);
  RunResult result;
  result.timed_out = ended.timed_out;
  result.signal = ended.signal;
  result.exit_status = ended.status;
  result.summary = merge_reports(reports, ended.pid);
  std::error_code ignored;
  std::filesystem::remove_all(reports, ignored);
  return result;
}

}  // namespace wavekit::preload
