// Address translation and checking for emulated memory accesses, and the pending-operation
// queues that make loads complete only at the s_waitcnt that covers them.
#pragma once

#include <cstdint>
#include <cstring>

#include "internal.h"

namespace wavekit::emu::detail {

// Translates a global (host) address after checking [address, address + size) against the
// dispatch's memory map; nullptr (and a fault recorded on the wave) when outside.
std::uint8_t* global_pointer(Wave& wave, std::uint64_t address, unsigned size, unsigned access);

// Whether a write at `address`, which global_pointer or flat_pointer has just accepted, is the
// program's own and so counts as progress: one into MemoryMap::kToolMemory is not. LDS and
// private (aperture) addresses are the program's.
bool program_write(const Wave& wave, std::uint64_t address);

// A per-lane private (scratch) address -> host address in this wave's scratch region, with the
// hardware's swizzle (dword elements interleaved across the 64 lanes); nullptr + fault outside.
std::uint8_t* private_pointer(Wave& wave, std::uint32_t lane_address, unsigned lane, unsigned size);

// LDS byte offset -> host address in the workgroup's LDS; nullptr + fault outside.
std::uint8_t* lds_pointer(Wave& wave, std::uint64_t offset, unsigned size);

// A generic (flat) address: LDS, private or global by aperture.
std::uint8_t* flat_pointer(Wave& wave, std::uint64_t address, unsigned lane, unsigned size,
                           unsigned access);

// Device stores reach memory that the host and other waves access at the same time (the
// hostcall ring's sequence words), so each element must reach memory as one store of its
// size, as on the hardware. std::memcpy with a size known only at run time does not promise
// that: glibc copies 4..7 bytes with two overlapping 4-byte moves, and a value the host stored
// between the two was overwritten with the old one (a hostcall request serviced twice,
// docs/hostcall.md). Relaxed atomics are single plain moves on x86-64 that the compiler may
// not split, repeat or merge; a misaligned element (the ISA allows those) is copied once.
inline void store_element(std::uint8_t* pointer, std::uint32_t value, unsigned bytes) {
  const auto at = reinterpret_cast<std::uintptr_t>(pointer);
  if (bytes == 1) {
    __atomic_store_n(pointer, std::uint8_t(value), __ATOMIC_RELAXED);
  } else if (bytes == 2) {
    if (at % 2 == 0)
      __atomic_store_n(reinterpret_cast<std::uint16_t*>(pointer), std::uint16_t(value),
                       __ATOMIC_RELAXED);
    else
      std::memcpy(pointer, &value, 2);
  } else if (at % 4 == 0) {
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(pointer), value, __ATOMIC_RELAXED);
  } else {
    std::memcpy(pointer, &value, 4);
  }
}

// An aligned 64-bit access (a dwordx2 at an 8-byte boundary) is single-copy atomic on the
// hardware: the compiler lowers 64-bit atomic loads and stores to plain dwordx2 accesses.
inline bool single_copy_64(const std::uint8_t* pointer, unsigned bytes) {
  return bytes == 8 && reinterpret_cast<std::uintptr_t>(pointer) % 8 == 0;
}
inline void store_64(std::uint8_t* pointer, std::uint32_t low, std::uint32_t high) {
  __atomic_store_n(reinterpret_cast<std::uint64_t*>(pointer), std::uint64_t{high} << 32 | low,
                   __ATOMIC_RELAXED);
}
inline std::uint64_t load_64(const std::uint8_t* pointer) {
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(pointer), __ATOMIC_RELAXED);
}

// Reserves the next entry of `queue` (completing the oldest when full).
Pending& issue(Wave& wave, PendingQueue& queue);
// Completes entries from the oldest until at most `remaining` are outstanding.
void complete_until(Wave& wave, PendingQueue& queue, unsigned remaining);

}  // namespace wavekit::emu::detail
