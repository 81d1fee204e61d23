// The first HIP program: hipMalloc, hipMemcpy both ways, a kernel launch, hipDeviceSynchronize,
// hipFree; the device's name and properties as CLR reads them from the emulated agent.
#include <cstring>
#include <vector>

#include "check.h"

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  int count = 0;
  CHECK_HIP(hipGetDeviceCount(&count));
  CHECK(count == 1);
  hipDeviceProp_t properties;
  CHECK_HIP(hipGetDeviceProperties(&properties, 0));
  const char* target = std::getenv("WAVEKIT_EMU_TARGET");
  std::printf("device: %s (%s), %d compute units, warp size %d\n", properties.name,
              properties.gcnArchName, properties.multiProcessorCount, properties.warpSize);
  CHECK(properties.warpSize == 64);
  CHECK(properties.multiProcessorCount > 0);
  if (target) CHECK(std::strncmp(properties.gcnArchName, target, std::strlen(target)) == 0);

  const int n = 10000;  // not a multiple of the block
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 2.0f * static_cast<float>(i);
  }
  float *da, *db, *dc;
  CHECK_HIP(hipMalloc(&da, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&db, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&dc, n * sizeof(float)));
  CHECK_HIP(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(vector_add, dim3((n + 255) / 256), dim3(256), 0, 0, da, db, dc, n);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipDeviceSynchronize());
  CHECK_HIP(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != 3.0f * static_cast<float>(i);
  std::printf("vector_add: %d of %d wrong\n", wrong, n);
  CHECK_HIP(hipFree(da));
  CHECK_HIP(hipFree(db));
  CHECK_HIP(hipFree(dc));
  return wrong != 0;
}
