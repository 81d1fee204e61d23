// Entry points that only wavekit's emulated HSA runtime (the libhsa-runtime64.so.1 built from
// src/hsa) exports beside the HSA API, for the preload shim: it looks them up with dlsym and does
// without them on ROCr, which has neither. They let instrumentation keep the emulator's
// no-progress (deadlock) report working when probes write memory and wait on a host service.
#pragma once

#include <hsa/hsa.h>

extern "C" {

// Marks the allocation that starts at `pointer` (from hsa_amd_memory_pool_allocate or
// hsa_memory_allocate) as the instrumentation's own memory: no-progress detection does not count
// writes into it as progress (emu::MemoryMap::kToolMemory), since probes write their arenas and
// the hostcall ring on every pass of a loop that may be stuck.
// HSA_STATUS_ERROR_INVALID_ARGUMENT when no allocation starts at `pointer`.
hsa_status_t wavekit_emu_mark_tool_memory(void* pointer);

// What every later dispatch asks before it declares no progress
// (emu::DispatchOptions::outside_progress): nonzero when the outside, e.g. a hostcall service the
// waves wait on, made progress since the previous call or has work outstanding. A null function
// clears it. Called from the dispatch's worker threads, one at a time.
hsa_status_t wavekit_emu_set_outside_progress(int (*made_progress)(void* data), void* data);
}

namespace wavekit::hsa {

inline constexpr const char* kMarkToolMemorySymbol = "wavekit_emu_mark_tool_memory";
inline constexpr const char* kSetOutsideProgressSymbol = "wavekit_emu_set_outside_progress";

}  // namespace wavekit::hsa
