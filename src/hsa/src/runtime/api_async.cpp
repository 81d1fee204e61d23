// Dispatch times and asynchronous signal handlers (hsa_amd_profiling_get_dispatch_time,
// hsa_amd_profiling_convert_tick_to_system_domain, hsa_amd_signal_async_handler).
//
// A queue with profiling enabled stamps each dispatch's start and end into its completion
// signal (api_queue.cpp); the stamps are already in the system-timestamp domain, so reading
// them converts nothing. Async handlers run, as in ROCr, on one runtime thread (started by the
// first registration): when a handler's condition holds it is called with the signal's value
// and stays registered only if it returns true. The thread wakes on every host-side signal
// change and polls every kPollInterval for changes made by device code.
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

constexpr auto kPollInterval = std::chrono::microseconds(200);

struct AsyncHandler {
  hsa_signal_t signal;
  hsa_signal_condition_t condition;
  hsa_signal_value_t compare;
  hsa_amd_signal_handler handler;
  void* arg;
};

struct AsyncHandlers {
  std::mutex mutex;
  std::vector<AsyncHandler> pending;
  std::thread thread;
  bool stop = false;
};

AsyncHandlers& handlers() {
  static AsyncHandlers* instance = new AsyncHandlers();  // the thread may outlive static dtors
  return *instance;
}

hsa_signal_value_t load(hsa_signal_t signal) {
  return __atomic_load_n(&signal_of(signal)->value, __ATOMIC_ACQUIRE);
}

void run_handlers() {
  AsyncHandlers& h = handlers();
  Runtime& rt = runtime();
  std::vector<AsyncHandler> due;
  for (;;) {
    {
      std::lock_guard lock(h.mutex);
      if (h.stop) return;
      due.clear();
      std::erase_if(h.pending, [&due](const AsyncHandler& e) {
        if (!condition_met(load(e.signal), e.condition, e.compare)) return false;
        due.push_back(e);
        return true;
      });
    }
    // Outside the lock: a handler may register handlers.
    for (const AsyncHandler& entry : due) {
      if (entry.handler(load(entry.signal), entry.arg)) {
        std::lock_guard lock(h.mutex);
        h.pending.push_back(entry);
      }
    }
    if (due.empty()) {
      std::unique_lock lock(rt.signal_mutex);
      rt.signal_changed.wait_for(lock, kPollInterval);
    }
  }
}

bool is_gpu(hsa_agent_t agent) {
  return agent.handle == reinterpret_cast<std::uint64_t>(&runtime().gpu);
}

bool is_signal(hsa_signal_t signal) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  return rt.signals.count(signal_of(signal)) != 0;
}

}  // namespace

namespace wavekit::hsa::runtime {

std::uint64_t system_timestamp() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void lock_async_handlers() { handlers().mutex.lock(); }
void unlock_async_handlers() { handlers().mutex.unlock(); }

void restart_async_handlers_in_child() {
  AsyncHandlers& h = handlers();
  std::lock_guard lock(h.mutex);
  if (!h.thread.joinable()) return;
  // The handle names a thread of the parent: it is forgotten, not joined (placement new over
  // the old object, whose destructor would call std::terminate for a joinable thread).
  new (&h.thread) std::thread(run_handlers);
}

void stop_async_handlers() {
  AsyncHandlers& h = handlers();
  std::thread thread;
  {
    std::lock_guard lock(h.mutex);
    h.stop = true;
    thread.swap(h.thread);
  }
  notify_signal_change();
  if (thread.joinable()) thread.join();
  std::lock_guard lock(h.mutex);
  h.pending.clear();
  h.stop = false;  // a later hsa_init may register again
}

}  // namespace wavekit::hsa::runtime

extern "C" {

hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t* time) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!time) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!is_gpu(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!is_signal(signal)) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  const amd_signal_t* amd = signal_of(signal);
  time->start = amd->start_ts;
  time->end = amd->end_ts;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent, uint64_t agent_tick,
                                                             uint64_t* system_tick) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!system_tick) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!is_gpu(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  *system_tick = agent_tick;  // the emulated GPU's clock is the system clock
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, hsa_signal_condition_t condition,
                                          hsa_signal_value_t value, hsa_amd_signal_handler handler,
                                          void* arg) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!handler) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!is_signal(signal)) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  AsyncHandlers& h = handlers();
  {
    std::lock_guard lock(h.mutex);
    h.pending.push_back({signal, condition, value, handler, arg});
    if (!h.thread.joinable()) h.thread = std::thread(run_handlers);
  }
  notify_signal_change();
  return HSA_STATUS_SUCCESS;
}

}  // extern "C"
