// Probes for the probe-call tests: a block counter made of calls (what bbcount does inline), so
// that the emulator's block counts are the oracle for calls at every block of every kernel, and
// a probe that records its arguments, for the argument kinds.
#include "wavekit/probe/probe.h"

// Called uniformly (EXEC all ones): lane 0 counts for the wave, whatever the point's EXEC.
WAVEKIT_PROBE void count_block(wavekit::probe::Slot, uint64_t* counts, uint32_t block) {
  if (wavekit::probe::Wave::lane() == 0) counts[block] += 1;
}

// Keeps the last call's arguments (first active lane's view) and how often it was called.
struct Seen {
  uint64_t calls;
  uint64_t exec;
  uint64_t address;
  uint32_t constant;
  uint32_t sgpr;
};

WAVEKIT_PROBE void record_arguments(wavekit::probe::Slot, Seen* seen, uint32_t constant,
                                    uint64_t address, uint64_t exec, uint32_t sgpr) {
  if (!wavekit::probe::Wave::is_first_active_lane()) return;
  seen->calls += 1;
  seen->exec = exec;
  seen->address = address;
  seen->constant = constant;
  seen->sgpr = sgpr;
}

// Reads the dword that holds the first byte at each active lane's effective address (a wrong
// address faults on the emulator) and adds the active lanes' values to *sum. The dword, not the
// 4 bytes from the address: a 1- or 2-byte access at the end of a buffer would read past it.
WAVEKIT_PROBE void sum_loaded(wavekit::probe::Slot, uint64_t* sum, uint64_t address) {
  const uint32_t loaded = *reinterpret_cast<const uint32_t*>(address & ~uint64_t{3});
  uint64_t total = 0;
  for (uint64_t left = wavekit::probe::Wave::exec(); left != 0; left &= left - 1)
    total += static_cast<uint32_t>(
        __builtin_amdgcn_readlane(loaded, static_cast<int>(__builtin_ctzll(left))));
  if (wavekit::probe::Wave::is_first_active_lane()) *sum += total;
}

// A probe that calls a helper that calls further: the helper keeps its return address and a
// value live across its second call in its frame in scratch, so the call envelope's stack
// pointer (and on gfx908/gfx90a its scratch resource) must be right.
static __attribute__((device, noinline)) uint32_t mix2(uint32_t a, uint32_t b) {
  return (a * 31u) ^ (b + 17u);
}
static __attribute__((device, noinline)) uint32_t chain(uint32_t seed, uint32_t pick) {
  const uint32_t first = mix2(seed, pick);
  return mix2(first, seed) + first;
}

// counts[2 * block] counts the block's entries (uniform call: lane 0 for the wave);
// counts[2 * block + 1] gets chain(block, 0).
WAVEKIT_PROBE void count_block_deep(wavekit::probe::Slot, uint64_t* counts, uint32_t block) {
  const uint32_t mixed = chain(block, wavekit::probe::Wave::lane());
  if (wavekit::probe::Wave::lane() != 0) return;
  counts[2 * block] += 1;
  counts[2 * block + 1] = mixed;
}

// log_address's log, per wave: per call the point's original address, its EXEC and each
// executing lane's address (address_trace in probe_call_test.cpp reads it); calls past
// kAddressLogRecords are counted, not kept.
constexpr uint64_t kAddressLogRecords = 160;
struct AddressRecord {
  uint64_t pc;
  uint64_t exec;
  uint64_t addresses[64];
};
struct AddressLog {
  uint64_t count;
  AddressRecord records[kAddressLogRecords];
};

// Every lane reads the count in the same instruction before the first active lane advances it.
WAVEKIT_PROBE void log_address(wavekit::probe::Slot, AddressLog* log, uint64_t pc, uint64_t exec,
                               uint64_t address) {
  const uint64_t index = log->count;
  const bool first = wavekit::probe::Wave::is_first_active_lane();
  if (index < kAddressLogRecords) {
    AddressRecord& record = log->records[index];
    record.addresses[wavekit::probe::Wave::lane()] = address;
    if (first) {
      record.pc = pc;
      record.exec = exec;
    }
  }
  if (first) log->count = index + 1;
}

// Probes that change the register passed by reference (plan: register_reference): the return
// value is the register's new value.
WAVEKIT_PROBE uint32_t keep_dword(wavekit::probe::Slot, uint32_t value) { return value; }
WAVEKIT_PROBE uint64_t keep_pair(wavekit::probe::Slot, uint64_t value) { return value; }

// Flips `bit` of the value in lane `lane` (every wave): a fault injector's flip.
WAVEKIT_PROBE uint32_t flip_lane_bit(wavekit::probe::Slot, uint32_t value, uint32_t lane,
                                     uint32_t bit) {
  return wavekit::probe::Wave::lane() == lane ? value ^ (1u << bit) : value;
}

// The mask without `lane` (for EXEC or VCC).
WAVEKIT_PROBE uint64_t drop_lane(wavekit::probe::Slot, uint64_t mask, uint32_t lane) {
  return mask & ~(uint64_t{1} << lane);
}

// An SGPR plus `delta` (uniform).
WAVEKIT_PROBE uint32_t add_to_dword(wavekit::probe::Slot, uint32_t value, uint32_t delta) {
  return value + delta;
}

// What a replacing call computes in place of v_add_f32 (the instruction does not run): the
// product instead of the sum, through the destination passed by reference.
WAVEKIT_PROBE uint32_t multiply_floats(wavekit::probe::Slot, uint32_t, uint32_t x, uint32_t y) {
  return __builtin_bit_cast(uint32_t, __builtin_bit_cast(float, x) * __builtin_bit_cast(float, y));
}

// Each active lane's value into out[lane] (a 64-element per-wave variable).
WAVEKIT_PROBE void store_lane_value(wavekit::probe::Slot, uint32_t* out, uint32_t value) {
  out[wavekit::probe::Wave::lane()] = value;
}
