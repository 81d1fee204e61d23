// Pictures of a bbcount report ({"kernel", "waves": [{"id", "blocks": {"0x..": n}}]}): rows are
// waves, columns basic blocks, each block shaded over its own range of counts across the waves
// (blocks differ in scale, and what matters is how waves differ). People see at a glance which
// waves took which paths.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wavekit::rewrite::tools {

struct HeatmapText {
  std::string picture;                // rows of shade characters with a legend
  std::size_t distinct_profiles = 0;  // waves with different block-count vectors
};

// At most `max_rows` waves (evenly sampled when there are more).
HeatmapText heatmap_text(const nlohmann::json& report, std::size_t max_rows = 16);
// A self-contained SVG document.
std::string heatmap_svg(const nlohmann::json& report);

}  // namespace wavekit::rewrite::tools
