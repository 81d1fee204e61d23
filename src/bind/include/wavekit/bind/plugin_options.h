// The option string of the launcher plugins (`srun --wavekit-bind=gpu_optim:0,smt:2`), parsed
// strictly: keys match exactly, values are checked, unknown keys are errors (rule
// strict-options; mpibind's shared parser reads `gpu_optim:0` as gpu=1, `visible_devices` as
// verbose and `verbose:0` as verbose=1).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wavekit::bind {

struct PluginOptions {
  bool enabled = true;               // on / off
  std::optional<bool> gpu_optim;     // gpu[:0|1], gpu_optim:0|1
  std::optional<bool> greedy;        // greedy[:0|1]
  std::optional<int> smt;            // smt:K
  std::optional<int> nthreads;       // nthreads:T
  int verbose = 0;                   // v, verbose[:N]
  bool visible_devices = true;       // visible_devices[:0|1]: export *_VISIBLE_DEVICES
  bool compat = false;               // compat: reproduce mpibind v0.23.1
  bool membind = false;              // membind[:0|1]
  bool hip_visible_devices = false;  // hip[:0|1]: also HIP_VISIBLE_DEVICES
  bool help = false;                 // help
};

// Comma-separated `key` or `key:value` items; an empty string gives the defaults. Throws
// wavekit::Error naming the offending item.
PluginOptions parse_plugin_options(std::string_view text);

// The help text the plugin prints for `--wavekit-bind=help`.
std::string plugin_options_help();

}  // namespace wavekit::bind
