// Machine models: one JSON file per GPU (src/model/machines/*.json), every figure with its unit
// and its source; peak (datasheet) and achieved (measured, or an estimate that says so) apart.
// The format is in docs/model.md.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wavekit::model {

struct Figure {
  double value = 0;
  std::string unit;
  std::string source;
  // A measured curve, where the figure has one ("points": [[x, y], ...], x ascending): y at x,
  // e.g. a memory phase's latency by the bytes in flight per unit. `value` is its first y.
  std::vector<std::pair<double, double>> points;
  // y at x: linear between the points, the first y below them and the last above them. (A
  // loaded latency's curve ends where the phases become bandwidth-bound: the bandwidth terms
  // charge that.) A figure without points is `value` everywhere.
  double at(double x) const;
};

struct Machine {
  std::string name;    // "h200"
  std::string title;   // "NVIDIA H200 SXM (141 GB)"
  std::string vendor;  // "nvidia" / "amd"
  std::string file;    // where it was loaded from

  // Every figure by its dotted path ("compute.units", "peak.fp32_flops", ...).
  std::map<std::string, Figure> figures;

  double get(const std::string& path) const;  // throws wavekit::Error naming a missing figure
  double get(const std::string& path, double x) const { return figure(path).at(x); }
  bool has(const std::string& path) const { return figures.count(path) != 0; }
  const Figure& figure(const std::string& path) const;

  // Shortcuts for the predictor (all in base units: FLOP/s, B/s, bytes, s).
  double compute_units() const { return get("compute.units"); }
  double wave_width() const { return get("compute.wave_width"); }
  double clock_hz() const { return get("compute.boost_clock_mhz") * 1e6; }
};

// The figures every machine file must have (dotted paths); the loader refuses a file that
// lacks one, naming it.
const std::vector<std::string>& required_figures();

// Parses a machine document; `origin` names it in errors.
Machine parse_machine(const nlohmann::json& document, const std::string& origin);

// A path to a .json file, or a name looked up as NAME.json in $WAVEKIT_MACHINE_PATH
// (colon-separated) and then in the built-in directory. Throws wavekit::Error naming the
// machine, the missing field or the syntax error.
Machine load_machine(const std::string& name_or_path);

// The built-in machine names (the *.json files of the built-in directory), sorted.
std::vector<std::string> builtin_machines();
std::string builtin_machine_directory();

}  // namespace wavekit::model
