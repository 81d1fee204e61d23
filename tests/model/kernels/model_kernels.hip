// Kernels whose counts the model tests know from the source formula (a CPU count of FLOPs,
// bytes and lanes), built through wavekit's HIP shim (src/model/hip/include) for gfx90a.
#include <hip/hip_runtime.h>

// 1 FMA (2 FLOP) per element; loads 8 B, stores 4 B per element.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Lane-dependent trip counts: element i runs i % 7 FMAs, so the active lanes vary per
// iteration (2 * sum(i % 7) FLOP).
extern "C" __global__ void ragged(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = x[i];
  int k = i % 7;
  for (int j = 0; j < k; ++j) acc = acc * 1.0001f + 0.5f;
  y[i] = acc;
}

// One IEEE division per element: NVIDIA counts its expansion as 10 FLOP.
extern "C" __global__ void divide(const float* x, const float* z, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / z[i];
}

// reps double FMAs per element (2 * reps * n FP64 FLOP), one double multiply after.
extern "C" __global__ void dloop(double a, const double* x, double* y, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double acc = x[i];
  for (int r = 0; r < reps; ++r) acc = fma(a, acc, 1.0);
  y[i] = acc * 3.0;
}

// A copy: DRAM reads 4n and writes 4n bytes.
extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

// Every element reads a 1 KiB table: DRAM reads the table once, not n times.
extern "C" __global__ void gather(const float* table, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = table[i % 256] + 1.0f;
}

// A block sum through LDS: each thread writes one float to LDS.
extern "C" __global__ void block_sum(const float* x, float* sums) {
  __shared__ float part[256];
  unsigned t = threadIdx.x;
  part[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = part[0];
}

// The same sum with its LDS sized at launch (extern __shared__: the launch's dynamic LDS).
extern "C" __global__ void dynamic_block_sum(const float* x, float* sums) {
  extern __shared__ float dynamic_part[];
  unsigned t = threadIdx.x;
  dynamic_part[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) dynamic_part[t] += dynamic_part[t + s];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = dynamic_part[0];
}

// expf per element: LLVM's expansion, counted as NVIDIA's expf (10 FLOP).
extern "C" __global__ void exponential(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = expf(x[i]);
}

// The fast __expf: a multiply by log2(e) and the hardware exp2, 1 FLOP as on NVIDIA.
extern "C" __global__ void fast_exponential(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __expf(x[i]);
}

// A C++ kernel (mangled name), found by its plain name.
template <typename T>
__global__ void scale(T* x, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * s;
}
template __global__ void scale<float>(float*, float, int);

// An integer division by a runtime value: clang expands it through v_rcp_iflag_f32 and a
// v_mul_f32, which are no FLOPs in NVIDIA's count (its expansion is integer); 1 FP32 add.
extern "C" __global__ void int_divide(const int* x, float* y, int d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = float(x[i] / d) + 0.5f;
}

// Library calls whose FLOPs NVIDIA counts differently from the AMD expansion, against Nsight
// Compute's count per call on the H200 (bench/model/h200/mathfuncs.csv, the same expressions):
// a reciprocal 1.0f / x (5 FLOP), rsqrtf (0), a sigmoid 1 / (1 + expf(-x)) (16: expf's 10, the
// add, the reciprocal's 5), sqrtf (6), logf (24), exp2f (0), powf (61 with the exponent's add).
extern "C" __global__ void f_div(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f / in[i];
}
extern "C" __global__ void f_rsqrtf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rsqrtf(in[i]);
}
extern "C" __global__ void f_sigmoid(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f / (1.0f + expf(-in[i]));
}
extern "C" __global__ void f_sqrtf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sqrtf(in[i]);
}
extern "C" __global__ void f_tanhf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tanhf(in[i]);
}
extern "C" __global__ void f_logf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = logf(in[i]);
}
extern "C" __global__ void f_exp2f(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = exp2f(in[i]);
}
// -use_fast_math's powf, the shim's under -ffast-math: the hardware log2 and exp2 and the
// multiply, NVIDIA's 1 FLOP (the exponent's add aside: 2 per call in mathfuncs.csv).
extern "C" __global__ void f_fast_powf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __builtin_exp2f((2.5f + in[i]) * __builtin_log2f(in[i]));
}
extern "C" __global__ void f_powf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = powf(in[i], 2.5f + in[i]);
}
// adam's shape: powf of a loop-invariant base inside a loop, whose log nvcc and clang both
// hoist: per thread one log part (37) and per iteration an exp part (24) and the add of 1 - p.
extern "C" __global__ void pow_loop(const float* in, float* out, float b, int steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float m = in[i];
  for (int t = 1; t <= steps; ++t) m += powf(b, float(t));
  out[i] = m;
}
// One float per row of `stride` floats: each load is one L2 sector of its own.
extern "C" __global__ void column(const float* x, float* y, int stride, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[size_t(i) * stride];
}

// Three independent loads, used one after another (HeCBench swish's SwishGradientKernel): clang
// issues them together and waits for each in turn (vmcnt(2), (1), (0)): one dependent phase.
extern "C" __global__ void three_loads(const float* a, const float* b, const float* c, float* y,
                                       int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = c[i] * (b[i] + 1.0f / (1.0f + __expf(-a[i])));
}

// An indexed load: the second load's address is the first one's value, two dependent phases.
extern "C" __global__ void indexed(const int* index, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[index[i]];
}

// Three fp64 divisions by kernel arguments (HeCBench che's Laplacian): the scheduler interleaves
// their expansions with each other and with the adds around them. NVIDIA's count per element:
// 5 DP FLOP of the source's own arithmetic and per division 15 DP + 2 SP.
extern "C" __global__ void three_divisions(const double* x, double* y, double a, double b,
                                           double c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (x[i] + 1.0) / a + (x[i] - 1.0) / b + x[i] * x[i] / c;
}

// HeCBench fhd's loop: clang pairs the two sums into packed FMAs, and one half of the second is
// written again at the loop's head before any read (dead across the back edge). Per iteration
// 10 FLOP: the phase's multiply, __sinf/__cosf's shared 1/2pi scaling, the two sums' 8.
extern "C" __global__ void phase_sums(const float* rmu, const float* imu, const float* x,
                                      float* out_r, float* out_i, int voxels, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float xn = x[i], r = out_r[i], im = out_i[i];
    for (int m = 0; m < voxels; m++) {
      float e = xn * rmu[m];
      float c = __cosf(e);
      float s = __sinf(e);
      r += rmu[m] * c - imu[m] * s;
      im += imu[m] * c + rmu[m] * s;
    }
    out_r[i] = r, out_i[i] = im;
  }
}
