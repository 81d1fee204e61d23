// Two translation units, each with its own kernels and fat binary (two
// __hipRegisterFatBinary calls), launched from one program.
#include <vector>

#include "check.h"

void launch_fill(int* data, int n, int value);  // two_units_other.hip

__global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

int main() {
  const int n = 2000;
  int* data;
  CHECK_HIP(hipMalloc(&data, n * sizeof(int)));
  launch_fill(data, n, 5);
  hipLaunchKernelGGL(increment, dim3((n + 255) / 256), dim3(256), 0, 0, data, n);
  std::vector<int> host(n);
  CHECK_HIP(hipMemcpy(host.data(), data, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(host[i] == 5 + i);
  CHECK_HIP(hipFree(data));
  std::printf("two_units: ok\n");
  return 0;
}
