#include "wavekit/bind/plugin_options.h"

#include <cstdlib>
#include <sstream>

#include "wavekit/support/error.h"

namespace wavekit::bind {
namespace {

bool parse_switch(const std::string& key, const std::string& value, bool has_value) {
  if (!has_value || value == "1") return true;
  if (value == "0") return false;
  throw Error("option '" + key + ":" + value + "': the value must be 0 or 1");
}

int parse_number(const std::string& key, const std::string& value, bool has_value, int minimum) {
  if (!has_value) throw Error("option '" + key + "' needs a value (" + key + ":N)");
  char* end = nullptr;
  long number = value.empty() ? -1 : std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || number < minimum || number > 1 << 20)
    throw Error("option '" + key + ":" + value +
                "': the value must be a whole number >= " + std::to_string(minimum));
  return static_cast<int>(number);
}

}  // namespace

PluginOptions parse_plugin_options(std::string_view text) {
  PluginOptions options;
  std::stringstream items{std::string(text)};
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) throw Error("empty option in '" + std::string(text) + "'");
    auto colon = item.find(':');
    bool has_value = colon != std::string::npos;
    std::string key = item.substr(0, colon);
    std::string value = has_value ? item.substr(colon + 1) : "";
    auto no_value = [&] {
      if (has_value) throw Error("option '" + key + "' takes no value (got '" + item + "')");
    };
    if (key == "on")
      no_value(), options.enabled = true;
    else if (key == "off")
      no_value(), options.enabled = false;
    else if (key == "gpu" || key == "gpu_optim")
      options.gpu_optim = parse_switch(key, value, has_value);
    else if (key == "greedy")
      options.greedy = parse_switch(key, value, has_value);
    else if (key == "smt")
      options.smt = parse_number(key, value, has_value, 0);
    else if (key == "nthreads")
      options.nthreads = parse_number(key, value, has_value, 0);
    else if (key == "v" || key == "verbose")
      options.verbose = has_value ? parse_number(key, value, true, 0) : 1;
    else if (key == "visible_devices")
      options.visible_devices = parse_switch(key, value, has_value);
    else if (key == "compat")
      no_value(), options.compat = true;
    else if (key == "membind")
      options.membind = parse_switch(key, value, has_value);
    else if (key == "hip")
      options.hip_visible_devices = parse_switch(key, value, has_value);
    else if (key == "help")
      no_value(), options.help = true;
    else
      throw Error("unknown option '" + item + "' (see --wavekit-bind=help)");
  }
  return options;
}

std::string plugin_options_help() {
  return "--wavekit-bind[=OPTIONS]: map each task to CPUs, threads and GPUs from the node's hwloc\n"
         "topology (wavekit bind). OPTIONS, comma-separated:\n"
         "  on | off             enable or disable (default on)\n"
         "  gpu_optim:0|1        distribute tasks by GPUs (default 1 when the node has GPUs)\n"
         "  greedy:0|1           fewer tasks than NUMA domains take whole domains (default 1)\n"
         "  smt:K                use K PUs per core\n"
         "  nthreads:T           threads per task (default: computed; OMP_NUM_THREADS if set)\n"
         "  membind:0|1          bind memory to the task's NUMA domain (default 0)\n"
         "  visible_devices:0|1  export the GPU visible-devices variables (default 1)\n"
         "  hip:0|1              also export HIP_VISIBLE_DEVICES for AMD GPUs\n"
         "  compat               reproduce mpibind v0.23.1 exactly\n"
         "  verbose[:N] | v      print each task's mapping\n"
         "  help                 this text\n"
         "Environment: WAVEKIT_BIND_RESTRICT=<list>, WAVEKIT_BIND_RESTRICT_TYPE=cpu|mem,\n"
         "WAVEKIT_BIND_TOPOFILE=<hwloc xml> (MPIBIND_* names are honoured too).\n";
}

}  // namespace wavekit::bind
