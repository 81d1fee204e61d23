// custom: the plan-file tool. Its plan is the user's JSON file (docs/rewrite.md, "Plans";
// resolve_plan reads it), its report every per-wave variable of every wave by name.
#include "../registry.h"
#include "wavekit/rewrite/tools.h"

namespace wavekit::rewrite {

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

tools::ToolDefinition tools::custom_tool() { return {"custom", nullptr, variables_report}; }

}  // namespace wavekit::rewrite
