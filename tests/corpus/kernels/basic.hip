// Several kernels in one object: straight-line float work, a guarded tail, data-dependent
// divergence and a data-dependent loop.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) c[i] = a[i] + b[i];
}

// Workgroups of 100 work-items: the second wave of each workgroup is partly empty.
extern "C" __global__ void saxpy_fma(float alpha, const float* x, float* y, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) y[i] = __builtin_fmaf(alpha, x[i], y[i]);
}

// Each lane runs the Collatz iteration for its own start value: loop trip counts differ per lane.
extern "C" __global__ void collatz_steps(const unsigned* start, unsigned* steps, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  unsigned value = start[i];
  unsigned count = 0;
  while (value > 1 && count < 1000) {
    value = (value & 1) ? 3 * value + 1 : value / 2;
    ++count;
  }
  steps[i] = count;
}

// Four-way divergence on the input value.
extern "C" __global__ void branchy(const int* in, int* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  int v = in[i];
  int r;
  switch (v & 3) {
    case 0:
      r = v * 7 - 3;
      break;
    case 1:
      r = v ^ 0x5a5a;
      break;
    case 2:
      r = v > 100 ? v / 3 : -v;
      break;
    default:
      r = static_cast<int>(static_cast<unsigned>(v) << 2) | 1;
      break;
  }
  out[i] = r;
}
