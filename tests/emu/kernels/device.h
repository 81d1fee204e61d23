// Minimal HIP-dialect device environment for the emulator's test kernels: no HIP headers, no
// device libraries (clang-22 -x hip -nogpuinc -nogpulib), only clang builtins.
#pragma once
#include <stdint.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

struct DispatchPacket {
  uint16_t header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z;
};

__device__ static inline const DispatchPacket* packet() {
  return (const DispatchPacket*)__builtin_amdgcn_dispatch_ptr();
}
__device__ static inline uint32_t local_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ static inline uint32_t local_y() { return __builtin_amdgcn_workitem_id_y(); }
__device__ static inline uint32_t local_z() { return __builtin_amdgcn_workitem_id_z(); }
__device__ static inline uint32_t group_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ static inline uint32_t group_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ static inline uint32_t group_z() { return __builtin_amdgcn_workgroup_id_z(); }
__device__ static inline uint32_t global_x() { return group_x() * packet()->workgroup_size_x + local_x(); }
