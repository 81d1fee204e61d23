// Global atomics whose final values do not depend on the order the lanes run in.
#include "wavekit_corpus/hip_dialect.h"

// counters[0]: number of positive inputs; [1]: maximum; [2]: minimum.
// float_sum: sum of the inputs as floats (small integers, so every order gives the same sum).
// sum64: sum of the inputs as 64-bit values through a compare-and-swap loop.
extern "C" __global__ void global_atomics(const int* in, int* counters, float* float_sum,
                                          unsigned long long* sum64, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  int v = in[i];
  if (v > 0) wk_atomic_add(&counters[0], 1);
  __hip_atomic_fetch_max(&counters[1], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(&counters[2], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  wk_atomic_add(float_sum, static_cast<float>(v));
  unsigned long long expected = __hip_atomic_load(sum64, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  while (!__hip_atomic_compare_exchange_strong(sum64, &expected,
                                               expected + static_cast<long long>(v),
                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                               __HIP_MEMORY_SCOPE_AGENT)) {
  }
}
