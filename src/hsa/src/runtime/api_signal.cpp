// HSA API: signals. A signal is an amd_signal_t (the layout ROCm device code such as the
// hostcall client operates on) in memory the emulated GPU can reach; its handle is its address.
// Host-side changes wake waiters at once; changes made by device code are seen by polling
// (at most kPollInterval late), because device code has no way to notify the host.
#include <chrono>
#include <thread>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

constexpr auto kPollInterval = std::chrono::microseconds(200);

std::int64_t* value_of(hsa_signal_t signal) {
  return const_cast<std::int64_t*>(&signal_of(signal)->value);
}

hsa_signal_value_t wait(hsa_signal_t signal, hsa_signal_condition_t condition,
                        hsa_signal_value_t compare, uint64_t timeout_hint, int memory_order) {
  if (!signal.handle) return 0;
  using clock = std::chrono::steady_clock;
  // The timeout is in HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY ticks, which are nanoseconds here.
  const bool bounded = timeout_hint != UINT64_MAX;
  const auto deadline = clock::now() + std::chrono::nanoseconds(bounded ? timeout_hint : 0);
  Runtime& rt = runtime();
  for (unsigned spins = 0;; ++spins) {
    std::int64_t value = __atomic_load_n(value_of(signal), memory_order);
    if (condition_met(value, condition, compare)) return value;
    if (bounded && clock::now() >= deadline) return value;
    if (spins < 64) {
      std::this_thread::yield();
      continue;
    }
    std::unique_lock lock(rt.signal_mutex);
    rt.signal_changed.wait_for(lock, kPollInterval);
  }
}

hsa_status_t create(hsa_signal_value_t initial_value, hsa_signal_t* signal) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!signal) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto* amd =
      static_cast<amd_signal_t*>(allocate(sizeof(amd_signal_t), AMD_SIGNAL_ALIGN_BYTES, "signal"));
  if (!amd) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  amd->kind = AMD_SIGNAL_KIND_USER;
  amd->value = initial_value;
  Runtime& rt = runtime();
  {
    std::lock_guard lock(rt.mutex);
    rt.signals.insert(amd);
  }
  signal->handle = reinterpret_cast<std::uint64_t>(amd);
  return HSA_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, hsa_signal_t* signal) {
  if (num_consumers > 0 && !consumers) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return create(initial_value, signal);
}

hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                                   const hsa_agent_t* consumers, uint64_t, hsa_signal_t* signal) {
  if (num_consumers > 0 && !consumers) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return create(initial_value, signal);
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  Runtime& rt = runtime();
  {
    std::lock_guard lock(rt.mutex);
    if (!rt.signals.erase(signal_of(signal))) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  }
  release(signal_of(signal));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_signal_value_pointer(hsa_signal_t signal,
                                          volatile hsa_signal_value_t** value_pointer) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!signal.handle || !value_pointer) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *value_pointer = &signal_of(signal)->value;
  return HSA_STATUS_SUCCESS;
}

#define WAVEKIT_SIGNAL_LOAD(suffix, order)                           \
  hsa_signal_value_t hsa_signal_load_##suffix(hsa_signal_t signal) { \
    return __atomic_load_n(value_of(signal), order);                 \
  }
WAVEKIT_SIGNAL_LOAD(scacquire, __ATOMIC_ACQUIRE)
WAVEKIT_SIGNAL_LOAD(acquire, __ATOMIC_ACQUIRE)
WAVEKIT_SIGNAL_LOAD(relaxed, __ATOMIC_RELAXED)

// A store to an intercept queue's doorbell also hands its new packets to the interceptors.
#define WAVEKIT_SIGNAL_STORE(name, order)                                                     \
  void hsa_signal_##name(hsa_signal_t signal, hsa_signal_value_t value) {                     \
    __atomic_store_n(value_of(signal), value, order);                                         \
    if (signal_of(signal)->kind == AMD_SIGNAL_KIND_DOORBELL) intercept_doorbell_rung(signal); \
    notify_signal_change();                                                                   \
  }
WAVEKIT_SIGNAL_STORE(store_relaxed, __ATOMIC_RELAXED)
WAVEKIT_SIGNAL_STORE(store_screlease, __ATOMIC_RELEASE)
WAVEKIT_SIGNAL_STORE(store_release, __ATOMIC_RELEASE)
WAVEKIT_SIGNAL_STORE(silent_store_relaxed, __ATOMIC_RELAXED)
WAVEKIT_SIGNAL_STORE(silent_store_screlease, __ATOMIC_RELEASE)

// Read-modify-write operations in every memory-order spelling hsa.h declares.
#define WAVEKIT_SIGNAL_RMW_ORDERS(MACRO, op, builtin) \
  MACRO(op, acq_rel, builtin, __ATOMIC_ACQ_REL)       \
  MACRO(op, scacq_screl, builtin, __ATOMIC_ACQ_REL)   \
  MACRO(op, acquire, builtin, __ATOMIC_ACQUIRE)       \
  MACRO(op, scacquire, builtin, __ATOMIC_ACQUIRE)     \
  MACRO(op, relaxed, builtin, __ATOMIC_RELAXED)       \
  MACRO(op, release, builtin, __ATOMIC_RELEASE)       \
  MACRO(op, screlease, builtin, __ATOMIC_RELEASE)

#define WAVEKIT_SIGNAL_UPDATE(op, suffix, builtin, order)                          \
  void hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) { \
    builtin(value_of(signal), value, order);                                       \
    notify_signal_change();                                                        \
  }
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_UPDATE, add, __atomic_fetch_add)
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_UPDATE, subtract, __atomic_fetch_sub)
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_UPDATE, and, __atomic_fetch_and)
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_UPDATE, or, __atomic_fetch_or)
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_UPDATE, xor, __atomic_fetch_xor)

#define WAVEKIT_SIGNAL_EXCHANGE(op, suffix, builtin, order)                                        \
  hsa_signal_value_t hsa_signal_exchange_##suffix(hsa_signal_t signal, hsa_signal_value_t value) { \
    hsa_signal_value_t old = builtin(value_of(signal), value, order);                              \
    notify_signal_change();                                                                        \
    return old;                                                                                    \
  }
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_EXCHANGE, exchange, __atomic_exchange_n)

#define WAVEKIT_SIGNAL_CAS(op, suffix, builtin, order)                                         \
  hsa_signal_value_t hsa_signal_cas_##suffix(hsa_signal_t signal, hsa_signal_value_t expected, \
                                             hsa_signal_value_t value) {                       \
    hsa_signal_value_t observed = expected;                                                    \
    builtin(value_of(signal), &observed, value, false, order,                                  \
            order == __ATOMIC_RELEASE   ? __ATOMIC_RELAXED                                     \
            : order == __ATOMIC_ACQ_REL ? __ATOMIC_ACQUIRE                                     \
                                        : order);                                              \
    notify_signal_change();                                                                    \
    return observed;                                                                           \
  }
WAVEKIT_SIGNAL_RMW_ORDERS(WAVEKIT_SIGNAL_CAS, cas, __atomic_compare_exchange_n)

hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value,
                                             uint64_t timeout_hint, hsa_wait_state_t) {
  return wait(signal, condition, compare_value, timeout_hint, __ATOMIC_ACQUIRE);
}

hsa_signal_value_t hsa_signal_wait_acquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t) {
  return wait(signal, condition, compare_value, timeout_hint, __ATOMIC_ACQUIRE);
}

hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t) {
  return wait(signal, condition, compare_value, timeout_hint, __ATOMIC_RELAXED);
}

uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                                 hsa_signal_condition_t* conditions,
                                 hsa_signal_value_t* compare_values, uint64_t timeout_hint,
                                 hsa_wait_state_t, hsa_signal_value_t* satisfying_value) {
  if (signal_count == 0 || !signals || !conditions || !compare_values) return UINT32_MAX;
  using clock = std::chrono::steady_clock;
  const bool bounded = timeout_hint != UINT64_MAX;
  const auto deadline = clock::now() + std::chrono::nanoseconds(bounded ? timeout_hint : 0);
  Runtime& rt = runtime();
  for (;;) {
    for (uint32_t i = 0; i < signal_count; ++i) {
      if (!signals[i].handle) continue;
      std::int64_t value = __atomic_load_n(value_of(signals[i]), __ATOMIC_ACQUIRE);
      if (condition_met(value, conditions[i], compare_values[i])) {
        if (satisfying_value) *satisfying_value = value;
        return i;
      }
    }
    if (bounded && clock::now() >= deadline) return UINT32_MAX;
    std::unique_lock lock(rt.signal_mutex);
    rt.signal_changed.wait_for(lock, kPollInterval);
  }
}

}  // extern "C"
