// The CUPTI-free backend (`wavekit profile --backend events`, libwavekit_profile_events.so): the
// preloaded library's `dlsym` hands the CUDA runtime its own cuGetProcAddress, which hands out
// wrappers of the kernel launch functions (cuLaunchKernel, cuLaunchKernelEx,
// cuLaunchCooperativeKernel), cuGraphLaunch and cuGraphExecDestroy; while the session collects,
// each launch is timed with an event pair (LaunchEventTimer).
#pragma once

#include <cstdint>
#include <string>

#include "wavekit/profile/session.h"

namespace wavekit::profile {

// The event backend, or null with the reason in `why` (the library was not preloaded, so its
// hooks would never be called). `start` is called once, when the program first takes a hooked
// driver function (CUDA initialisation): it makes the session and activates the hooks, so that
// a process that never uses CUDA starts no session and writes no output. `time_every`:
// SessionConfig::time_every.
Backend* make_event_backend(std::string& why, void (*start)(), std::uint32_t time_every);
// From now on launches are timed for `session` (non-null, outlives the process) while it
// collects.
void activate_event_hooks(Session* session);

}  // namespace wavekit::profile
