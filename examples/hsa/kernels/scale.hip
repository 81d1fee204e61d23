// data[i] = data[i] * factor + offset: dispatched many times in a row by many_dispatches.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void scale_add(int* data, int factor, int offset, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) data[i] = data[i] * factor + offset;
}
