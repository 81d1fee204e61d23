#include "profiler.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

namespace wavekit::profile {

namespace {

void report_failure(const std::exception& error) {
  std::fprintf(stderr, "wavekit profile: not started: %s\n", error.what());
}

void stop_at_exit() { Profiler::process().stop(); }

}  // namespace

Profiler& Profiler::process() {
  static Profiler* const profiler = new Profiler;  // never destroyed: stop runs at exit
  return *profiler;
}

bool Profiler::configure(Backend& backend) {
  std::lock_guard lock(mutex_);
  if (state_ != State::fresh) return state_ != State::failed;
  try {
    SessionConfig config = SessionConfig::from_environment();
    backend.configure(config);
    config_ = std::move(config);
    backend_ = &backend;
    state_ = State::configured;
    return true;
  } catch (const std::exception& error) {
    report_failure(error);
    state_ = State::failed;
    return false;
  }
}

bool Profiler::start() {
  std::lock_guard lock(mutex_);
  if (state_ != State::configured) return state_ == State::started || state_ == State::stopped;
  try {
    auto session = std::make_unique<Session>(*config_, backend_);
    backend_->start(*session);
    // Attached: the backend holds the session from now on, whatever happens next.
    session_ = session.release();
    set_global_session(session_);
    session_->start();
  } catch (const std::exception& error) {
    report_failure(error);
    state_ = State::failed;
    return false;
  }
  state_ = State::started;
  std::atexit(stop_at_exit);
  return true;
}

void Profiler::stop() {
  std::lock_guard lock(mutex_);
  if (state_ != State::started) return;
  state_ = State::stopped;
  session_->stop();
  if (std::getenv("WAVEKIT_PROFILE_QUIET")) return;
  const SelfMetrics totals = session_->totals();
  std::fprintf(stderr, "wavekit profile: %llu %s, %llu unattributed, %llu dropped; results in %s\n",
               static_cast<unsigned long long>(totals.records), backend_->records(),
               static_cast<unsigned long long>(totals.unattributed),
               static_cast<unsigned long long>(totals.dropped),
               config_->output_dir.empty() ? "memory" : config_->output_dir.c_str());
}

}  // namespace wavekit::profile
