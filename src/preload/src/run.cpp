#include "wavekit/preload/run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "wavekit/support/error.h"

extern char** environ;

namespace wavekit::preload {

Device default_device() {
  std::error_code error;
  return std::filesystem::exists("/dev/kfd", error) ? Device::hsa : Device::emulator;
}

namespace {

std::string prepend_path(const char* variable, const std::string& first) {
  const char* old = std::getenv(variable);
  return old && *old ? first + ":" + old : first;
}

}  // namespace

RunResult run_application(const RunOptions& options, const Installation& installation) {
  if (options.command.empty()) throw Error("no application to run");
  if (!std::filesystem::exists(installation.preload_library))
    throw Error("the preload library is missing: " + installation.preload_library);

  ShimConfig shim = options.shim;
  std::filesystem::path report =
      std::filesystem::temp_directory_path() / ("wavekit-run-" + std::to_string(getpid()) + ".json");
  shim.report_path = report.string();

  std::map<std::string, std::string> environment = config_to_environment(shim);
  environment["LD_PRELOAD"] = prepend_path("LD_PRELOAD", installation.preload_library);
  if (options.device == Device::emulator) {
    environment["LD_LIBRARY_PATH"] =
        prepend_path("LD_LIBRARY_PATH", installation.emulator_runtime_dir);
    if (!options.emulated_target.empty())
      environment["WAVEKIT_EMU_TARGET"] = options.emulated_target;
  }

  pid_t child = fork();
  if (child < 0) throw Error(std::string("cannot start the application: ") + std::strerror(errno));
  if (child == 0) {
    for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& argument : options.command)
      argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "wavekit run: cannot execute %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  RunResult result;
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(report);
  if (in) {
    try {
      result.summary = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
      result.summary = nullptr;
    }
  }
  std::filesystem::remove(report);
  return result;
}

}  // namespace wavekit::preload
