// Packed half precision: two _Float16 per register (v_pk_* instructions).
#include "wavekit_corpus/hip_dialect.h"

typedef _Float16 half2 __attribute__((ext_vector_type(2)));

// out = a * b + c and maximum = max(a, c), each rounded to half after every operation.
extern "C" __global__ void packed_half(const half2* a, const half2* b, const half2* c, half2* out,
                                       half2* maximum, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  half2 product = a[i] * b[i];
  out[i] = product + c[i];
  maximum[i] = __builtin_elementwise_max(a[i], c[i]);
}
