// A kernel that calls a device function it does not define, the way an instrumented kernel
// calls a probe: linked with `ld.lld -shared --unresolved-symbols=ignore-all`, the call goes
// through a GOT slot with an R_AMDGPU_ABS64 relocation against an undefined STT_NOTYPE symbol.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __device__ __attribute__((visibility("default"))) int probe_add(int value);

extern "C" __global__ void call_probe(int* out) {
  unsigned lane = WK_THREAD_X;
  out[lane] = probe_add(static_cast<int>(lane));
}
