// `wavekit run`: instrument an unmodified application and run it.
#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "wavekit/cli/options.h"
#include "wavekit/preload/run.h"
#include "wavekit/preload/selection.h"
#include "wavekit/preload/substitution.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/install.h"
#include "wavekit/support/process.h"

namespace {

using wavekit::cli::UsageError;
namespace preload = wavekit::preload;

void print_summary(const preload::RunResult& result, const std::string& tool) {
  const nlohmann::json& summary = result.summary;
  if (result.signal)
    std::cerr << "wavekit run: the application was killed by "
              << wavekit::describe_signal(result.signal) << "\n";
  if (summary.is_null()) {
    std::cerr << (result.signal
                      ? "wavekit run: it left no report (it died before its report was written)\n"
                      : "wavekit run: the application left no report (did it use HSA?)\n");
    return;
  }
  std::cerr << "\nwavekit run: " << tool;
  if (summary.value("processes", 1) > 1)
    std::cerr << " (" << summary["processes"].get<std::size_t>() << " processes reported)";
  std::cerr << "\n";
  // Kernels rewritten at their first dispatch come one entry each: one line per object and
  // origin, with what the rewrites cost.
  struct ObjectLine {
    std::vector<std::string> kernels;
    bool at_dispatch = false;
    double rewrite_ms = 0, load_ms = 0;
  };
  std::vector<std::pair<std::string, ObjectLine>> objects;
  for (const auto& object : summary.value("objects", nlohmann::json::array())) {
    const std::string key =
        object.value("original_sha256", "") + "\n" + object.value("origin", "?");
    auto line = std::find_if(objects.begin(), objects.end(),
                             [&](const auto& entry) { return entry.first == key; });
    if (line == objects.end()) line = objects.insert(objects.end(), {key, ObjectLine{}});
    for (const auto& kernel : object.value("kernels", nlohmann::json::array()))
      line->second.kernels.push_back(kernel.get<std::string>());
    line->second.at_dispatch = line->second.at_dispatch || object.contains("first_dispatch");
    line->second.rewrite_ms += object.value("rewrite_ms", 0.0);
    line->second.load_ms += object.value("load_ms", 0.0);
  }
  for (const auto& [key, line] : objects) {
    std::cerr << "  instrumented code object (" << key.substr(key.find('\n') + 1) << "): kernels";
    for (const std::string& kernel : line.kernels) std::cerr << " " << kernel;
    if (line.at_dispatch)
      std::cerr << (line.kernels.size() == 1 ? ", at its first instrumented dispatch ("
                                             : ", each at its first instrumented dispatch (")
                << "rewrite " << static_cast<std::uint64_t>(line.rewrite_ms + 0.5) << " ms, load "
                << static_cast<std::uint64_t>(line.load_ms + 0.5) << " ms)";
    std::cerr << "\n";
  }
  // One line per kernel: programs that dispatch a kernel hundreds of times stay readable.
  struct KernelLine {
    std::size_t dispatches = 0, failed = 0;
    std::uint64_t waves = 0;
    std::string first_file;
  };
  std::map<std::string, KernelLine> kernels;
  const nlohmann::json tallies = summary.value("kernels", nlohmann::json::object());
  for (const auto& dispatch : summary.value("dispatches", nlohmann::json::array())) {
    KernelLine& line = kernels[dispatch.value("kernel", "?")];
    ++line.dispatches;
    if (dispatch.contains("error")) {
      ++line.failed;
      continue;
    }
    line.waves += dispatch.value("waves", std::uint64_t{0});
    if (line.first_file.empty() && dispatch.contains("file"))
      line.first_file = dispatch["file"].get<std::string>();
  }
  for (const auto& [kernel, tally] : tallies.items())
    if (tally.value("dispatches", std::uint64_t{0}) > 0)
      kernels.try_emplace(kernel);  // dispatched, none instrumented
  for (const auto& [kernel, line] : kernels) {
    const nlohmann::json tally = tallies.value(kernel, nlohmann::json::object());
    const std::size_t all = tally.value("dispatches", line.dispatches);
    std::cerr << "  " << kernel << ": ";
    if (all == line.dispatches)
      std::cerr << line.dispatches << (line.dispatches == 1 ? " dispatch, " : " dispatches, ");
    else
      std::cerr << line.dispatches << " of " << all << " dispatches instrumented ("
                << (line.dispatches ? tally.value("instrumented_dispatches", "") : "none") << "), ";
    std::cerr << line.waves << " waves reported";
    if (line.failed) std::cerr << ", " << line.failed << " reports failed";
    if (!line.first_file.empty())
      std::cerr << " -> " << line.first_file << (line.dispatches > 1 ? " ..." : "");
    std::cerr << "\n";
  }
  if (summary.contains("hostcall")) {
    const nlohmann::json& hostcall = summary["hostcall"];
    std::cerr << "  hostcall: " << hostcall.value("calls", std::uint64_t{0}) << " calls ("
              << hostcall.value("failed", std::uint64_t{0}) << " failed), "
              << hostcall.value("bytes", std::uint64_t{0}) << " bytes, service p99 "
              << hostcall["latency_ns"].value("p99", std::uint64_t{0}) << " ns\n";
  }
  if (const nlohmann::json proxy = summary.value("proxy_queue", nlohmann::json::object());
      proxy.contains("shim_host_ns")) {
    const std::uint64_t packets = proxy.value("packets_timed", std::uint64_t{0});
    std::cerr << "  proxy queue: " << packets << (packets == 1 ? " packet" : " packets")
              << ", the shim's host time per packet median "
              << proxy["shim_host_ns"].value("median", 0u) << " ns, p99 "
              << proxy["shim_host_ns"].value("p99", 0u) << " ns\n";
  }
  for (const auto& change : summary.value("control", nlohmann::json::array())) {
    std::cerr << "  from dispatch " << change.value("from_dispatch", std::uint64_t{0}) << ": ";
    if (change.contains("enabled"))
      std::cerr << "instrumentation " << (change["enabled"].get<bool>() ? "on" : "off") << "\n";
    else
      std::cerr << "selection " << change.value("selection", "?") << " ("
                << change.value("source", "?") << ")\n";
  }
  for (const auto& message : summary.value("messages", nlohmann::json::array()))
    std::cerr << "  note: " << message.get<std::string>() << "\n";
}

// A selected kernel (--kernel, or the plan's "kernels") that no loaded object has is almost
// always a typo: say so, with the names the application did load.
void report_unknown_kernels(const nlohmann::json& summary,
                            const std::vector<std::string>& selected) {
  if (summary.is_null()) return;
  std::set<std::string> instrumented, loaded;
  for (const auto& object : summary.value("objects", nlohmann::json::array()))
    for (const auto& kernel : object.value("kernels", nlohmann::json::array()))
      instrumented.insert(kernel.get<std::string>());
  loaded = instrumented;
  for (const char* list : {"kernels_not_selected", "kernels_deferred"})
    for (const auto& kernel : summary.value(list, nlohmann::json::array()))
      loaded.insert(kernel.get<std::string>());
  for (const std::string& name : selected) {
    const std::string base = name.ends_with(".kd") ? name.substr(0, name.size() - 3) : name;
    if (instrumented.count(base)) continue;
    std::string known;
    for (const std::string& kernel : loaded) known += (known.empty() ? "" : ", ") + kernel;
    std::cerr << "wavekit run: kernel " << name << " was selected but "
              << (loaded.count(base)
                      ? "was not instrumented (see the notes above)"
                      : "no code object the application loaded has it (it "
                        "loaded: " +
                            (known.empty() ? std::string("no kernels") : known) + ")")
              << "\n";
  }
}

// "USR1", "SIGUSR1" or a number.
int signal_number(const std::string& name) {
  const std::string bare = name.starts_with("SIG") ? name.substr(3) : name;
  for (int number = 1; number < NSIG; ++number)
    if (const char* abbreviation = sigabbrev_np(number); abbreviation && bare == abbreviation)
      return number;
  char* end = nullptr;
  const long number = std::strtol(name.c_str(), &end, 10);
  if (!name.empty() && *end == '\0' && number > 0 && number < NSIG) return static_cast<int>(number);
  throw UsageError("--control-signal: '" + name +
                   "' is not a signal (e.g. USR1, USR2, or a number)");
}

int run_run(wavekit::cli::Arguments args) {
  preload::RunOptions options;
  std::string device, kernels_text;
  bool no_load_time_rewrite = false, rewrite_at_load = false, start_off = false;
  std::vector<std::string> kernels;
  std::string selection, dispatches, first, every, time_window, kernel_regex, control_signal;
  wavekit::cli::OptionParser parser(
      "wavekit run",
      "Runs an unmodified application with its AMD GPU kernels instrumented: the preload shim\n"
      "substitutes rewritten code objects (from --cache, or rewritten in the process: a kernel\n"
      "when its first selected dispatch comes, so that kernels that never run instrumented cost\n"
      "nothing), gives each dispatch its per-wave memory and writes the tool's results per\n"
      "dispatch. Without an AMD GPU the application runs on wavekit's emulator. The\n"
      "application's own output is left alone; wavekit's summary goes to stderr.\n\n"
      "Every dispatch of an instrumented kernel chooses at the queue between the instrumented\n"
      "and the original kernel: --select (or its shorthands --dispatches, --first, --every,\n"
      "--time-window, --kernel-regex, which add clauses) says which run instrumented, and the\n"
      "rest run the original at full speed. SELECTION: clauses, all of which must hold --\n"
      "kernel=REGEX, dispatches=10-20,40,100- (positions among the dispatches of the kernels\n"
      "that match, from 0), first=N, every=N (positions 0, N, 2N...), time=A-B (seconds after\n"
      "the selection took effect), all. The program can change it at run time\n"
      "(wavekit/instrumentation.h, the wavekit_instrumentation Python module), and so can\n"
      "--control-file (lines: on, off, or a SELECTION; read when it changes) and\n"
      "--control-signal (toggles on/off). Changes take effect at the next dispatch.\n\n"
      "The ready-made tools:\n" +
          wavekit::rewrite::tool_help());
  std::string tools;
  for (const std::string& name : wavekit::rewrite::tool_names())
    tools += (tools.empty() ? "" : ", ") + name;
  parser.option("--tool", &options.shim.tool, "NAME", "a ready-made tool: " + tools);
  parser.option("--probe-lib", &options.shim.probe_library, "LIB",
                "custom tool: the probe library");
  parser.option("--plan", &options.shim.plan_path, "PLAN", "custom tool: the plan (JSON)");
  parser.option("--tool-out", &options.shim.tool_out, "PATH",
                "where per-dispatch results go (default: ./wavekit-<tool>)");
  parser.option("--device", &device, "emu|hsa|kfd",
                "run on the emulator, on ROCm, or on ROCm over the emulated KFD (ROCm's "
                "runtime, the emulator as its GPU; default: emu unless this machine has an AMD "
                "GPU)");
  parser.option("--emu-target", &options.emulated_target, "GFX",
                "the GPU the emulator (or the emulated KFD) reports (default: the emulator's)");
  parser.option("--cache", &options.shim.cache_dir, "DIR", "cache of rewritten objects");
  parser.option("--keep-objects", &options.shim.keep_objects, "DIR",
                "keep each original code object instrumented as DIR/<sha256>.co");
  parser.repeated("--kernel", &kernels, "NAME", "instrument only this kernel");
  parser.flag("--no-load-time-rewrite", &no_load_time_rewrite,
              "use only cached rewrites; run the others uninstrumented");
  parser.flag("--rewrite-at-load", &rewrite_at_load,
              "rewrite every kernel of an object when it is loaded (default: a kernel at its "
              "first selected dispatch)");
  parser.option("--select", &selection, "SELECTION", "which dispatches run instrumented (above)");
  parser.option("--dispatches", &dispatches, "RANGES", "same as --select dispatches=RANGES");
  parser.option("--first", &first, "N", "same as --select first=N");
  parser.option("--every", &every, "N", "same as --select every=N");
  parser.option("--time-window", &time_window, "A-B", "same as --select time=A-B");
  parser.option("--kernel-regex", &kernel_regex, "REGEX", "same as --select kernel=REGEX");
  parser.flag("--start-off", &start_off,
              "start with instrumentation off (for a switch at run time)");
  parser.option("--control-file", &options.shim.control_file, "FILE",
                "switch from outside: write on, off or a SELECTION into FILE");
  parser.option("--control-signal", &control_signal, "SIG",
                "a signal (USR1, USR2, ...) that toggles instrumentation on and off");
  parser.rest("CMD [ARGS]", &options.command, "the application and its arguments");
  if (auto exit_code = parser.parse(args)) return *exit_code;

  if (options.shim.plan_path.empty() == options.shim.tool.empty())
    throw UsageError("give either --tool NAME or --plan PLAN (with --probe-lib LIB)");
  if (!options.shim.probe_library.empty() && options.shim.plan_path.empty())
    throw UsageError("--probe-lib goes with --plan, not with a ready-made --tool");
  options.shim.tool = wavekit::rewrite::tool_name(options.shim.tool_choice());
  if (device.empty())
    options.device = preload::default_device();
  else if (device == "emu")
    options.device = preload::Device::emulator;
  else if (device == "hsa")
    options.device = preload::Device::hsa;
  else if (device == "kfd")
    options.device = preload::Device::kfd;
  else
    throw UsageError("--device must be emu, hsa or kfd, not '" + device + "'");
  if (options.shim.tool_out.empty()) options.shim.tool_out = "wavekit-" + options.shim.tool;
  options.shim.tool_out = std::filesystem::absolute(options.shim.tool_out).string();
  if (!options.shim.keep_objects.empty())
    options.shim.keep_objects = std::filesystem::absolute(options.shim.keep_objects).string();
  options.shim.kernels = kernels;
  options.shim.load_time_rewrite = !no_load_time_rewrite;
  options.shim.rewrite_at_dispatch = !rewrite_at_load;
  for (const auto& [clause, value] : {std::pair{"dispatches=", dispatches},
                                      {"first=", first},
                                      {"every=", every},
                                      {"time=", time_window},
                                      {"kernel=", kernel_regex}})
    if (!value.empty()) selection += (selection.empty() ? "" : " ") + (clause + value);
  try {
    preload::DispatchSelection::parse(selection);
  } catch (const wavekit::Error& error) {
    throw UsageError(error.what());
  }
  options.shim.selection = selection;
  options.shim.start_enabled = !start_off;
  if (!options.shim.control_file.empty())
    options.shim.control_file = std::filesystem::absolute(options.shim.control_file).string();
  if (!control_signal.empty()) options.shim.control_signal = signal_number(control_signal);

  // An unknown tool or a bad plan is the user's mistake: say so here, before the application
  // starts (inside it the shim could only switch itself off).
  const std::vector<std::string> selected = preload::plan_for(options.shim).kernels;

  // Installed: <prefix>/<libdir>/wavekit/...; in the build tree, the build's own paths.
  preload::Installation installation{
      wavekit::companion_path("libwavekit-preload.so", WAVEKIT_PRELOAD_LIBRARY),
      wavekit::companion_path("emulator", WAVEKIT_EMULATOR_RUNTIME_DIR),
      std::string(WAVEKIT_KFD_LIBRARY).empty()
          ? std::string()
          : wavekit::companion_path("libwavekit-kfd.so", WAVEKIT_KFD_LIBRARY)};
  preload::RunResult result = preload::run_application(options, installation);
  print_summary(result, options.shim.tool);
  report_unknown_kernels(result.summary, selected);
  wavekit::rewrite::present_results(options.shim.tool, result.summary, std::cerr);
  return result.exit_status;
}

}  // namespace

WAVEKIT_SUBCOMMAND("run", "run an unmodified application with instrumented GPU kernels", run_run);
