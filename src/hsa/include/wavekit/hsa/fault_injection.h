// The emulator runtime's fault injection, for whole programs: WAVEKIT_EMU_INJECT names one
// dispatch of one kernel and an emu::FaultInjection in it, as text,
//
//   kernel=scale_add dispatch=3 pc=0x1a2c wave=5 execution=2 register=v4 bit=17 lane=9
//
// (dispatch: the kernel's dispatch number from 0; pc: the instruction's original address; lane:
// emu::FaultInjection::lane_pick; an optional mode=read flips the value the instruction reads,
// emu::FaultInjection::read). The runtime flips that bit and says what it did on stderr
// (describe()). `wavekit fi` writes the same text for the emulator's run that checks its own,
// rewriter-made injection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wavekit/emu/emu.h"

namespace wavekit::hsa {

struct KernelFaultInjection {
  std::string kernel;
  std::uint64_t dispatch = 0;
  emu::FaultInjection fault;
};

// Throws wavekit::Error naming the field that is missing or malformed.
KernelFaultInjection parse_fault_injection(std::string_view text);
std::string to_string(const KernelFaultInjection& injection);

// "injected: v4 lane 9 bit 17: 0x3f800000 -> 0x3f820000", or why nothing changed.
std::string describe(const KernelFaultInjection& injection, const emu::InjectedFault& done);

}  // namespace wavekit::hsa
