#include "wavekit/preload/config.h"

#include <csignal>
#include <cstdlib>
#include <sstream>

#include "wavekit/preload/selection.h"
#include "wavekit/support/error.h"

namespace wavekit::preload {

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

ShimConfig config_from_environment() {
  ShimConfig config;
  config.tool = variable("WAVEKIT_TOOL");
  config.plan_path = variable("WAVEKIT_PLAN");
  config.probe_library = variable("WAVEKIT_PROBE_LIB");
  config.tool_out = variable("WAVEKIT_TOOL_OUT");
  config.cache_dir = variable("WAVEKIT_CACHE_DIR");
  config.keep_objects = variable("WAVEKIT_KEEP_OBJECTS");
  config.report_directory = variable("WAVEKIT_REPORT_DIR");
  if (const std::string root = variable("WAVEKIT_ROOT_PID"); !root.empty()) {
    char* end = nullptr;
    config.root_pid = std::strtol(root.c_str(), &end, 10);
    if (*end != '\0' || config.root_pid <= 0)
      throw Error("WAVEKIT_ROOT_PID must be a process id, not '" + root + "'");
  }
  config.kernels = split_list(variable("WAVEKIT_KERNELS"));
  std::string rewrite_mode = variable("WAVEKIT_LOAD_TIME_REWRITE");
  if (rewrite_mode == "0")
    config.load_time_rewrite = false;
  else if (!rewrite_mode.empty() && rewrite_mode != "1")
    throw Error("WAVEKIT_LOAD_TIME_REWRITE must be 0 or 1, not '" + rewrite_mode + "'");
  if (const std::string when = variable("WAVEKIT_REWRITE_AT"); when == "load")
    config.rewrite_at_dispatch = false;
  else if (!when.empty() && when != "dispatch")
    throw Error("WAVEKIT_REWRITE_AT must be dispatch or load, not '" + when + "'");
  config.selection = variable("WAVEKIT_SELECT");
  DispatchSelection::parse(config.selection);  // names a malformed clause
  if (const std::string state = variable("WAVEKIT_INSTRUMENTATION"); state == "off")
    config.start_enabled = false;
  else if (!state.empty() && state != "on")
    throw Error("WAVEKIT_INSTRUMENTATION must be on or off, not '" + state + "'");
  config.control_file = variable("WAVEKIT_CONTROL_FILE");
  if (const std::string signal = variable("WAVEKIT_CONTROL_SIGNAL"); !signal.empty()) {
    char* end = nullptr;
    const long number = std::strtol(signal.c_str(), &end, 10);
    if (*end != '\0' || number <= 0 || number >= NSIG)
      throw Error("WAVEKIT_CONTROL_SIGNAL must be a signal number, not '" + signal + "'");
    config.control_signal = static_cast<int>(number);
  }
  std::string fault = variable("WAVEKIT_INJECT_FAULT");
  if (fault == "arena_allocation")
    config.fault = InjectedFault::arena_allocation;
  else if (!fault.empty())
    throw Error("WAVEKIT_INJECT_FAULT: unknown fault '" + fault + "' (known: arena_allocation)");
  return config;
}

std::map<std::string, std::string> config_to_environment(const ShimConfig& config) {
  std::map<std::string, std::string> env;
  auto set = [&](const char* name, const std::string& value) {
    if (!value.empty()) env[name] = value;
  };
  set("WAVEKIT_TOOL", config.tool);
  set("WAVEKIT_PLAN", config.plan_path);
  set("WAVEKIT_PROBE_LIB", config.probe_library);
  set("WAVEKIT_TOOL_OUT", config.tool_out);
  set("WAVEKIT_CACHE_DIR", config.cache_dir);
  set("WAVEKIT_KEEP_OBJECTS", config.keep_objects);
  set("WAVEKIT_REPORT_DIR", config.report_directory);
  std::string kernels;
  for (const std::string& kernel : config.kernels) kernels += (kernels.empty() ? "" : ",") + kernel;
  set("WAVEKIT_KERNELS", kernels);
  if (!config.load_time_rewrite) env["WAVEKIT_LOAD_TIME_REWRITE"] = "0";
  if (!config.rewrite_at_dispatch) env["WAVEKIT_REWRITE_AT"] = "load";
  set("WAVEKIT_SELECT", config.selection);
  if (!config.start_enabled) env["WAVEKIT_INSTRUMENTATION"] = "off";
  set("WAVEKIT_CONTROL_FILE", config.control_file);
  if (config.control_signal) env["WAVEKIT_CONTROL_SIGNAL"] = std::to_string(config.control_signal);
  if (config.fault == InjectedFault::arena_allocation)
    env["WAVEKIT_INJECT_FAULT"] = "arena_allocation";
  return env;
}

}  // namespace wavekit::preload
