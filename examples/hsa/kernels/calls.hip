// A kernel that calls two device functions the compiler may not inline, so its code holds real
// `s_swappc_b64` call sites: the demo for `wavekit run --tool callret`, which reports what each
// call returned, per wave.
#include "wavekit_corpus/hip_dialect.h"

// One round of a multiplicative hash; `round` changes the multiplier so lanes differ.
__attribute__((noinline)) __device__ unsigned mix_round(unsigned x, unsigned round) {
  x ^= x >> 15;
  x *= 0x2c1b3c6du + 2 * round;
  x ^= x >> 12;
  return x;
}

// The larger of a hash and its input, capped at 2^31 - 1.
__attribute__((noinline)) __device__ unsigned capped_max(unsigned a, unsigned b) {
  unsigned larger = a > b ? a : b;
  return larger > 0x7fffffffu ? 0x7fffffffu : larger;
}

extern "C" __global__ void calls(const unsigned* input, unsigned* output, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  unsigned hashed = mix_round(input[i], i & 3);
  output[i] = capped_max(hashed, input[i]);
}
