// What `wavekit inspect` and `wavekit disasm` print, as library functions (the CLI only parses
// options): code objects, offload bundles and HIP fat binaries (one report per contained code
// object), as JSON for machines and as text for people.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "wavekit/analysis/analysis.h"

namespace wavekit::codeobj {
class CodeObject;
}

namespace wavekit::analysis {

// The analysis input of a parsed code object: its executable sections, kernels (descriptor
// entry points), STT_FUNC symbols of .symtab and .dynsym, and GOT slots with R_AMDGPU_ABS64
// relocations. The spans point into `object`, which must outlive the call to analyze().
ProgramInput make_input(const codeobj::CodeObject& object);

struct ReportOptions {
  std::string kernel;  // only this kernel and the functions it (transitively) calls; "" = all
};

// The issue-2 JSON contract: {"target", "code_object_version", "kernels": [...], "functions":
// [...]}, or {"bundles": [{"triple", "object": {...}}]} for a bundle or fat binary. Throws
// wavekit::Error naming `name` for input it cannot read, and for an unknown --kernel.
nlohmann::json inspect_json(std::span<const std::uint8_t> file, const std::string& name,
                            const ReportOptions& options = {});
// The same for people: a kernel table (registers, LDS, scratch, kernarg size), then each
// function with its blocks, edges, loops and calls.
std::string inspect_text(std::span<const std::uint8_t> file, const std::string& name,
                         const ReportOptions& options = {});
// Graphviz: one cluster per function, one node per block (its instructions), CFG edges solid,
// calls dashed.
std::string inspect_dot(std::span<const std::uint8_t> file, const std::string& name,
                        const ReportOptions& options = {});
// A listing: per code object, per function, per block, "address: text  // encoding".
std::string disassemble(std::span<const std::uint8_t> file, const std::string& name);

}  // namespace wavekit::analysis
