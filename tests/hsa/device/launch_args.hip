// What `wavekit launch` gives a kernel besides pointers and scalars (launch_cli_test.cpp):
// dynamic LDS (HIP's dynamic shared memory, --lds) and a struct passed by value (--arg struct:).
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
