// The one lifecycle every backend library goes through (libwavekit_profile_cupti.so injected by
// CUDA or preloaded, libwavekit_profile_events.so preloaded, libwavekit_profile_hsa.so loaded
// by HSA), after Proton's Profiler::start/flush/stop:
//
//   configure  the session's settings from the environment (SessionConfig::from_environment),
//              completed by the backend (Backend::configure); a bad one is reported at once
//              and nothing starts;
//   start      the session (its output directory), the backend attached to it
//              (Backend::start), the session published for the C API (c_api.h) and its
//              consumer running (flushing, phases, sampling: Session), and stop registered
//              to run at exit;
//   stop       once, whoever asks first (the program through its library's stop function,
//              the runtime unloading the library, the exit handler): the session flushes the
//              backend, drains, writes its outputs, and one line of totals goes to stderr
//              unless WAVEKIT_PROFILE_QUIET is set.
//
// A failure is reported as "wavekit profile: not started: <why>" and leaves the program
// running unprofiled. One profiler per process: the libraries exclude each other.
#pragma once

#include <mutex>
#include <optional>

#include "backend.h"
#include "session.h"

namespace wavekit::profile {

class Profiler {
 public:
  static Profiler& process();

  // Reads the configuration for `backend` (which outlives the process). Once: later calls
  // answer as the first did. false: not configured (reported).
  bool configure(Backend& backend);
  // Starts the configured backend. Once: later calls answer as the first did. false: not
  // started (not configured, or reported).
  bool start();
  // Stops and reports, once; nothing when not started.
  void stop();

 private:
  Profiler() = default;

  enum class State { fresh, configured, started, stopped, failed };
  std::mutex mutex_;
  State state_ = State::fresh;
  Backend* backend_ = nullptr;
  std::optional<SessionConfig> config_;
  Session* session_ = nullptr;  // never freed: the runtime may call the backend during exit
};

// The session the C API drives (nullptr: none); Profiler::start publishes it.
void set_global_session(Session* session);
Session* global_session();

}  // namespace wavekit::profile
