// Double precision including division (expanded into div_scale/div_fmas/div_fixup), and 64-bit
// integer division (expanded into a long integer sequence).
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void dp_divide(const double* a, const double* b, double* out, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i < n) out[i] = a[i] / b[i] + a[i] * b[i];
}

extern "C" __global__ void int64_divide(const unsigned long long* a, const unsigned long long* b,
                                        const long long* sa, const long long* sb,
                                        unsigned long long* quotient,
                                        unsigned long long* remainder, long long* signed_quotient,
                                        unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  quotient[i] = a[i] / b[i];
  remainder[i] = a[i] % b[i];
  signed_quotient[i] = sa[i] / sb[i];
}
