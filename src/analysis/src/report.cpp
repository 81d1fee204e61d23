#include "wavekit/analysis/report.h"

#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::analysis {

namespace {

constexpr std::uint8_t kSymbolTypeFunction = 2;  // STT_FUNC
constexpr std::uint32_t kRelocationAbs64 = 3;    // R_AMDGPU_ABS64

// One code object with its analysis, and the functions a report covers.
struct Analyzed {
  std::string triple;
  codeobj::CodeObject object;
  Program program;
  std::vector<std::size_t> selected;  // function indices
};

Analyzed analyze_object(std::span<const std::uint8_t> bytes, const std::string& name,
                        std::string triple, const ReportOptions& options) {
  codeobj::CodeObject object = codeobj::CodeObject::parse(bytes, name);
  Program program = analyze(make_input(object));
  std::vector<std::size_t> selected;
  if (options.kernel.empty()) {
    for (std::size_t f = 0; f < program.functions.size(); ++f) selected.push_back(f);
  } else {
    std::optional<std::size_t> root;
    std::string known;
    for (std::size_t f = 0; f < program.functions.size(); ++f) {
      const Function& function = program.functions[f];
      if (function.kind != Function::Kind::kernel) continue;
      if (function.name == options.kernel) root = f;
      known += (known.empty() ? "" : ", ") + function.name;
    }
    if (!root) {
      fail(name, "no kernel named '" + options.kernel +
                     "' (kernels: " + (known.empty() ? std::string("none") : known) + ")");
    }
    // The kernel and everything it calls, in address order.
    std::set<std::size_t> reached{*root};
    std::vector<std::size_t> work{*root};
    while (!work.empty()) {
      std::size_t f = work.back();
      work.pop_back();
      for (std::size_t callee : program.callees[f]) {
        if (reached.insert(callee).second) work.push_back(callee);
      }
    }
    selected.assign(reached.begin(), reached.end());
  }
  return {std::move(triple), std::move(object), std::move(program), std::move(selected)};
}

// Every code object in the file; `plain` tells whether the file was one code object itself.
std::vector<Analyzed> analyze_file(std::span<const std::uint8_t> file, const std::string& name,
                                   const ReportOptions& options, bool& plain) {
  std::vector<codeobj::BundleEntry> entries = codeobj::find_code_objects(file, name);
  plain = entries.size() == 1 && entries.front().bytes.size() == file.size();
  std::vector<Analyzed> analyzed;
  bool kernel_found = options.kernel.empty();
  for (const auto& entry : entries) {
    std::string entry_name = plain ? name : name + " [" + entry.triple + "]";
    if (!options.kernel.empty() && !plain) {
      // In a bundle, --kernel selects it in whichever code objects define it.
      codeobj::CodeObject probe = codeobj::CodeObject::parse(entry.bytes, entry_name);
      if (!probe.find_kernel(options.kernel)) continue;
    }
    analyzed.push_back(analyze_object(entry.bytes, entry_name, entry.triple, options));
    kernel_found = true;
  }
  if (!kernel_found) fail(name, "no code object in it has a kernel named '" + options.kernel + "'");
  if (analyzed.empty()) fail(name, "holds no AMDGPU code object");
  return analyzed;
}

nlohmann::json object_json(const Analyzed& analyzed, const ReportOptions& options) {
  nlohmann::json result = codeobj::describe_json(analyzed.object);
  if (!options.kernel.empty()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& kernel : result["kernels"]) {
      if (kernel["name"] == options.kernel) kept.push_back(kernel);
    }
    result["kernels"] = std::move(kept);
  }
  nlohmann::json functions = nlohmann::json::array();
  for (std::size_t f : analyzed.selected) {
    const Function& function = analyzed.program.functions[f];
    nlohmann::json blocks = nlohmann::json::array();
    for (const Block& block : function.blocks) {
      nlohmann::json successors = nlohmann::json::array();
      for (std::size_t s : block.successors) successors.push_back(function.blocks[s].start);
      for (std::uint64_t s : block.external_successors) successors.push_back(s);
      nlohmann::json instructions = nlohmann::json::array();
      for (std::size_t i = 0; i < block.instruction_count; ++i) {
        const isa::Instruction& inst = function.instructions[block.first_instruction + i];
        instructions.push_back(
            {{"address", inst.address}, {"size", inst.size}, {"text", inst.text}});
      }
      blocks.push_back({{"start", block.start},
                        {"end", block.end},
                        {"successors", std::move(successors)},
                        {"instructions", std::move(instructions)}});
    }
    nlohmann::json calls = nlohmann::json::array();
    for (const CallSite& call : function.calls) {
      nlohmann::json entry = {{"address", call.address}};
      if (call.target) entry["target"] = *call.target;
      if (call.got_slot) entry["got_slot"] = *call.got_slot;
      if (!call.target_name.empty()) entry["target_name"] = call.target_name;
      if (call.tail) entry["tail"] = true;
      calls.push_back(std::move(entry));
    }
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& error : function.decode_errors) errors.push_back(error.message);
    nlohmann::json entry = {{"name", function.name},
                            {"kind", function.kind == Function::Kind::kernel ? "kernel" : "device"},
                            {"start", function.start},
                            {"end", function.end},
                            {"blocks", std::move(blocks)},
                            {"calls", std::move(calls)}};
    if (!errors.empty()) entry["decode_errors"] = std::move(errors);
    functions.push_back(std::move(entry));
  }
  result["functions"] = std::move(functions);
  return result;
}

// A metadata value as text ("-" when the note does not have it).
std::string metadata_value(const nlohmann::json& kernel, const char* key) {
  const auto& metadata = kernel["metadata"];
  if (!metadata.is_object() || !metadata.contains(key)) return "-";
  const auto& value = metadata[key];
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string pad(std::string text, std::size_t width, bool right = false) {
  if (text.size() >= width) return text;
  std::string spaces(width - text.size(), ' ');
  return right ? spaces + text : text + spaces;
}

void append_kernel_table(std::ostringstream& out, const nlohmann::json& description) {
  const auto& kernels = description["kernels"];
  if (kernels.empty()) return;
  std::size_t name_width = 6;
  for (const auto& kernel : kernels) {
    name_width = std::max(name_width, kernel["name"].get<std::string>().size());
  }
  out << "  " << pad("kernel", name_width)
      << "  entry     SGPRs VGPRs AGPRs    LDS scratch kernarg\n";
  for (const auto& kernel : kernels) {
    out << "  " << pad(kernel["name"].get<std::string>(), name_width) << "  "
        << pad(hex(kernel["entry"].get<std::uint64_t>()), 8) << " "
        << pad(metadata_value(kernel, ".sgpr_count"), 6, true)
        << pad(metadata_value(kernel, ".vgpr_count"), 6, true)
        << pad(metadata_value(kernel, ".agpr_count"), 6, true)
        << pad(metadata_value(kernel, ".group_segment_fixed_size"), 7, true)
        << pad(metadata_value(kernel, ".private_segment_fixed_size"), 8, true)
        << pad(metadata_value(kernel, ".kernarg_segment_size"), 8, true) << "\n";
  }
}

void append_functions_text(std::ostringstream& out, const Analyzed& analyzed) {
  for (std::size_t f : analyzed.selected) {
    const Function& function = analyzed.program.functions[f];
    out << "\n"
        << (function.kind == Function::Kind::kernel ? "kernel " : "function ") << function.name
        << "  [" << hex(function.start) << ", " << hex(function.end) << ")  "
        << function.instructions.size() << " instructions, " << function.blocks.size()
        << " blocks, " << function.loops.size()
        << (function.loops.size() == 1 ? " loop\n" : " loops\n");
    for (std::size_t b = 0; b < function.blocks.size(); ++b) {
      const Block& block = function.blocks[b];
      out << "  block " << pad(hex(block.start), 8) << " "
          << pad(std::to_string(block.instruction_count), 4, true) << " instr";
      if (!block.successors.empty() || !block.external_successors.empty()) {
        out << "  ->";
        for (std::size_t s : block.successors) out << " " << hex(function.blocks[s].start);
        for (std::uint64_t s : block.external_successors) out << " " << hex(s) << " (outside)";
      } else {
        const isa::Instruction& last =
            function.instructions[block.first_instruction + block.instruction_count - 1];
        out << "  (" << last.mnemonic << ")";
      }
      for (const Loop& loop : function.loops) {
        if (loop.header == b) out << "  loop header (" << loop.blocks.size() << " blocks)";
      }
      out << "\n";
    }
    for (const CallSite& call : function.calls) {
      out << (call.tail ? "  tail call at " : "  call at ") << hex(call.address) << " -> ";
      if (!call.target_name.empty()) {
        out << call.target_name;
      } else if (call.target) {
        out << hex(*call.target);
      } else if (call.got_slot) {
        out << "GOT slot " << hex(*call.got_slot);
      } else {
        out << "(unresolved: target computed at run time)";
      }
      out << "\n";
    }
    for (const auto& error : function.decode_errors) out << "  error: " << error.message << "\n";
  }
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '<' || c == '>' || c == '|') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

}  // namespace

ProgramInput make_input(const codeobj::CodeObject& object) {
  ProgramInput input;
  input.processor = object.target().processor;
  for (const auto& section : object.sections()) {
    if (section.is_executable() && section.is_alloc() && !section.data.empty()) {
      input.code.push_back({section.address, section.data});
    }
  }
  for (const auto& kernel : object.kernels())
    input.kernels.push_back({kernel.name, kernel.entry_address});
  std::set<std::uint64_t> seen;
  for (const auto* table : {&object.symbols(), &object.dynamic_symbols()}) {
    for (const auto& symbol : *table) {
      if (symbol.type != kSymbolTypeFunction || !symbol.is_defined()) continue;
      if (!seen.insert(symbol.value).second) continue;
      input.functions.push_back({symbol.name, symbol.value, symbol.size});
    }
  }
  for (const auto& relocation : object.relocations()) {
    if (relocation.type == kRelocationAbs64 && !relocation.symbol_name.empty()) {
      input.got_symbols[relocation.offset] = relocation.symbol_name;
    }
  }
  return input;
}

nlohmann::json inspect_json(std::span<const std::uint8_t> file, const std::string& name,
                            const ReportOptions& options) {
  bool plain = false;
  auto analyzed = analyze_file(file, name, options, plain);
  if (plain) return object_json(analyzed.front(), options);
  nlohmann::json bundles = nlohmann::json::array();
  for (const auto& one : analyzed) {
    bundles.push_back({{"triple", one.triple}, {"object", object_json(one, options)}});
  }
  return {{"bundles", std::move(bundles)}};
}

std::string inspect_text(std::span<const std::uint8_t> file, const std::string& name,
                         const ReportOptions& options) {
  bool plain = false;
  auto analyzed = analyze_file(file, name, options, plain);
  std::ostringstream out;
  for (const auto& one : analyzed) {
    nlohmann::json description = codeobj::describe_json(one.object);
    if (!options.kernel.empty()) {
      nlohmann::json kept = nlohmann::json::array();
      for (auto& kernel : description["kernels"]) {
        if (kernel["name"] == options.kernel) kept.push_back(kernel);
      }
      description["kernels"] = std::move(kept);
    }
    if (&one != &analyzed.front()) out << "\n";
    out << (plain ? name : one.triple) << ": " << one.object.target().target_id()
        << ", code object v" << one.object.target().code_object_version << ", "
        << one.object.kernels().size() << " kernel(s), " << one.program.functions.size()
        << " function(s)\n\n";
    append_kernel_table(out, description);
    append_functions_text(out, one);
  }
  return out.str();
}

std::string inspect_dot(std::span<const std::uint8_t> file, const std::string& name,
                        const ReportOptions& options) {
  bool plain = false;
  auto analyzed = analyze_file(file, name, options, plain);
  std::ostringstream out;
  out << "digraph cfg {\n  node [shape=record, fontname=\"monospace\", fontsize=9];\n";
  std::size_t object_index = 0;
  for (const auto& one : analyzed) {
    // Node names carry the object index so that bundles' objects do not collide.
    auto node = [&](std::uint64_t address) {
      return "\"o" + std::to_string(object_index) + "_" + hex(address) + "\"";
    };
    for (std::size_t f : one.selected) {
      const Function& function = one.program.functions[f];
      out << "  subgraph \"cluster_o" << object_index << "_" << hex(function.start) << "\" {\n"
          << "    label=\"" << dot_escape((plain ? "" : one.triple + " ") + function.name)
          << "\";\n";
      for (const Block& block : function.blocks) {
        out << "    " << node(block.start) << " [label=\"{" << hex(block.start);
        for (std::size_t i = 0; i < block.instruction_count; ++i) {
          out << "\\l" << dot_escape(function.instructions[block.first_instruction + i].text);
        }
        out << "\\l}\"];\n";
      }
      out << "  }\n";
      for (const Block& block : function.blocks) {
        for (std::size_t s : block.successors) {
          out << "  " << node(block.start) << " -> " << node(function.blocks[s].start) << ";\n";
        }
      }
      for (const CallSite& call : function.calls) {
        if (!call.target || !one.program.function_containing(*call.target)) continue;
        const Block* from = function.block_containing(call.address);
        out << "  " << node(from->start) << " -> " << node(*call.target)
            << " [style=dashed, label=\"" << (call.tail ? "tail call" : "call") << "\"];\n";
      }
    }
    ++object_index;
  }
  out << "}\n";
  return out.str();
}

std::string disassemble(std::span<const std::uint8_t> file, const std::string& name) {
  bool plain = false;
  auto analyzed = analyze_file(file, name, {}, plain);
  std::ostringstream out;
  for (const auto& one : analyzed) {
    if (&one != &analyzed.front()) out << "\n";
    out << "; " << (plain ? name : one.triple) << " (" << one.object.target().target_id()
        << ", code object v" << one.object.target().code_object_version << ")\n";
    for (const Function& function : one.program.functions) {
      out << "\n"
          << function.name << ":"
          << (function.kind == Function::Kind::kernel ? "  ; kernel" : "  ; device function")
          << "\n";
      for (const Block& block : function.blocks) {
        out << ".L" << hex(block.start) << ":";
        if (!block.predecessors.empty()) {
          out << "  ; from";
          for (std::size_t p : block.predecessors) out << " " << hex(function.blocks[p].start);
        }
        out << "\n";
        for (std::size_t i = 0; i < block.instruction_count; ++i) {
          const isa::Instruction& inst = function.instructions[block.first_instruction + i];
          std::string encoding;
          for (std::size_t word = 0; word < inst.size; word += 4) {
            char text[12];
            std::uint32_t value = inst.encoding[word] | inst.encoding[word + 1] << 8 |
                                  inst.encoding[word + 2] << 16 |
                                  static_cast<std::uint32_t>(inst.encoding[word + 3]) << 24;
            std::snprintf(text, sizeof text, "%s%08X", word ? " " : "", value);
            encoding += text;
          }
          out << "  " << pad(hex(inst.address) + ":", 10) << " " << pad(inst.text, 56) << "// "
              << encoding << "\n";
        }
      }
      for (const auto& error : function.decode_errors)
        out << "  ; error: " << error.message << "\n";
    }
  }
  return out.str();
}

}  // namespace wavekit::analysis
