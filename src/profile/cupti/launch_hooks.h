// The CUPTI-free graph mode (`--graphs events`, libwavekit_profile_graph_events.so): the
// preloaded library's `dlsym` hands the CUDA
// runtime its own cuGetProcAddress, which hands out wrappers of cuGraphLaunch(_ptsz) and
// cuGraphExecDestroy; each graph launch is then timed with an event pair (GraphEventTimer).
#pragma once

#include <string>

#include "wavekit/profile/session.h"

namespace wavekit::profile {

// The backend of the event mode, or null with the reason in `why` (the library was not
// preloaded, so its hooks would never be called).
Backend* make_graph_event_backend(std::string& why);
// From now on graph launches are timed for `session` (non-null, outlives the process).
void activate_graph_event_hooks(Session* session);

}  // namespace wavekit::profile
