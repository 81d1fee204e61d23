#include "heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "wavekit/support/text.h"

namespace wavekit::rewrite::tools {

namespace {

struct Matrix {
  std::vector<std::uint64_t> blocks;               // block start addresses, ascending
  std::vector<std::uint64_t> wave_ids;             // one per row
  std::vector<std::vector<std::uint64_t>> counts;  // [row][column]
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
    }
    matrix.wave_ids.push_back(wave.at("id").get<std::uint64_t>());
    matrix.counts.push_back(std::move(row));
  }
  return matrix;
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
  out << "  legend: · not entered; ─ same count in every wave; ░▒▓█ a block's fewest..most "
         "entries\n";
  for (std::size_t c = 0; c < matrix.blocks.size(); ++c)
    if (high[c] != low[c] && low[c] != UINT64_MAX) {
      char line[96];
      std::snprintf(line, sizeof line, "  block 0x%llx: entered %llu..%llu times per wave\n",
                    static_cast<unsigned long long>(matrix.blocks[c]),
                    static_cast<unsigned long long>(low[c]),
                    static_cast<unsigned long long>(high[c]));
      out << line;
    }
  result.picture = out.str();
  return result;
}

namespace {

// Viridis at five stops: perceptually even, readable in grey and by colour-blind readers.
std::string viridis(double t) {
  static constexpr double kStops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  char text[8];
  std::snprintf(
      text, sizeof text, "#%02x%02x%02x",
      static_cast<int>(std::lround(kStops[i][0] + f * (kStops[i + 1][0] - kStops[i][0]))),
      static_cast<int>(std::lround(kStops[i][1] + f * (kStops[i + 1][1] - kStops[i][1]))),
      static_cast<int>(std::lround(kStops[i][2] + f * (kStops[i + 1][2] - kStops[i][2]))));
  return text;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string heatmap_svg(const nlohmann::json& report) {
  Matrix matrix = matrix_of(report);
  const std::size_t waves = matrix.counts.size(), blocks = matrix.blocks.size();
  const std::size_t distinct = std::set(matrix.counts.begin(), matrix.counts.end()).size();
  // Each block is coloured over its own range across the waves (as in the terminal): blocks
  // differ in scale by orders of magnitude, and one global scale would paint a loop's blocks
  // in one colour although the waves ran them different numbers of times.
  std::vector<std::uint64_t> low(blocks, UINT64_MAX), high(blocks, 0);
  for (const auto& row : matrix.counts)
    for (std::size_t c = 0; c < blocks; ++c)
      if (row[c]) {
        low[c] = std::min(low[c], row[c]);
        high[c] = std::max(high[c], row[c]);
      }

  // Cells sized so that the grid is about 760 x 520 px, within readable bounds.
  const int cell_w = std::clamp(static_cast<int>(760 / std::max<std::size_t>(blocks, 1)), 12, 44);
  const int cell_h = std::clamp(static_cast<int>(520 / std::max<std::size_t>(waves, 1)), 3, 18);
  const int left = 78, header = 132, grid_w = cell_w * static_cast<int>(blocks),
            grid_h = cell_h * static_cast<int>(waves);
  const int footer = 130;
  const int width = std::max(left + grid_w + 24, 640);
  const int height = header + grid_h + footer;
  const int font = 12;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"" << font << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  const std::string kernel = escape(report.value("kernel", "?"));
  svg << "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">bbcount: kernel " << kernel
      << "</text>\n"
      << "<text x=\"12\" y=\"40\">" << waves << " waves x " << blocks << " basic blocks; "
      << distinct << " distinct per-wave profile" << (distinct == 1 ? "" : "s") << "</text>\n"
      << "<text x=\"12\" y=\"56\" fill=\"#555\">each column coloured over its own range "
         "across the waves</text>\n";

  // Column headers: the block's original start address, rotated.
  for (std::size_t c = 0; c < blocks; ++c) {
    const int x = left + static_cast<int>(c) * cell_w + cell_w / 2 + 4;
    svg << "<text x=\"" << x << "\" y=\"" << header - 6 << "\" transform=\"rotate(-60 " << x << " "
        << header - 6 << ")\" font-size=\"11\">" << hex(matrix.blocks[c]) << "</text>\n";
  }
  svg << "<text x=\"" << left << "\" y=\"" << 70
      << "\" fill=\"#555\" font-size=\"11\">basic block (start address in the original "
         "code)</text>\n";

  // Row labels: wave ids, thinned to one every ~14 px.
  const std::size_t label_every = std::max<std::size_t>(1, (14 + cell_h - 1) / cell_h);
  for (std::size_t r = 0; r < waves; r += label_every)
    svg << "<text x=\"" << left - 6 << "\" y=\""
        << header + static_cast<int>(r) * cell_h + cell_h / 2 + 4
        << "\" text-anchor=\"end\" font-size=\"11\">" << matrix.wave_ids[r] << "</text>\n";
  svg << "<text x=\"16\" y=\"" << header + grid_h / 2 << "\" transform=\"rotate(-90 16 "
      << header + grid_h / 2 << ")\" text-anchor=\"middle\" fill=\"#555\" font-size=\"11\">wave "
      << "(linear id)</text>\n";

  for (std::size_t r = 0; r < waves; ++r) {
    for (std::size_t c = 0; c < blocks; ++c) {
      const std::uint64_t count = matrix.counts[r][c];
      std::string fill;
      if (count == 0)
        fill = "#ffffff";
      else if (high[c] == low[c])
        fill = "#c8c8c8";
      else
        fill = viridis(static_cast<double>(count - low[c]) / static_cast<double>(high[c] - low[c]));
      svg << "<rect x=\"" << left + static_cast<int>(c) * cell_w << "\" y=\""
          << header + static_cast<int>(r) * cell_h << "\" width=\"" << cell_w << "\" height=\""
          << cell_h << "\" fill=\"" << fill << "\"><title>wave " << matrix.wave_ids[r] << ", block "
          << hex(matrix.blocks[c]) << ": entered " << count << " times</title></rect>\n";
    }
  }
  svg << "<rect x=\"" << left << "\" y=\"" << header << "\" width=\"" << grid_w << "\" height=\""
      << grid_h << "\" fill=\"none\" stroke=\"#888\"/>\n";

  // Under each column, its range of entries per wave.
  const int ranges_y = header + grid_h + 8;
  for (std::size_t c = 0; c < blocks; ++c) {
    const int x = left + static_cast<int>(c) * cell_w + cell_w / 2 + 4;
    std::string range = low[c] == UINT64_MAX ? "0"
                        : low[c] == high[c]
                            ? std::to_string(low[c])
                            : std::to_string(low[c]) + "-" + std::to_string(high[c]);
    svg << "<text x=\"" << x << "\" y=\"" << ranges_y << "\" transform=\"rotate(60 " << x << " "
        << ranges_y << ")\" font-size=\"10\" fill=\"#333\">" << range << "</text>\n";
  }

  // Legend.
  const int legend_y = height - 44;
  svg << "<text x=\"12\" y=\"" << legend_y - 10
      << "\" fill=\"#333\">entries per wave (numbers under the columns: each block's "
         "range)</text>\n"
      << "<defs><linearGradient id=\"range\">";
  for (int i = 0; i <= 4; ++i)
    svg << "<stop offset=\"" << i * 25 << "%\" stop-color=\"" << viridis(i / 4.0) << "\"/>";
  svg << "</linearGradient></defs>\n"
      << "<rect x=\"12\" y=\"" << legend_y
      << "\" width=\"160\" height=\"14\" fill=\"url(#range)\"/>\n"
      << "<text x=\"12\" y=\"" << legend_y + 28 << "\" font-size=\"11\">fewest</text>\n"
      << "<text x=\"172\" y=\"" << legend_y + 28
      << "\" font-size=\"11\" text-anchor=\"end\">most (of that block)</text>\n"
      << "<rect x=\"196\" y=\"" << legend_y << "\" width=\"14\" height=\"14\" fill=\"#c8c8c8\"/>\n"
      << "<text x=\"216\" y=\"" << legend_y + 11
      << "\" font-size=\"11\">same count in every wave</text>\n"
      << "<rect x=\"386\" y=\"" << legend_y << "\" width=\"14\" height=\"14\" fill=\"white\" "
      << "stroke=\"#888\"/>\n"
      << "<text x=\"406\" y=\"" << legend_y + 11 << "\" font-size=\"11\">not entered</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace wavekit::rewrite::tools
