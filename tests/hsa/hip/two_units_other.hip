#include "check.h"

__global__ void fill(int* data, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

void launch_fill(int* data, int n, int value) {
  hipLaunchKernelGGL(fill, dim3((n + 127) / 128), dim3(128), 0, 0, data, n, value);
  CHECK_HIP(hipGetLastError());
}
