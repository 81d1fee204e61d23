// Kernels for what `wavekit launch` gives a kernel besides pointers and scalars, and for its
// deterministic schedule (launch_cli_test.cpp):
// dynamic LDS (HIP's dynamic shared memory, --lds), a struct passed by value (--arg struct:).
#include "wavekit_corpus/hip_dialect.h"

struct Params {
  int scale;
  float offset;
  unsigned long long mask;
  short tag;
};

// out[t] = lds[n-1-t] + offset + (mask & 0xff) + tag with lds[t] = t * scale: every work-item
// reads a word another wrote, so the LDS must hold the whole workgroup's n words.
extern "C" __global__ void dynamic_lds(unsigned* out, Params p) {
  extern __shared__ unsigned lds[];
  const unsigned t = WK_THREAD_X, n = WK_BLOCK_DIM_X;
  lds[t] = t * unsigned(p.scale);
  wk_syncthreads();
  out[WK_BLOCK_X * n + t] =
      lds[n - 1 - t] + unsigned(p.offset) + unsigned(p.mask & 0xff) + unsigned(p.tag);
}

// Every work-item adds its float into one sum: without unsafe FP atomics the compiler emits a
// compare-and-swap retry loop, whose retries (and the sum's rounding) depend on how the waves
// interleave -- the ground truth of such a kernel is reproducible only under a fixed schedule.
extern "C" __global__ void float_sum(const float* in, float* out) {
  wk_atomic_add(out, in[wk_global_id_x()]);
}

// An off-by-one of the kind real programs have (i <= n): one element past the buffer, inside
// the page a GPU maps for it.
extern "C" __global__ void one_past(unsigned* out, unsigned n) {
  const unsigned i = wk_global_id_x();
  if (i <= n) out[i] = i + 1;
}
