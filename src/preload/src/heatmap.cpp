#include "wavekit/preload/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace wavekit::preload {

namespace {

struct Matrix {
  std::vector<std::uint64_t> blocks;            // block start addresses, ascending
  std::vector<std::uint64_t> wave_ids;          // one per row
  std::vector<std::vector<std::uint64_t>> counts;  // [row][column]
  std::uint64_t max_count = 0;
};

Matrix matrix_of(const nlohmann::json& report) {
  Matrix matrix;
  std::set<std::uint64_t> blocks;
  for (const auto& wave : report.at("waves"))
    for (const auto& [address, count] : wave.at("blocks").items())
      blocks.insert(std::stoull(address, nullptr, 16));
  matrix.blocks.assign(blocks.begin(), blocks.end());
  std::map<std::uint64_t, std::size_t> column;
  for (std::size_t i = 0; i < matrix.blocks.size(); ++i) column[matrix.blocks[i]] = i;
  for (const auto& wave : report.at("waves")) {
    std::vector<std::uint64_t> row(matrix.blocks.size(), 0);
    for (const auto& [address, count] : wave.at("blocks").items()) {
      row[column[std::stoull(address, nullptr, 16)]] = count.get<std::uint64_t>();
      matrix.max_count = std::max(matrix.max_count, count.get<std::uint64_t>());
    }
    matrix.wave_ids.push_back(wave.at("id").get<std::uint64_t>());
    matrix.counts.push_back(std::move(row));
  }
  return matrix;
}

// 0 for a block never entered, else 1..levels on a log scale of the largest count.
int shade(std::uint64_t count, std::uint64_t max_count, int levels) {
  if (count == 0) return 0;
  if (max_count <= 1) return levels;
  double fraction = std::log1p(static_cast<double>(count)) / std::log1p(static_cast<double>(max_count));
  return std::clamp(static_cast<int>(std::ceil(fraction * levels)), 1, levels);
}

}  // namespace

HeatmapText heatmap_text(const nlohmann::json& report, std::size_t max_rows) {
  static const char* const kShades[] = {"·", "░", "▒", "▓", "█"};
  Matrix matrix = matrix_of(report);
  HeatmapText result;
  result.distinct_profiles = std::set(matrix.counts.begin(), matrix.counts.end()).size();
  // Shade each block relative to its own range across the waves, so that the differences
  // between waves (the point of a per-wave profile) show even when blocks differ in scale.
  std::vector<std::uint64_t> low(matrix.blocks.size(), UINT64_MAX), high(matrix.blocks.size(), 0);
  for (const auto& row : matrix.counts)
    for (std::size_t c = 0; c < row.size(); ++c)
      if (row[c]) {
        low[c] = std::min(low[c], row[c]);
        high[c] = std::max(high[c], row[c]);
      }
  auto cell = [&](std::uint64_t count, std::size_t c) -> const char* {
    if (count == 0) return kShades[0];
    if (high[c] == low[c]) return "─";
    return kShades[1 + (count - low[c]) * 4 / (high[c] - low[c] + 1)];
  };
  std::ostringstream out;
  out << "kernel " << report.value("kernel", "?") << ": " << matrix.counts.size() << " waves x "
      << matrix.blocks.size() << " blocks, " << result.distinct_profiles
      << " distinct per-wave profiles\n";
  std::size_t rows = std::min(max_rows, matrix.counts.size());
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t index = rows == matrix.counts.size() ? r : r * matrix.counts.size() / rows;
    char label[32];
    std::snprintf(label, sizeof label, "  wave %5llu  ",
                  static_cast<unsigned long long>(matrix.wave_ids[index]));
    out << label;
    for (std::size_t c = 0; c < matrix.blocks.size(); ++c) out << cell(matrix.counts[index][c], c);
    out << "\n";
  }
  if (rows < matrix.counts.size())
    out << "  (" << rows << " of " << matrix.counts.size() << " waves shown, evenly sampled)\n";
  out << "  legend: · not entered; ─ same count in every wave; ░▒▓█ a block's fewest..most entries\n";
  for (std::size_t c = 0; c < matrix.blocks.size(); ++c)
    if (high[c] != low[c] && low[c] != UINT64_MAX) {
      char line[96];
      std::snprintf(line, sizeof line, "  block 0x%llx: entered %llu..%llu times per wave\n",
                    static_cast<unsigned long long>(matrix.blocks[c]),
                    static_cast<unsigned long long>(low[c]), static_cast<unsigned long long>(high[c]));
      out << line;
    }
  result.picture = out.str();
  return result;
}

std::string heatmap_svg(const nlohmann::json& report) {
  Matrix matrix = matrix_of(report);
  const int cell = matrix.counts.size() > 256 ? 2 : 10;
  const int left = 90, top = 40;
  const int width = left + static_cast<int>(matrix.blocks.size()) * cell + 20;
  const int height = top + static_cast<int>(matrix.counts.size()) * cell + 40;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"monospace\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"16\">bbcount: " << report.value("kernel", "?") << " — "
      << matrix.counts.size() << " waves (rows) x " << matrix.blocks.size()
      << " basic blocks (columns), log-scale counts up to " << matrix.max_count << "</text>\n";
  for (std::size_t r = 0; r < matrix.counts.size(); ++r) {
    if (cell >= 10 || r % 32 == 0)
      svg << "<text x=\"4\" y=\"" << top + static_cast<int>(r) * cell + cell - 1 << "\">wave "
          << matrix.wave_ids[r] << "</text>\n";
    for (std::size_t c = 0; c < matrix.blocks.size(); ++c) {
      int level = shade(matrix.counts[r][c], matrix.max_count, 255);
      std::string fill = level == 0 ? "#f4f4f4"
                                    : "rgb(" + std::to_string(255 - level / 2) + "," +
                                          std::to_string(255 - level) + ",40)";
      svg << "<rect x=\"" << left + static_cast<int>(c) * cell << "\" y=\""
          << top + static_cast<int>(r) * cell << "\" width=\"" << cell << "\" height=\"" << cell
          << "\" fill=\"" << fill << "\"><title>wave " << matrix.wave_ids[r] << ", block 0x"
          << std::hex << matrix.blocks[c] << std::dec << ": " << matrix.counts[r][c]
          << "</title></rect>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace wavekit::preload
