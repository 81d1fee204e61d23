// LDS with barriers: a tree reduction, a reversal through LDS, and an LDS histogram merged into
// global memory with atomics.
#include "wavekit_corpus/hip_dialect.h"

// 256 work-items per workgroup; one partial sum per workgroup.
extern "C" __global__ void block_reduce_sum(const unsigned* in, unsigned* block_sums) {
  __shared__ unsigned partial[256];
  unsigned t = WK_THREAD_X;
  partial[t] = in[wk_global_id_x()];
  wk_syncthreads();
  for (unsigned stride = 128; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    wk_syncthreads();
  }
  if (t == 0) block_sums[WK_BLOCK_X] = partial[0];
}

// Workgroups of 200 work-items (not a multiple of 64) reverse their slice through LDS.
extern "C" __global__ void lds_reverse(const int* in, int* out) {
  __shared__ int slice[200];
  unsigned t = WK_THREAD_X;
  unsigned size = WK_BLOCK_DIM_X;
  unsigned base = WK_BLOCK_X * size;
  slice[t] = in[base + t];
  wk_syncthreads();
  out[base + t] = slice[size - 1 - t];
}

// 64-bin histogram of in[i] % 64: LDS atomics per workgroup, then one global atomic per bin.
extern "C" __global__ void lds_histogram(const unsigned* in, unsigned* histogram, unsigned n) {
  __shared__ unsigned bins[64];
  unsigned t = WK_THREAD_X;
  if (t < 64) bins[t] = 0;
  wk_syncthreads();
  unsigned i = wk_global_id_x();
  if (i < n) __hip_atomic_fetch_add(&bins[in[i] % 64], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  wk_syncthreads();
  if (t < 64) wk_atomic_add(&histogram[t], bins[t]);
}
