// The tools, one folder each (src/rewrite/tools/<tool>/): the folder's sources define
// `ToolDefinition <tool>_tool()` — plan, report, view — and a `<tool>_probes.hip` there becomes
// its probe library; src/rewrite/CMakeLists.txt lists the folders, so adding a tool touches
// nothing outside its folder. docs/rewrite.md, "Adding a tool", says what a tool adds.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"

namespace wavekit::rewrite::tools {

struct ToolDefinition {
  const char* name;
  // The plan; nullptr for the plan-file tool ("custom"), whose plan is the user's file.
  Plan (*plan)();
  nlohmann::json (*report)(const InstrumentedKernel& kernel, std::span<const std::uint8_t> arena);
  // The tool has a probe library: its folder's <tool>_probes.hip, built for each processor as
  // <tool>.<processor>.co in the probe directory (tool_probe_library). False for a tool of
  // inline snippets only.
  bool probes = false;
  // The tool's output is the files its probes write through the hostcall file service: a
  // launcher makes its tool-output path the directory those files go to (tool_writes_files).
  bool writes_files = false;
  // What it measures, for --help ("per-wave basic-block counts").
  const char* summary = "";
  // The tool's view of a finished run (present_results); nullptr: its JSON is the view.
  void (*present)(const nlohmann::json& summary, std::ostream& terminal) = nullptr;
};

// For the reporters: the tool's per-wave variable `name` in `kernel`'s layout, checked to have
// `element_size` bytes per element when that is not 0; throws wavekit::Error naming the tool
// when the kernel was not rewritten by it.
const PlacedVariable& tool_variable(const InstrumentedKernel& kernel, const char* tool,
                                    const char* name, std::uint32_t element_size = 0);
// One wave of a report: its identity as --trace-blocks spells it, then the tool's `key`.
nlohmann::json wave_entry(const WaveSlot& slot, const char* key, nlohmann::json value);

// Each tool folder's definition, `ToolDefinition <tool>_tool()` (the list is generated).
#define WAVEKIT_TOOL(name) ToolDefinition name##_tool();
#include "tool_list.inc"
#undef WAVEKIT_TOOL

// For the views: each dispatch of a run's summary that left a result file, as
// (kernel, path); with `first_per_kernel`, only the first dispatch of each kernel.
std::vector<std::pair<std::string, std::string>> result_files(const nlohmann::json& summary,
                                                              bool first_per_kernel);

}  // namespace wavekit::rewrite::tools
