// Probes for the probe-library tests: a leaf probe, and one that calls a helper with a
// private array, so that it needs scratch and makes a call. The helper is static: only exported
// functions are probes.
#include "wavekit/probe/probe.h"

WAVEKIT_PROBE void count_hits(wavekit::probe::Slot slot, uint32_t point) {
  wavekit::probe::Wave wave(slot);
  if (wave.is_first_active_lane()) *wave.variable<uint64_t>(64 + 8 * point) += 1;
}

static __attribute__((device, noinline)) uint32_t scramble(uint32_t seed, uint32_t pick) {
  volatile uint32_t table[24];
#pragma unroll
  for (uint32_t i = 0; i < 24; ++i) table[i] = seed * (i + 1) ^ (seed >> i);
  return table[7] + table[23] * pick;
}

WAVEKIT_PROBE void record_scrambled(wavekit::probe::Slot slot, uint32_t point, uint32_t value) {
  wavekit::probe::Wave wave(slot);
  const uint32_t mixed = scramble(value, point + wave.lane());
  if (wave.is_first_active_lane()) *wave.variable<uint32_t>(64) = mixed;
}
