// Built with hipcc --genco into a code object that module.hip loads (hipModuleLoad).
#include <hip/hip_runtime.h>

extern "C" __global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__device__ int module_global = 42;

extern "C" __global__ void read_global(int* out) { *out = module_global; }
