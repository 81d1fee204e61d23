#include "vector_math.h"

#include <atomic>
#include <cmath>

#if WAVEKIT_TUNE_LIBMVEC
#include <immintrin.h>

// glibc's vector ABI names ('d': AVX2, 'N4': four lanes, 'v': one vector argument).
extern "C" __m256d _ZGVdN4v_tanh(__m256d);
extern "C" __m256d _ZGVdN4v_exp(__m256d);
#endif

namespace wavekit::tune::detail {
namespace {

#if WAVEKIT_TUNE_LIBMVEC
// The tail goes through the same vector function, padded, so that a value's result does not
// depend on where in a row it falls (a row computed in pieces equals the row in one piece).
template <__m256d (*f)(__m256d)>
__attribute__((target("avx2"))) void apply_avx2(double* x, std::size_t n) {
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) _mm256_storeu_pd(x + k, f(_mm256_loadu_pd(x + k)));
  if (k < n) {
    alignas(32) double tail[4] = {0, 0, 0, 0};
    for (std::size_t t = 0; k + t < n; ++t) tail[t] = x[k + t];
    _mm256_store_pd(tail, f(_mm256_load_pd(tail)));
    for (std::size_t t = 0; k + t < n; ++t) x[k + t] = tail[t];
  }
}
#endif

std::atomic<bool> vector_enabled{true};
std::atomic<bool> loops_enabled{true};
std::atomic<bool> loops512_enabled{true};

}  // namespace

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

bool avx2_loops() { return loops_enabled.load(std::memory_order_relaxed) && cpu_has_avx2(); }

void enable_avx2_loops(bool enable) { loops_enabled.store(enable, std::memory_order_relaxed); }

bool avx512_loops() {
  // __builtin_cpu_supports checks that the OS saves the AVX-512 state too.
  static const bool has = __builtin_cpu_supports("avx512f");
  return has && avx2_loops() && loops512_enabled.load(std::memory_order_relaxed);
}

void enable_avx512_loops(bool enable) { loops512_enabled.store(enable, std::memory_order_relaxed); }

bool vector_math_active() {
#if WAVEKIT_TUNE_LIBMVEC
  return vector_enabled.load(std::memory_order_relaxed) && cpu_has_avx2();
#else
  return false;
#endif
}

void enable_vector_math(bool enable) { vector_enabled.store(enable, std::memory_order_relaxed); }

void tanh_in_place(double* x, std::size_t n) {
#if WAVEKIT_TUNE_LIBMVEC
  if (vector_math_active()) return apply_avx2<_ZGVdN4v_tanh>(x, n);
#endif
  for (std::size_t k = 0; k < n; ++k) x[k] = std::tanh(x[k]);
}

void exp_in_place(double* x, std::size_t n) {
#if WAVEKIT_TUNE_LIBMVEC
  if (vector_math_active()) return apply_avx2<_ZGVdN4v_exp>(x, n);
#endif
  for (std::size_t k = 0; k < n; ++k) x[k] = std::exp(x[k]);
}

}  // namespace wavekit::tune::detail
