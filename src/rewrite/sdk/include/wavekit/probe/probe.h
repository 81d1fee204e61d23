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
  WAVEKIT_DEVICE uint64_t wave_id() const { return slot_->wave_id; }
  WAVEKIT_DEVICE uint32_t wave_in_workgroup() const { return slot_->wave_in_workgroup; }
  WAVEKIT_DEVICE uint32_t workgroup_id(unsigned dimension) const {
    return slot_->workgroup_id[dimension];
  }
  WAVEKIT_DEVICE const void* dispatch_ptr() const {
    return reinterpret_cast<const void*>(slot_->dispatch_ptr);
  }
  WAVEKIT_DEVICE const void* kernarg_ptr() const {
    return reinterpret_cast<const void*>(slot_->kernarg_ptr);
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

  // This lane's work-item id in its workgroup. Lanes of a wave hold consecutive flat ids, so
  // it follows from the wave index and the workgroup size in the capture region.
  WAVEKIT_DEVICE uint32_t workitem_id(unsigned dimension) const {
    const uint32_t flat = slot_->wave_in_workgroup * 64u + lane();
    const uint32_t size_x = slot_->workgroup_size[0];
    const uint32_t size_y = slot_->workgroup_size[1];
    if (dimension == 0) return flat % size_x;
    if (dimension == 1) return (flat / size_x) % size_y;
    return flat / (size_x * size_y);
  }

 private:
  Slot slot_;
};

}  // namespace wavekit::probe
