// What CLR tells about kernels and the device's occupancy (hipFuncGetAttributes,
// hipOccupancyMaxPotentialBlockSize, hipOccupancyMaxActiveBlocksPerMultiprocessor), a 3D grid
// with 3D blocks, 64-bit atomics, streams with priorities, and an event pair around an
// asynchronous copy.
#include <vector>

#include "check.h"

__global__ void grid3d(unsigned long long* sum, int* cells, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int id = (z * ny + y) * nx + x;
  cells[id] = id;
  atomicAdd(sum, static_cast<unsigned long long>(id));
}

__global__ void with_shared(float* out) {
  __shared__ float tile[1024];
  tile[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

int main() {
  hipFuncAttributes attributes;
  CHECK_HIP(hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(with_shared)));
  std::printf("with_shared: %zu bytes shared, %d max threads, %d registers\n",
              attributes.sharedSizeBytes, attributes.maxThreadsPerBlock, attributes.numRegs);
  CHECK(attributes.sharedSizeBytes == 1024 * sizeof(float));
  CHECK(attributes.maxThreadsPerBlock > 0);
  int grid = 0, block = 0;
  CHECK_HIP(hipOccupancyMaxPotentialBlockSize(&grid, &block, with_shared, 0, 0));
  CHECK(grid > 0 && block > 0 && block <= 1024);
  int blocks_per_cu = 0;
  CHECK_HIP(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_cu, with_shared, 256, 0));
  CHECK(blocks_per_cu > 0);

  const int nx = 16, ny = 12, nz = 10, n = nx * ny * nz;
  unsigned long long* sum;
  int* cells;
  CHECK_HIP(hipMalloc(&sum, sizeof *sum));
  CHECK_HIP(hipMalloc(&cells, n * sizeof(int)));
  CHECK_HIP(hipMemset(sum, 0, sizeof *sum));
  hipLaunchKernelGGL(grid3d, dim3(nx / 4, ny / 4, nz / 2), dim3(4, 4, 2), 0, 0, sum, cells, nx, ny);
  std::vector<int> host(n);
  unsigned long long total = 0;
  CHECK_HIP(hipMemcpy(host.data(), cells, n * sizeof(int), hipMemcpyDeviceToHost));
  CHECK_HIP(hipMemcpy(&total, sum, sizeof total, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(host[i] == i);
  CHECK(total == static_cast<unsigned long long>(n) * (n - 1) / 2);

  int least = 0, greatest = 0;
  CHECK_HIP(hipDeviceGetStreamPriorityRange(&least, &greatest));
  hipStream_t high;
  CHECK_HIP(hipStreamCreateWithPriority(&high, hipStreamDefault, greatest));
  const size_t bytes = 8 << 20;
  void *pinned, *device;
  CHECK_HIP(hipHostMalloc(&pinned, bytes));
  CHECK_HIP(hipMalloc(&device, bytes));
  hipEvent_t start, stop;
  CHECK_HIP(hipEventCreate(&start));
  CHECK_HIP(hipEventCreate(&stop));
  CHECK_HIP(hipEventRecord(start, high));
  CHECK_HIP(hipMemcpyAsync(device, pinned, bytes, hipMemcpyHostToDevice, high));
  CHECK_HIP(hipEventRecord(stop, high));
  CHECK_HIP(hipEventSynchronize(stop));
  float ms = -1;
  CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
  std::printf("8 MiB host-to-device copy: %.3f ms\n", ms);
  CHECK(ms >= 0);
  CHECK_HIP(hipEventDestroy(start));
  CHECK_HIP(hipEventDestroy(stop));
  CHECK_HIP(hipStreamDestroy(high));
  CHECK_HIP(hipHostFree(pinned));
  CHECK_HIP(hipFree(device));
  CHECK_HIP(hipFree(sum));
  CHECK_HIP(hipFree(cells));
  std::printf("kernels: ok\n");
  return 0;
}
