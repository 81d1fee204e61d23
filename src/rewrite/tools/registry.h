// The ready-made tools, one directory each (src/rewrite/tools/<tool>/): a tool defines its plan
// and its reporter there and is listed once in registry.cpp. docs/rewrite.md, "Adding a tool",
// says what a tool with a probe library adds.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"

namespace wavekit::rewrite::tools {

struct ToolDefinition {
  const char* name;
  Plan (*plan)();
  nlohmann::json (*report)(const InstrumentedKernel& kernel, std::span<const std::uint8_t> arena);
  // The stem of the tool's probe library ("callret": callret.<processor>.co in the probe
  // directory, see tool_probe_library), or nullptr for a tool of inline snippets only.
  const char* probe_library = nullptr;
  // The tool's output is the files its probes write through the hostcall file service: a
  // launcher makes its tool-output path the directory those files go to (tool_writes_files).
  bool writes_files = false;
};

// For the reporters: the tool's per-wave variable `name` in `kernel`'s layout, checked to have
// `element_size` bytes per element when that is not 0; throws wavekit::Error naming the tool
// when the kernel was not rewritten by it.
const PlacedVariable& tool_variable(const InstrumentedKernel& kernel, const char* tool,
                                    const char* name, std::uint32_t element_size = 0);
// One wave of a report: its identity as --trace-blocks spells it, then the tool's `key`.
nlohmann::json wave_entry(const WaveSlot& slot, const char* key, nlohmann::json value);

ToolDefinition bbcount_tool();
ToolDefinition callret_tool();
ToolDefinition blocktrace_tool();

}  // namespace wavekit::rewrite::tools
