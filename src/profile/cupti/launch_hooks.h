// The CUPTI-free graph mode (`--graphs events`, libwavekit_profile_graph_events.so): the
// preloaded library's `dlsym` hands the CUDA
// runtime its own cuGetProcAddress, which hands out wrappers of cuGraphLaunch(_ptsz) and
// cuGraphExecDestroy; each graph launch is then timed with an event pair (GraphEventTimer).
#pragma once

#include <string>

#include "wavekit/profile/session.h"

namespace wavekit::profile {

// The backend of the event mode, or null with the reason in `why` (the library was not
// preloaded, so its hooks would never be called). `start` is called once, when the program first
// takes a hooked driver function (CUDA initialisation): it makes the session and activates the
// hooks, so that a process that never uses CUDA starts no session and writes no output.
Backend* make_graph_event_backend(std::string& why, void (*start)());
// From now on graph launches are timed for `session` (non-null, outlives the process).
void activate_graph_event_hooks(Session* session);

}  // namespace wavekit::profile
