// __constant__ and __device__ variables (hipMemcpyToSymbol, hipMemcpyFromSymbol,
// hipGetSymbolAddress, hipGetSymbolSize), static shared memory with __syncthreads, and dynamic
// shared memory (extern __shared__, the launch's shared-memory size).
#include <vector>

#include "check.h"

__constant__ float coefficients[16];
__device__ int counter;
__device__ int table[256];

__global__ void polynomial(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float value = 0;
  for (int k = 15; k >= 0; --k) value = value * x[i] + coefficients[k];
  y[i] = value;
  atomicAdd(&counter, 1);
}

__global__ void block_sum(const int* in, int* out) {  // static shared memory
  __shared__ int partial[256];
  int t = threadIdx.x;
  partial[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void reverse(int* data, int n) {  // dynamic shared memory
  extern __shared__ int staging[];
  int t = threadIdx.x;
  staging[t] = data[blockIdx.x * n + t];
  __syncthreads();
  data[blockIdx.x * n + t] = staging[n - 1 - t] + table[t % 256];
}

int main() {
  float c[16];
  for (int k = 0; k < 16; ++k) c[k] = 1.0f / static_cast<float>(k + 1);
  CHECK_HIP(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), c, sizeof c));
  int zero = 0;
  CHECK_HIP(hipMemcpyToSymbol(HIP_SYMBOL(counter), &zero, sizeof zero));
  size_t size = 0;
  CHECK_HIP(hipGetSymbolSize(&size, HIP_SYMBOL(table)));
  CHECK(size == 256 * sizeof(int));
  void* table_address = nullptr;
  CHECK_HIP(hipGetSymbolAddress(&table_address, HIP_SYMBOL(table)));
  std::vector<int> t(256);
  for (int i = 0; i < 256; ++i) t[i] = 1000 * i;
  CHECK_HIP(hipMemcpy(table_address, t.data(), size, hipMemcpyHostToDevice));

  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i) / n;
  float *dx, *dy;
  CHECK_HIP(hipMalloc(&dx, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&dy, n * sizeof(float)));
  CHECK_HIP(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(polynomial, dim3((n + 127) / 128), dim3(128), 0, 0, dx, dy, n);
  CHECK_HIP(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float value = 0;
    for (int k = 15; k >= 0; --k) value = value * x[i] + c[k];
    CHECK(std::abs(y[i] - value) <= 1e-5f * std::abs(value));
  }
  int count = 0;
  CHECK_HIP(hipMemcpyFromSymbol(&count, HIP_SYMBOL(counter), sizeof count));
  CHECK(count == n);

  const int blocks = 64;
  std::vector<int> in(blocks * 256), sums(blocks);
  for (int i = 0; i < blocks * 256; ++i) in[i] = i % 1000;
  int *din, *dsums;
  CHECK_HIP(hipMalloc(&din, in.size() * sizeof(int)));
  CHECK_HIP(hipMalloc(&dsums, blocks * sizeof(int)));
  CHECK_HIP(hipMemcpy(din, in.data(), in.size() * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(block_sum, dim3(blocks), dim3(256), 0, 0, din, dsums);
  CHECK_HIP(hipMemcpy(sums.data(), dsums, blocks * sizeof(int), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int expected = 0;
    for (int i = 0; i < 256; ++i) expected += in[b * 256 + i];
    CHECK(sums[b] == expected);
  }

  const int width = 512;  // 2 KiB of dynamic shared memory per block
  std::vector<int> data(blocks * width), result(blocks * width);
  for (int i = 0; i < blocks * width; ++i) data[i] = i;
  int* ddata;
  CHECK_HIP(hipMalloc(&ddata, data.size() * sizeof(int)));
  CHECK_HIP(hipMemcpy(ddata, data.data(), data.size() * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(reverse, dim3(blocks), dim3(width), width * sizeof(int), 0, ddata, width);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy(result.data(), ddata, data.size() * sizeof(int), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < width; ++i)
      CHECK(result[b * width + i] == data[b * width + width - 1 - i] + t[i % 256]);
  std::printf("symbols: ok\n");
  return 0;
}
