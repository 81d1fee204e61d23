// What a scattered 4-byte access costs the DRAM (docs/benchmarks/model.md, gaussian fan1): one
// float per 16 KiB row, 65,536 rows (1 GiB apart from anything else), read only, written only,
// or read from one array and written to another (fan1's shape). Run under Nsight Compute
// (dram__bytes_read.sum, dram__bytes_write.sum; caches flushed before each launch): the bytes per
// row tell a 32-byte sector from a 64-byte DRAM atom, and whether a partial write fetches its
// sector.
#include <cuda_runtime.h>

#include <cstdio>

constexpr int rows = 65536, stride = 4096;  // floats
__global__ void column_read(const float* a, float* sink) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = a[size_t(i) * stride];
  if (v == -1.0f) sink[0] = v;  // keeps the load; never true
}
__global__ void column_write(float* m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  m[size_t(i) * stride] = float(i);
}
__global__ void column_copy(const float* a, float* m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  m[size_t(i) * stride] = a[size_t(i) * stride] * 0.5f;
}
int main() {
  float *a, *m, *sink;
  const size_t bytes = size_t(rows) * stride * sizeof(float);
  cudaMalloc(&a, bytes);
  cudaMalloc(&m, bytes);
  cudaMalloc(&sink, 64);
  cudaMemset(a, 0, bytes);
  cudaMemset(m, 0, bytes);
  column_read<<<rows / 256, 256>>>(a, sink);
  column_write<<<rows / 256, 256>>>(m);
  column_copy<<<rows / 256, 256>>>(a, m);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
