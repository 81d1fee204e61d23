// callret: call-return capture. At each return of each call a kernel makes, in its own code
// or in a device function it reaches (a recursion's calls included), a probe
// (callret_probes.hip) folds the active lanes' 32-bit return values into one record per call
// site per wave; the reporter turns the records into JSON (docs/rewrite.md, "Tools"), and its
// view is a table of the call sites (view.h).

#include "../registry.h"
#include "view.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

constexpr const char* kRecords = "call_returns";
constexpr std::uint32_t kRecordSize = 40;  // CallRecord in callret_probes.hip

Plan callret_plan() {
  Plan plan;
  plan.tool = "callret";
  // count 1 is a placeholder: a variable indexed by call site gets one record per call site of
  // each kernel and of the device functions it reaches, keyed by the call's original address.
  PerWaveVariable records;
  records.name = kRecords;
  records.element_size = kRecordSize;
  records.count = 1;
  plan.variables.push_back(records);
  ProbeCall call;
  call.probe = "callret_record";
  Argument record;
  record.kind = ArgumentKind::variable;
  record.name = kRecords;
  record.indexed_by_call_site = true;
  Argument value;
  value.kind = ArgumentKind::return_value;
  call.args = {record, value};
  PointSpec point;
  point.where = PointKind::call_return;
  point.call = call;
  plan.points.push_back(point);
  return plan;
}

nlohmann::json callret_report(const InstrumentedKernel& kernel,
                              std::span<const std::uint8_t> arena) {
  const PlacedVariable& records = tools::tool_variable(kernel, "callret", kRecords, kRecordSize);
  nlohmann::json waves = nlohmann::json::array();
  for (const WaveSlot& slot : read_arena(arena, kernel)) {
    nlohmann::json calls = nlohmann::json::object();
    for (std::size_t i = 0; i < records.variable.keys.size(); ++i) {
      const std::uint64_t at = records.offset + i * kRecordSize;
      const auto returns = read_slot_field<std::uint64_t>(slot, at);
      if (returns == 0) continue;
      calls[hex(records.variable.keys[i])] = {
          {"returns", returns},
          {"lanes", read_slot_field<std::uint64_t>(slot, at + 8)},
          {"first_lane", read_slot_field<std::uint32_t>(slot, at + 16)},
          {"first_value", read_slot_field<std::int32_t>(slot, at + 20)},
          {"min", read_slot_field<std::int32_t>(slot, at + 24)},
          {"max", read_slot_field<std::int32_t>(slot, at + 28)},
          {"hash", hex(read_slot_field<std::uint64_t>(slot, at + 32))}};
    }
    waves.push_back(tools::wave_entry(slot, "calls", calls));
  }
  return {{"kernel", kernel.name}, {"waves", waves}};
}

// The first dispatch of each kernel as a table (every dispatch's JSON is on disk).
void callret_present(const nlohmann::json& summary, std::ostream& terminal) {
  for (const auto& [kernel, path] : tools::result_files(summary, true)) {
    try {
      const std::string table = tools::callret_table(nlohmann::json::parse(read_file(path)));
      terminal << "\n" << table;
    } catch (const std::exception& error) {
      terminal << "wavekit run: no call-return table for " << path << ": " << error.what() << "\n";
    }
  }
}

}  // namespace

tools::ToolDefinition tools::callret_tool() {
  ToolDefinition tool{"callret", callret_plan, callret_report};
  tool.summary = "per-wave return values of each call site";
  tool.probes = true;
  tool.present = callret_present;
  return tool;
}

std::uint64_t callret_lane_hash(std::uint32_t lane, std::uint32_t value) {
  std::uint64_t z = (static_cast<std::uint64_t>(lane) << 32 | value) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace wavekit::rewrite
