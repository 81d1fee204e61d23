// The layout of one wave's slot in the per-wave arena, shared by three parties that never see
// each other's code: the rewriter (which emits the entry prologue that fills the capture
// region), the probes (device code reading it through probe.h) and the host-side reporters
// (which decode the arena after the dispatch). Plain C++ with fixed-width types only, so the
// same header compiles for the host and for amdgcn in the HIP dialect.
//
// A wave's slot is `stride` bytes at `arena + kArenaHeaderSize + wave_id * stride`, where the
// stride and every variable's offset come from the rewritten object's WAVEKIT note. The capture
// region is always first: the kernel's entry-only values (the hardware hands them over in registers
// the compiled code soon overwrites), saved once by the entry prologue.
#pragma once

#include <stdint.h>

namespace wavekit::probe {

struct CaptureRegion {
  uint64_t dispatch_ptr;         // the AQL dispatch packet (hsa_kernel_dispatch_packet_t)
  uint64_t kernarg_ptr;          // the kernel's argument segment
  uint32_t workgroup_id[3];      // x, y, z
  uint32_t wave_in_workgroup;    // first active lane's flat work-item id / 64
  uint64_t wave_id;              // linear workgroup id * waves per workgroup + wave_in_workgroup
  uint16_t workgroup_size[3];    // from the dispatch packet
  uint16_t waves_per_workgroup;  // ceil(workgroup_size x*y*z / 64)
  uint32_t grid_workgroups[3];   // ceil(grid_size / workgroup_size) per dimension
  uint32_t entered;  // 1 once the prologue ran (a wave whose slot reads 0 never started)
};

// Byte offsets, spelled out because the rewriter emits scalar stores to them and the
// static_asserts below pin them to the struct.
inline constexpr uint32_t kCaptureDispatchPtr = 0;
inline constexpr uint32_t kCaptureKernargPtr = 8;
inline constexpr uint32_t kCaptureWorkgroupId = 16;
inline constexpr uint32_t kCaptureWaveInWorkgroup = 28;
inline constexpr uint32_t kCaptureWaveId = 32;
inline constexpr uint32_t kCaptureWorkgroupSize = 40;
inline constexpr uint32_t kCaptureWavesPerWorkgroup = 46;
inline constexpr uint32_t kCaptureGridWorkgroups = 48;
inline constexpr uint32_t kCaptureEntered = 60;
inline constexpr uint32_t kCaptureSize = 64;

static_assert(sizeof(CaptureRegion) == kCaptureSize);
static_assert(__builtin_offsetof(CaptureRegion, kernarg_ptr) == kCaptureKernargPtr);
static_assert(__builtin_offsetof(CaptureRegion, workgroup_id) == kCaptureWorkgroupId);
static_assert(__builtin_offsetof(CaptureRegion, wave_in_workgroup) == kCaptureWaveInWorkgroup);
static_assert(__builtin_offsetof(CaptureRegion, wave_id) == kCaptureWaveId);
static_assert(__builtin_offsetof(CaptureRegion, workgroup_size) == kCaptureWorkgroupSize);
static_assert(__builtin_offsetof(CaptureRegion, waves_per_workgroup) == kCaptureWavesPerWorkgroup);
static_assert(__builtin_offsetof(CaptureRegion, grid_workgroups) == kCaptureGridWorkgroups);
static_assert(__builtin_offsetof(CaptureRegion, entered) == kCaptureEntered);

// The first 64 bytes of the arena, filled by the launcher before the dispatch (the slots
// follow it): the dispatch geometry the prologue needs to number waves the way the emulator
// and the hardware do, without dividing on the GPU.
struct ArenaHeader {
  uint16_t workgroup_size[3];
  uint16_t waves_per_workgroup;  // ceil(x*y*z / 64)
  uint32_t grid_workgroups[3];   // ceil(grid_size / workgroup_size) per dimension
  uint32_t reserved0;
  uint64_t wave_count;  // slots after the header
  uint64_t stride;      // bytes per slot (from the WAVEKIT note)
  uint8_t reserved1[24];
};
inline constexpr uint32_t kArenaHeaderSize = 64;
static_assert(sizeof(ArenaHeader) == kArenaHeaderSize);
static_assert(__builtin_offsetof(ArenaHeader, grid_workgroups) == 8);
static_assert(__builtin_offsetof(ArenaHeader, wave_count) == 24);

}  // namespace wavekit::probe
