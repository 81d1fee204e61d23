// A dispatch observer: a module that wavekit's emulated HSA runtime opens when
// WAVEKIT_EMU_OBSERVER names it, and that sees every kernel dispatch of the process — what the
// emulator is asked to record before the dispatch runs, and what it recorded once the dispatch
// has completed. It is how a part that sits above the runtime (the model's whole-program path)
// takes the emulator's exact counts from an unmodified application, HIP or HSA, without the
// runtime depending on it. Only the emulator's runtime has it; ROCr has no such hook.
//
// The module exports `wavekit_make_dispatch_observer` (kMakeDispatchObserverSymbol), called
// once, at the process's first dispatch; the observer lives until the process ends. The runtime
// calls it from the queues' packet processors, one dispatch at a time per queue: an observer
// of a program with several queues serialises what it shares. An exception out of it is
// reported on stderr and loses that dispatch, not the program. A module that cannot be opened,
// lacks the symbol or returns null ends the process with a `wavekit emulator:` message, as a
// bad WAVEKIT_EMU_* setting does: a measurement that silently measured nothing would be worse.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "wavekit/emu/emu.h"

namespace wavekit::hsa {

// One completed dispatch, as the observer sees it.
struct ObservedDispatch {
  std::string kernel;  // the kernel's symbol (as in the code object's metadata, mangled)
  std::uint32_t grid[3] = {1, 1, 1};       // work-items, from the packet
  std::uint32_t workgroup[3] = {1, 1, 1};  // work-items per workgroup
  // The packet's group segment size: the kernel's static LDS plus the launch's dynamic LDS.
  std::uint32_t group_segment_size = 0;
  // The code object that holds the kernel: its load base (the `object` of the emulator's
  // records) and its ELF image as it was loaded.
  std::uint64_t object_base = 0;
  std::span<const std::uint8_t> code_object;
  // What the emulator recorded, as the observer's prepare() asked. The observer may take
  // (move) what it keeps; the runtime does not read the result afterwards.
  emu::DispatchResult* result = nullptr;
};

class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  // Before a dispatch of `kernel` (its symbol) runs: what to record (emu::DispatchOptions'
  // record_* flags), and whether completed() is to see it.
  virtual bool prepare(const std::string& kernel, emu::DispatchOptions& options) = 0;
  // After a dispatch that prepare() wanted completed without an error.
  virtual void completed(ObservedDispatch& dispatch) = 0;
};

using MakeDispatchObserver = DispatchObserver* (*)();
inline constexpr const char* kMakeDispatchObserverSymbol = "wavekit_make_dispatch_observer";
inline constexpr const char* kObserverVariable = "WAVEKIT_EMU_OBSERVER";

}  // namespace wavekit::hsa
