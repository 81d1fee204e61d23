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
};

ToolDefinition bbcount_tool();
ToolDefinition callret_tool();

}  // namespace wavekit::rewrite::tools
