// Host memory the GPU uses in place: hipHostRegister / hipHostGetDevicePointer / hipHostUnregister
// of pageable memory (registered twice, copied to and from while registered), hipHostMalloc with
// hipHostMallocMapped, system-scope atomics from a kernel on pinned memory,
// hipPointerGetAttributes of each kind of memory, and hipMemGetInfo.
#include <vector>

#include "check.h"

__global__ void add_index(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

__global__ void count(int* counter) { atomicAdd_system(counter, 1); }

int main() {
  const int n = 10000;
  std::vector<int> pageable(n, 1);
  CHECK_HIP(hipHostRegister(pageable.data(), n * sizeof(int), hipHostRegisterDefault));
  int* device_view = nullptr;
  CHECK_HIP(hipHostGetDevicePointer(reinterpret_cast<void**>(&device_view), pageable.data(), 0));
  hipLaunchKernelGGL(add_index, dim3((n + 255) / 256), dim3(256), 0, 0, device_view, n);
  CHECK_HIP(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i) CHECK(pageable[i] == 1 + i);
  hipPointerAttribute_t registered;
  CHECK_HIP(hipPointerGetAttributes(&registered, pageable.data()));
  CHECK(registered.memoryType == hipMemoryTypeHost);
  CHECK(registered.hostPointer == pageable.data());
  CHECK(registered.devicePointer == device_view);
  // Copies from and into registered memory (CLR takes its pinned path).
  int* staging;
  CHECK_HIP(hipMalloc(&staging, n * sizeof(int)));
  CHECK_HIP(hipMemcpy(staging, pageable.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(add_index, dim3((n + 255) / 256), dim3(256), 0, 0, staging, n);
  CHECK_HIP(hipMemcpy(pageable.data(), staging, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(pageable[i] == 1 + 2 * i);
  CHECK_HIP(hipFree(staging));
  CHECK_HIP(hipHostUnregister(pageable.data()));
  CHECK(hipHostUnregister(pageable.data()) == hipErrorHostMemoryNotRegistered);
  // Registered again, a part of it: the same memory, the kernel's writes in place.
  CHECK_HIP(hipHostRegister(pageable.data() + 1000, 1000 * sizeof(int), hipHostRegisterDefault));
  CHECK_HIP(
      hipHostGetDevicePointer(reinterpret_cast<void**>(&device_view), pageable.data() + 1000, 0));
  hipLaunchKernelGGL(add_index, dim3(4), dim3(256), 0, 0, device_view, 1000);
  CHECK_HIP(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i)
    CHECK(pageable[i] == 1 + 2 * i + (i >= 1000 && i < 2000 ? i - 1000 : 0));
  CHECK_HIP(hipHostUnregister(pageable.data() + 1000));

  int* mapped;
  CHECK_HIP(hipHostMalloc(&mapped, sizeof(int), hipHostMallocMapped));
  *mapped = 0;
  hipLaunchKernelGGL(count, dim3(20), dim3(128), 0, 0, mapped);
  CHECK_HIP(hipDeviceSynchronize());
  CHECK(*mapped == 20 * 128);

  int* device;
  CHECK_HIP(hipMalloc(&device, n * sizeof(int)));
  hipPointerAttribute_t attributes;
  CHECK_HIP(hipPointerGetAttributes(&attributes, device));
  CHECK(attributes.memoryType == hipMemoryTypeDevice);
  CHECK(attributes.devicePointer == device);
  CHECK_HIP(hipPointerGetAttributes(&attributes, device + 10));  // inside the allocation
  CHECK(attributes.memoryType == hipMemoryTypeDevice);
  CHECK_HIP(hipPointerGetAttributes(&attributes, mapped));
  CHECK(attributes.memoryType == hipMemoryTypeHost);
  CHECK(attributes.hostPointer == mapped);

  size_t free_bytes = 0, total_bytes = 0;
  CHECK_HIP(hipMemGetInfo(&free_bytes, &total_bytes));
  std::printf("hipMemGetInfo: %zu MiB free of %zu MiB\n", free_bytes >> 20, total_bytes >> 20);
  CHECK(total_bytes > 0 && free_bytes <= total_bytes);

  CHECK_HIP(hipFree(device));
  CHECK_HIP(hipHostFree(mapped));
  std::printf("host_memory: ok\n");
  return 0;
}
