// The text a failed dispatch is reported with, shared by the HSA queue's packet processor and
// `wavekit launch`: the emulator's error kind and message, then one line per wave involved
// (linear id, workgroup, wave in workgroup, PC, instruction, faulting address).
#pragma once

#include <string>

#include "wavekit/emu/emu.h"

namespace wavekit::hsa {

std::string describe_failure(const emu::DispatchResult& result, const std::string& kernel);

}  // namespace wavekit::hsa
