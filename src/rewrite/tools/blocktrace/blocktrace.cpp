// blocktrace: each wave's executed block sequence, streamed by the wave itself to its own file
// through the hostcall ring. A probe call at every block entry (blocktrace_probes.hip) appends
// the block's original address to a per-wave text buffer, written to wave_<id>.txt when full
// and at the kernel's end: the files are `wavekit launch --trace-sequence`'s (docs/rewrite.md,
// "Tools"). The arena keeps only the buffer and a summary, which the reporter reads.

#include "../registry.h"
#include "wavekit/support/error.h"

namespace wavekit::rewrite {
namespace {

constexpr const char* kState = "blocktrace_state";
constexpr std::uint32_t kStateSize = 280;  // State in blocktrace_probes.hip

Plan blocktrace_plan() {
  Plan plan;
  plan.tool = "blocktrace";
  PerWaveVariable state;
  state.name = kState;
  state.element_size = kStateSize;
  state.count = 1;
  plan.variables.push_back(state);
  Argument state_arg;
  state_arg.kind = ArgumentKind::variable;
  state_arg.name = kState;
  Argument address;
  address.kind = ArgumentKind::original_address;

  // Uniform calls: a block entered with EXEC = 0 is still a block the wave executed.
  ProbeCall block;
  block.probe = "blocktrace_block";
  block.args = {state_arg, address};
  block.uniform = true;
  PointSpec entry;
  entry.where = PointKind::block_entry;
  entry.call = block;
  plan.points.push_back(entry);

  ProbeCall finish;
  finish.probe = "blocktrace_exit";
  finish.args = {state_arg};
  finish.uniform = true;
  PointSpec exit;
  exit.where = PointKind::kernel_exit;
  exit.call = finish;
  plan.points.push_back(exit);
  return plan;
}

// Per wave, how many blocks its file got; throws when a wave's file egress failed, since its
// file is then incomplete.
nlohmann::json blocktrace_report(const InstrumentedKernel& kernel,
                                 std::span<const std::uint8_t> arena) {
  const PlacedVariable& state = tools::tool_variable(kernel, "blocktrace", kState, kStateSize);
  static const char* failures[] = {"", "could not open its file", "a write was short",
                                   "could not close its file"};
  nlohmann::json waves = nlohmann::json::array();
  for (const WaveSlot& slot : read_arena(arena, kernel)) {
    const auto failed = read_slot_field<std::uint32_t>(slot, state.offset + 12);
    if (failed != 0)
      throw Error("blocktrace: wave " + std::to_string(slot.wave_id) + " of '" + kernel.name +
                  "': " + (failed < 4 ? failures[failed] : "unknown failure") +
                  " (is a hostcall file service running, with a writable directory?)");
    waves.push_back(
        tools::wave_entry(slot, "blocks", read_slot_field<std::uint64_t>(slot, state.offset + 16)));
  }
  return {{"kernel", kernel.name}, {"waves", waves}};
}

}  // namespace

tools::ToolDefinition tools::blocktrace_tool() {
  ToolDefinition tool{"blocktrace", blocktrace_plan, blocktrace_report};
  tool.summary = "each wave's executed block sequence, streamed to files through the hostcall ring";
  tool.probes = true;
  tool.writes_files = true;
  return tool;
}

}  // namespace wavekit::rewrite
