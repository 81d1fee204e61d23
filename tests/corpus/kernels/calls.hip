// Non-inlined device functions, recursion (stack in scratch) and a dynamically indexed private
// array (scratch).
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
