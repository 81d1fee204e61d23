// Streams and events: kernels on two streams, hipEventRecord / hipEventSynchronize /
// hipEventQuery / hipEventElapsedTime (the emulated kernel's time, which must be > 0),
// hipStreamWaitEvent across streams, hipStreamQuery, hipStreamSynchronize.
#include <vector>

#include "check.h"

__global__ void busy(float* data, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = data[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.5f + 1.0f;
  data[i] = x;
}

__global__ void add(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}

int main() {
  const int n = 4096;
  float *a, *b;
  CHECK_HIP(hipMalloc(&a, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&b, n * sizeof(float)));
  hipStream_t s1, s2;
  CHECK_HIP(hipStreamCreate(&s1));
  CHECK_HIP(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t start, stop, ready;
  CHECK_HIP(hipEventCreate(&start));
  CHECK_HIP(hipEventCreate(&stop));
  CHECK_HIP(hipEventCreateWithFlags(&ready, hipEventDisableTiming));

  CHECK_HIP(hipMemsetAsync(a, 0, n * sizeof(float), s1));
  CHECK_HIP(hipMemsetAsync(b, 0, n * sizeof(float), s2));
  CHECK_HIP(hipEventRecord(start, s1));
  hipLaunchKernelGGL(busy, dim3(n / 256), dim3(256), 0, s1, a, n, 200);
  CHECK_HIP(hipEventRecord(stop, s1));
  CHECK_HIP(hipEventRecord(ready, s1));
  // s2 waits for s1's kernel before adding its result.
  CHECK_HIP(hipStreamWaitEvent(s2, ready, 0));
  hipLaunchKernelGGL(add, dim3(n / 256), dim3(256), 0, s2, a, b, n);
  CHECK_HIP(hipEventSynchronize(stop));
  CHECK_HIP(hipEventQuery(stop));
  float ms = 0;
  CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
  std::printf("events: busy kernel took %.3f ms on the emulator\n", ms);
  CHECK(ms > 0);
  CHECK_HIP(hipStreamSynchronize(s2));
  CHECK_HIP(hipStreamQuery(s2));
  std::vector<float> host(n);
  CHECK_HIP(hipMemcpy(host.data(), b, n * sizeof(float), hipMemcpyDeviceToHost));
  float expected = 0;
  for (int r = 0; r < 200; ++r) expected = expected * 0.5f + 1.0f;
  for (float v : host) CHECK(v == expected);
  // An elapsed time needs timing events: hipEventDisableTiming gives an error.
  CHECK(hipEventElapsedTime(&ms, start, ready) != hipSuccess);

  CHECK_HIP(hipEventDestroy(start));
  CHECK_HIP(hipEventDestroy(stop));
  CHECK_HIP(hipEventDestroy(ready));
  CHECK_HIP(hipStreamDestroy(s1));
  CHECK_HIP(hipStreamDestroy(s2));
  CHECK_HIP(hipFree(a));
  CHECK_HIP(hipFree(b));
  std::printf("events: ok\n");
  return 0;
}
