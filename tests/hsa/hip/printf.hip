// Device printf (HIP's hostcall buffer, served by CLR's listener thread): ctest matches the
// lines it prints.
#include "check.h"

__global__ void hello(int base) {
  const int block = blockIdx.x, thread = threadIdx.x;
  if (thread % 32 == 0)
    printf("hello from block %d thread %d: %d %.2f %s\n", block, thread, base + thread,
           0.5 * thread, "ok");
}

int main() {
  hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0, 100);
  CHECK_HIP(hipDeviceSynchronize());
  std::printf("printf: done\n");
  return 0;
}
