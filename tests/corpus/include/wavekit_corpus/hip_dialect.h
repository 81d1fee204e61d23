// The few HIP spellings the corpus kernels use, defined on clang builtins so that the corpus
// compiles with clang-22 alone (-nogpulib -nogpuinc): no ROCm headers, no device libraries.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))

#ifndef __HIP_DEVICE_COMPILE__
// The host half of a HIP compilation (the fat-binary object) emits launch stubs that call
// hipLaunchKernel; a declaration is all it needs, nothing links against it.
struct dim3 {
  unsigned x, y, z;
};
extern "C" int hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args,
                               unsigned long shared_bytes, void* stream);
#endif

#define WK_THREAD_X __builtin_amdgcn_workitem_id_x()
#define WK_THREAD_Y __builtin_amdgcn_workitem_id_y()
#define WK_THREAD_Z __builtin_amdgcn_workitem_id_z()
#define WK_BLOCK_X __builtin_amdgcn_workgroup_id_x()
#define WK_BLOCK_Y __builtin_amdgcn_workgroup_id_y()
#define WK_BLOCK_Z __builtin_amdgcn_workgroup_id_z()
// Read from the implicit kernel arguments (COV5) or the dispatch packet (COV4).
#define WK_BLOCK_DIM_X __builtin_amdgcn_workgroup_size_x()
#define WK_BLOCK_DIM_Y __builtin_amdgcn_workgroup_size_y()
#define WK_BLOCK_DIM_Z __builtin_amdgcn_workgroup_size_z()

__device__ inline unsigned wk_global_id_x() { return WK_BLOCK_X * WK_BLOCK_DIM_X + WK_THREAD_X; }

// Lane index within the wave (0..63), from the active-lane count below this lane.
__device__ inline unsigned wk_lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

// __syncthreads(): make LDS and global writes visible to the workgroup, then wait for it.
__device__ inline void wk_syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

template <typename T>
__device__ inline T wk_atomic_add(T* address, T value) {
  return __hip_atomic_fetch_add(address, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
