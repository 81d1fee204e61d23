// Non-inlined device functions, recursion (stack in scratch), a tail call and a dynamically
// indexed private array (scratch).
#include "wavekit_corpus/hip_dialect.h"

__attribute__((noinline)) __device__ int polynomial(int x, int degree) {
  int result = 0;
  for (int d = 0; d < degree; ++d) result = result * x + (d + 1);
  return result;
}

__attribute__((noinline)) __device__ int mix(int a, int b) { return (a * 31) ^ (b + 17); }

extern "C" __global__ void call_chain(const int* in, int* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  int v = in[i];
  out[i] = mix(polynomial(v, (v & 7) + 1), v);
}

__attribute__((noinline)) __device__ int fibonacci(int n) {
  if (n < 2) return n;
  return fibonacci(n - 1) + fibonacci(n - 2);
}

// Inputs are in [0, 15]: recursion depth differs per lane.
extern "C" __global__ void recursive_fib(const int* in, int* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) out[i] = fibonacci(in[i]);
}

// A private array indexed by data: lives in scratch.
extern "C" __global__ void scratch_array(const int* indices, int* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  volatile int table[32];
  for (int k = 0; k < 32; ++k) table[k] = k * k + static_cast<int>(i);
  int sum = 0;
  for (int k = 0; k < 4; ++k) sum += table[indices[i * 4 + k] & 31];
  out[i] = sum;
}

__attribute__((noinline)) __device__ int scaled_sum(int x, int k) {
  int result = 0;
  for (int d = 0; d < k; ++d) result = result * 3 + x;
  return result;
}

// `return f(...)` at -O2 is a sibling call: s_getpc_b64 / s_add_u32 / s_addc_u32 /
// s_setpc_b64 to scaled_sum, which returns straight to tail_call's caller.
__attribute__((noinline)) __device__ int shifted_scaled_sum(int x, int k) {
  return scaled_sum(x + 7, k & 3);
}

extern "C" __global__ void tail_call(const int* in, int* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  out[i] = shifted_scaled_sum(in[i], in[i] >> 4) + 1;
}
