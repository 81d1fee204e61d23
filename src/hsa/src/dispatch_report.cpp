#include "dispatch_report.h"

#include <cstdio>

namespace wavekit::hsa {

std::string describe_failure(const emu::DispatchResult& result, const std::string& kernel) {
  std::string text = std::string(emu::error_kind_name(result.error)) + " in kernel " + kernel +
                     ": " + result.message;
  char line[512];
  for (const auto& wave : result.faults) {
    std::snprintf(
        line, sizeof line, "\n  wave %llu (workgroup %u,%u,%u, wave %u in workgroup) pc 0x%llx%s%s",
        static_cast<unsigned long long>(wave.linear_wave_id), wave.workgroup[0], wave.workgroup[1],
        wave.workgroup[2], wave.wave_in_workgroup, static_cast<unsigned long long>(wave.pc),
        wave.instruction.empty() ? "" : ": ", wave.instruction.c_str());
    text += line;
    // The faulting address means something for a memory fault; a stuck wave's state instead.
    if (result.error == emu::ErrorKind::memory_fault) {
      std::snprintf(line, sizeof line, ", address 0x%llx",
                    static_cast<unsigned long long>(wave.address));
      text += line;
    }
    if (!wave.state.empty()) text += ", " + wave.state;
  }
  return text;
}

}  // namespace wavekit::hsa
