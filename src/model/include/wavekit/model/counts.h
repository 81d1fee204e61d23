// The application model of one kernel launch: its geometry and its counts, by a fixed
// vocabulary of dotted names (docs/model.md lists them with their units). Counts are totals
// over the launch; per-thread and per-wave figures are derived from the geometry.
//
// FLOPs follow Nsight Compute's convention: an add, subtract or multiply is 1 FLOP, a fused
// multiply-add 2, per lane that executes it; transcendental (MUFU-class) instructions are not
// FLOPs; a division is the FLOPs of NVIDIA's expansion of it (docs/model.md, "Counting").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wavekit/model/expression.h"

namespace wavekit::model {

struct KernelModel {
  std::string name;    // the kernel as the user named it (demangled when C++)
  std::string symbol;  // the code object's kernel name (mangled), when known
  std::array<std::uint64_t, 3> blocks{1, 1, 1};
  std::array<std::uint64_t, 3> threads_per_block{1, 1, 1};
  // Launch geometry as expressions of the parameters (empty: the numbers above).
  std::array<std::string, 3> blocks_expression;
  Parameters parameters;  // the size parameters the counts were taken at (or are valid for)
  // Counts: a number, or an expression of the parameters (counts_expression wins when set).
  std::map<std::string, double> counts;
  std::map<std::string, std::string> counts_expression;
  std::string source = "binary";   // "binary" (emulator), "fit", "agent", "manual"
  std::vector<std::string> notes;  // how the counts were obtained, fit checks, warnings

  std::uint64_t threads() const;
  std::uint64_t total_blocks() const;
  double count(const std::string& name) const;  // 0 when absent
  // The model at `parameters`: expressions evaluated into counts (blocks too).
  KernelModel at(const Parameters& parameters) const;
};

struct ApplicationModel {
  std::string program;
  std::string source;  // how it was made
  Parameters parameters;
  std::vector<KernelModel> kernels;
};

// The vocabulary: every count name with its unit and meaning (docs/model.md is generated
// from the same table's words). Unknown names are refused by the evaluator.
struct CountInfo {
  const char* name;
  const char* unit;
  const char* meaning;
};
const std::vector<CountInfo>& count_vocabulary();

nlohmann::json to_json(const KernelModel& kernel);
nlohmann::json to_json(const ApplicationModel& application);
// Throws wavekit::Error naming the kernel and field that breaks the schema.
KernelModel kernel_from_json(const nlohmann::json& document, const std::string& origin);
ApplicationModel application_from_json(const nlohmann::json& document, const std::string& origin);

// The evaluator: units and consistency of a kernel model (at its parameters). Returns the
// problems found, one sentence each (empty: consistent). Checks: known names, non-negative
// finite values, FLOPs equal to the op counts they summarise, bytes within what the
// instruction counts allow (at most 16 bytes per lane per instruction, at least 1), loads and
// stores apart, DRAM bytes not above what a cold cache can move plus writes, geometry >= 1.
std::vector<std::string> check_kernel(const KernelModel& kernel);

}  // namespace wavekit::model
