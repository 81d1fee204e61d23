// The probe SDK: what a probe written in HIP-dialect device C++ may rely on. Compiled by
// clang-22 with -nogpulib -nogpuinc (no HIP headers, no device libraries), so it uses clang's
// amdgcn builtins only.
//
// Calling convention (docs/rewrite.md, "Probe calls"): the rewriter calls a probe with its
// wave's arena slot as the first argument, followed by the plan's arguments in order, all in
// VGPRs as for any HIP device function:
//
//   WAVEKIT_PROBE void on_call_return(wavekit::probe::Slot slot, uint32_t point, uint64_t value) {
//     wavekit::probe::Wave wave(slot);
//     if (wave.is_first_active_lane()) *wave.variable<uint64_t>(0) = value;
//   }
//
// The capture region's values are valid wherever the probe runs: the entry prologue saved
// them before the kernel's own code could overwrite the registers the hardware put them in.
#pragma once

#include <stdint.h>

#include "wavekit/probe/capture.h"

// Marks a probe: an externally visible, never-inlined device function. The probe-library
// build (cmake/ProbeLibrary.cmake) gives each one the STT_OBJECT alias the loader resolves.
#define WAVEKIT_PROBE extern "C" __attribute__((device, noinline, used, visibility("default")))
#define WAVEKIT_DEVICE __attribute__((device))

namespace wavekit::probe {

// What the rewriter passes first: the calling wave's slot. Its capture region is at offset 0,
// the per-wave variables follow at the offsets the plan's layout gave them.
using Slot = CaptureRegion*;

class Wave {
 public:
  WAVEKIT_DEVICE explicit Wave(Slot slot) : slot_(slot) {}

  WAVEKIT_DEVICE const CaptureRegion& capture() const { return *slot_; }
  // The wave's linear id, the emulator's and the hardware's numbering:
  // (wg.x + wg.y * ngx + wg.z * ngx * ngy) * waves_per_workgroup + wave_in_workgroup.
  WAVEKIT_DEVICE uint64_t wave_id() const {
    uint32_t groups[3];
    for (unsigned d = 0; d < 3; ++d)
      groups[d] = (grid_size(d) + workgroup_size(d) - 1) / workgroup_size(d);
    const uint64_t workgroup = slot_->workgroup_id[0] +
                               uint64_t(groups[0]) * (slot_->workgroup_id[1] +
                                                      uint64_t(groups[1]) * slot_->workgroup_id[2]);
    const uint32_t waves_per_workgroup =
        (workgroup_size(0) * workgroup_size(1) * workgroup_size(2) + 63) / 64;
    return workgroup * waves_per_workgroup + wave_in_workgroup();
  }
  // Lanes of a wave hold consecutive flat work-item ids, from 64 * wave_in_workgroup on.
  WAVEKIT_DEVICE uint32_t wave_in_workgroup() const {
    const uint32_t first = slot_->first_workitem;
    return (workitem_component(first, 0) +
            workgroup_size(0) *
                (workitem_component(first, 1) + workgroup_size(1) * workitem_component(first, 2))) /
           64u;
  }
  WAVEKIT_DEVICE uint32_t workgroup_id(unsigned dimension) const {
    return slot_->workgroup_id[dimension];
  }
  WAVEKIT_DEVICE const void* dispatch_ptr() const {
    return reinterpret_cast<const void*>(slot_->dispatch_ptr);
  }
  WAVEKIT_DEVICE const void* kernarg_ptr() const {
    return reinterpret_cast<const void*>(slot_->kernarg_ptr);
  }
  // From the dispatch packet (hsa_kernel_dispatch_packet_t: u16 workgroup_size_x/y/z at 4,
  // u32 grid_size_x/y/z at 12), in work-items.
  WAVEKIT_DEVICE uint32_t workgroup_size(unsigned dimension) const {
    return reinterpret_cast<const uint16_t*>(slot_->dispatch_ptr)[2 + dimension];
  }
  WAVEKIT_DEVICE uint32_t grid_size(unsigned dimension) const {
    return reinterpret_cast<const uint32_t*>(slot_->dispatch_ptr)[3 + dimension];
  }

  // A per-wave variable by its offset in the slot (the offsets are in the rewritten object's
  // WAVEKIT note; a plan argument of kind "variable" passes the address directly instead).
  template <typename T>
  WAVEKIT_DEVICE T* variable(uint32_t offset) const {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(slot_) + offset);
  }

  // This lane's index in the wave (0..63), counted with mbcnt so it does not depend on v31,
  // which an inserted call does not set up.
  WAVEKIT_DEVICE static uint32_t lane() {
    return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  }
  // The EXEC mask at the point, as the probe sees it (the envelope restores the caller's EXEC
  // for the call).
  WAVEKIT_DEVICE static uint64_t exec() { return __builtin_amdgcn_read_exec(); }
  WAVEKIT_DEVICE static bool is_first_active_lane() {
    return lane() == static_cast<uint32_t>(__builtin_ctzll(exec()));
  }

  // This lane's work-item id in its workgroup: the lane's flat id split by the workgroup size.
  WAVEKIT_DEVICE uint32_t workitem_id(unsigned dimension) const {
    const uint32_t flat = wave_in_workgroup() * 64u + lane();
    const uint32_t size_x = workgroup_size(0);
    const uint32_t size_y = workgroup_size(1);
    if (dimension == 0) return flat % size_x;
    if (dimension == 1) return (flat / size_x) % size_y;
    return flat / (size_x * size_y);
  }

 private:
  Slot slot_;
};

}  // namespace wavekit::probe
