/* What kernels/calls.hip computes, on the CPU: the examples' oracle, call by call. */
#ifndef WAVEKIT_EXAMPLES_CALLS_REFERENCE_H
#define WAVEKIT_EXAMPLES_CALLS_REFERENCE_H

static inline unsigned calls_mix_round(unsigned x, unsigned round) {
  x ^= x >> 15;
  x *= 0x2c1b3c6du + 2 * round;
  x ^= x >> 12;
  return x;
}

static inline unsigned calls_capped_max(unsigned a, unsigned b) {
  unsigned larger = a > b ? a : b;
  return larger > 0x7fffffffu ? 0x7fffffffu : larger;
}

static inline unsigned calls_reference(unsigned value, unsigned index) {
  return calls_capped_max(calls_mix_round(value, index & 3), value);
}

#endif
