// The layout of one wave's slot in the per-wave arena, shared by three parties that never see
// each other's code: the rewriter (which emits the entry prologue that fills the capture
// region), the probes (device code reading it through probe.h) and the host-side reporters
// (which decode the arena after the dispatch). Plain C++ with fixed-width types only, so the
// same header compiles for the host and for amdgcn in the HIP dialect.
//
// A wave's slot is `stride` bytes at `arena + offset`, where the wave's entry prologue claims
// `offset` with one atomic add of `stride` to ArenaHeader::next_slot: slots are handed out in
// the order waves start, not in wave order, which spares every wave the arithmetic of its
// linear id. The stride and every variable's offset come from the rewritten object's WAVEKIT
// note. The capture region is always first: the kernel's entry-only values (the hardware hands
// them over in registers the compiled code soon overwrites), saved once by the entry prologue.
// What follows from them and the dispatch's geometry (the wave's index in its workgroup, its
// linear id) is derived where it is needed: by the reporter on the host (wavekit::rewrite::
// read_arena) and by probe.h on the device.
#pragma once

#include <stdint.h>

namespace wavekit::probe {

struct CaptureRegion {
  uint64_t dispatch_ptr;     // the AQL dispatch packet (hsa_kernel_dispatch_packet_t)
  uint64_t kernarg_ptr;      // the kernel's argument segment
  uint32_t workgroup_id[3];  // x, y, z
  uint32_t first_workitem;   // lane 0's work-item id, packed: x | y << 10 | z << 20
  uint32_t reserved[8];      // zero
};

// Byte offsets, spelled out because the rewriter emits scalar stores to them and the
// static_asserts below pin them to the struct.
inline constexpr uint32_t kCaptureDispatchPtr = 0;
inline constexpr uint32_t kCaptureKernargPtr = 8;
inline constexpr uint32_t kCaptureWorkgroupId = 16;
inline constexpr uint32_t kCaptureFirstWorkitem = 28;
inline constexpr uint32_t kCaptureSize = 64;

static_assert(sizeof(CaptureRegion) == kCaptureSize);
static_assert(__builtin_offsetof(CaptureRegion, kernarg_ptr) == kCaptureKernargPtr);
static_assert(__builtin_offsetof(CaptureRegion, workgroup_id) == kCaptureWorkgroupId);
static_assert(__builtin_offsetof(CaptureRegion, first_workitem) == kCaptureFirstWorkitem);

// A packed work-item id (CaptureRegion::first_workitem; v0 on gfx90a and gfx942).
inline constexpr uint32_t workitem_component(uint32_t packed, unsigned dimension) {
  return (packed >> (10 * dimension)) & 0x3ffu;
}

// The first 64 bytes of the arena, filled by the launcher before the dispatch (the slots
// follow it): the dispatch geometry, for the reporter to number the waves the way the emulator
// and the hardware do, and the counter the prologues claim their slots from.
struct ArenaHeader {
  uint16_t workgroup_size[3];
  uint16_t waves_per_workgroup;  // ceil(x*y*z / 64)
  uint32_t grid_workgroups[3];   // ceil(grid_size / workgroup_size) per dimension
  uint32_t reserved0;
  uint64_t wave_count;  // slots after the header
  uint64_t stride;      // bytes per slot (from the WAVEKIT note)
  // Byte offset from the arena of the next unclaimed slot: kArenaHeaderSize before the
  // dispatch; each wave adds `stride` as it starts.
  uint64_t next_slot;
  uint8_t reserved1[16];
};
inline constexpr uint32_t kArenaHeaderSize = 64;
inline constexpr uint32_t kArenaNextSlot = 40;
static_assert(sizeof(ArenaHeader) == kArenaHeaderSize);
static_assert(__builtin_offsetof(ArenaHeader, grid_workgroups) == 8);
static_assert(__builtin_offsetof(ArenaHeader, wave_count) == 24);
static_assert(__builtin_offsetof(ArenaHeader, next_slot) == kArenaNextSlot);

}  // namespace wavekit::probe
