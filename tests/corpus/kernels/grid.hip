// 2-D and 3-D grids whose workgroups are not multiples of 64 work-items.
#include "wavekit_corpus/hip_dialect.h"

// Workgroups of 13x7; out (height x width) is the transpose of in (width x height).
extern "C" __global__ void transpose_2d(const float* in, float* out, unsigned width,
                                        unsigned height) {
  unsigned x = WK_BLOCK_X * WK_BLOCK_DIM_X + WK_THREAD_X;
  unsigned y = WK_BLOCK_Y * WK_BLOCK_DIM_Y + WK_THREAD_Y;
  if (x < width && y < height) out[x * height + y] = in[y * width + x];
}

// Workgroups of 5x4x3; a 7-point stencil with clamped borders, summed in a fixed order.
extern "C" __global__ void stencil_3d(const float* in, float* out, unsigned nx, unsigned ny,
                                      unsigned nz) {
  unsigned x = WK_BLOCK_X * WK_BLOCK_DIM_X + WK_THREAD_X;
  unsigned y = WK_BLOCK_Y * WK_BLOCK_DIM_Y + WK_THREAD_Y;
  unsigned z = WK_BLOCK_Z * WK_BLOCK_DIM_Z + WK_THREAD_Z;
  if (x >= nx || y >= ny || z >= nz) return;
  auto at = [&](unsigned xx, unsigned yy, unsigned zz) { return in[(zz * ny + yy) * nx + xx]; };
  float sum = at(x, y, z);
  sum += at(x > 0 ? x - 1 : x, y, z);
  sum += at(x + 1 < nx ? x + 1 : x, y, z);
  sum += at(x, y > 0 ? y - 1 : y, z);
  sum += at(x, y + 1 < ny ? y + 1 : y, z);
  sum += at(x, y, z > 0 ? z - 1 : z);
  sum += at(x, y, z + 1 < nz ? z + 1 : z);
  out[(z * ny + y) * nx + x] = sum;
}
