// wavekit's HIP shim: the HIP spellings device code uses (and declarations of the host API the
// host half of a HIP source names), on clang builtins, so that a HIP source builds for gfx90a
// with clang-22 alone (-x hip --offload-device-only -nogpulib -nogpuinc): no ROCm headers and
// no device libraries. Math functions map to clang builtins the AMDGPU backend lowers itself
// (f32 sqrt/exp/log/sin/cos, f64 sqrt, fma, fabs, min/max, floor...); functions it cannot lower
// without the device libraries (powf, f64 exp/log/sin...) fail to build, naming the function.
#pragma once

#include <stddef.h>
#include <stdint.h>

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
  __host__ __device__ constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
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
  __device__ unsigned get_x() const { return __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z(); }
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
struct __wk_host_idx { unsigned x, y, z; };
extern __wk_host_idx threadIdx, blockIdx, blockDim, gridDim;
static constexpr int warpSize = 64;
#endif

__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ inline void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__device__ inline void __threadfence_block() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }

// Math, f32 and f64, on builtins the backend lowers.
#define WK_F1(name, builtin) \
  __host__ __device__ inline float name(float x) { return builtin(x); }
#define WK_D1(name, builtin) \
  __host__ __device__ inline double name(double x) { return builtin(x); }
WK_F1(sqrtf, __builtin_sqrtf)
WK_F1(fabsf, __builtin_fabsf)
WK_F1(floorf, __builtin_floorf)
WK_F1(ceilf, __builtin_ceilf)
WK_F1(truncf, __builtin_truncf)
WK_F1(roundf, __builtin_roundf)
WK_F1(rintf, __builtin_rintf)
WK_F1(expf, __builtin_expf)
WK_F1(exp2f, __builtin_exp2f)
WK_F1(logf, __builtin_logf)
WK_F1(log2f, __builtin_log2f)
WK_F1(log10f, __builtin_log10f)
WK_F1(sinf, __builtin_sinf)
WK_F1(cosf, __builtin_cosf)
WK_D1(fabs, __builtin_fabs)
WK_D1(floor, __builtin_floor)
WK_D1(ceil, __builtin_ceil)
WK_D1(trunc, __builtin_trunc)
WK_D1(rint, __builtin_rint)
__host__ __device__ inline double sqrt(double x) { return __builtin_sqrt(x); }
__host__ __device__ inline float sqrt(float x) { return __builtin_sqrtf(x); }
__host__ __device__ inline float fabs(float x) { return __builtin_fabsf(x); }
__host__ __device__ inline float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
__host__ __device__ inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
__host__ __device__ inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__host__ __device__ inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__host__ __device__ inline float fminf(float a, float b) { return __builtin_fminf(a, b); }
__host__ __device__ inline float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__host__ __device__ inline double fmin(double a, double b) { return __builtin_fmin(a, b); }
__host__ __device__ inline double fmax(double a, double b) { return __builtin_fmax(a, b); }
__host__ __device__ inline float __fdividef(float a, float b) { return a * __builtin_amdgcn_rcpf(b); }
__host__ __device__ inline float __expf(float x) { return __builtin_expf(x); }
__host__ __device__ inline float __logf(float x) { return __builtin_logf(x); }
__host__ __device__ inline float __sinf(float x) { return __builtin_sinf(x); }
__host__ __device__ inline float __cosf(float x) { return __builtin_cosf(x); }
__host__ __device__ inline float __frsqrt_rn(float x) { return 1.0f / __builtin_sqrtf(x); }
template <typename T> __host__ __device__ inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> __host__ __device__ inline T max(T a, T b) { return a > b ? a : b; }

// Atomics.
template <typename T> __device__ inline T atomicAdd(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicMax(T* p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicMin(T* p, T v) {
  return __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicExch(T* p, T v) {
  return __hip_atomic_exchange(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicCAS(T* p, T compare, T v) {
  __hip_atomic_compare_exchange_strong(p, &compare, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return compare;
}

// The host API a HIP program's host half names (declarations only: the device-only build
// parses the host code but never links it).
typedef int hipError_t;
#define hipSuccess 0
enum hipMemcpyKind { hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost,
                     hipMemcpyDeviceToDevice, hipMemcpyDefault };
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
struct hipDeviceProp_t { char name[256]; size_t totalGlobalMem; int multiProcessorCount; int warpSize; int maxThreadsPerBlock; };
hipError_t hipMalloc(void** p, size_t bytes);
template <typename T> hipError_t hipMalloc(T** p, size_t bytes) { return hipMalloc((void**)p, bytes); }
hipError_t hipHostMalloc(void** p, size_t bytes, unsigned flags = 0);
template <typename T> hipError_t hipHostMalloc(T** p, size_t bytes, unsigned flags = 0) { return hipHostMalloc((void**)p, bytes, flags); }
hipError_t hipMallocManaged(void** p, size_t bytes, unsigned flags = 1);
template <typename T> hipError_t hipMallocManaged(T** p, size_t bytes, unsigned flags = 1) { return hipMallocManaged((void**)p, bytes, flags); }
hipError_t hipFree(void* p);
hipError_t hipHostFree(void* p);
hipError_t hipMemcpy(void* dst, const void* src, size_t bytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t s = 0);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset = 0, hipMemcpyKind kind = hipMemcpyHostToDevice);
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
extern "C" int hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes, hipStream_t stream);
extern "C" unsigned __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, hipStream_t stream = 0);
extern "C" hipError_t __hipPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, hipStream_t* stream);
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
  kernel<<<(grid), (block), (shared), (stream)>>>(__VA_ARGS__)
