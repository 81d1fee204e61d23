// The fault injector's probe (`wavekit fi`): after the chosen instruction, called uniformly
// (EXEC all ones) so that every execution counts, also one with no lane active, it flips one
// bit of the register passed by reference at the chosen dynamic instance, and records what it
// did in the wave's `fi` variable:
//   [0] executions of the instruction by this wave so far
//   [1] bit 0: the instance was reached, bit 1: a bit was flipped, bits 63:32 the lane
//   [2] the register's value before (bits 31:0) and after (bits 63:32)
//   [3] a flip fi_restore is to undo (read mode), [4] whether the register is a VGPR
// The instance is the wave's `execution`-th execution (from 0); a VGPR changes in the
// (lane_pick mod n)-th of the n lanes active at the point (exec), as the emulator's own
// injection chooses (wavekit/emu/emu.h, FaultInjection), so that the two can be compared.
#include "wavekit/probe/probe.h"

WAVEKIT_PROBE uint32_t fi_flip(wavekit::probe::Slot slot, uint32_t value, uint64_t* state,
                               uint32_t wave, uint32_t execution, uint32_t lane_pick,
                               uint32_t bit, uint64_t exec, uint32_t vgpr) {
  using wavekit::probe::Wave;
  Wave current(slot);
  if (current.wave_id() != wave) return value;
  const uint64_t seen = state[0];
  const uint32_t lane = Wave::lane();
  if (lane == 0) state[0] = seen + 1;
  if (seen != execution) return value;
  const uint32_t flipped = value ^ (1u << bit);
  if (lane == 0) state[4] = vgpr;
  if (!vgpr) {
    // An SGPR: the first lane's return value is taken (the call is uniform).
    if (lane == 0) {
      state[1] = 3;
      state[2] = value | uint64_t{flipped} << 32;
      state[3] = 1;
    }
    return flipped;
  }
  const uint32_t active = static_cast<uint32_t>(__builtin_popcountll(exec));
  if (active == 0) {
    if (lane == 0) state[1] = 1;
    return value;
  }
  uint64_t lanes = exec;
  for (uint32_t skip = lane_pick % active; skip; --skip) lanes &= lanes - 1;
  const uint32_t chosen = static_cast<uint32_t>(__builtin_ctzll(lanes));
  if (lane != chosen) return value;
  state[1] = 3 | uint64_t{chosen} << 32;
  state[2] = value | uint64_t{flipped} << 32;
  state[3] = 1;
  return flipped;
}

// The read mode (a store's data): `fi_flip` before the instruction, with [3] remembering the
// flip, then `fi_restore` after it puts the register back, so that only what the instruction
// read (what the store wrote) is corrupted, as emu::FaultInjection::read does.
WAVEKIT_PROBE uint32_t fi_restore(wavekit::probe::Slot slot, uint32_t value, uint64_t* state,
                                  uint32_t wave) {
  using wavekit::probe::Wave;
  Wave current(slot);
  if (current.wave_id() != wave || state[3] == 0) return value;
  const uint64_t recorded = state[1];
  const uint32_t lane = Wave::lane();
  if (lane == 0) state[3] = 0;
  // An SGPR (recorded lane 0, every lane returning): the value from before the flip.
  if (lane != static_cast<uint32_t>(recorded >> 32) && state[4] != 0) return value;
  return static_cast<uint32_t>(state[2]);
}
