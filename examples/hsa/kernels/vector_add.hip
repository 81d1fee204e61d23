// c[i] = a[i] + b[i] for i < n: the first kernel of examples/hsa.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
