// The CUPTI-free backend (`wavekit profile --backend events`) as a library of its own, loaded
// with LD_PRELOAD: when WAVEKIT_PROFILE_OUTPUT is set, the profiler is configured at load (so
// that bad settings are reported at once) and started by the launch hooks at CUDA
// initialisation (launch_hooks.h). A library apart from the CUPTI one so that the `dlsym` it
// must define is in a process only when this backend is asked for.
#include <cstdlib>

#include "launch_hooks.h"
#include "profiler.h"

namespace wavekit::profile {
namespace {

__attribute__((constructor)) void configure_if_preloaded() {
  if (std::getenv("WAVEKIT_PROFILE_OUTPUT") == nullptr) return;
  Profiler::process().configure(event_backend());
}

}  // namespace
}  // namespace wavekit::profile

// Stops the session and writes the outputs now (the exit handler then has nothing left to do).
extern "C" __attribute__((visibility("default"))) void wavekit_profile_events_stop(void) {
  wavekit::profile::Profiler::process().stop();
}
