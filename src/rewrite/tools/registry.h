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

ToolDefinition bbcount_tool();
ToolDefinition callret_tool();
ToolDefinition blocktrace_tool();

}  // namespace wavekit::rewrite::tools
