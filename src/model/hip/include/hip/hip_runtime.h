// wavekit's HIP shim: the HIP spellings device code uses (and declarations of the host API the
// host half of a HIP source names), on clang builtins, so that a HIP source builds for gfx90a
// with clang-22 alone (-x hip --offload-device-only -nogpulib -nogpuinc): no ROCm headers and
// no device libraries. Math functions map to clang builtins the AMDGPU backend lowers itself
// (f32 sqrt/exp/log/sin/cos, f64 sqrt, fma, fabs, min/max, floor...); functions it cannot lower
// without the device libraries (powf, f64 exp/log/sin...) fail to build, naming the function.
#pragma once

#include <stddef.h>
#include <stdint.h>
// clang's cuda_wrappers/<new> (reached through <algorithm>) names ::malloc and ::free.
#include <stdlib.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, 1024)))
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
      : x(x_), y(y_), z(z_) {}
};

#ifdef __HIP_DEVICE_COMPILE__
struct __wk_thread_idx {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workitem_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workitem_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workitem_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __wk_block_idx {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workgroup_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workgroup_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workgroup_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __wk_block_dim {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workgroup_size_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workgroup_size_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workgroup_size_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __wk_grid_dim {
  __device__ unsigned get_x() const {
    return __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x();
  }
  __device__ unsigned get_y() const {
    return __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y();
  }
  __device__ unsigned get_z() const {
    return __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z();
  }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
static constexpr __device__ __wk_thread_idx threadIdx;
static constexpr __device__ __wk_block_idx blockIdx;
static constexpr __device__ __wk_block_dim blockDim;
static constexpr __device__ __wk_grid_dim gridDim;
static constexpr int warpSize = 64;
#else
struct __wk_host_idx {
  unsigned x, y, z;
};
extern __wk_host_idx threadIdx, blockIdx, blockDim, gridDim;
static constexpr int warpSize = 64;
#endif

__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ inline void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__device__ inline void __threadfence_block() {
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
}

// Vector types (the layout HIP gives them: 3-component types unpadded) and make_*.
#define WK_VEC2(T, N, A)                    \
  struct __attribute__((aligned(A))) N##2 { \
    T x, y;                                 \
  };                                        \
  __host__ __device__ inline N##2 make_##N##2(T x, T y) { return {x, y}; }
#define WK_VEC3(T, N) \
  struct N##3 {       \
    T x, y, z;        \
  };                  \
  __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) { return {x, y, z}; }
#define WK_VEC4(T, N, A)                    \
  struct __attribute__((aligned(A))) N##4 { \
    T x, y, z, w;                           \
  };                                        \
  __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
#define WK_VECS(T, N, S)                                                        \
  WK_VEC2(T, N, 2 * S) WK_VEC3(T, N) WK_VEC4(T, N, 4 * S) struct N##1 { T x; }; \
  __host__ __device__ inline N##1 make_##N##1(T x) { return {x}; }
WK_VECS(float, float, 4)
WK_VECS(double, double, 8)
WK_VECS(int, int, 4)
WK_VECS(unsigned int, uint, 4)
WK_VECS(char, char, 1)
WK_VECS(unsigned char, uchar, 1)
WK_VECS(short, short, 2)
WK_VECS(unsigned short, ushort, 2)
WK_VECS(long long, longlong, 8)
WK_VECS(unsigned long long, ulonglong, 8)
typedef unsigned int uint;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
#define WK_VOPS(N)                                                                             \
  __host__ __device__ inline N##2 operator+(N##2 a, N##2 b) { return {a.x + b.x, a.y + b.y}; } \
  __host__ __device__ inline N##2 operator-(N##2 a, N##2 b) { return {a.x - b.x, a.y - b.y}; } \
  __host__ __device__ inline N##2 operator*(N##2 a, N##2 b) { return {a.x * b.x, a.y * b.y}; } \
  __host__ __device__ inline N##4 operator+(N##4 a, N##4 b) {                                  \
    return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};                                       \
  }                                                                                            \
  __host__ __device__ inline N##4 operator-(N##4 a, N##4 b) {                                  \
    return {a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w};                                       \
  }                                                                                            \
  __host__ __device__ inline N##4 operator*(N##4 a, N##4 b) {                                  \
    return {a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w};                                       \
  }                                                                                            \
  __host__ __device__ inline N##3 operator+(N##3 a, N##3 b) {                                  \
    return {a.x + b.x, a.y + b.y, a.z + b.z};                                                  \
  }                                                                                            \
  __host__ __device__ inline N##3 operator-(N##3 a, N##3 b) {                                  \
    return {a.x - b.x, a.y - b.y, a.z - b.z};                                                  \
  }                                                                                            \
  __host__ __device__ inline N##3 operator*(N##3 a, N##3 b) {                                  \
    return {a.x * b.x, a.y * b.y, a.z * b.z};                                                  \
  }
WK_VOPS(float)
WK_VOPS(double)
__device__ inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x, r = 0;
  for (int i = 0; i < 4; ++i) r |= ((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return unsigned(r);
}

// Math, f32 and f64, on builtins the backend lowers.
// Device overloads only: the host's <math.h> declares the host functions of the same names.
#define WK_F1(name, builtin) \
  __device__ inline float name(float x) { return builtin(x); }
#define WK_D1(name, builtin) \
  __device__ inline double name(double x) { return builtin(x); }
#ifdef WAVEKIT_MATH_CLANG_CUDA
// WAVEKIT_MATH_CLANG_CUDA: the math of a clang -x cuda build against CUDA 12.6's libdevice
// (gpuFLOPBench's RTX 3080 build), where it differs from nvcc's in FLOPs: clang sets no
// __CUDA_PREC_SQRT for libdevice, so sqrtf is sqrt.approx.f32 (MUFU.SQRT: no FLOPs; nvcc's
// IEEE sqrtf is 6), and its tanhf branches (below). Read from the SASS of clang-22 with that
// libdevice and ptxas 12.6 (docs/benchmarks/model.md).
__device__ inline float sqrtf(float x) { return __builtin_amdgcn_sqrtf(x); }
#else
WK_F1(sqrtf, __builtin_sqrtf)
#endif
WK_F1(fabsf, __builtin_fabsf)
WK_F1(floorf, __builtin_floorf)
WK_F1(ceilf, __builtin_ceilf)
WK_F1(truncf, __builtin_truncf)
WK_F1(roundf, __builtin_roundf)
WK_F1(rintf, __builtin_rintf)
WK_F1(expf, __builtin_expf)
WK_F1(exp2f, __builtin_exp2f)
WK_F1(log2f, __builtin_log2f)
#ifdef __FAST_MATH__
// With -ffast-math, as nvcc's -use_fast_math: the hardware log2/exp2 and one multiply (NVIDIA's
// MUFU.LG2/EX2 and an FMUL: 1 FLOP, bench/model/h200/mathfuncs.csv).
__device__ inline float logf(float x) { return __builtin_logf(x); }
__device__ inline float powf(float x, float y) { return __builtin_exp2f(y * __builtin_log2f(x)); }
#else
// The accurate powf is marked for the model's count (src/model/src/binary.cpp), which charges
// NVIDIA's expansion, measured on the H200 (bench/model/h200/mathfuncs.csv), instead of these
// instructions: the hardware log2 of |x| (v_log_f32_e64 of an |operand|: its log part, 37 FLOP)
// and the hardware exp2 of |y log2 x|, inverted for a negative exponent (v_exp_f32_e64 of an
// |operand|: its exp part, 24 FLOP with the multiply). Encodings clang does not choose for these
// operations itself, from intrinsics without side effects (so that clang hoists a loop-invariant
// log as nvcc does, and keeps values in registers across them: inline assembly would not).
// Denormals are flushed and powf of a negative x is that of |x|: the counts are NVIDIA's, the
// values close to its. (The accurate logf is LLVM's expansion, recognised by its constants.)
__device__ inline float logf(float x) { return __builtin_logf(x); }
__device__ inline float powf(float x, float y) {
  float t = y * __builtin_amdgcn_logf(__builtin_fabsf(x));
  float r = __builtin_amdgcn_exp2f(__builtin_fabsf(t));
  return t < 0 ? __builtin_amdgcn_rcpf(r) : r;
}
#endif
WK_F1(log10f, __builtin_log10f)
WK_F1(sinf, __builtin_sinf)
WK_F1(cosf, __builtin_cosf)
WK_D1(fabs, __builtin_fabs)
WK_D1(floor, __builtin_floor)
WK_D1(ceil, __builtin_ceil)
WK_D1(trunc, __builtin_trunc)
WK_D1(rint, __builtin_rint)
__device__ inline double sqrt(double x) { return __builtin_sqrt(x); }
__device__ inline float sqrt(float x) { return __builtin_sqrtf(x); }
__device__ inline float fabs(float x) { return __builtin_fabsf(x); }
// The hardware reciprocal square root, as nvcc's rsqrtf (MUFU.RSQ alone: no FLOPs in NVIDIA's
// count, bench/model/h200/mathfuncs.csv); a division by sqrtf would count 16.
__device__ inline float rsqrtf(float x) { return __builtin_amdgcn_rsqf(x); }
__device__ inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
// The float overloads HIP's <cmath> gives device code (exp(x) of a float is expf).
__device__ inline float exp(float x) { return __builtin_expf(x); }
__device__ inline float log(float x) { return logf(x); }
__device__ inline float sin(float x) { return __builtin_sinf(x); }
__device__ inline float cos(float x) { return __builtin_cosf(x); }
__device__ inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__device__ inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__device__ inline float fminf(float a, float b) { return __builtin_fminf(a, b); }
__device__ inline float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__device__ inline double fmin(double a, double b) { return __builtin_fmin(a, b); }
__device__ inline double fmax(double a, double b) { return __builtin_fmax(a, b); }
__device__ inline float __fdividef(float a, float b) { return a * __builtin_amdgcn_rcpf(b); }
// The fast intrinsic: 2^(x log2 e), one multiply and the hardware exp2 (NVIDIA's FMUL and
// MUFU.EX2), not expf's range reduction.
__device__ inline float __expf(float x) { return __builtin_amdgcn_exp2f(x * 1.44269504f); }
__device__ inline float __logf(float x) { return __builtin_logf(x); }
__device__ inline float __sinf(float x) { return __builtin_sinf(x); }
__device__ inline float __cosf(float x) { return __builtin_cosf(x); }
__device__ inline float __frsqrt_rn(float x) { return 1.0f / __builtin_sqrtf(x); }

#ifdef WAVEKIT_MATH_CLANG_CUDA
// CUDA 12.6 libdevice's tanhf in operations: for |x| >= 0.6, 1 - 2 r with r the hardware
// reciprocal of 2^(2|x| log2 e) + 1 (FMUL, MUFU.EX2, FADD, MUFU.RCP, FFMA: 4 FLOP), 1 from
// where tanhf rounds to 1; below, x + x^3 P(x^2) with P of degree 3 in FFMAs, its product by x^2
// an FFMA with zero as libdevice's is (FMUL and 5 FFMA: 11 FLOP). P is tanh's Taylor series
// (ours; relative error below 1e-4 on [0, 0.6)).
__device__ inline float tanhf(float x) {
  const float a = __builtin_fabsf(x);
  if (a >= 0.6f) {
    const float r = __builtin_amdgcn_rcpf(__builtin_amdgcn_exp2f(2.885390043f * a) + 1.0f);
    return __builtin_copysignf(a >= 9.01f ? 1.0f : __builtin_fmaf(r, -2.0f, 1.0f), x);
  }
  const float x2 = x * x;
  float p = __builtin_fmaf(x2, 62.0f / 2835.0f, -17.0f / 315.0f);
  p = __builtin_fmaf(p, x2, 2.0f / 15.0f);
  p = __builtin_fmaf(p, x2, -1.0f / 3.0f);
  p = __builtin_fmaf(p, x2, 0.0f);
  return __builtin_fmaf(p, x, x);
}
#else
// tanhf as 1 - 2 / (2^(2|x| log2 e) + 1) with the sign of x: an exp2 and a division, the shape
// of NVIDIA's (MUFU.EX2 and a reciprocal); not its small-|x| polynomial, so the FLOPs differ.
__device__ inline float tanhf(float x) {
  float e = __builtin_exp2f(2.885390043f * __builtin_fabsf(x));
  return __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
}
#endif
__device__ inline float __saturatef(float x) {
  return __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f);
}
__device__ inline int __float2int_rn(float x) { return int(__builtin_rintf(x)); }
__device__ inline int __float2int_rz(float x) { return int(x); }
__device__ inline unsigned __popc(unsigned x) { return __builtin_popcount(x); }
__device__ inline int __clz(int x) { return x ? __builtin_clz(unsigned(x)) : 32; }
__device__ inline int __ffs(int x) { return __builtin_ffs(x); }
__device__ inline unsigned __umulhi(unsigned a, unsigned b) {
  return unsigned((unsigned long long)a * b >> 32);
}
__device__ inline int __mul24(int a, int b) { return a * b; }
// A read-only-cache load on NVIDIA; a plain load here.
template <typename T>
__device__ inline T __ldg(const T* p) {
  return *p;
}
__device__ inline float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__device__ inline int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__device__ inline unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
__device__ inline float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
__device__ inline double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__device__ inline long long __double_as_longlong(double x) {
  return __builtin_bit_cast(long long, x);
}
// Wave-wide shuffles on ds_bpermute (wave64; width divides 64).
__device__ inline int __wk_lane() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
__device__ inline int __shfl(int v, int src, int width = 64) {
  int lane = __wk_lane();
  int target = (lane & ~(width - 1)) + (src & (width - 1));
  return __builtin_amdgcn_ds_bpermute(target << 2, v);
}
__device__ inline float __shfl(float v, int src, int width = 64) {
  return __int_as_float(__shfl(__float_as_int(v), src, width));
}
__device__ inline int __shfl_down(int v, unsigned delta, int width = 64) {
  int lane = __wk_lane();
  int target = (lane & (width - 1)) + int(delta) < width ? lane + int(delta) : lane;
  return __builtin_amdgcn_ds_bpermute(target << 2, v);
}
__device__ inline float __shfl_down(float v, unsigned delta, int width = 64) {
  return __int_as_float(__shfl_down(__float_as_int(v), delta, width));
}
__device__ inline int __shfl_xor(int v, int mask, int width = 64) {
  int lane = __wk_lane();
  int target = lane ^ mask;
  if ((target & ~(width - 1)) != (lane & ~(width - 1))) target = lane;
  return __builtin_amdgcn_ds_bpermute(target << 2, v);
}
__device__ inline float __shfl_xor(float v, int mask, int width = 64) {
  return __int_as_float(__shfl_xor(__float_as_int(v), mask, width));
}
template <typename T>
__host__ __device__ inline T min(T a, T b) {
  return a < b ? a : b;
}
template <typename T>
__host__ __device__ inline T max(T a, T b) {
  return a > b ? a : b;
}

// Atomics.
template <typename T>
__device__ inline T atomicAdd(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T>
__device__ inline T atomicMax(T* p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T>
__device__ inline T atomicMin(T* p, T v) {
  return __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T>
__device__ inline T atomicExch(T* p, T v) {
  return __hip_atomic_exchange(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T>
__device__ inline T atomicCAS(T* p, T compare, T v) {
  __hip_atomic_compare_exchange_strong(p, &compare, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return compare;
}

// The host API a HIP program's host half names (declarations only: the device-only build
// parses the host code but never links it).
typedef int hipError_t;
#define hipSuccess 0
enum hipMemcpyKind {
  hipMemcpyHostToHost,
  hipMemcpyHostToDevice,
  hipMemcpyDeviceToHost,
  hipMemcpyDeviceToDevice,
  hipMemcpyDefault
};
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
struct hipDeviceProp_t {
  char name[256];
  size_t totalGlobalMem;
  int multiProcessorCount;
  int warpSize;
  int maxThreadsPerBlock;
};
hipError_t hipMalloc(void** p, size_t bytes);
template <typename T>
hipError_t hipMalloc(T** p, size_t bytes) {
  return hipMalloc((void**)p, bytes);
}
hipError_t hipHostMalloc(void** p, size_t bytes, unsigned flags = 0);
template <typename T>
hipError_t hipHostMalloc(T** p, size_t bytes, unsigned flags = 0) {
  return hipHostMalloc((void**)p, bytes, flags);
}
hipError_t hipMallocManaged(void** p, size_t bytes, unsigned flags = 1);
template <typename T>
hipError_t hipMallocManaged(T** p, size_t bytes, unsigned flags = 1) {
  return hipMallocManaged((void**)p, bytes, flags);
}
hipError_t hipFree(void* p);
hipError_t hipHostFree(void* p);
hipError_t hipMemcpy(void* dst, const void* src, size_t bytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind,
                          hipStream_t s = 0);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset = 0,
                             hipMemcpyKind kind = hipMemcpyHostToDevice);
hipError_t hipMemset(void* p, int value, size_t bytes);
hipError_t hipMemsetAsync(void* p, int value, size_t bytes, hipStream_t s = 0);
hipError_t hipDeviceSynchronize();
hipError_t hipGetLastError();
hipError_t hipPeekAtLastError();
const char* hipGetErrorString(hipError_t);
hipError_t hipSetDevice(int);
hipError_t hipGetDevice(int*);
hipError_t hipGetDeviceProperties(hipDeviceProp_t*, int);
hipError_t hipStreamCreate(hipStream_t*);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipEventCreate(hipEvent_t*);
hipError_t hipEventRecord(hipEvent_t, hipStream_t = 0);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipEventElapsedTime(float*, hipEvent_t, hipEvent_t);
hipError_t hipEventDestroy(hipEvent_t);
hipError_t hipFuncSetAttribute(const void*, int, int);
extern "C" int hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args,
                               size_t shared_bytes, hipStream_t stream);
extern "C" unsigned __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0,
                                               hipStream_t stream = 0);
extern "C" hipError_t __hipPopCallConfiguration(dim3* grid, dim3* block, size_t* shared,
                                                hipStream_t* stream);
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
  kernel<<<(grid), (block), (shared), (stream)>>>(__VA_ARGS__)
