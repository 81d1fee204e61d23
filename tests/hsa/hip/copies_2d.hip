// Rectangular copies over pitched rows: hipMemcpy2D host<->device and device->device,
// hipMemset2D, hipMemcpy2DAsync, hipMemcpyToSymbolAsync. (Not hipMallocPitch: CLR 5.2 allocates
// pitched memory as an image, and the emulator offers no images; docs/hip.md.)
#include <vector>

#include "check.h"

__constant__ int offset_value;

__global__ void add_offset(float* data, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < width && y < height)
    reinterpret_cast<float*>(reinterpret_cast<char*>(data) + y * pitch)[x] += offset_value;
}

int main() {
  const int width = 300, height = 70;
  std::vector<float> host(width * height), back(width * height, 0);
  for (int i = 0; i < width * height; ++i) host[i] = static_cast<float>(i);
  float *pitched, *other;
  const size_t pitch = 1280, other_pitch = 1536;  // bytes per row, more than a row's data
  CHECK_HIP(hipMalloc(&pitched, pitch * height));
  CHECK_HIP(hipMalloc(&other, other_pitch * height));
  CHECK_HIP(hipMemset2D(pitched, pitch, 0, width * sizeof(float), height));
  CHECK_HIP(hipMemcpy2D(pitched, pitch, host.data(), width * sizeof(float), width * sizeof(float),
                        height, hipMemcpyHostToDevice));
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  int offset = 1000;
  CHECK_HIP(hipMemcpyToSymbolAsync(HIP_SYMBOL(offset_value), &offset, sizeof offset, 0,
                                   hipMemcpyHostToDevice, stream));
  hipLaunchKernelGGL(add_offset, dim3((width + 63) / 64, height), dim3(64), 0, stream, pitched,
                     pitch, width, height);
  CHECK_HIP(hipMemcpy2DAsync(other, other_pitch, pitched, pitch, width * sizeof(float), height,
                             hipMemcpyDeviceToDevice, stream));
  CHECK_HIP(hipStreamSynchronize(stream));
  CHECK_HIP(hipMemcpy2D(back.data(), width * sizeof(float), other, other_pitch,
                        width * sizeof(float), height, hipMemcpyDeviceToHost));
  for (int i = 0; i < width * height; ++i) CHECK(back[i] == host[i] + 1000);
  CHECK_HIP(hipStreamDestroy(stream));
  CHECK_HIP(hipFree(pitched));
  CHECK_HIP(hipFree(other));
  std::printf("copies_2d: ok\n");
  return 0;
}
