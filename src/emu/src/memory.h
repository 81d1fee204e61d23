// Address translation and checking for emulated memory accesses, and the pending-operation
// queues that make loads complete only at the s_waitcnt that covers them.
#pragma once

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

// Reserves the next entry of `queue` (completing the oldest when full).
Pending& issue(Wave& wave, PendingQueue& queue);
// Completes entries from the oldest until at most `remaining` are outstanding.
void complete_until(Wave& wave, PendingQueue& queue, unsigned remaining);

}  // namespace wavekit::emu::detail
