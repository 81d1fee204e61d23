// Host work ordered with the GPU's: hipStreamAddCallback runs after the kernel before it (and
// sees what it wrote); hipDeviceGetAttribute; hipMemAdvise and hipMemPrefetchAsync on managed
// memory.
#include <atomic>

#include "check.h"

__global__ void set(int* data, int value) { data[threadIdx.x] = value; }

static std::atomic<int> calls{0};
static int seen_by_callback = -1;

static void on_stream(hipStream_t, hipError_t status, void* data) {
  CHECK(status == hipSuccess);
  seen_by_callback = *static_cast<int*>(data);  // managed memory the kernel wrote
  ++calls;
}

int main() {
  int value = 0;
  CHECK_HIP(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxThreadsPerBlock, 0));
  CHECK(value == 1024);
  CHECK_HIP(hipDeviceGetAttribute(&value, hipDeviceAttributeWarpSize, 0));
  CHECK(value == 64);
  CHECK_HIP(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
  CHECK(value == 64 * 1024);

  int* data;
  CHECK_HIP(hipMallocManaged(&data, 64 * sizeof(int)));
  CHECK_HIP(hipMemAdvise(data, 64 * sizeof(int), hipMemAdviseSetCoarseGrain, 0));
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  CHECK_HIP(hipMemPrefetchAsync(data, 64 * sizeof(int), 0, stream));
  hipLaunchKernelGGL(set, dim3(1), dim3(64), 0, stream, data, 17);
  CHECK_HIP(hipStreamAddCallback(stream, on_stream, data, 0));
  CHECK_HIP(hipStreamAddCallback(stream, on_stream, data, 0));
  CHECK_HIP(hipStreamSynchronize(stream));
  CHECK(calls == 2);
  CHECK(seen_by_callback == 17);
  CHECK_HIP(hipStreamDestroy(stream));
  CHECK_HIP(hipFree(data));
  std::printf("callbacks: ok\n");
  return 0;
}
