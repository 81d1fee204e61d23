// wavekit's HIP shim: half precision on clang's _Float16 (see hip_runtime.h).
#pragma once
#include <hip/hip_runtime.h>
typedef _Float16 __half;
struct __half2 {
  _Float16 x, y;
};
__host__ __device__ inline __half __float2half(float f) { return (_Float16)f; }
__host__ __device__ inline float __half2float(__half h) { return (float)h; }
__device__ inline __half __hadd(__half a, __half b) { return a + b; }
__device__ inline __half __hmul(__half a, __half b) { return a * b; }
__device__ inline __half __hfma(__half a, __half b, __half c) { return __builtin_fmaf16(a, b, c); }
