// Error codes CLR returns over the emulated device: a launch with too many threads per
// block, an impossible allocation, hipFree of a pointer that is not one, hipSetDevice of a
// device that does not exist, hipGetLastError's reset, and hipGetErrorName.
#include <cstring>

#include "check.h"

__global__ void nothing(int* p) {
  if (p) *p = 1;
}

int main() {
  CHECK_HIP(hipSetDevice(0));
  CHECK(hipSetDevice(1) == hipErrorInvalidDevice);
  hipLaunchKernelGGL(nothing, dim3(1), dim3(2048), 0, 0, nullptr);  // more than 1024 threads
  hipError_t launch = hipGetLastError();
  std::printf("oversized block: %s\n", hipGetErrorName(launch));
  CHECK(launch != hipSuccess);
  CHECK(hipGetLastError() == hipSuccess);  // reset by the read
  void* huge = nullptr;
  hipError_t allocation = hipMalloc(&huge, size_t{1} << 62);
  std::printf("huge allocation: %s\n", hipGetErrorName(allocation));
  CHECK(allocation == hipErrorOutOfMemory);
  (void)hipGetLastError();
  int local = 0;
  hipError_t free_status = hipFree(&local);
  std::printf("hipFree of a stack address: %s\n", hipGetErrorName(free_status));
  CHECK(free_status != hipSuccess);
  (void)hipGetLastError();
  CHECK(std::strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0);
  // A correct launch still works afterwards.
  int* flag;
  CHECK_HIP(hipMalloc(&flag, sizeof(int)));
  CHECK_HIP(hipMemset(flag, 0, sizeof(int)));
  hipLaunchKernelGGL(nothing, dim3(1), dim3(64), 0, 0, flag);
  CHECK_HIP(hipGetLastError());
  int value = 0;
  CHECK_HIP(hipMemcpy(&value, flag, sizeof value, hipMemcpyDeviceToHost));
  CHECK(value == 1);
  CHECK_HIP(hipFree(flag));
  std::printf("errors: ok\n");
  return 0;
}
