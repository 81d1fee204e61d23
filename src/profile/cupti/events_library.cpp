// The CUPTI-free backend (`wavekit profile --backend events`) as a library of its own, loaded
// with LD_PRELOAD: when WAVEKIT_PROFILE_OUTPUT is set, it prepares a backend that times kernel
// and graph launches with event pairs (launch_hooks.h) and starts the session at CUDA
// initialisation. A library apart from the CUPTI one so that the `dlsym` it must define is in a
// process only when this backend is asked for.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "launch_hooks.h"
#include "wavekit/profile/aggregator.h"
#include "wavekit/profile/c_api.h"
#include "wavekit/profile/session.h"

namespace wavekit::profile {
namespace {

Session* session = nullptr;
Backend* backend = nullptr;
SessionConfig* config = nullptr;  // read at load, so that bad settings are reported at once

void stop_at_exit() {
  if (session)
    session->stop_and_report(config->time_every > 1 ? "launches (some timed, --time-every)"
                                                    : "launches timed");
}

// At CUDA initialisation (launch_hooks.h).
void start_session() {
  try {
    session = new Session(*config, backend);
    set_global_session(session);
    session->start();
    activate_event_hooks(session);
    std::atexit(stop_at_exit);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavekit profile: not started: %s\n", e.what());
  }
}

__attribute__((constructor)) void prepare_if_preloaded() {
  if (std::getenv("WAVEKIT_PROFILE_OUTPUT") == nullptr) return;
  try {
    config = new SessionConfig(SessionConfig::from_environment());
    config->display_name = demangle_kernel_name;
    std::string why;
    backend = make_event_backend(why, start_session, config->time_every);
    if (!backend) std::fprintf(stderr, "wavekit profile: not started: %s\n", why.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavekit profile: not started: %s\n", e.what());
  }
}

}  // namespace
}  // namespace wavekit::profile

// Stops the session and writes the outputs now (the exit handler then has nothing left to do).
extern "C" __attribute__((visibility("default"))) void wavekit_profile_events_stop(void) {
  wavekit::profile::stop_at_exit();
}
