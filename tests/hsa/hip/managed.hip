// hipMallocManaged: memory the host and the kernel use at the same address.
#include "check.h"

__global__ void square(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * data[i];
}

int main() {
  const int n = 5000;
  int* data;
  CHECK_HIP(hipMallocManaged(&data, n * sizeof(int)));
  for (int i = 0; i < n; ++i) data[i] = i;
  hipLaunchKernelGGL(square, dim3((n + 255) / 256), dim3(256), 0, 0, data, n);
  CHECK_HIP(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i) CHECK(data[i] == i * i);
  CHECK_HIP(hipFree(data));
  std::printf("managed: ok\n");
  return 0;
}
