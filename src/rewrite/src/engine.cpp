// The rewriting engine: relocate each instrumented kernel whole into a new executable section
// with its points expanded inline, redirect the descriptor to it, and keep descriptor, AMDGPU
// note and the WAVEKIT note in agreement (rewriting.md §3, §6, §7).
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "call_envelope.h"
#include "callees.h"
#include "entry_abi.h"
#include "wavekit/analysis/report.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/isa/isa.h"
#include "wavekit/probe/capture.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/probe_library.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

using detail::EntrySgpr;
using detail::EntryValue;

constexpr std::uint32_t kShtNote = 7;
constexpr std::uint64_t kShfAlloc = 0x2;
constexpr std::uint64_t kShfExecInstr = 0x4;
// Numbered SGPRs on gfx9: s0..s101. VCC, FLAT_SCRATCH and XNACK_MASK come out of the same
// allocation, so a grant must leave room for them above the numbered ones (amdgpu-codeobject.md
// §3).
constexpr unsigned kNumberedSgprs = 102;
constexpr unsigned kSpecialSgprs = 6;
constexpr unsigned kStackPointer = 32;  // s32 in the fixed function ABI
// SMEM immediate offsets are 20 bits on gfx9.
constexpr std::uint64_t kMaxSmemOffset = 0xfffff;
constexpr std::uint8_t kSttNotype = 0;
constexpr std::uint8_t kStbGlobal = 1;
constexpr std::uint32_t kRelocationAbs64 = 3;  // R_AMDGPU_ABS64

std::optional<MemoryKind> memory_kind_of(isa::MemoryKind kind) {
  switch (kind) {
    case isa::MemoryKind::none:
      return std::nullopt;
    case isa::MemoryKind::scalar:
      return MemoryKind::scalar;
    case isa::MemoryKind::global:
    case isa::MemoryKind::buffer:
      return MemoryKind::global;
    case isa::MemoryKind::flat:
      return MemoryKind::flat;
    case isa::MemoryKind::scratch:
      return MemoryKind::scratch;
    case isa::MemoryKind::lds:
      return MemoryKind::lds;
  }
  return std::nullopt;
}

// A kernel's or a device function's code as the rewriter sees it: the contiguous range from the
// entry to the end of the last reachable instruction, decoded, with its basic-block leaders.
struct KernelCode {
  const codeobj::Kernel* kernel = nullptr;  // the kernel, or (device functions) its caller
  std::size_t kernel_index = 0;
  bool function = false;  // a device function relocated with the kernel that calls it
  std::string name;       // the kernel's, or the function's (analysis name when stripped)
  std::uint64_t entry = 0;
  std::vector<isa::Instruction> instructions;  // every instruction of the range, in order
  std::set<std::uint64_t> reachable;
  std::vector<std::uint64_t> leaders;  // reachable block starts, ascending
  std::string label() const { return (function ? "function '" : "kernel '") + name + "'"; }
};

const codeobj::Section& code_section(const codeobj::CodeObject& object, std::uint64_t address,
                                     const std::string& label) {
  for (const codeobj::Section& section : object.sections())
    if (section.is_executable() && section.contains_address(address)) return section;
  fail(object.name(), label + ": entry " + hex(address) + " is not in an executable section");
}

// A device function's return: s_setpc_b64 to the link pair s_swappc_b64 wrote.
bool is_return(const isa::Instruction& inst) {
  return inst.mnemonic == "s_setpc_b64" && inst.reads.sgpr[30] && inst.reads.sgpr[31];
}

// The original addresses of the reachable calls (s_swappc_b64) in `code`, ascending.
std::vector<std::uint64_t> call_sites_of(const KernelCode& code) {
  std::vector<std::uint64_t> sites;
  for (const isa::Instruction& inst : code.instructions)
    if (inst.flow == isa::ControlFlow::call && code.reachable.count(inst.address))
      sites.push_back(inst.address);
  return sites;
}

KernelCode decode_code(const codeobj::CodeObject& object, const isa::Decoder& decoder,
                       KernelCode code) {
  const std::string label = code.label();
  const codeobj::Section& section = code_section(object, code.entry, label);
  const std::uint64_t section_end = section.address + section.size;
  auto decode_at = [&](std::uint64_t address) {
    if (address < section.address || address >= section_end)
      fail(object.name(),
           label + ": control reaches " + hex(address) + ", outside its code section");
    const std::uint64_t available = std::min<std::uint64_t>(16, section_end - address);
    isa::DecodeError error;
    std::optional<isa::Instruction> inst =
        decoder.decode(object.read(address, available), address, &error);
    if (!inst) fail(object.name(), label + ": " + error.message);
    return *inst;
  };

  // Reachability from the entry: the relocated range ends after the last reachable instruction,
  // so padding and whatever follows the code are left alone.
  std::set<std::uint64_t> leaders{code.entry};
  std::vector<std::uint64_t> work{code.entry};
  std::uint64_t end = code.entry;
  while (!work.empty()) {
    std::uint64_t address = work.back();
    work.pop_back();
    while (code.reachable.insert(address).second) {
      const isa::Instruction inst = decode_at(address);
      end = std::max(end, address + inst.size);
      // A device function's return goes back to its caller, wherever that runs; any other
      // computed jump has targets the rewriter cannot relocate.
      if (inst.flow == isa::ControlFlow::indirect && !(code.function && is_return(inst)))
        fail(object.name(), label + ": computed jump or return (" + inst.text + " at " +
                                hex(address) + ") is not supported yet");
      // Blocks as the analysis library and the emulator's ground truth define them: every
      // control-flow instruction ends one, and branch targets start one.
      if (inst.flow != isa::ControlFlow::none) leaders.insert(address + inst.size);
      if (inst.branch_target) {
        if (*inst.branch_target < code.entry)
          fail(object.name(), label + ": branch at " + hex(address) + " leaves the " +
                                  (code.function ? "function" : "kernel") + " (to " +
                                  hex(*inst.branch_target) + ")");
        leaders.insert(*inst.branch_target);
        work.push_back(*inst.branch_target);
      }
      if (inst.ends_flow()) break;
      address += inst.size;
    }
  }
  for (std::uint64_t leader : leaders)
    if (code.reachable.count(leader)) code.leaders.push_back(leader);
  code.instructions = decoder.decode_all(object.read(code.entry, end - code.entry), code.entry);
  // Linear decoding must agree with the reachability walk, or a branch lands inside an
  // instruction.
  std::set<std::uint64_t> starts;
  for (const isa::Instruction& inst : code.instructions) starts.insert(inst.address);
  for (std::uint64_t address : code.reachable)
    if (!starts.count(address))
      fail(object.name(),
           label + ": control reaches " + hex(address) + ", which is inside another instruction");
  return code;
}

KernelCode decode_kernel(const codeobj::CodeObject& object, const isa::Decoder& decoder,
                         std::size_t kernel_index) {
  KernelCode code;
  code.kernel = &object.kernels()[kernel_index];
  code.kernel_index = kernel_index;
  code.name = code.kernel->name;
  code.entry = code.kernel->entry_address;
  return decode_code(object, decoder, std::move(code));
}

// Whether SCC may be read before it is written, from instruction `index` on. A local scan:
// leaving the straight-line code (a branch, a block boundary reached by fall-through is fine,
// but any control transfer) counts as live, so the answer is conservative.
bool scc_live_before(const KernelCode& code, std::size_t index) {
  for (std::size_t i = index; i < code.instructions.size(); ++i) {
    const isa::Instruction& inst = code.instructions[i];
    if (inst.reads.scc) return true;
    if (inst.writes.scc) return false;
    if (inst.flow == isa::ControlFlow::end_program) return false;
    if (inst.flow != isa::ControlFlow::none) return true;
  }
  return true;
}

// A probe call's GOT-relative address computation: an s_getpc_b64 at `at` in a chunk's bytes,
// followed by s_add_u32 / s_addc_u32 whose literals become (slot - pc) once both have addresses.
struct GotFixup {
  std::size_t at = 0;
  std::size_t slot = 0;
};

// A call from relocated code to a relocated device function: at `at`, s_cselect_b32 / s_add_u32
// / s_addc_u32 / s_cmp_lg_u32 whose literals become (relocated entry - original entry) once the
// copy has an address.
struct CallFixup {
  std::size_t at = 0;
  std::uint64_t callee = 0;  // the callee's original entry
};

// A call from relocated code whose target is computed at run time, compared with one relocated
// device function: at `at`, s_getpc_b64 / s_add_u32 / s_addc_u32 whose literals become
// (original entry - pc), giving the function's run-time original address, then s_add_u32 /
// s_addc_u32 whose literals become (relocated entry - original entry), giving its copy's.
struct TranslationFixup {
  std::size_t at = 0;
  std::uint64_t callee = 0;  // the function's original entry
};

// Inserted code being put together: snippets (assembly text) and probe calls.
struct Code {
  std::vector<std::uint8_t> bytes;
  std::vector<GotFixup> got;
  std::vector<CallFixup> calls;
  std::vector<TranslationFixup> translations;
  bool empty() const { return bytes.empty(); }
};

struct Chunk {
  enum class Kind { prologue, code, instruction } kind = Kind::code;
  std::vector<std::uint8_t> bytes;
  const isa::Instruction* original = nullptr;  // Kind::instruction
  bool getpc = false;                          // s_getpc_b64: correction follows in `bytes`
  std::uint64_t offset = 0;                    // in the new section
  std::vector<GotFixup> got;                   // probe calls in `bytes`
  std::vector<CallFixup> calls;                // calls retargeted to relocated functions
  std::vector<TranslationFixup> translations;  // computed call targets mapped to copies
};

// A probe of the plan's probe library: its footprint and the GOT slot the calls go through.
struct LoadedProbe {
  ProbeFootprint footprint;
  isa::RegisterSet clobbers;
  std::size_t slot = 0;
};

// What the probe calls of one kernel share: the envelope's SGPRs, where the spill area and the
// probes' stack lie in the (grown) private segment, and the analysis's view of the kernel.
struct KernelCalls {
  detail::CallSgprs sgprs;
  std::uint64_t spill_base = 0;  // per lane
  std::uint64_t stack_base = 0;  // per lane
  // Original addresses of the reachable s_swappc_b64 of the kernel, then of each device
  // function relocated with it (call_sites_of): the order of a call-site-indexed variable.
  std::vector<std::uint64_t> call_sites;
};

class Engine {
 public:
  Engine(const codeobj::CodeObject& input, const Plan& plan, const RewriteOptions& options)
      : input_(input),
        plan_(plan),
        options_(options),
        decoder_(input.target().processor),
        assembler_(input.target().processor) {}

  RewriteResult run();

 private:
  std::vector<std::size_t> selected_kernels() const;
  void check_plan() const;
  // `blocks`: the original starts of every block the kernel's points can count, its own and
  // those of the device functions relocated with it (see block_keys); `call_sites` likewise
  // every call the kernel's call points can instrument (call_sites_of).
  ArenaLayout layout_for(const std::vector<std::uint64_t>& blocks,
                         const std::vector<std::uint64_t>& call_sites) const;
  // `relocated`: the original entries of the device functions relocated with this kernel, which
  // its calls (and theirs) are retargeted to. `blocks`: the kernel's block keys (layout_for);
  // a block-indexed element is the block's position there.
  std::vector<Chunk> build_chunks(const KernelCode& code, const InstrumentedKernel& instrumented,
                                  const detail::ReservedSgprs& reserved,
                                  const detail::PrologueInput& prologue,
                                  const std::optional<KernelCalls>& calls,
                                  const std::set<std::uint64_t>& relocated,
                                  const std::vector<std::uint64_t>& blocks, std::uint64_t* points);
  void load_probe_library();
  const LoadedProbe& probe(const std::string& name) const;
  std::vector<detail::EnvelopeArgument> envelope_arguments(const ProbeCall& call,
                                                           const InstrumentedKernel& instrumented,
                                                           const KernelCalls& calls,
                                                           const isa::Instruction& inst,
                                                           PointKind where, std::uint64_t point_id,
                                                           const std::string& context) const;
  std::vector<std::uint8_t> assemble(const std::string& text) const {
    return assembler_.assemble(text);
  }

  // The whole input's functions and call graph, built on the first kernel that makes calls.
  const analysis::Program& program() {
    if (!program_) {
      const analysis::ProgramInput input = analysis::make_input(input_);
      self_contained_ = input.got_symbols.empty();
      program_ = analysis::analyze(input);
    }
    return *program_;
  }
  const analysis::Liveness& liveness() {
    if (!liveness_) liveness_.emplace(program());
    return *liveness_;
  }

  const codeobj::CodeObject& input_;
  const Plan& plan_;
  std::optional<analysis::Program> program_;
  bool self_contained_ = false;  // the input imports no symbols (program() sets it)
  std::optional<analysis::Liveness> liveness_;
  std::map<std::string, LoadedProbe> probes_;  // the plan's probes, by name
  // Resolved call targets of the whole object (s_swappc_b64 address -> callee entry), filled
  // when device functions are relocated.
  std::map<std::uint64_t, std::uint64_t> call_targets_;
  // Calls of the whole object whose target is computed at run time (s_swappc_b64 addresses),
  // filled with call_targets_: relocated code maps their targets to the copies at run time.
  std::set<std::uint64_t> computed_calls_;
  std::vector<std::string> slots_;  // GOT slot i holds the address of slots_[i]
  const RewriteOptions& options_;
  isa::Decoder decoder_;
  isa::Assembler assembler_;
};

std::vector<std::size_t> Engine::selected_kernels() const {
  const auto& kernels = input_.kernels();
  if (kernels.empty()) fail(input_.name(), "the code object has no kernels");
  std::vector<std::size_t> selected;
  if (plan_.kernels.empty()) {
    for (std::size_t i = 0; i < kernels.size(); ++i) selected.push_back(i);
    return selected;
  }
  for (const std::string& name : plan_.kernels) {
    auto found = std::find_if(kernels.begin(), kernels.end(), [&](const codeobj::Kernel& k) {
      return k.name == name || k.descriptor_symbol == name;
    });
    if (found == kernels.end()) {
      std::string known;
      for (const codeobj::Kernel& k : kernels) known += (known.empty() ? "" : ", ") + k.name;
      fail(input_.name(), "no kernel named '" + name + "' (kernels: " + known + ")");
    }
    const std::size_t index = static_cast<std::size_t>(found - kernels.begin());
    if (std::find(selected.begin(), selected.end(), index) == selected.end())
      selected.push_back(index);
  }
  std::sort(selected.begin(), selected.end());
  return selected;
}

void Engine::check_plan() const {
  if (plan_.has_calls() && plan_.probe_library.empty())
    fail(input_.name(), "the plan calls probes but names no probe library (--probe-lib)");
  for (const PointSpec& point : plan_.points) {
    const bool call_point =
        point.where == PointKind::call_site || point.where == PointKind::call_return;
    if (call_point && point.snippet)
      fail(input_.name(),
           "points of kind '" + to_string(point.where) + "' take probe calls, not snippets");
  }
}

void Engine::load_probe_library() {
  const std::string& path = plan_.probe_library;
  const codeobj::CodeObject library = codeobj::CodeObject::parse(read_file(path), path);
  // One executable holds both objects: processor, features and code-object version must agree
  // (rewriting.md §8).
  if (library.target().target_id() != input_.target().target_id())
    fail(input_.name(), "the probe library " + path + " is for " + library.target().target_id() +
                            ", the object for " + input_.target().target_id());
  const std::optional<std::vector<ProbeFootprint>> footprints = find_probe_note(library);
  if (!footprints)
    fail(path,
         "has no probe note: build it with wavekit_add_probe_library (or run `wavekit "
         "probe-lib` on it)");
  for (const PointSpec& point : plan_.points) {
    if (!point.call || probes_.count(point.call->probe)) continue;
    auto found = std::find_if(footprints->begin(), footprints->end(),
                              [&](const ProbeFootprint& f) { return f.name == point.call->probe; });
    if (found == footprints->end()) fail(path, "has no probe '" + point.call->probe + "'");
    if (found->scratch_unbounded)
      fail(path, "probe '" + found->name +
                     "' addresses its stack through computed pointers: its scratch has no bound");
    probes_[found->name] = {*found, clobber_set(*found), slots_.size()};
    slots_.push_back(found->name);
  }
}

const LoadedProbe& Engine::probe(const std::string& name) const { return probes_.at(name); }

// The operands and modifiers of an instruction as llvm-objdump-22 prints them: "mnemonic a, b,
// c mod mod:N". The isa library's MCInsts carry no operand names, so the printed order (the
// AMDGPU assembler syntax, AMDGPUAsmGFX9.rst) is what says which operand is which.
struct PrintedOperands {
  std::vector<std::string> operands, modifiers;
  bool has_modifier(std::string_view name) const {
    return std::find(modifiers.begin(), modifiers.end(), name) != modifiers.end();
  }
  // The value of "name:N" (0 when absent).
  std::int64_t modifier_value(std::string_view name) const {
    const std::string prefix = std::string(name) + ":";
    for (const std::string& modifier : modifiers)
      if (modifier.rfind(prefix, 0) == 0)
        return std::strtoll(modifier.c_str() + prefix.size(), nullptr, 0);
    return 0;
  }
};

PrintedOperands printed_operands(const isa::Instruction& inst) {
  PrintedOperands printed;
  std::istringstream words(inst.text.substr(inst.mnemonic.size()));
  bool listing = true;
  for (std::string word; words >> word;) {
    const bool continues = !word.empty() && word.back() == ',';
    if (continues) word.pop_back();
    (listing ? printed.operands : printed.modifiers).push_back(word);
    listing = listing && continues;
  }
  return printed;
}

// "vN" or "v[a:b]" -> (first, count); "sN" / "s[a:b]" likewise; nullopt for anything else.
std::optional<std::pair<unsigned, unsigned>> registers(const std::string& operand, char bank) {
  unsigned first = 0, last = 0;
  const std::string range = std::string(1, bank) + "[%u:%u]";
  const std::string single = std::string(1, bank) + "%u";
  if (std::sscanf(operand.c_str(), range.c_str(), &first, &last) == 2 && last >= first)
    return std::pair{first, last - first + 1};
  char rest = 0;
  if (std::sscanf(operand.c_str(), (single + "%c").c_str(), &first, &rest) == 1)
    return std::pair{first, 1u};
  return std::nullopt;
}

// A memory instruction's per-lane (scalar: per-wave) address as an envelope argument; what the
// probe receives for each kind is in docs/rewrite.md ("Effective addresses").
detail::EnvelopeArgument effective_address(const isa::Instruction& inst,
                                           const std::string& context) {
  const auto refuse = [&](const std::string& why) -> void {
    fail(context, "effective_address of '" + inst.text + "': " + why);
  };
  const PrintedOperands printed = printed_operands(inst);
  const std::vector<std::string>& operands = printed.operands;
  const auto operand = [&](std::size_t index) -> const std::string& {
    if (index >= operands.size()) refuse("unexpected operands");
    return operands[index];
  };
  const auto vgprs = [&](std::size_t index) {
    const auto found = registers(operand(index), 'v');
    if (!found) refuse("its address operand '" + operands[index] + "' is not a VGPR");
    return *found;
  };
  const auto sgprs = [&](std::size_t index, unsigned count, const char* what) {
    const auto found = registers(operand(index), 's');
    if (!found || found->second != count)
      refuse("its " + std::string(what) + " '" + operands[index] + "' is not " +
             (count == 1   ? "an SGPR"
              : count == 2 ? "an SGPR pair"
                           : "an SGPR quad"));
    return found->first;
  };
  const bool store = inst.mnemonic.find("_store") != std::string::npos ||
                     inst.mnemonic.find("_write") != std::string::npos;
  const bool atomic = inst.mnemonic.find("_atomic") != std::string::npos;
  // Instructions that return data name their destination first.
  const bool returns =
      atomic ? (printed.has_modifier("glc") || printed.has_modifier("sc0")) : !store;
  if (inst.mnemonic.find("_lds") != std::string::npos || printed.has_modifier("lds"))
    refuse("loads into LDS (LDS DMA) are not supported");

  detail::EnvelopeArgument arg;
  arg.kind = detail::EnvelopeArgument::Kind::address;
  // An SMEM / MUBUF offset operand: one SGPR (soffset) or a constant (folded into the offset).
  const auto set_offset = [&](const std::string& text) {
    if (const auto soffset = registers(text, 's')) {
      if (soffset->second != 1) refuse("its offset '" + text + "' is not one SGPR");
      arg.has_soffset = true;
      arg.soffset = soffset->first;
      return;
    }
    char* end = nullptr;
    arg.offset = std::strtoll(text.c_str(), &end, 0);
    if (end == text.c_str() || *end)
      refuse("its offset '" + text + "' is neither an SGPR nor a constant");
  };
  switch (inst.memory) {
    case isa::MemoryKind::global:
    case isa::MemoryKind::flat: {
      // loads "dst, vaddr, saddr|off", stores "vaddr, data, saddr|off", atomics "[dst,] vaddr,
      // data, saddr|off"; FLAT has no saddr. vaddr is a VGPR pair, or a 32-bit offset from an
      // SGPR pair base.
      const std::size_t vaddr = returns ? 1 : 0;
      const std::size_t saddr = vaddr + (store || atomic ? 2 : 1);
      std::tie(arg.first, arg.count) = vgprs(vaddr);
      if (saddr < operands.size() && operands[saddr] != "off") {
        arg.has_base = true;
        arg.base = sgprs(saddr, 2, "base");
      }
      if (arg.count != (arg.has_base ? 1u : 2u)) refuse("unexpected address width");
      arg.offset = printed.modifier_value("offset");
      return arg;
    }
    case isa::MemoryKind::scratch: {
      // As GLOBAL, with "off" for an absent vaddr or saddr; saddr is one SGPR, the sum 32-bit.
      arg.form = detail::AddressForm::scratch;
      const std::size_t vaddr = returns ? 1 : 0;
      const std::size_t saddr = vaddr + (store ? 2 : 1);
      arg.has_vaddr = operand(vaddr) != "off";
      arg.count = 0;
      if (arg.has_vaddr) std::tie(arg.first, arg.count) = vgprs(vaddr);
      if (arg.count > 1) refuse("unexpected address width");
      if (operand(saddr) != "off") {
        arg.has_base = true;
        arg.base = sgprs(saddr, 1, "base");
      }
      arg.offset = printed.modifier_value("offset");
      return arg;
    }
    case isa::MemoryKind::lds: {
      // "[dst,] vaddr[, data0[, data1]]" then offset:N, or offset0:N offset1:N for the
      // 2-address forms, whose first address the probe gets. On gfx9 the DS address is VADDR +
      // offset in the workgroup's LDS, with no M0 term (M0 only bounds LDS before gfx9).
      arg.form = detail::AddressForm::lds;
      if (printed.has_modifier("gds")) refuse("GDS instructions are not supported");
      const bool no_address = inst.mnemonic.find("addtid") != std::string::npos ||
                              inst.mnemonic.find("_src2_") != std::string::npos ||
                              inst.mnemonic.rfind("ds_gws_", 0) == 0 ||
                              inst.mnemonic == "ds_append" || inst.mnemonic == "ds_consume" ||
                              inst.mnemonic == "ds_nop";
      if (no_address) refuse("its address is not a VGPR operand (M0- or lane-based forms)");
      const bool writes_vgprs = inst.writes.vgpr.any() || inst.writes.agpr.any();
      std::tie(arg.first, arg.count) = vgprs(writes_vgprs ? 1 : 0);
      if (arg.count != 1) refuse("unexpected address width");
      const bool pair = inst.mnemonic.find("2st64_") != std::string::npos ||
                        inst.mnemonic.find("read2_") != std::string::npos ||
                        inst.mnemonic.find("write2_") != std::string::npos;
      if (pair) {
        const std::int64_t element = inst.mnemonic.find("_b64") != std::string::npos ? 8 : 4;
        const std::int64_t scale = inst.mnemonic.find("st64") != std::string::npos ? 64 : 1;
        arg.offset = printed.modifier_value("offset0") * element * scale;
      } else {
        arg.offset = printed.modifier_value("offset");
      }
      return arg;
    }
    case isa::MemoryKind::scalar: {
      // "sdata, sbase, offset|soffset [offset:N]": s_load / s_store / s_atomic take an SGPR pair
      // base, the s_buffer_ forms a V# (SGPR quad).
      const bool buffer = inst.mnemonic.rfind("s_buffer_", 0) == 0;
      if (operands.size() < 3 || inst.mnemonic.rfind("s_scratch_", 0) == 0)
        refuse("not an SMEM access with a base and an offset");
      arg.form = buffer ? detail::AddressForm::scalar_buffer : detail::AddressForm::scalar;
      arg.count = 0;
      arg.has_base = true;
      arg.base = sgprs(1, buffer ? 4 : 2, buffer ? "resource" : "base");
      set_offset(operands[2]);
      arg.offset += printed.modifier_value("offset");
      return arg;
    }
    case isa::MemoryKind::buffer: {
      // "vdata, vaddr|off, srsrc, soffset" then idxen / offen / offset:N: vaddr holds the
      // index (idxen), the offset (offen), or both in that order.
      arg.form = detail::AddressForm::buffer;
      if (operands.size() < 4) refuse("not a buffer access with a resource");
      arg.indexed = printed.has_modifier("idxen");
      arg.has_vaddr = printed.has_modifier("offen");
      const unsigned vgprs_read = (arg.indexed ? 1u : 0u) + (arg.has_vaddr ? 1u : 0u);
      arg.count = 0;
      if (vgprs_read) std::tie(arg.first, arg.count) = vgprs(1);
      if (arg.count != vgprs_read) refuse("unexpected address width");
      arg.has_base = true;
      arg.base = sgprs(2, 4, "resource");
      // A constant SOFFSET stays out of the offset a swizzled V# interleaves.
      set_offset(operands[3]);
      arg.constant_soffset = arg.offset;
      arg.offset = printed.modifier_value("offset");
      return arg;
    }
    case isa::MemoryKind::none:
      break;
  }
  refuse("not a memory instruction");
  return arg;
}

std::vector<detail::EnvelopeArgument> Engine::envelope_arguments(
    const ProbeCall& call, const InstrumentedKernel& instrumented, const KernelCalls& calls,
    const isa::Instruction& inst, PointKind where, std::uint64_t point_id,
    const std::string& context) const {
  using Kind = detail::EnvelopeArgument::Kind;
  std::vector<detail::EnvelopeArgument> args;
  for (const Argument& argument : call.args) {
    detail::EnvelopeArgument arg;
    switch (argument.kind) {
      case ArgumentKind::constant:
        if (argument.value > 0xffffffffu)
          fail(context, "constant arguments are 32 bits (" + hex(argument.value) + ")");
        arg.value = argument.value;
        break;
      case ArgumentKind::point_id:
        arg.value = point_id;
        break;
      case ArgumentKind::original_address:
        arg.kind = Kind::immediate64;
        arg.value = inst.address;
        break;
      case ArgumentKind::register_value: {
        // sN, s[a:a+1], vN, v[a:a+1], exec.
        const std::string& name = argument.name;
        if (name == "exec") {
          arg.kind = Kind::exec;
          break;
        }
        unsigned first = 0, last = 0;
        char bank = 0;
        if (std::sscanf(name.c_str(), "%c[%u:%u]", &bank, &first, &last) == 3 ||
            std::sscanf(name.c_str(), "%c%u", &bank, &first) == 2) {
          if (last < first) last = first;
        }
        const unsigned limit = bank == 's' ? kNumberedSgprs : 256;
        if ((bank != 's' && bank != 'v') || last - first > 1 || last >= limit)
          fail(context,
               "register argument '" + name + "': expected sN, s[a:a+1], vN, v[a:a+1] or exec");
        arg.kind = bank == 's' ? Kind::sgpr : Kind::vgpr;
        arg.first = first;
        arg.count = last - first + 1;
        break;
      }
      case ArgumentKind::exec:
        arg.kind = Kind::exec;
        break;
      case ArgumentKind::return_value:
        // The callee's 32-bit result (v0); the plan allows it at call_return points only.
        arg.kind = Kind::vgpr;
        arg.first = 0;
        break;
      case ArgumentKind::variable: {
        const PlacedVariable* placed = instrumented.layout.find(argument.name);
        arg.kind = Kind::slot_offset;
        arg.value = placed->offset;
        if (argument.indexed_by_call_site) {
          if (where != PointKind::call_site && where != PointKind::call_return)
            fail(context, "a variable indexed by call site needs a call_site or call_return point");
          const auto site =
              std::find(calls.call_sites.begin(), calls.call_sites.end(), inst.address);
          if (site == calls.call_sites.end())
            fail(context, "internal: the call is not among the kernel's call sites");
          arg.value += static_cast<std::uint64_t>(site - calls.call_sites.begin()) *
                       placed->variable.element_size;
        }
        break;
      }
      case ArgumentKind::effective_address:
        arg = effective_address(inst, context);
        break;
    }
    args.push_back(arg);
  }
  return args;
}

ArenaLayout Engine::layout_for(const std::vector<std::uint64_t>& blocks,
                               const std::vector<std::uint64_t>& call_sites) const {
  ArenaLayout layout;
  for (PerWaveVariable variable : plan_.variables) {
    // A variable indexed by block gets one element per block of this kernel and of the device
    // functions relocated with it, keyed by the blocks' original addresses.
    const bool per_block =
        std::any_of(plan_.points.begin(), plan_.points.end(), [&](const PointSpec& p) {
          return p.snippet && p.snippet->indexed_by_block && p.snippet->variable == variable.name;
        });
    if (per_block) {
      variable.count = static_cast<std::uint32_t>(blocks.size());
      variable.keys = blocks;
    }
    // One element per call site of this kernel and of the device functions relocated with it,
    // keyed by the calls' original addresses.
    const bool per_call_site =
        std::any_of(plan_.points.begin(), plan_.points.end(), [&](const PointSpec& p) {
          return p.call &&
                 std::any_of(p.call->args.begin(), p.call->args.end(), [&](const Argument& a) {
                   return a.indexed_by_call_site && a.name == variable.name;
                 });
        });
    // A kernel without calls keeps one unkeyed element: nothing indexes it.
    if (per_call_site && !call_sites.empty()) {
      variable.count = static_cast<std::uint32_t>(call_sites.size());
      variable.keys = call_sites;
    }
    layout.add(std::move(variable));
  }
  return layout;
}

std::vector<Chunk> Engine::build_chunks(
    const KernelCode& code, const InstrumentedKernel& instrumented,
    const detail::ReservedSgprs& reserved, const detail::PrologueInput& prologue,
    const std::optional<KernelCalls>& calls, const std::set<std::uint64_t>& relocated,
    const std::vector<std::uint64_t>& blocks, std::uint64_t* points) {
  // Increments an 8-byte per-wave counter: one s_atomic_add_x2 of the 64-bit 1 the prologue
  // left in ReservedSgprs::one. The atomic leaves SCC alone, so SCC's liveness at the point
  // (the last argument) does not matter, and without glc it returns nothing: no wait, and
  // the kernel's own LGKM operations in flight are not waited for either.
  auto increment = [&](const std::string& variable, std::uint64_t element, bool) {
    const PlacedVariable* placed = instrumented.layout.find(variable);
    const std::uint64_t offset = placed->offset + element * placed->variable.element_size;
    if (placed->variable.element_size != 8)
      fail(input_.name(), "increment snippets need 8-byte elements ('" + variable + "' has " +
                              std::to_string(placed->variable.element_size) + ")");
    if (offset > kMaxSmemOffset)
      fail(input_.name(), "kernel '" + instrumented.name + "': per-wave variable '" + variable +
                              "' lies beyond the 1 MiB a scalar offset reaches");
    auto pair = [](unsigned first) {
      return "s[" + std::to_string(first) + ":" + std::to_string(first + 1) + "]";
    };
    return "s_atomic_add_x2 " + pair(reserved.one()) + ", " + pair(reserved.slot()) + ", " +
           hex(offset) + "\n";
  };
  // Stores a uniform value into a per-wave variable's element with a scalar store (written back
  // by the s_dcache_wb before s_endpgm); s_mov leaves SCC alone. Per-lane values have no single
  // value to store: a probe call takes those.
  auto store = [&](const Snippet& snippet, std::uint64_t element, const isa::Instruction& inst) {
    const PlacedVariable* placed = instrumented.layout.find(snippet.variable);
    const std::uint32_t size = placed->variable.element_size;
    const std::uint64_t offset = placed->offset + element * size;
    const std::string where = "kernel '" + instrumented.name + "', store into '" +
                              snippet.variable + "' at " + hex(inst.address) + ": ";
    if (size != 4 && size != 8)
      fail(input_.name(), where + "store snippets need 4- or 8-byte elements");
    if (offset > kMaxSmemOffset)
      fail(input_.name(), where + "the element lies beyond the 1 MiB a scalar offset reaches");
    const unsigned t = reserved.temporary();
    const Argument& value = *snippet.value;
    std::string text;
    auto immediate = [&](std::uint64_t number) {
      text += "s_mov_b32 s" + std::to_string(t) + ", " + hex(number & 0xffffffff) + "\n";
      text += "s_mov_b32 s" + std::to_string(t + 1) + ", " + hex(number >> 32) + "\n";
    };
    unsigned first = 0, last = 0;
    switch (value.kind) {
      case ArgumentKind::constant:
        immediate(value.value);
        break;
      case ArgumentKind::point_id:
        immediate(*points);
        break;
      case ArgumentKind::original_address:
        immediate(inst.address);
        break;
      case ArgumentKind::exec:
        text += "s_mov_b64 s[" + std::to_string(t) + ":" + std::to_string(t + 1) + "], exec\n";
        break;
      case ArgumentKind::register_value:
        // The register may still be on its way from memory (an s_load just before the point).
        text += "s_waitcnt lgkmcnt(0)\n";
        if (value.name == "exec") {
          text += "s_mov_b64 s[" + std::to_string(t) + ":" + std::to_string(t + 1) + "], exec\n";
          break;
        }
        if (std::sscanf(value.name.c_str(), "s[%u:%u]", &first, &last) != 2) {
          if (std::sscanf(value.name.c_str(), "s%u", &first) != 1)
            fail(input_.name(), where + "stores take uniform values: constant, point_id, " +
                                    "original_address, exec or an SGPR ('" + value.name + "')");
          last = first;
        }
        if (last >= kNumberedSgprs || last - first > 1)
          fail(input_.name(), where + "register '" + value.name + "' is not s0..s101 or a pair");
        text += "s_mov_b32 s" + std::to_string(t) + ", s" + std::to_string(first) + "\n";
        text += "s_mov_b32 s" + std::to_string(t + 1) + ", " +
                (last > first ? "s" + std::to_string(last) : std::string("0")) + "\n";
        break;
      default:
        fail(input_.name(), where + "stores take uniform values: constant, point_id, " +
                                "original_address, exec or an SGPR");
    }
    const std::string slot =
        "s[" + std::to_string(reserved.slot()) + ":" + std::to_string(reserved.slot() + 1) + "]";
    text += size == 8
                ? "s_store_dwordx2 s[" + std::to_string(t) + ":" + std::to_string(t + 1) + "], " +
                      slot + ", " + hex(offset) + "\n"
                : "s_store_dword s" + std::to_string(t) + ", " + slot + ", " + hex(offset) + "\n";
    // The next snippet may overwrite the data registers: let the store take them first.
    text += "s_waitcnt lgkmcnt(0)\n";
    return text;
  };

  // Probe calls: the envelope around each (call_envelope.h), with the registers live at the
  // point from the analysis library's liveness.
  auto append = [](Code& code, const std::vector<std::uint8_t>& bytes) {
    code.bytes.insert(code.bytes.end(), bytes.begin(), bytes.end());
  };
  auto flush = [&](Code& code, std::string& text) {
    if (text.empty()) return;
    append(code, assemble(text));
    text.clear();
  };
  // The analysis's view of this code (kernel or device function), for liveness at the points.
  std::optional<std::size_t> analysed;
  auto function_index = [&]() {
    if (!analysed) {
      const auto& functions = program().functions;
      const auto found =
          std::find_if(functions.begin(), functions.end(),
                       [&](const analysis::Function& f) { return f.start == code.entry; });
      if (found == functions.end())
        fail(input_.name(),
             code.label() + ": the analysis found no function at " + hex(code.entry));
      analysed = static_cast<std::size_t>(found - functions.begin());
    }
    return *analysed;
  };
  auto instruction_index = [&](const isa::Instruction& inst) {
    const analysis::Function& function = program().functions[function_index()];
    const std::optional<std::size_t> index = function.instruction_index(inst.address);
    if (!index)
      fail(input_.name(), code.label() + ": the analysis does not reach " + hex(inst.address));
    return *index;
  };
  auto live_before = [&](const isa::Instruction& inst) {
    return liveness().live_before(function_index(), instruction_index(inst));
  };
  auto live_after = [&](const isa::Instruction& inst) {
    return liveness().live_after(function_index(), instruction_index(inst));
  };
  auto call_probe = [&](Code& out, std::string& text, const PointSpec& point, isa::RegisterSet live,
                        const isa::Instruction& inst) {
    flush(out, text);
    const LoadedProbe& target = probe(point.call->probe);
    const std::string context = input_.name() + ": kernel '" + instrumented.name + "'" +
                                (code.function ? ", function '" + code.name + "'" : std::string()) +
                                ", " + to_string(point.where) + " point" + " at " +
                                hex(inst.address) + ", probe '" + target.footprint.name + "'";
    detail::EnvelopeInput in;
    in.target = input_.target();
    in.reserved = reserved;
    in.call = calls->sgprs;
    in.clobbers = target.clobbers;
    if (code.function) {
      // Inside a device function the ABI's registers are live whatever the analysis says: its
      // return address s[30:31], the stack pointer s32 and the frame pointer s33 belong to the
      // caller's view of the call, and the envelope puts its spill area and the probe's stack
      // above the function's own stack pointer (call_envelope.h: stack_relative).
      for (unsigned reg = 30; reg <= 33; ++reg) live.sgpr[reg] = true;
      in.stack_relative = true;
    } else if (!relocated.empty()) {
      // The relocated functions' points spill above s32, so the kernel's s32 must keep its
      // value across a probe call even where the kernel itself no longer reads it.
      live.sgpr[kStackPointer] = true;
    }
    in.live = live;
    in.args =
        envelope_arguments(*point.call, instrumented, *calls, inst, point.where, *points, context);
    in.uniform = point.call->uniform;
    in.spill_base = calls->spill_base;
    in.stack_base = calls->stack_base;
    in.skip_one_restore = options_.test_skip_envelope_restore;
    in.misdecode_swizzle = options_.test_misdecode_swizzle;
    const detail::Envelope envelope = detail::call_envelope(in, context);
    if (envelope.spill_bytes > calls->stack_base - calls->spill_base)
      fail(context, "internal: the spill area (" + std::to_string(envelope.spill_bytes) +
                        " bytes per lane) outgrew the room reserved for it");
    append(out, assemble(envelope.before));
    out.got.push_back({out.bytes.size(), target.slot});
    const std::string lo = "s" + std::to_string(envelope.target_pair);
    const std::string hi = "s" + std::to_string(envelope.target_pair + 1);
    append(out, assemble("s_getpc_b64 s[" + std::to_string(envelope.target_pair) + ":" +
                         std::to_string(envelope.target_pair + 1) + "]\ns_add_u32 " + lo + ", " +
                         lo + ", 0x12345678\ns_addc_u32 " + hi + ", " + hi + ", 0x12345678\n"));
    append(out, assemble(envelope.after));
    ++*points;
  };
  // A point's snippet or probe call, into `out` / `text`, with the registers live there.
  auto expand = [&](Code& out, std::string& text, const PointSpec& point, std::uint64_t element,
                    const isa::Instruction& inst, bool scc_live, const isa::RegisterSet& live) {
    if (point.snippet) {
      text += point.snippet->op == SnippetOp::store
                  ? store(*point.snippet, element, inst)
                  : increment(point.snippet->variable, element, scc_live);
      ++*points;
    } else {
      call_probe(out, text, point, live, inst);
    }
  };

  const std::set<std::uint64_t> leaders(code.leaders.begin(), code.leaders.end());
  std::map<std::uint64_t, std::size_t> block_index;
  for (std::size_t i = 0; i < blocks.size(); ++i) block_index[blocks[i]] = i;

  // The entry chunk: a kernel's prologue and kernel_entry points, a device function's
  // function_entry points. Branches back to the first block skip it (run() maps block starts
  // past it), so it runs once per kernel launch or per call.
  std::vector<Chunk> chunks;
  Code entry;
  std::string entry_text = code.function ? std::string() : detail::entry_prologue(prologue);
  if (!code.function && calls && !relocated.empty()) {
    // Probe calls inside device functions put their spill area at the function's s32. A kernel
    // whose callees use no stack never sets s32: start it at the spill area, which lies above
    // the kernel's own private segment (the kernel's own code may still set it lower).
    const std::uint64_t lanes = input_.target().has_architected_flat_scratch() ? 1 : 64;
    entry_text += "s_mov_b32 s" + std::to_string(kStackPointer) + ", " +
                  hex(calls->spill_base * lanes) + "\n";
  }
  const PointKind entry_kind = code.function ? PointKind::function_entry : PointKind::kernel_entry;
  for (const PointSpec& point : plan_.points) {
    if (point.where != entry_kind) continue;
    // The point stands for the first instruction (its original_address); SCC is dead at a
    // kernel's entry, and across a call the ABI does not preserve it.
    const isa::Instruction& first = code.instructions.front();
    expand(entry, entry_text, point, 0, first, false,
           point.call ? live_before(first) : isa::RegisterSet{});
  }
  flush(entry, entry_text);
  chunks.push_back({Chunk::Kind::prologue,
                    std::move(entry.bytes),
                    nullptr,
                    false,
                    0,
                    std::move(entry.got),
                    {},
                    {}});

  auto at_address = [](const PointSpec& point, const isa::Instruction& inst) {
    return std::find(point.addresses.begin(), point.addresses.end(), inst.address) !=
           point.addresses.end();
  };
  for (std::size_t index = 0; index < code.instructions.size(); ++index) {
    const isa::Instruction& inst = code.instructions[index];
    Code before_code;
    std::string before;
    const bool reachable = code.reachable.count(inst.address) != 0;
    for (const PointSpec& point : plan_.points) {
      if (!reachable) break;
      bool here = false;
      std::uint64_t element = 0;
      switch (point.where) {
        // Blocks, memory instructions and calls (call_site, and call_return below) are
        // instrumented in the kernel and in the device functions relocated with it, so a
        // recursive function's calls are too; a function takes function_entry /
        // function_return points of its own.
        case PointKind::block_entry:
          if (leaders.count(inst.address)) {
            here = true;
            if (point.snippet && point.snippet->indexed_by_block)
              element = block_index.at(inst.address);
          }
          break;
        case PointKind::kernel_exit:
          here = inst.flow == isa::ControlFlow::end_program;
          break;
        case PointKind::before_instruction:
          here = at_address(point, inst);
          break;
        case PointKind::memory: {
          const std::optional<MemoryKind> kind = memory_kind_of(inst.memory);
          here = kind && (point.memory_kinds.empty() ||
                          std::find(point.memory_kinds.begin(), point.memory_kinds.end(), *kind) !=
                              point.memory_kinds.end());
          break;
        }
        case PointKind::call_site:
          here = inst.flow == isa::ControlFlow::call;
          break;
        case PointKind::function_return:
          here = code.function && is_return(inst);
          break;
        default:
          break;
      }
      if (!here) continue;
      expand(before_code, before, point, element, inst, scc_live_before(code, index),
             point.call ? live_before(inst) : isa::RegisterSet{});
    }
    // Scalar stores (the capture region) and scalar atomics sit in the scalar cache until
    // written back; do that before the wave ends (rewriting.md §8).
    if (inst.flow == isa::ControlFlow::end_program) before += "s_dcache_wb\ns_waitcnt lgkmcnt(0)\n";

    Chunk copy{Chunk::Kind::instruction,
               {inst.bytes().begin(), inst.bytes().end()},
               &inst,
               false,
               0,
               {},
               {},
               {}};
    if (reachable && inst.flow == isa::ControlFlow::call) {
      // A call to a device function relocated with this kernel goes to the copy: the target
      // pair (which the s_getpc_b64 correction makes the original entry) plus the distance,
      // in the reserved temporary pair so that the code's own pair keeps its value, SCC kept.
      const auto target = call_targets_.find(inst.address);
      if (target != call_targets_.end() && relocated.count(target->second)) {
        flush(before_code, before);
        unsigned pair = 0;  // s_swappc_b64 s[30:31], s[pair:pair+1]
        while (pair < kNumberedSgprs && !inst.reads.sgpr[pair]) ++pair;
        const unsigned t = reserved.temporary();
        const std::string scc = "s" + std::to_string(reserved.scc_save());
        before_code.calls.push_back({before_code.bytes.size(), target->second});
        append(before_code,
               assemble("s_cselect_b32 " + scc + ", 1, 0\ns_add_u32 s" + std::to_string(t) + ", s" +
                        std::to_string(pair) + ", 0x12345678\ns_addc_u32 s" +
                        std::to_string(t + 1) + ", s" + std::to_string(pair + 1) +
                        ", 0x12345678\ns_cmp_lg_u32 " + scc + ", 0\n"));
        copy.bytes = assemble("s_swappc_b64 s[30:31], s[" + std::to_string(t) + ":" +
                              std::to_string(t + 1) + "]\n");
      } else if (computed_calls_.count(inst.address) && !options_.test_skip_call_translation) {
        // A target computed at run time (unoptimised code reloads it from a spill) is the
        // original run-time address of the callee, since relocated s_getpc_b64 results are
        // corrected to the original PC. Compare it with each relocated function's original
        // address, computed PC-relatively, and on a match call the copy instead; anything else
        // (only a non-function address can be left: every device function of a self-contained
        // object is relocated) is called unchanged, as the original would. The result goes to
        // the reserved temporary pair, so that the code's own pair keeps its value; SCC kept.
        flush(before_code, before);
        unsigned pair = 0;  // s_swappc_b64 s[30:31], s[pair:pair+1]
        while (pair < kNumberedSgprs && !inst.reads.sgpr[pair]) ++pair;
        auto spair = [](unsigned first) {
          return "s[" + std::to_string(first) + ":" + std::to_string(first + 1) + "]";
        };
        auto sreg = [](unsigned number) { return "s" + std::to_string(number); };
        const unsigned t = reserved.temporary();
        const unsigned original = reserved.translation();
        const unsigned copy_entry = reserved.translation() + 2;
        const std::string scc = sreg(reserved.scc_save());
        append(before_code, assemble("s_cselect_b32 " + scc + ", 1, 0\ns_mov_b64 " + spair(t) +
                                     ", " + spair(pair) + "\n"));
        for (std::uint64_t callee : relocated) {
          before_code.translations.push_back({before_code.bytes.size(), callee});
          append(
              before_code,
              assemble("s_getpc_b64 " + spair(original) + "\ns_add_u32 " + sreg(original) + ", " +
                       sreg(original) + ", 0x12345678\ns_addc_u32 " + sreg(original + 1) + ", " +
                       sreg(original + 1) + ", 0x12345678\ns_add_u32 " + sreg(copy_entry) + ", " +
                       sreg(original) + ", 0x12345678\ns_addc_u32 " + sreg(copy_entry + 1) + ", " +
                       sreg(original + 1) + ", 0x12345678\ns_cmp_eq_u64 " + spair(original) + ", " +
                       spair(pair) + "\ns_cselect_b64 " + spair(t) + ", " + spair(copy_entry) +
                       ", " + spair(t) + "\n"));
        }
        append(before_code, assemble("s_cmp_lg_u32 " + scc + ", 0\n"));
        copy.bytes = assemble("s_swappc_b64 s[30:31], " + spair(t) + "\n");
      }
    }
    flush(before_code, before);
    if (!before_code.empty())
      chunks.push_back({Chunk::Kind::code, std::move(before_code.bytes), nullptr, false, 0,
                        std::move(before_code.got), std::move(before_code.calls),
                        std::move(before_code.translations)});

    if (inst.mnemonic == "s_getpc_b64") {
      // The code after it must still see the original PC: add (original - new) to the pair,
      // keeping SCC. The literals are patched once the new address is known.
      unsigned pair = 0;
      while (pair < kNumberedSgprs && !inst.writes.sgpr[pair]) ++pair;
      const std::string lo = "s" + std::to_string(pair), hi = "s" + std::to_string(pair + 1);
      const std::string scc = "s" + std::to_string(reserved.scc_save());
      const std::vector<std::uint8_t> fix =
          assemble("s_cselect_b32 " + scc + ", 1, 0\ns_add_u32 " + lo + ", " + lo +
                   ", 0x12345678\ns_addc_u32 " + hi + ", " + hi + ", 0x12345678\ns_cmp_lg_u32 " +
                   scc + ", 0\n");
      copy.bytes.insert(copy.bytes.end(), fix.begin(), fix.end());
      copy.getpc = true;
    }
    // Code after the instruction, in its own chunk so that a branch to the next block does not
    // run it: call_return points where the callee returns to, then after_instruction points.
    Code after;
    std::string text;
    if (reachable && inst.flow == isa::ControlFlow::call)
      for (const PointSpec& point : plan_.points)
        if (point.where == PointKind::call_return)
          call_probe(after, text, point, live_after(inst), inst);
    for (const PointSpec& point : plan_.points) {
      if (!reachable || point.where != PointKind::after_instruction || !at_address(point, inst))
        continue;
      if (inst.flow != isa::ControlFlow::none && inst.flow != isa::ControlFlow::call)
        fail(input_.name(), "kernel '" + instrumented.name + "'" +
                                (code.function ? ", function '" + code.name + "'" : "") +
                                ": after_instruction point at " + hex(inst.address) + " (" +
                                inst.text +
                                "): control does not fall through to after a branch, a return "
                                "or s_endpgm; use before_instruction, or points at the targets");
      // SCC as the original leaves it: a snippet keeps it (increments) or does not touch it.
      expand(after, text, point, 0, inst, scc_live_before(code, index + 1),
             point.call ? live_after(inst) : isa::RegisterSet{});
    }
    flush(after, text);
    for (GotFixup fix : after.got) {
      fix.at += copy.bytes.size();
      copy.got.push_back(fix);
    }
    copy.bytes.insert(copy.bytes.end(), after.bytes.begin(), after.bytes.end());
    chunks.push_back(std::move(copy));
  }
  return chunks;
}

RewriteResult Engine::run() {
  check_plan();
  // An instruction point names an original address: one that starts no instruction of any
  // kernel or device function is a mistake, not a point that never runs.
  for (const PointSpec& point : plan_.points)
    for (std::uint64_t address : point.addresses) {
      const analysis::Function* function = program().function_containing(address);
      if (!function || !function->instruction_index(address))
        fail(input_.name(), to_string(point.where) + " point at " + hex(address) +
                                ": no instruction of a kernel or device function starts there");
    }
  if (plan_.has_calls()) load_probe_library();
  const codeobj::Target& target = input_.target();
  // The model is move-only: the output starts as a fresh parse of the input's bytes.
  const std::vector<std::uint8_t> original_bytes = input_.write();
  codeobj::CodeObject output = codeobj::CodeObject::parse(original_bytes, input_.name());
  RewriteResult result;
  result.note.tool = plan_.tool;
  result.note.original_sha256 = sha256_hex(original_bytes);
  result.note.probe_library = plan_.probe_library;

  struct Placed {
    KernelCode code;
    std::vector<Chunk> chunks;
    std::uint64_t start = 0;  // offset of the kernel's new entry in the section
    // The device functions relocated with this kernel: one copy per kernel, since the copy
    // uses the kernel's reserved SGPRs and arena layout.
    struct Function {
      KernelCode code;
      std::vector<Chunk> chunks;
      std::uint64_t start = 0;
    };
    std::vector<Function> functions;
  };
  std::vector<Placed> placed;
  std::vector<std::uint8_t> text;

  for (std::size_t kernel_index : selected_kernels()) {
    Placed p;
    p.code = decode_kernel(input_, decoder_, kernel_index);
    const codeobj::Kernel& kernel = *p.code.kernel;
    codeobj::KernelDescriptor kd = kernel.descriptor;
    std::optional<codeobj::KernelMetadata> meta = output.metadata().find_kernel(kernel.name);
    if (!meta) fail(input_.name(), "kernel '" + kernel.name + "' is not in the metadata note");

    InstrumentedKernel instrumented;
    instrumented.name = kernel.name;
    instrumented.descriptor_symbol = kernel.descriptor_symbol;
    const std::uint64_t old_kernarg = meta->kernarg_segment_size();
    instrumented.arena_arg_offset = (old_kernarg + 7) / 8 * 8;

    // The entry SGPRs: what the original expects, and what the instrumented kernel launches
    // with (dispatch and kernarg pointers, all three workgroup ids, all three work-item ids).
    detail::PrologueInput prologue;
    prologue.target = target;
    prologue.original = detail::entry_sgprs(kd, target, kernel.name);
    prologue.original_vgpr_workitem_id = kd.enable_vgpr_workitem_id();
    codeobj::KernelDescriptor new_kd = kd;
    new_kd.set_enable_sgpr_dispatch_ptr(true);
    new_kd.set_enable_sgpr_kernarg_segment_ptr(true);
    new_kd.set_enable_sgpr_workgroup_id_x(true);
    new_kd.set_enable_sgpr_workgroup_id_y(true);
    new_kd.set_enable_sgpr_workgroup_id_z(true);
    new_kd.set_enable_vgpr_workitem_id(2);
    // Probe calls spill to scratch and give the probes a stack there: the private segment is
    // enabled, with (gfx908/gfx90a) the scratch buffer resource the probes address it through.
    const bool probe_calls = plan_.has_calls();
    const bool buffer_scratch = !target.has_architected_flat_scratch();
    const bool adds_scratch_resource =
        probe_calls && buffer_scratch && !kd.enable_sgpr_private_segment_buffer();
    if (probe_calls) {
      new_kd.set_enable_private_segment(true);
      if (buffer_scratch) new_kd.set_enable_sgpr_private_segment_buffer(true);
    }
    unsigned user = 0;
    for (const EntrySgpr& e : prologue.original)
      if (e.value < EntryValue::workgroup_id_x) user += e.count;
    user += (kd.enable_sgpr_dispatch_ptr() ? 0 : 2) +
            (kd.enable_sgpr_kernarg_segment_ptr() ? 0 : 2) + (adds_scratch_resource ? 4 : 0);
    if (user > 16)
      fail(input_.name(), "kernel '" + kernel.name + "': no room for the user SGPRs the " +
                              "instrumentation adds (" + std::to_string(user) + " > 16)");
    new_kd.set_user_sgpr_count(user);
    prologue.launched = detail::entry_sgprs(new_kd, target, kernel.name);

    // Reserved SGPRs: above every SGPR the kernel touches and every SGPR the hardware
    // initialises, so that neither the original code nor the launch overwrites them.
    unsigned highest = 0;
    for (const isa::Instruction& inst : p.code.instructions) {
      const isa::RegisterSet used = inst.reads | inst.writes;
      for (unsigned s = 0; s < kNumberedSgprs; ++s)
        if (used.sgpr[s]) highest = std::max(highest, s + 1);
    }
    for (const EntrySgpr& e : prologue.launched) highest = std::max(highest, e.first + e.count);
    // The callees run at their original addresses, uninstrumented: the block must also lie
    // above every SGPR they (and what they call) touch.
    const bool makes_calls = std::any_of(
        p.code.instructions.begin(), p.code.instructions.end(), [&](const isa::Instruction& i) {
          return i.flow == isa::ControlFlow::call && p.code.reachable.count(i.address);
        });
    detail::CalleeFootprint callees;
    if (makes_calls) {
      const analysis::Program& analysed = program();
      callees = detail::callee_footprint(analysed, self_contained_, kernel.entry_address,
                                         kernel.name, input_.name());
      for (unsigned s = 0; s < kNumberedSgprs; ++s)
        if (callees.used.sgpr[s]) highest = std::max(highest, s + 1);
    }
    // Points that can lie in device functions relocate every function the kernel reaches, with
    // the kernel (rewriting.md §3): block, memory and call points apply to the callees' code
    // too, so that a block counter or trace sees every block the kernel's waves run, and a
    // call-return capture every call they make (a recursion's included). Their calls are
    // retargeted to the copies; the originals stay intact for callers that are not relocated
    // (docs/rewrite.md says why).
    const bool points_in_functions =
        std::any_of(plan_.points.begin(), plan_.points.end(), [](const PointSpec& point) {
          return point.where == PointKind::function_entry ||
                 point.where == PointKind::function_return ||
                 point.where == PointKind::before_instruction ||
                 point.where == PointKind::after_instruction ||
                 point.where == PointKind::block_entry || point.where == PointKind::memory ||
                 point.where == PointKind::call_site || point.where == PointKind::call_return;
        });
    std::set<std::uint64_t> relocated;
    if (makes_calls && points_in_functions) {
      // Relocated code reaches the instrumented copies by retargeting each call's resolved
      // target, and by translating a target computed at run time (build_chunks). Such a call
      // reaches every device function of the object (callee_footprint), so all are relocated;
      // an object that imports symbols has been refused there already.
      if (call_targets_.empty() && computed_calls_.empty())
        for (const analysis::Function& function : program().functions)
          for (const analysis::CallSite& call : function.calls) {
            if (call.resolution == analysis::CallSite::Resolution::pc_relative && call.target)
              call_targets_[call.address] = *call.target;
            else if (call.resolution == analysis::CallSite::Resolution::unresolved)
              computed_calls_.insert(call.address);
          }
      for (std::uint64_t entry : callees.callees) {
        const analysis::Function* function = program().function_containing(entry);
        KernelCode code;
        code.kernel = &kernel;
        code.kernel_index = kernel_index;
        code.function = true;
        code.name = function && function->start == entry ? function->name : hex(entry);
        code.entry = entry;
        try {
          p.functions.push_back({decode_code(input_, decoder_, std::move(code)), {}, 0});
        } catch (const Error& error) {
          fail(input_.name(), "kernel '" + kernel.name + "' reaches a device function that " +
                                  "cannot be relocated: " + error.what());
        }
        relocated.insert(entry);
      }
    }
    // Block keys: the kernel's blocks, then each relocated function's, by entry address.
    std::vector<std::uint64_t> blocks = p.code.leaders;
    for (const Placed::Function& function : p.functions)
      blocks.insert(blocks.end(), function.code.leaders.begin(), function.code.leaders.end());
    std::vector<std::uint64_t> call_sites = call_sites_of(p.code);
    for (const Placed::Function& function : p.functions) {
      const std::vector<std::uint64_t> sites = call_sites_of(function.code);
      call_sites.insert(call_sites.end(), sites.begin(), sites.end());
    }
    instrumented.layout = layout_for(blocks, call_sites);
    // Likewise the probes (their transitive footprint, from the library's note)
    // and the envelope's own ABI writes: the link pair s[30:31] and the stack pointer s32.
    for (const auto& [name, loaded] : probes_)
      highest = std::max(highest, loaded.footprint.sgpr_count);
    if (probe_calls) highest = std::max(highest, kStackPointer + 1);
    detail::ReservedSgprs reserved{(highest + 3) / 4 * 4};
    const unsigned reserved_end = reserved.base + detail::ReservedSgprs::kCount +
                                  (probe_calls ? detail::CallSgprs::kCount : 0);
    if (reserved_end > kNumberedSgprs)
      fail(input_.name(),
           "kernel '" + kernel.name + "' " +
               (makes_calls || probe_calls ? "with its callees and probes uses" : "uses") +
               " SGPRs up to s" + std::to_string(highest - 1) + ": no room for the " +
               std::to_string(reserved_end - reserved.base) +
               " SGPRs the instrumentation needs below s" + std::to_string(kNumberedSgprs));
    prologue.reserved = reserved;
    prologue.arena_arg_offset = instrumented.arena_arg_offset;
    prologue.stride = instrumented.layout.stride();
    prologue.skip_sgpr_moves = options_.test_skip_prologue_sgpr_moves;

    std::optional<KernelCalls> calls;
    if (probe_calls) {
      calls.emplace();
      calls->sgprs.base = reserved.base + detail::ReservedSgprs::kCount;
      calls->call_sites = call_sites;
      if (buffer_scratch) {
        // The wave's scratch resource, saved before the prologue's moves can overwrite it: the
        // launch's V# with this wave's offset added to its base, as compiled kernels do.
        const EntrySgpr* resource =
            detail::find_entry(prologue.launched, EntryValue::private_segment_buffer);
        const EntrySgpr* offset =
            detail::find_entry(prologue.launched, EntryValue::private_segment_wave_offset);
        const unsigned r = calls->sgprs.scratch_resource();
        prologue.save_before_moves =
            "s_mov_b64 s[" + std::to_string(r) + ":" + std::to_string(r + 1) + "], s[" +
            std::to_string(resource->first) + ":" + std::to_string(resource->first + 1) +
            "]\ns_mov_b64 s[" + std::to_string(r + 2) + ":" + std::to_string(r + 3) + "], s[" +
            std::to_string(resource->first + 2) + ":" + std::to_string(resource->first + 3) +
            "]\ns_add_u32 s" + std::to_string(r) + ", s" + std::to_string(r) + ", s" +
            std::to_string(offset->first) + "\ns_addc_u32 s" + std::to_string(r + 1) + ", s" +
            std::to_string(r + 1) + ", 0\n";
      }
      // The private segment: the kernel's own, then the spill area, then the probes' stack.
      // The spill area holds at most every VGPR a probe or the envelope writes, plus the two
      // VGPRs the SGPRs are spilled through.
      unsigned vgprs_needed = 0;
      std::uint64_t probe_stack = 0;
      for (const PointSpec& point : plan_.points) {
        if (!point.call) continue;
        const LoadedProbe& loaded = probe(point.call->probe);
        unsigned dwords = 2;
        for (const Argument& argument : point.call->args)
          dwords += argument.kind == ArgumentKind::constant ||
                            argument.kind == ArgumentKind::point_id ||
                            argument.kind == ArgumentKind::return_value
                        ? 1
                        : 2;
        vgprs_needed = std::max({vgprs_needed, loaded.footprint.vgpr_count, dwords + 2});
        probe_stack = std::max(probe_stack, loaded.footprint.scratch_bytes);
      }
      auto align16 = [](std::uint64_t n) { return (n + 15) / 16 * 16; };
      calls->spill_base = align16(kd.private_segment_fixed_size);
      calls->stack_base = align16(calls->spill_base + 4 * (vgprs_needed + 2));
      // Inside relocated functions the spill area and the probe's stack lie spill_base above
      // s32 (call_envelope.h: stack_relative), and s32 reaches the kernel's own private segment
      // on its deepest static call chain: room for that once more.
      const std::uint64_t function_stack = relocated.empty() ? 0 : calls->spill_base;
      new_kd.private_segment_fixed_size =
          static_cast<std::uint32_t>(align16(function_stack + calls->stack_base + probe_stack));
      meta->set_private_segment_fixed_size(new_kd.private_segment_fixed_size);
      // VGPRs: the probes' and the envelope's; on the unified file of gfx90a/gfx942 the
      // accumulation registers start at ACCUM_OFFSET, which must stay above them.
      if (new_kd.vgpr_grant(target) < vgprs_needed) {
        codeobj::KernelDescriptor unit = new_kd;
        unit.set_granulated_workitem_vgpr_count(0);
        const unsigned granule = unit.vgpr_grant(target);
        new_kd.set_granulated_workitem_vgpr_count((vgprs_needed + granule - 1) / granule - 1);
      }
      if (target.has_unified_vgpr_file() && new_kd.accum_offset() < vgprs_needed) {
        if (meta->agpr_count() != 0)
          fail(input_.name(), "kernel '" + kernel.name + "' keeps AGPRs from v" +
                                  std::to_string(new_kd.accum_offset()) + " on: no room for the " +
                                  std::to_string(vgprs_needed) + " VGPRs its probe calls need");
        new_kd.set_accum_offset_field((vgprs_needed + 3) / 4 - 1);
      }
      meta->set_vgpr_count(std::max<std::uint64_t>(meta->vgpr_count(), vgprs_needed));
    }

    // Grants: SGPRs up to the reserved block(s) plus the special registers; VGPRs for v0..v2.
    const unsigned sgprs = reserved_end + kSpecialSgprs;
    if (kd.sgpr_grant() < sgprs) new_kd.set_granulated_wavefront_sgpr_count((sgprs + 7) / 8 - 1);
    if (!target.has_packed_work_item_ids() && kd.vgpr_grant(target) < 3)
      fail(input_.name(), "kernel '" + kernel.name + "': VGPR grant below 3");
    new_kd.kernarg_size = static_cast<std::uint32_t>(instrumented.arena_arg_offset + 8);

    p.chunks = build_chunks(p.code, instrumented, reserved, prologue, calls, relocated, blocks,
                            &result.points_instrumented);
    for (Placed::Function& function : p.functions)
      function.chunks = build_chunks(function.code, instrumented, reserved, prologue, calls,
                                     relocated, blocks, &result.points_instrumented);

    // Lay the kernel out: entries are 256-byte aligned.
    while (text.size() % 256) {
      const std::uint8_t nop[4] = {0x00, 0x00, 0x80, 0xbf};  // s_nop 0
      text.insert(text.end(), nop, nop + 4);
    }
    p.start = text.size();
    for (Chunk& chunk : p.chunks) {
      chunk.offset = text.size();
      text.insert(text.end(), chunk.bytes.begin(), chunk.bytes.end());
      if (chunk.kind == Chunk::Kind::instruction) ++result.instructions_relocated;
    }
    for (Placed::Function& function : p.functions) {
      function.start = text.size();
      for (Chunk& chunk : function.chunks) {
        chunk.offset = text.size();
        text.insert(text.end(), chunk.bytes.begin(), chunk.bytes.end());
        if (chunk.kind == Chunk::Kind::instruction) ++result.instructions_relocated;
      }
    }

    // Descriptor and note in agreement (rewriting.md §6).
    meta->set_kernarg_segment_size(new_kd.kernarg_size);
    meta->set_sgpr_count(std::max<std::uint64_t>(meta->sgpr_count(), sgprs));
    codeobj::KernelArg arena_arg;
    arena_arg.name = "__wavekit_arena";
    arena_arg.offset = instrumented.arena_arg_offset;
    arena_arg.size = 8;
    // Hidden (AMDGPUUsage's hidden_none: the runtime leaves it alone): a launcher writes the
    // arena's address there, and runtimes that map explicit arguments to the program's own
    // (HIP's kernelParams) do not look for one more.
    arena_arg.value_kind = "hidden_none";
    meta->add_arg(arena_arg);
    placed.push_back(std::move(p));
    result.note.kernels.push_back(std::move(instrumented));
    // The descriptor is written once the section address is known.
    output.set_descriptor(kernel_index, new_kd);
  }

  // The GOT: one 8-byte slot per probe, after the code, filled by the loader through an
  // R_AMDGPU_ABS64 relocation against the probe's alias (rewriting.md §4).
  while (text.size() % 8) text.push_back(0);
  const std::uint64_t got_offset = text.size();
  text.resize(text.size() + 8 * slots_.size(), 0);

  // Place the section, then fix everything that depends on its address.
  codeobj::NewSection section;
  section.name = ".wavekit.text";
  section.flags = kShfAlloc | kShfExecInstr;
  section.alignment = 256;
  section.data = text;
  const std::size_t section_index = output.add_loaded_section(std::move(section));
  const std::uint64_t base = output.sections()[section_index].address;

  for (std::size_t k = 0; k < placed.size(); ++k) {
    Placed& p = placed[k];
    std::vector<std::vector<Chunk>*> lists{&p.chunks};
    std::map<std::uint64_t, std::uint64_t> function_entry;  // original entry -> copy's entry
    for (Placed::Function& function : p.functions) {
      lists.push_back(&function.chunks);
      function_entry[function.code.entry] = base + function.start;
    }
    // Original -> new, per instruction of this kernel and its functions' copies. A branch to a
    // block start lands on the code inserted before it, so that the block's points run however
    // control arrives. Entry chunks are skipped on purpose: a branch back to the first block
    // must not run the prologue (rewriting.md §6) or function_entry points again.
    std::map<std::uint64_t, std::uint64_t> new_address_of;
    for (const std::vector<Chunk>* chunks : lists) {
      const Chunk* pending = nullptr;
      for (const Chunk& chunk : *chunks) {
        if (chunk.kind == Chunk::Kind::prologue) continue;
        if (chunk.kind == Chunk::Kind::code) {
          if (!pending) pending = &chunk;
          continue;
        }
        new_address_of[chunk.original->address] = base + (pending ? pending->offset : chunk.offset);
        pending = nullptr;
      }
    }
    auto patch64 = [&](std::size_t at, std::uint64_t value) {
      const std::uint32_t lo = static_cast<std::uint32_t>(value);
      const std::uint32_t hi = static_cast<std::uint32_t>(value >> 32);
      std::memcpy(&text[at], &lo, 4);
      std::memcpy(&text[at + 8], &hi, 4);
    };
    for (std::vector<Chunk>* chunks : lists)
      for (Chunk& chunk : *chunks) {
        for (const GotFixup& fix : chunk.got) {
          // s_getpc_b64 (4 bytes) gives the address after itself; the s_add_u32 and s_addc_u32
          // literals follow their 4-byte opcodes.
          const std::uint64_t pc = base + chunk.offset + fix.at + 4;
          patch64(chunk.offset + fix.at + 4 + 4, base + got_offset + 8 * fix.slot - pc);
        }
        for (const CallFixup& fix : chunk.calls)
          // s_cselect (4), then s_add_u32 and s_addc_u32 with their literals after 4 bytes.
          patch64(chunk.offset + fix.at + 4 + 4, function_entry.at(fix.callee) - fix.callee);
        for (const TranslationFixup& fix : chunk.translations) {
          // s_getpc_b64 (4) gives the address after itself; then two s_add_u32 / s_addc_u32
          // pairs, each instruction 4 bytes of opcode and a 4-byte literal.
          const std::uint64_t pc = base + chunk.offset + fix.at + 4;
          patch64(chunk.offset + fix.at + 4 + 4, fix.callee - pc);
          patch64(chunk.offset + fix.at + 4 + 16 + 4, function_entry.at(fix.callee) - fix.callee);
        }
        if (chunk.kind != Chunk::Kind::instruction) continue;
        const isa::Instruction& inst = *chunk.original;
        const std::uint64_t new_pc = base + chunk.offset;
        if (inst.branch_target) {
          auto target_it = new_address_of.find(*inst.branch_target);
          if (target_it == new_address_of.end())
            fail(input_.name(), "kernel '" + result.note.kernels[k].name + "': branch at " +
                                    hex(inst.address) + " targets " + hex(*inst.branch_target) +
                                    ", outside the relocated code");
          const std::int64_t delta = (static_cast<std::int64_t>(target_it->second) -
                                      static_cast<std::int64_t>(new_pc + 4)) /
                                     4;
          if (delta < INT16_MIN || delta > INT16_MAX)
            fail(input_.name(), "kernel '" + result.note.kernels[k].name +
                                    "': relocated branch at " + hex(inst.address) +
                                    " is out of the 16-bit range");
          const auto simm = static_cast<std::uint16_t>(static_cast<std::int16_t>(delta));
          text[chunk.offset] = static_cast<std::uint8_t>(simm & 0xff);
          text[chunk.offset + 1] = static_cast<std::uint8_t>(simm >> 8);
        }
        if (chunk.getpc)
          // s_getpc_b64 gives the address of the next instruction: original vs. relocated.
          // Layout after the 4-byte s_getpc: s_cselect (4), s_add_u32 (4 + literal),
          // s_addc_u32 (4 + literal), s_cmp (4).
          patch64(chunk.offset + inst.size + 4 + 4,
                  (inst.address + inst.size) - (new_pc + inst.size));
        result.note.address_map.push_back({new_pc, inst.address, inst.size});
      }
    codeobj::KernelDescriptor kd = output.kernels()[p.code.kernel_index].descriptor;
    kd.kernel_code_entry_byte_offset =
        static_cast<std::int64_t>(base + p.start) -
        static_cast<std::int64_t>(output.kernels()[p.code.kernel_index].descriptor_address);
    output.set_descriptor(p.code.kernel_index, kd);
  }
  // Merge adjacent runs of the address map.
  std::vector<AddressRange> merged;
  for (const AddressRange& range : result.note.address_map) {
    if (!merged.empty() && merged.back().new_address + merged.back().size == range.new_address &&
        merged.back().original_address + merged.back().size == range.original_address)
      merged.back().size += range.size;
    else
      merged.push_back(range);
  }
  result.note.address_map = std::move(merged);
  output.replace_section_data(section_index, text);
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    codeobj::Symbol alias;
    alias.name = kProbeAliasPrefix + slots_[slot];
    alias.type = kSttNotype;
    alias.binding = kStbGlobal;
    const std::uint32_t index = output.add_dynamic_symbol(alias);
    output.add_dynamic_relocation(base + got_offset + 8 * slot, kRelocationAbs64, index, 0);
  }

  // The WAVEKIT note, in a section of its own.
  const std::vector<std::uint8_t> desc = encode_note(result.note);
  std::vector<std::uint8_t> note_bytes;
  auto put32 = [&](std::uint32_t value) {
    for (int i = 0; i < 4; ++i) note_bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  };
  const std::string name = kNoteName;
  put32(static_cast<std::uint32_t>(name.size() + 1));
  put32(static_cast<std::uint32_t>(desc.size()));
  put32(kNoteTypeRewrite);
  note_bytes.insert(note_bytes.end(), name.begin(), name.end());
  note_bytes.push_back(0);
  while (note_bytes.size() % 4) note_bytes.push_back(0);
  note_bytes.insert(note_bytes.end(), desc.begin(), desc.end());
  while (note_bytes.size() % 4) note_bytes.push_back(0);
  codeobj::NewSection note_section;
  note_section.name = kNoteSectionName;
  note_section.type = kShtNote;
  note_section.flags = kShfAlloc;
  note_section.alignment = 4;
  note_section.data = std::move(note_bytes);
  // Added to a fresh parse of the rewritten bytes: the writer re-serialises every SHT_NOTE
  // section of an object whose AMDGPU metadata changed from the notes it parsed, and would
  // empty a note section added in the same session.
  codeobj::CodeObject with_note = codeobj::CodeObject::parse(output.write(), input_.name());
  with_note.add_loaded_section(std::move(note_section));
  result.bytes = with_note.write();
  return result;
}

}  // namespace

RewriteResult rewrite(const codeobj::CodeObject& object, const Plan& plan,
                      const RewriteOptions& options) {
  return Engine(object, plan, options).run();
}

namespace {

std::vector<BlockView> block_views(const KernelCode& code) {
  std::vector<BlockView> blocks;
  for (std::size_t b = 0; b < code.leaders.size(); ++b) {
    BlockView block;
    block.index = b;
    block.start = code.leaders[b];
    const std::uint64_t next = b + 1 < code.leaders.size() ? code.leaders[b + 1] : UINT64_MAX;
    for (const isa::Instruction& inst : code.instructions) {
      if (inst.address < block.start || inst.address >= next || !code.reachable.count(inst.address))
        continue;
      InstructionView iv;
      iv.address = inst.address;
      iv.size = inst.size;
      iv.text = inst.text;
      iv.mnemonic = inst.mnemonic;
      iv.is_branch = inst.flow == isa::ControlFlow::branch ||
                     inst.flow == isa::ControlFlow::conditional_branch;
      iv.is_call = inst.flow == isa::ControlFlow::call;
      iv.is_return = inst.flow == isa::ControlFlow::indirect;
      iv.is_end = inst.flow == isa::ControlFlow::end_program;
      iv.memory = memory_kind_of(inst.memory);
      block.end = inst.address + inst.size;
      block.instructions.push_back(std::move(iv));
    }
    blocks.push_back(std::move(block));
  }
  return blocks;
}

}  // namespace

std::vector<KernelView> analyse_kernels(const codeobj::CodeObject& object) {
  isa::Decoder decoder(object.target().processor);
  const analysis::Program program = analysis::analyze(analysis::make_input(object));
  std::vector<KernelView> views;
  for (std::size_t i = 0; i < object.kernels().size(); ++i) {
    KernelView view;
    view.name = object.kernels()[i].name;
    view.descriptor_symbol = object.kernels()[i].descriptor_symbol;
    view.entry = object.kernels()[i].entry_address;
    view.blocks = block_views(decode_kernel(object, decoder, i));
    std::set<std::size_t> reached;
    std::vector<std::size_t> work;
    for (std::size_t f = 0; f < program.functions.size(); ++f)
      if (program.functions[f].start == view.entry) work.push_back(f);
    while (!work.empty()) {
      const std::size_t f = work.back();
      work.pop_back();
      for (std::size_t callee : program.callees[f])
        if (reached.insert(callee).second) work.push_back(callee);
    }
    for (std::size_t f : reached)
      if (program.functions[f].kind == analysis::Function::Kind::device)
        view.callees.push_back(program.functions[f].start);
    std::sort(view.callees.begin(), view.callees.end());
    // A reached call whose target is computed at run time may reach any device function, so
    // the rewriter relocates them all (callee_footprint).
    bool computed = false;
    for (std::size_t f = 0; f < program.functions.size(); ++f)
      if (program.functions[f].start == view.entry || reached.count(f))
        for (const analysis::CallSite& call : program.functions[f].calls)
          computed = computed || call.resolution == analysis::CallSite::Resolution::unresolved;
    view.relocated_callees = view.callees;
    if (computed) {
      view.relocated_callees.clear();
      for (const analysis::Function& function : program.functions)
        if (function.kind == analysis::Function::Kind::device)
          view.relocated_callees.push_back(function.start);
      std::sort(view.relocated_callees.begin(), view.relocated_callees.end());
    }
    views.push_back(std::move(view));
  }
  return views;
}

std::vector<FunctionView> analyse_functions(const codeobj::CodeObject& object) {
  isa::Decoder decoder(object.target().processor);
  const analysis::Program program = analysis::analyze(analysis::make_input(object));
  std::vector<FunctionView> views;
  for (const analysis::Function& function : program.functions) {
    if (function.kind != analysis::Function::Kind::device) continue;
    FunctionView view;
    view.name = function.name;
    view.named = function.name != "function_" + hex(function.start);
    view.entry = function.start;
    KernelCode code;
    code.function = true;
    code.name = function.name;
    code.entry = function.start;
    try {
      view.blocks = block_views(decode_code(object, decoder, std::move(code)));
    } catch (const Error& error) {
      view.refusal = error.what();
    }
    views.push_back(std::move(view));
  }
  return views;
}

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  const auto digest = llvm::SHA256::hash(llvm::ArrayRef<std::uint8_t>(bytes.data(), bytes.size()));
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (std::uint8_t byte : digest) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

}  // namespace wavekit::rewrite
