// bbcount: per-wave, per-basic-block execution counts by inline snippets (no calls).

#include "../registry.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

constexpr const char* kCounters = "block_counts";

Plan bbcount_plan() {
  Plan plan;
  plan.tool = "bbcount";
  // count 1 is a placeholder: a block-indexed variable gets one element per block of each
  // kernel, keyed by the block's original address.
  PerWaveVariable counters;
  counters.name = kCounters;
  counters.element_size = 8;
  counters.count = 1;
  plan.variables.push_back(counters);
  Snippet increment;
  increment.op = SnippetOp::increment;
  increment.variable = kCounters;
  increment.indexed_by_block = true;
  PointSpec point;
  point.where = PointKind::block_entry;
  point.snippet = increment;
  plan.points.push_back(point);
  return plan;
}

nlohmann::json bbcount_report(const InstrumentedKernel& kernel,
                              std::span<const std::uint8_t> arena) {
  const PlacedVariable& counters = tools::tool_variable(kernel, "bbcount", kCounters);
  nlohmann::json waves = nlohmann::json::array();
  for (const WaveSlot& slot : read_arena(arena, kernel)) {
    nlohmann::json blocks = nlohmann::json::object();
    for (std::size_t i = 0; i < counters.variable.count; ++i) {
      const std::uint64_t count = read_element(slot, counters, i);
      if (count != 0) blocks[hex(counters.variable.keys.at(i))] = count;
    }
    waves.push_back(tools::wave_entry(slot, "blocks", blocks));
  }
  return {{"kernel", kernel.name}, {"waves", waves}};
}

}  // namespace

tools::ToolDefinition tools::bbcount_tool() { return {"bbcount", bbcount_plan, bbcount_report}; }

}  // namespace wavekit::rewrite
