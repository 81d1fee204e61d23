// 16-bit integer arithmetic (unsigned short / short), which compiles to the v_*_u16 / v_*_i16
// instructions and the 16-bit compares. The arrays are 32-bit words holding two 16-bit values
// each (little-endian); work-item i handles the 16-bit value i.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void short_arith(const unsigned* a_words, const unsigned* b_words,
                                       unsigned* unsigned_out_words, unsigned* signed_out_words,
                                       unsigned n_words) {
  const auto* a = reinterpret_cast<const unsigned short*>(a_words);
  const auto* b = reinterpret_cast<const unsigned short*>(b_words);
  auto* unsigned_out = reinterpret_cast<unsigned short*>(unsigned_out_words);
  auto* signed_out = reinterpret_cast<short*>(signed_out_words);
  unsigned i = wk_global_id_x();
  if (i >= 2 * n_words) return;
  unsigned short x = a[i], y = b[i];
  unsigned short r = static_cast<unsigned short>(static_cast<unsigned short>(x * y) +
                                                 static_cast<unsigned short>(x >> (y & 7)));
  if (x == y) r = static_cast<unsigned short>(r - x);
  r = x < y ? r : static_cast<unsigned short>(r << 3);
  short p = static_cast<short>(x), q = static_cast<short>(y);
  short s = static_cast<short>((p > q ? p : q) - (p < q ? p : q));
  s = static_cast<short>(s >> (y & 3));
  if (p == q) s = 99;
  unsigned_out[i] = r;
  signed_out[i] = s;
}
