// Probes for the probe-library tests: a leaf probe, one that calls a helper with a private
// array, so that it needs scratch and makes a call, and one that tail-calls a helper. The
// helpers are static: only exported functions are probes.
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

// Needs more registers than the probe that tail-calls it.
static __attribute__((device, noinline)) void spread(uint64_t* out, uint32_t seed) {
  uint32_t lanes[16];
#pragma unroll
  for (uint32_t i = 0; i < 16; ++i) lanes[i] = seed * (2 * i + 1) ^ (seed >> (i + 1));
  uint64_t sum = 0;
#pragma unroll
  for (uint32_t i = 0; i < 16; ++i) sum += static_cast<uint64_t>(lanes[i]) * lanes[15 - i];
  *out += sum;
}

// Ends in `spread(...)`: clang -O2 makes that a sibling call (s_setpc_b64 to spread), so
// spread's registers are this probe's footprint too.
WAVEKIT_PROBE void tail_spread(wavekit::probe::Slot slot, uint32_t point, uint32_t value) {
  wavekit::probe::Wave wave(slot);
  spread(wave.variable<uint64_t>(64 + 8 * point), value);
}
