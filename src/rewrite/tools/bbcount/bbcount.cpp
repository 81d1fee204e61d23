// bbcount: per-wave, per-basic-block execution counts by inline snippets (no calls); its view
// is a heatmap per dispatch (heatmap.h).
#include <filesystem>

#include "../registry.h"
#include "heatmap.h"
#include "wavekit/support/file.h"
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

// A picture per dispatch (SVG beside the JSON) and the first one in the terminal.
void bbcount_present(const nlohmann::json& summary, std::ostream& terminal) {
  bool shown = false;
  for (const auto& [kernel, path] : tools::result_files(summary, false)) {
    try {
      const nlohmann::json report = nlohmann::json::parse(read_file(path));
      const std::string svg = std::filesystem::path(path).replace_extension(".svg").string();
      write_file(svg, tools::heatmap_svg(report));
      if (!shown) {
        terminal << "\n" << tools::heatmap_text(report).picture << "  heatmap: " << svg << "\n";
        shown = true;
      }
    } catch (const std::exception& error) {
      terminal << "wavekit run: no heatmap for " << path << ": " << error.what() << "\n";
    }
  }
}

}  // namespace

tools::ToolDefinition tools::bbcount_tool() {
  ToolDefinition tool{"bbcount", bbcount_plan, bbcount_report};
  tool.summary = "per-wave basic-block counts";
  tool.present = bbcount_present;
  return tool;
}

}  // namespace wavekit::rewrite
