#include "wavekit/model/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wavekit/support/error.h"

#ifndef WAVEKIT_MODEL_MACHINE_DIR
#define WAVEKIT_MODEL_MACHINE_DIR ""
#endif

namespace wavekit::model {

namespace fs = std::filesystem;

const std::vector<std::string>& required_figures() {
  static const std::vector<std::string> names = {
      "compute.units",
      "compute.wave_width",
      "compute.boost_clock_mhz",
      "compute.fp32_lanes_per_unit_per_clock",
      "compute.fp64_lanes_per_unit_per_clock",
      "compute.fp16_lanes_per_unit_per_clock",
      "compute.int32_lanes_per_unit_per_clock",
      "compute.transcendental_lanes_per_unit_per_clock",
      "compute.matrix_fp16_flops_per_unit_per_clock",
      "peak.fp32_flops",
      "peak.fp64_flops",
      "peak.fp16_flops",
      "peak.matrix_fp16_flops",
      "peak.dram_bandwidth",
      "peak.l2_bandwidth",
      "achieved.fp32_flops",
      "achieved.fp64_flops",
      "achieved.dram_bandwidth",
      "memory.dram_bytes",
      "memory.l2_bytes",
      "memory.l2_line_bytes",
      "memory.l2_sector_bytes",
      "memory.l1_bytes_per_unit",
      "memory.lds_bytes_per_unit",
      "memory.lds_bytes_per_block",
      "memory.dram_latency_ns",
      "memory.l2_latency_ns",
      "occupancy.max_threads_per_unit",
      "occupancy.max_waves_per_unit",
      "occupancy.max_blocks_per_unit",
      "occupancy.registers_per_unit",
      "occupancy.max_threads_per_block",
      "launch.overhead_us",
      "launch.kernel_floor_us",
  };
  return names;
}

const Figure& Machine::figure(const std::string& path) const {
  auto found = figures.find(path);
  if (found == figures.end())
    throw Error("machine '" + name + "' (" + file + "): no figure '" + path + "'");
  return found->second;
}

double Machine::get(const std::string& path) const { return figure(path).value; }

double Figure::at(double x) const {
  if (points.empty()) return value;
  if (x <= points.front().first) return points.front().second;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& [x0, y0] = points[i - 1];
    const auto& [x1, y1] = points[i];
    if (x <= x1) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
  }
  return points.back().second;
}

namespace {

void collect(const nlohmann::json& node, const std::string& prefix, const std::string& origin,
             Machine& machine) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    const nlohmann::json& value = it.value();
    if (!value.is_object())
      throw Error(origin + ": '" + path +
                  "' must be an object: a figure {\"value\", \"unit\", \"source\"} or a group");
    if (value.contains("value")) {
      if (!value["value"].is_number())
        throw Error(origin + ": '" + path + ".value' must be a number");
      if (!value.contains("source") || !value["source"].is_string() ||
          value["source"].get<std::string>().empty())
        throw Error(origin + ": figure '" + path + "' has no source");
      if (!value.contains("unit") || !value["unit"].is_string())
        throw Error(origin + ": figure '" + path + "' has no unit");
      Figure figure;
      figure.value = value["value"].get<double>();
      figure.unit = value["unit"].get<std::string>();
      figure.source = value["source"].get<std::string>();
      if (value.contains("points")) {
        const nlohmann::json& points = value["points"];
        const std::string what = origin + ": figure '" + path + "': 'points' must be ";
        if (!points.is_array() || points.empty())
          throw Error(what + "a non-empty array of [x, y] pairs");
        for (const nlohmann::json& point : points) {
          if (!point.is_array() || point.size() != 2 || !point[0].is_number() ||
              !point[1].is_number())
            throw Error(what + "[x, y] pairs of numbers");
          const double x = point[0].get<double>(), y = point[1].get<double>();
          if (!(x > 0) || !std::isfinite(y) ||
              (!figure.points.empty() && !(x > figure.points.back().first)))
            throw Error(what + "pairs with positive x in ascending order");
          figure.points.emplace_back(x, y);
        }
        if (figure.value != figure.points.front().second)
          throw Error(origin + ": figure '" + path + "': 'value' must be the first point's y");
      }
      machine.figures[path] = figure;
    } else {
      collect(value, path, origin, machine);
    }
  }
}

}  // namespace

Machine parse_machine(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": a machine file is a JSON object");
  Machine machine;
  machine.file = origin;
  for (const char* key : {"name", "title", "vendor"}) {
    if (!document.contains(key) || !document[key].is_string())
      throw Error(origin + ": missing field '" + key + "' (a string)");
  }
  machine.name = document["name"];
  machine.title = document["title"];
  machine.vendor = document["vendor"];
  if (machine.vendor != "nvidia" && machine.vendor != "amd")
    throw Error(origin + ": vendor '" + machine.vendor + "' is neither 'nvidia' nor 'amd'");
  for (const char* group : {"compute", "peak", "achieved", "memory", "occupancy", "launch"}) {
    if (!document.contains(group)) throw Error(origin + ": missing field '" + group + "'");
    collect(document[group], group, origin, machine);
  }
  for (const std::string& path : required_figures())
    if (!machine.figures.count(path)) throw Error(origin + ": missing field '" + path + "'");
  return machine;
}

std::string builtin_machine_directory() { return WAVEKIT_MODEL_MACHINE_DIR; }

std::vector<std::string> builtin_machines() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(builtin_machine_directory(), ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine load_machine(const std::string& name_or_path) {
  fs::path path;
  if (name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.ends_with(".json"))) {
    path = name_or_path;
    if (!fs::exists(path)) throw Error("machine file " + name_or_path + " does not exist");
  } else {
    std::vector<std::string> directories;
    if (const char* env = std::getenv("WAVEKIT_MACHINE_PATH")) {
      std::stringstream list(env);
      std::string item;
      while (std::getline(list, item, ':'))
        if (!item.empty()) directories.push_back(item);
    }
    directories.push_back(builtin_machine_directory());
    for (const auto& directory : directories) {
      fs::path candidate = fs::path(directory) / (name_or_path + ".json");
      if (fs::exists(candidate)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      std::string known;
      for (const auto& name : builtin_machines()) known += (known.empty() ? "" : ", ") + name;
      throw Error("unknown machine '" + name_or_path + "' (built in: " + known + ")");
    }
  }
  std::ifstream in(path);
  if (!in) throw Error("cannot open machine file " + path.string());
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error("machine file " + path.string() + ": " + e.what());
  }
  return parse_machine(document, path.string());
}

}  // namespace wavekit::model
