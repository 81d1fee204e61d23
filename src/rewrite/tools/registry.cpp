// tool_names / tool_plan / tool_report over the tools this build ships (registry.h).
#include "registry.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/install.h"

namespace wavekit::rewrite {
namespace {

const std::vector<tools::ToolDefinition>& registry() {
  static const std::vector<tools::ToolDefinition> all{tools::bbcount_tool(), tools::callret_tool(),
                                                      tools::blocktrace_tool()};
  return all;
}

const tools::ToolDefinition* find_tool(const std::string& name) {
  for (const tools::ToolDefinition& tool : registry())
    if (tool.name == name) return &tool;
  return nullptr;
}

}  // namespace

const PlacedVariable& tools::tool_variable(const InstrumentedKernel& kernel, const char* tool,
                                           const char* name, std::uint32_t element_size) {
  const PlacedVariable* placed = kernel.layout.find(name);
  if (!placed || (element_size != 0 && placed->variable.element_size != element_size))
    throw Error("kernel '" + kernel.name + "' was not instrumented by " + tool + " (no '" + name +
                "' variable)");
  return *placed;
}

nlohmann::json tools::wave_entry(const WaveSlot& slot, const char* key, nlohmann::json value) {
  return {{"id", slot.wave_id},
          {"workgroup", {slot.workgroup_id[0], slot.workgroup_id[1], slot.workgroup_id[2]}},
          {"wave_in_workgroup", slot.wave_in_workgroup},
          {key, std::move(value)}};
}

std::vector<std::string> tool_names() {
  std::vector<std::string> names;
  for (const tools::ToolDefinition& tool : registry()) names.push_back(tool.name);
  return names;
}

Plan tool_plan(const std::string& tool) {
  if (const tools::ToolDefinition* found = find_tool(tool)) return found->plan();
  std::string known;
  for (const std::string& name : tool_names()) known += (known.empty() ? "" : ", ") + name;
  throw Error("unknown tool '" + tool + "' (this build has: " + known + ")");
}

std::string tool_probe_directory() {
  if (const char* override_dir = std::getenv("WAVEKIT_PROBE_DIR"); override_dir && *override_dir)
    return override_dir;
  return companion_path("probes", WAVEKIT_TOOL_PROBE_DIR);  // installed, else the build's
}

std::string tool_probe_library(const std::string& tool, const std::string& processor) {
  const tools::ToolDefinition* found = find_tool(tool);
  if (!found) tool_plan(tool);  // throws, listing the known tools
  if (!found->probe_library) return {};
  const std::filesystem::path path = std::filesystem::path(tool_probe_directory()) /
                                     (std::string(found->probe_library) + "." + processor + ".co");
  if (!std::filesystem::exists(path))
    throw Error("tool '" + tool + "' has no probe library for " + processor + " (looked for " +
                path.string() + "; WAVEKIT_PROBE_DIR overrides the directory)");
  return path.string();
}

bool tool_writes_files(const std::string& tool) {
  const tools::ToolDefinition* found = find_tool(tool);
  return found && found->writes_files;
}

std::string tool_files_subdirectory(std::uint64_t kernarg_address) {
  char name[24];
  std::snprintf(name, sizeof name, "k%llx", static_cast<unsigned long long>(kernarg_address));
  return name;
}

nlohmann::json tool_report(const std::string& tool, const InstrumentedKernel& kernel,
                           std::span<const std::uint8_t> arena) {
  if (const tools::ToolDefinition* found = find_tool(tool)) return found->report(kernel, arena);
  return variables_report(kernel, arena);
}

nlohmann::json variables_report(const InstrumentedKernel& kernel,
                                std::span<const std::uint8_t> arena) {
  nlohmann::json waves = nlohmann::json::array();
  for (const WaveSlot& slot : read_arena(arena, kernel)) {
    nlohmann::json variables = nlohmann::json::object();
    for (const PlacedVariable& placed : kernel.layout.variables()) {
      const std::uint32_t size = placed.variable.element_size;
      nlohmann::json elements = nlohmann::json::array();
      for (std::size_t i = 0; i < placed.variable.count; ++i) {
        if (size == 1 || size == 2 || size == 4 || size == 8) {
          elements.push_back(read_element(slot, placed, i));
          continue;
        }
        static const char* digits = "0123456789abcdef";
        std::string text;
        for (std::uint32_t b = 0; b < size; ++b) {
          const std::uint8_t byte = slot.bytes[placed.offset + i * size + b];
          text += digits[byte >> 4];
          text += digits[byte & 15];
        }
        elements.push_back(text);
      }
      variables[placed.variable.name] = elements;
    }
    waves.push_back(tools::wave_entry(slot, "variables", variables));
  }
  return {{"kernel", kernel.name}, {"waves", waves}};
}

}  // namespace wavekit::rewrite
