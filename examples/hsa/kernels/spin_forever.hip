// Every lane waits for flag[0] to become non-zero, and nothing ever sets it: a kernel that
// never finishes. A hang on a GPU; on the emulator a no-progress (deadlock) report.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void spin_forever(volatile unsigned* flag, unsigned* out) {
  unsigned i = wk_global_id_x();
  while (flag[0] == 0) {
  }
  out[i] = flag[0];
}
