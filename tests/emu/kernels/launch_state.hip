// Kernels whose outputs depend only on the launch state the emulator sets up (work-item ids,
// workgroup ids, the dispatch packet, the private segment), and one MFMA block layout; their
// references are in tests/emu/emu_launch_test.cpp.
#include "device.h"

// For every work-item inside the grid: its local ids packed x | y << 10 | z << 20 and its
// workgroup ids packed alike, at its linear position in the grid.
extern "C" __global__ void launch_ids(uint32_t* out) {
  const DispatchPacket* p = packet();
  uint32_t lx = local_x(), ly = local_y(), lz = local_z();
  uint32_t gx = group_x() * p->workgroup_size_x + lx;
  uint32_t gy = group_y() * p->workgroup_size_y + ly;
  uint32_t gz = group_z() * p->workgroup_size_z + lz;
  if (gx >= p->grid_size_x || gy >= p->grid_size_y || gz >= p->grid_size_z) return;
  uint32_t linear = (gz * p->grid_size_y + gy) * p->grid_size_x + gx;
  out[2 * linear + 0] = lx | (ly << 10) | (lz << 20);
  out[2 * linear + 1] = group_x() | (group_y() << 10) | (group_z() << 20);
}

typedef float float4_t __attribute__((ext_vector_type(4)));

// One v_mfma_f32_4x4x1f32 per wave: 16 blocks of 4x4 outer products.
extern "C" __global__ void mfma_4x4(const float* a, const float* b, float* out) {
  uint32_t lane = local_x() & 63;
  uint32_t wave = global_x() / 64;
  float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
  acc = __builtin_amdgcn_mfma_f32_4x4x1f32(a[wave * 64 + lane], b[wave * 64 + lane], acc, 0, 0, 0);
  for (int k = 0; k < 4; ++k) out[wave * 256 + lane * 4 + k] = acc[k];
}

// A per-lane array indexed at run time, which the compiler places in the private segment:
// out[i] = index[i] * 3 + local id, read back through scratch.
extern "C" __global__ void private_array(const uint32_t* index, uint32_t* out) {
  uint32_t values[256];
  for (uint32_t i = 0; i < 256; ++i) values[i] = i * 3 + local_x();
  out[global_x()] = values[index[global_x()] & 255];
}
