// Applying a task's mapping to the calling process: CPU binding, optional memory binding and
// its environment. Used by `wavekit bind --exec` and the SPANK plugin.
#pragma once

#include "wavekit/bind/format.h"
#include "wavekit/bind/mapping.h"

namespace wavekit::bind {

struct ApplyOptions {
  bool membind = false;  // rule memory-binding
  bool set_environment = true;
  bool visible_devices = true;
  EnvOptions env;
};

// Binds the calling process to task `task`'s CPUs (and memory nodes) on this machine and sets
// its environment with setenv. Throws wavekit::Error naming what failed.
void apply_task(const Mapping& mapping, int task, const ApplyOptions& options);

}  // namespace wavekit::bind
