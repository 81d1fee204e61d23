// What `wavekit run` tells the preload shim, through the environment of the application it
// starts (the shim lives inside an unmodified program and has no other channel).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "wavekit/rewrite/tools.h"

namespace wavekit::preload {

// Deliberate failures for the fail-safe tests: each makes one step fail so that a test can
// prove the shim falls back to the original kernel with one clear message.
enum class InjectedFault { none, arena_allocation };

struct ShimConfig {
  std::string tool;           // a ready-made tool ("bbcount", ...) or "custom"
  std::string plan_path;      // custom: the plan JSON
  std::string probe_library;  // custom: the probe library (overrides the plan's)
  std::string tool_out;       // directory for per-dispatch results
  std::string cache_dir;      // rewritten objects, keyed by content hash and plan
  // Where each original code object the shim instrumented is kept, as <its sha256>.co (the
  // summary's objects name it): what the application loaded, for tools that read its code.
  std::string keep_objects;
  // Where each process of the application writes its summary, <pid>.json, for `wavekit run`.
  std::string report_directory;
  // The process `wavekit run` started (WAVEKIT_ROOT_PID, which run sets in that process itself,
  // the only place its pid is known): its results are KERNEL.N, any other process's
  // KERNEL.pidP.N. 0: every process is the root (the shim used without `wavekit run`).
  long root_pid = 0;
  std::vector<std::string> kernels;  // only these kernels (empty: all)
  bool load_time_rewrite = true;     // rewrite on the spot when the cache has no entry
  // Rewrite a kernel when its first selected dispatch comes, not every kernel of an object when
  // it is loaded (Deferred, substitution.h); false: the whole object at load.
  bool rewrite_at_dispatch = true;
  // Which dispatches run instrumented (selection.h; "" is every one), whether instrumentation
  // is on when the program starts, and the outside switches: a control file (control.h in
  // the shim) and a signal that toggles it (0: none).
  std::string selection;
  bool start_enabled = true;
  std::string control_file;
  int control_signal = 0;
  InjectedFault fault = InjectedFault::none;

  bool enabled() const { return !tool.empty(); }
  rewrite::ToolChoice tool_choice() const { return {tool, plan_path, probe_library, kernels}; }
};

// Reads WAVEKIT_* variables; throws wavekit::Error naming a malformed one.
ShimConfig config_from_environment();
// The variables that reproduce `config` (for launching the application).
std::map<std::string, std::string> config_to_environment(const ShimConfig& config);

}  // namespace wavekit::preload
