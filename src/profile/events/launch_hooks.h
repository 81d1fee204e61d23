// The CUPTI-free backend (`wavekit profile --backend events`, libwavekit_profile_events.so): the
// preloaded library's `dlsym` hands the CUDA runtime its own cuGetProcAddress, which hands out
// wrappers of the kernel launch functions (cuLaunchKernel, cuLaunchKernelEx,
// cuLaunchCooperativeKernel), cuGraphLaunch and cuGraphExecDestroy; while the session collects,
// each launch is timed with an event pair (LaunchEventTimer).
#pragma once

#include "backend.h"

namespace wavekit::profile {

// The event backend, for the lifecycle (profiler.h). Its configure refuses a library that was
// not preloaded (its hooks would never be called) and arms the hooks; the hooks start the
// profiler when the program first takes a hooked driver function (CUDA initialisation), so
// that a process that never uses CUDA starts no session and writes no output.
Backend& event_backend();

}  // namespace wavekit::profile
