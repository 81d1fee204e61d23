// NVIDIA's FLOP count of one call of each CUDA math function, the oracle for the model's
// counting of library calls (docs/model.md, docs/benchmarks/model.md): one kernel per function,
// out[i] = f(in[i]) over 2^20 inputs drawn uniformly from the range the HeCBench programs use;
// run under Nsight Compute with the FLOP metrics of run_h200.sh, FLOPs per call = (FADD + FMUL +
// 2 FFMA) / 2^20 (the load and store add none). Built twice: nvcc -O3, and with
// -use_fast_math (the aidw Makefile's flag).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#define F1(name, expr)                                                                  \
  __global__ void name(const float* __restrict__ in, float* __restrict__ out, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                    \
    if (i < n) {                                                                      \
      float x = in[i];                                                                \
      out[i] = (expr);                                                                \
    }                                                                                 \
  }
F1(f_copy, x)
F1(f_expf, expf(x))
F1(f_exp2f, exp2f(x))
F1(f_logf, logf(x))
F1(f_log2f, log2f(x))
F1(f_powf, powf(x, 2.5f + x))
F1(f_powf_int, powf(0.9f + 0.05f * x, float(int(x * 100))))
F1(f_tanhf, tanhf(x))
F1(f_tanhf_small, tanhf(0.25f * x))
F1(f_tanhf_large, tanhf(0.6f + x))
F1(f_sinf, sinf(x))
F1(f_cosf, cosf(x))
F1(f_fast_sinf, __sinf(x))
F1(f_fast_cosf, __cosf(x))
F1(f_sqrtf, sqrtf(x))
F1(f_rsqrtf, rsqrtf(x))
F1(f_div, 1.0f / x)
F1(f_sigmoid, 1.0f / (1.0f + expf(-x)))

int main() {
  const int n = 1 << 20;
  std::vector<float> h(n);
  unsigned long long s = 1;
  for (int i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    h[i] = 0.1f + 1.9f * float(s >> 40) / float(1 << 24);  // [0.1, 2): logs and powers defined
  }
  float *in, *out;
  cudaMalloc(&in, n * 4);
  cudaMalloc(&out, n * 4);
  cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice);
  const int b = 256, g = n / b;
  f_copy<<<g, b>>>(in, out, n);
  f_expf<<<g, b>>>(in, out, n);
  f_exp2f<<<g, b>>>(in, out, n);
  f_logf<<<g, b>>>(in, out, n);
  f_log2f<<<g, b>>>(in, out, n);
  f_powf<<<g, b>>>(in, out, n);
  f_powf_int<<<g, b>>>(in, out, n);
  f_tanhf<<<g, b>>>(in, out, n);
  f_tanhf_small<<<g, b>>>(in, out, n);
  f_tanhf_large<<<g, b>>>(in, out, n);
  f_sinf<<<g, b>>>(in, out, n);
  f_cosf<<<g, b>>>(in, out, n);
  f_fast_sinf<<<g, b>>>(in, out, n);
  f_fast_cosf<<<g, b>>>(in, out, n);
  f_sqrtf<<<g, b>>>(in, out, n);
  f_rsqrtf<<<g, b>>>(in, out, n);
  f_div<<<g, b>>>(in, out, n);
  f_sigmoid<<<g, b>>>(in, out, n);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
