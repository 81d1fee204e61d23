// The other half of the probe-library recipe: defines the function the consumer calls. The
// build adds an STT_OBJECT alias `probe_add` at its address (llvm-objcopy --add-symbol),
// because the loader never exports functions across objects, only objects and kernels.
// It also carries a pointer-valued global, which the linker turns into an R_AMDGPU_RELATIVE64.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __device__ __attribute__((noinline)) int probe_add_impl(int value) { return value + 1000; }

__device__ int provider_table[4] = {10, 20, 30, 40};
__device__ int* provider_table_second = &provider_table[1];

extern "C" __global__ void provider_kernel(int* out, int scale) {
  unsigned lane = WK_THREAD_X;
  out[lane] = probe_add_impl(static_cast<int>(lane)) * scale + *provider_table_second;
}
