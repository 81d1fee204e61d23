// Kernels for the emulator's throughput benchmark: one dominated by 32-bit VALU arithmetic,
// one by global loads and stores.
#include "device.h"

extern "C" __global__ void valu_heavy(uint32_t* out, uint32_t iterations) {
  uint32_t i = global_x();
  uint32_t x = i, y = i ^ 0x9e3779b9u;
  float f = (float)i, g = 1.0f;
  for (uint32_t k = 0; k < iterations; ++k) {
    x = x * 1664525u + 1013904223u;
    y ^= x >> 7;
    f = f * 0.999f + 0.25f;
    g = g + f;
  }
  out[i] = x + y + (uint32_t)g;
}

extern "C" __global__ void memory_heavy(const uint32_t* in, uint32_t* out, uint32_t n,
                                        uint32_t rounds) {
  uint32_t i = global_x();
  uint32_t acc = 0;
  for (uint32_t r = 0; r < rounds; ++r) acc += in[(i + r * 64u) % n];
  out[i] = acc;
}
