// Every lane waits until flag[0] is non-zero, then stores it: a kernel that only the host can
// release (the outside-progress tests of runtime_test.cpp).
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void spin_on_flag(volatile unsigned* flag, unsigned* out) {
  while (flag[0] == 0) {
  }
  out[WK_THREAD_X] = flag[0];
}
