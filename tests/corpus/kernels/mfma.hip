// Matrix cores: one v_mfma_f32_16x16x4f32 per wave (gfx908 and later).
#include "wavekit_corpus/hip_dialect.h"

typedef float float4_ __attribute__((ext_vector_type(4)));

// One wave per workgroup; workgroup g multiplies its own A (16x4, row-major) by B (4x16) and
// adds C (16x16) into D. Operand layout of the single-block 16x16x4 f32 instruction:
// lane l holds A[l % 16][l / 16] and B[l / 16][l % 16]; result register r of lane l is
// D[4 * (l / 16) + r][l % 16].
extern "C" __global__ void mfma_16x16x4(const float* a, const float* b, const float* c, float* d) {
  unsigned lane = WK_THREAD_X;
  unsigned g = WK_BLOCK_X;
  const float* ga = a + g * 64;
  const float* gb = b + g * 64;
  const float* gc = c + g * 256;
  float* gd = d + g * 256;
  unsigned low = lane % 16, high = lane / 16;
  float4_ acc;
  for (int r = 0; r < 4; ++r) acc[r] = gc[(4 * high + r) * 16 + low];
  acc = __builtin_amdgcn_mfma_f32_16x16x4f32(ga[low * 4 + high], gb[high * 16 + low], acc, 0, 0, 0);
  for (int r = 0; r < 4; ++r) gd[(4 * high + r) * 16 + low] = acc[r];
}
