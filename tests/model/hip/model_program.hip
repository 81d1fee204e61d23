// A HIP program for the model's whole-program path (`wavekit model run`): two kernels whose
// counts follow from the source, launched by the program's own host code, which checks its
// results against the CPU. Per launch of n elements:
//   saxpy        y = a*x + y: n fused multiply-adds (2n fp32 FLOP), 8n bytes loaded, 4n stored
//   scale_double v = s*v:     n fp64 multiplies (n fp64 FLOP), 8n bytes loaded, 8n stored
//   fill<T>      v = value:   no FLOPs, n*sizeof(T) bytes stored
// saxpy runs kSaxpyLaunches times, scale_double once, fill<float> and then fill<double> once
// each (two kernels of one base name, as a profiler names both "fill"); n is not a multiple of
// the block, so the last block's idle lanes must not count.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

constexpr int kElements = 10000;
constexpr int kBlock = 256;
constexpr int kSaxpyLaunches = 3;

__global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}

__global__ void scale_double(double* v, double s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= s;
}

template <typename T>
__global__ void fill(T* v, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = value;
}

#define CHECK(call)                                                       \
  do {                                                                    \
    hipError_t status = (call);                                           \
    if (status != hipSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, hipGetErrorString(status)); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main() {
  std::vector<float> x(kElements), y(kElements), expected(kElements);
  std::vector<double> v(kElements);
  for (int i = 0; i < kElements; ++i) {
    x[i] = float(i % 97) * 0.25f;
    y[i] = expected[i] = float(i % 13);
    v[i] = double(i);
  }
  float *dx, *dy;
  double* dv;
  CHECK(hipMalloc(&dx, kElements * sizeof(float)));
  CHECK(hipMalloc(&dy, kElements * sizeof(float)));
  CHECK(hipMalloc(&dv, kElements * sizeof(double)));
  CHECK(hipMemcpy(dx, x.data(), kElements * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), kElements * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dv, v.data(), kElements * sizeof(double), hipMemcpyHostToDevice));
  const int blocks = (kElements + kBlock - 1) / kBlock;
  for (int launch = 0; launch < kSaxpyLaunches; ++launch) {
    saxpy<<<blocks, kBlock>>>(2.0f, dx, dy, kElements);
    for (int i = 0; i < kElements; ++i) expected[i] = std::fma(2.0f, x[i], expected[i]);
  }
  scale_double<<<blocks, kBlock>>>(dv, 0.5, kElements);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(y.data(), dy, kElements * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(v.data(), dv, kElements * sizeof(double), hipMemcpyDeviceToHost));
  float* dfilled_f;
  double* dfilled_d;
  CHECK(hipMalloc(&dfilled_f, kElements * sizeof(float)));
  CHECK(hipMalloc(&dfilled_d, kElements * sizeof(double)));
  fill<float><<<blocks, kBlock>>>(dfilled_f, 3.0f, kElements);
  fill<double><<<blocks, kBlock>>>(dfilled_d, 4.0, kElements);
  std::vector<float> filled_f(kElements);
  std::vector<double> filled_d(kElements);
  CHECK(hipMemcpy(filled_f.data(), dfilled_f, kElements * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(filled_d.data(), dfilled_d, kElements * sizeof(double), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < kElements; ++i)
    wrong +=
        y[i] != expected[i] || v[i] != double(i) * 0.5 || filled_f[i] != 3.0f || filled_d[i] != 4.0;
  std::printf("model_program: %d elements, %d wrong\n", kElements, wrong);
  return wrong ? 1 : 0;
}
