// A kernel that loops without end while storing every iteration, which no-progress detection
// cannot tell from work: only a launch budget stops it (launch_cli_test.cpp).
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void store_forever(volatile unsigned* out) {
  for (unsigned i = 0;; ++i) out[WK_THREAD_X] = i;
}
