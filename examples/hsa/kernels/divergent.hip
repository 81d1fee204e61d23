// Data-dependent divergence: each lane takes one of four paths chosen by its input and then
// loops a data-dependent number of times (Collatz steps), so the waves' executed basic blocks
// differ lane by lane. The demo kernel for `wavekit run --tool bbcount`.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void divergent(const unsigned* input, unsigned* output, unsigned n) {
  unsigned i = wk_global_id_x();
  if (i >= n) return;
  unsigned value = input[i];
  unsigned result;
  switch (value & 3) {
    case 0: result = value * 3; break;
    case 1: result = value ^ 0x5a5a5a5au; break;
    case 2: result = value >> 2; break;
    default: result = value + 12345; break;
  }
  unsigned steps = 0;
  for (unsigned x = (value % 97) + 1; x != 1 && steps < 1000; ++steps) x = (x & 1) ? 3 * x + 1 : x / 2;
  output[i] = result + steps;
}
