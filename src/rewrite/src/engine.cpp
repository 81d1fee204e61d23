// The rewriting engine: relocate each instrumented kernel whole into a new executable section
// with its points expanded inline, redirect the descriptor to it, and keep descriptor, AMDGPU
// note and the WAVEKIT note in agreement (rewriting.md §3, §6, §7).
//
// Engine::run is a pipeline of named phases, in the manner of llvm::MCAssembler::layout:
//
//   per kernel   prepare_kernel   decode the kernel and the device functions relocated with it;
//                                 the new descriptor, the reserved SGPRs, where block counters
//                                 go (plan_counters: edges off a spanning tree, flow.h), the
//                                 arena layout and the private segment its probe calls need;
//                expand_points    the code each point inserts (one predicate per point kind),
//                                 as chunks of pieces whose assembly text is kept for later;
//                lay_out          the kernel's text encoded (encode: the lines not seen before in
//                                 one pass of LLVM's assembler), the chunks placed in the new
//                                 section's bytes, and what does not depend on where the
//                                 section lands (branch offsets, the address map) settled;
//   once         link             the section placed, then the fixups that need its address
//                                 (GOT slots, calls to relocated copies, s_getpc_b64
//                                 corrections, descriptors), the probes' aliases and their
//                                 R_AMDGPU_ABS64 relocations;
//                emit_note        the WAVEKIT note.
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "abi.h"
#include "call_envelope.h"
#include "callees.h"
#include "entry_abi.h"
#include "flow.h"
#include "negative_controls.h"
#include "wavekit/analysis/report.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/isa/caching_decoder.h"
#include "wavekit/isa/isa.h"
#include "wavekit/probe/capture.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/probe_library.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

namespace ELF = llvm::ELF;
using detail::EntrySgpr;
using detail::EntryValue;
using detail::kLinkPair;
using detail::kNumberedSgprs;
using detail::kSpecialSgprs;
using detail::kStackPointer;

// v0..v255: what an instruction can name as a VGPR.
constexpr unsigned kArchitecturalVgprs = 256;

// SMEM immediate offsets are 20 bits on gfx9.
constexpr std::uint64_t kMaxSmemOffset = 0xfffff;

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

// The bytes of assembled instruction lines, by line (see Engine::encode).
struct LineHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view line) const {
    return std::hash<std::string_view>{}(line);
  }
};
using LineBytes =
    std::unordered_map<std::string, std::vector<std::uint8_t>, LineHash, std::equal_to<>>;

// LLVM's disassembler, printer and assembler for a processor, and the lines assembled so far:
// made once per thread and processor, since setting LLVM up costs more than rewriting a small
// object, and a line's bytes are the same in every object for the processor.
struct Toolchain {
  explicit Toolchain(const std::string& processor) : decoder(processor), assembler(processor) {}
  isa::Decoder decoder;
  isa::Assembler assembler;
  LineBytes lines;
};

Toolchain& toolchain_for(const std::string& processor) {
  thread_local std::map<std::string, std::unique_ptr<Toolchain>> toolchains;
  std::unique_ptr<Toolchain>& toolchain = toolchains[processor];
  if (!toolchain) toolchain = std::make_unique<Toolchain>(processor);
  return *toolchain;
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
  // Per instruction: reachable from the entry; a reachable block start.
  std::vector<bool> reachable, leader;
  std::vector<std::uint64_t> leaders;  // reachable block starts, ascending
  // Device functions: the s_setpc_b64 the analysis resolved as tail calls to a function's entry.
  std::set<std::uint64_t> tail_calls;
  std::string label() const { return (function ? "function '" : "kernel '") + name + "'"; }
};

const codeobj::Section& code_section(const codeobj::CodeObject& object, std::uint64_t address,
                                     const std::string& label) {
  for (const codeobj::Section& section : object.sections())
    if (section.is_executable() && section.contains_address(address)) return section;
  fail(object.name(), label + ": entry " + hex(address) + " is not in an executable section");
}

// The resolved tail calls of `function` (CallSite::tail), by address.
std::set<std::uint64_t> tail_calls_of(const analysis::Function* function) {
  std::set<std::uint64_t> calls;
  if (function)
    for (const analysis::CallSite& call : function->calls)
      if (call.tail) calls.insert(call.address);
  return calls;
}

// The original addresses of the reachable calls (s_swappc_b64) in `code`, ascending.
std::vector<std::uint64_t> call_sites_of(const KernelCode& code) {
  std::vector<std::uint64_t> sites;
  for (std::size_t i = 0; i < code.instructions.size(); ++i)
    if (code.instructions[i].flow == isa::ControlFlow::call && code.reachable[i])
      sites.push_back(code.instructions[i].address);
  return sites;
}

// Where the code at an entry ends, as the analysis bounds it (analysis::analyze): the end of
// its function symbol where that has a size, else the next function or kernel entry, else its
// section's end. Control that would fall through to there does not: a call to a function
// that never returns (`__assert_fail`) or an `s_trap` the compiler placed last.
class CodeLimits {
 public:
  explicit CodeLimits(const codeobj::CodeObject& object) {
    for (const auto* table : {&object.symbols(), &object.dynamic_symbols()})
      for (const codeobj::Symbol& symbol : *table) {
        if (symbol.type != llvm::ELF::STT_FUNC || !symbol.is_defined()) continue;
        entries_.push_back(symbol.value);
        if (symbol.size) sized_.emplace(symbol.value, symbol.size);  // the first one, as before
      }
    for (const codeobj::Kernel& kernel : object.kernels()) entries_.push_back(kernel.entry_address);
    std::sort(entries_.begin(), entries_.end());
    entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
  }
  std::uint64_t limit(std::uint64_t entry, std::uint64_t section_end) const {
    if (const auto sized = sized_.find(entry); sized != sized_.end())
      return std::min(section_end, entry + sized->second);
    const auto next = std::upper_bound(entries_.begin(), entries_.end(), entry);
    return next == entries_.end() ? section_end : std::min(section_end, *next);
  }

 private:
  std::vector<std::uint64_t> entries_;  // function and kernel entries, ascending
  std::unordered_map<std::uint64_t, std::uint64_t> sized_;  // entry -> its symbol's size
};

// What decoding an object's code needs: the object, its decoder, where its code ends.
struct CodeReader {
  explicit CodeReader(const codeobj::CodeObject& object)
      : object(object), decoder(toolchain_for(object.target().processor).decoder), limits(object) {}
  const codeobj::CodeObject& object;
  isa::CachingDecoder decoder;
  CodeLimits limits;
};

KernelCode decode_code(CodeReader& reader, KernelCode code) {
  const codeobj::CodeObject& object = reader.object;
  isa::CachingDecoder& decoder = reader.decoder;
  const std::string label = code.label();
  const codeobj::Section& section = code_section(object, code.entry, label);
  const std::uint64_t section_end = section.address + section.size;
  const std::uint64_t limit = reader.limits.limit(code.entry, section_end);
  auto decode_at = [&](std::uint64_t address) -> const isa::Instruction& {
    if (address < section.address || address >= section_end)
      fail(object.name(),
           label + ": control reaches " + hex(address) + ", outside its code section");
    const std::uint64_t available = std::min<std::uint64_t>(16, section_end - address);
    isa::DecodeError error;
    const isa::Instruction* inst = decoder.decode(object.read(address, available), address, &error);
    if (!inst) fail(object.name(), label + ": " + error.message);
    return *inst;
  };

  // Reachability from the entry: the relocated range ends after the last reachable instruction,
  // so padding and whatever follows the code are left alone. The instructions the walk decodes
  // are kept for the linear pass below, which decodes only what lies between them.
  std::unordered_map<std::uint64_t, const isa::Instruction*> walked;  // by address
  std::vector<std::uint64_t> leaders{code.entry};
  std::vector<std::uint64_t> work{code.entry};
  std::uint64_t end = code.entry;
  while (!work.empty()) {
    std::uint64_t address = work.back();
    work.pop_back();
    while (!walked.count(address)) {
      const isa::Instruction& inst = decode_at(address);
      end = std::max(end, address + inst.size);
      // A device function's return goes back to its caller, wherever that runs, and a tail
      // call to a function's entry is retargeted like a call; any other computed jump has
      // targets the rewriter cannot relocate.
      if (inst.flow == isa::ControlFlow::indirect &&
          !(code.function && (inst.is_return() || code.tail_calls.count(address))))
        fail(object.name(), label + ": computed jump or return (" + inst.text + " at " +
                                hex(address) + ") is not supported yet");
      // Blocks as the analysis library and the emulator's ground truth define them: every
      // control-flow instruction ends one, and branch targets start one.
      if (inst.flow != isa::ControlFlow::none) leaders.push_back(address + inst.size);
      if (const auto target = isa::CachingDecoder::branch_target_at(inst, address)) {
        if (*target < code.entry)
          fail(object.name(), label + ": branch at " + hex(address) + " leaves the " +
                                  (code.function ? "function" : "kernel") + " (to " + hex(*target) +
                                  ")");
        leaders.push_back(*target);
        work.push_back(*target);
      }
      const bool ends = inst.ends_flow();
      const std::uint64_t next = address + inst.size;
      walked.emplace(address, &inst);
      if (ends || next >= limit) break;
      address = next;
    }
  }
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  for (std::uint64_t leader : leaders)
    if (walked.count(leader)) code.leaders.push_back(leader);

  // Linear decoding of the range, which must agree with the walk, or a branch lands inside an
  // instruction. Bytes the walk did not reach are decoded as Decoder::decode_all would.
  const std::span<const std::uint8_t> bytes = object.read(code.entry, end - code.entry);
  code.instructions.reserve(walked.size());
  std::size_t at_start = 0;  // walked instructions found at an instruction's start
  for (std::uint64_t address = code.entry; address < end;) {
    const auto found = walked.find(address);
    const isa::Instruction* inst = found != walked.end() ? found->second : nullptr;
    if (inst) {
      ++at_start;
    } else {
      isa::DecodeError error;
      inst = decoder.decode(bytes.subspan(address - code.entry), address, &error);
      if (!inst) fail(decoder.processor(), error.message);
    }
    code.instructions.push_back(isa::CachingDecoder::at(*inst, address));
    code.reachable.push_back(found != walked.end());
    address += inst->size;
  }
  if (at_start != walked.size()) {
    std::uint64_t inside = UINT64_MAX;
    for (const auto& [address, inst] : walked) {
      const auto at = std::lower_bound(
          code.instructions.begin(), code.instructions.end(), address,
          [](const isa::Instruction& i, std::uint64_t a) { return i.address < a; });
      if (at == code.instructions.end() || at->address != address)
        inside = std::min(inside, address);
    }
    fail(object.name(),
         label + ": control reaches " + hex(inside) + ", which is inside another instruction");
  }
  code.leader.resize(code.instructions.size());
  for (std::size_t i = 0, next = 0; i < code.instructions.size(); ++i) {
    while (next < code.leaders.size() && code.leaders[next] < code.instructions[i].address) ++next;
    code.leader[i] =
        next < code.leaders.size() && code.leaders[next] == code.instructions[i].address;
  }
  return code;
}

KernelCode decode_kernel(CodeReader& reader, std::size_t kernel_index) {
  KernelCode code;
  code.kernel = &reader.object.kernels()[kernel_index];
  code.kernel_index = kernel_index;
  code.name = code.kernel->name;
  code.entry = code.kernel->entry_address;
  return decode_code(reader, std::move(code));
}

// A piece of relocated code: an original instruction's bytes, or (original null) the bytes the
// kernel's assembly text `source` becomes.
struct Piece {
  const isa::Instruction* original = nullptr;
  std::size_t source = 0;
};

// Consecutive pieces placed together: the code before an instruction (its points), the
// instruction with what follows it, or the entry code.
struct Chunk {
  // stub: the counters of a taken branch's edge and an s_branch to the target, before the
  // entry of the code the branch is in (see CodeCounters).
  enum class Kind { prologue, code, instruction, stub } kind = Kind::code;
  const isa::Instruction* original = nullptr;  // Kind::instruction
  std::size_t first = 0, end = 0;              // its pieces
  // s_getpc_b64: the piece after the instruction is the correction of the PC it reads.
  bool getpc = false;
  // A branch whose taken edge is counted: it goes to this stub chunk instead of its target.
  std::optional<std::size_t> stub;
};

// A stub's s_branch (its piece) back to the original target, patched by lay_out.
struct StubFixup {
  std::size_t piece = 0;
  std::uint64_t target = 0;  // original address
};

// Where one code's (the kernel's or a device function's) block counters go, by instruction
// index: the counter numbers are the block-indexed variable's. `before` an instruction: a
// block's start, or a block's end ahead of its branch, call, return or s_endpgm; `after` it, in
// the instruction's chunk (which branches to the next block skip): a fall-through edge, or the
// end of a block that falls through; `taken`: the taken edge of a conditional branch, counted
// in a stub the branch goes to; `entry`: once per call of a device function.
struct CodeCounters {
  std::vector<std::uint32_t> entry;
  std::map<std::size_t, std::vector<std::uint32_t>> before, after, taken;
};

// A probe call's GOT-relative address computation: the piece s_getpc_b64 / s_add_u32 /
// s_addc_u32 whose literals become (slot - pc) once both have addresses.
struct GotFixup {
  std::size_t piece = 0;
  std::size_t slot = 0;
};

// A call from relocated code to a relocated device function: the piece s_cselect_b32 /
// s_add_u32 / s_addc_u32 / s_cmp_lg_u32 whose literals become (relocated entry - original
// entry) once the copy has an address.
struct CallFixup {
  std::size_t piece = 0;
  std::uint64_t callee = 0;  // the callee's original entry
};

// A call from relocated code whose target is computed at run time, compared with one relocated
// device function: the piece s_getpc_b64 / s_add_u32 / s_addc_u32 whose literals become
// (original entry - pc), giving the function's run-time original address, then s_add_u32 /
// s_addc_u32 whose literals become (relocated entry - original entry), giving its copy's.
struct TranslationFixup {
  std::size_t piece = 0;
  std::uint64_t callee = 0;  // the function's original entry
};

// A probe of the plan's probe library: its footprint and the GOT slot the calls go through.
struct LoadedProbe {
  ProbeFootprint footprint;
  isa::RegisterSet clobbers;
  std::size_t slot = 0;
};

// The per-wave variable that holds the wave's scratch resource where the kernel has no SGPRs to
// keep it in (SgprAssignment::scratch_per_point).
constexpr const char* kScratchResourceVariable = "__wavekit_scratch_resource";

// Finds SGPRs among those a kernel leaves unused, from the top down, each group at a register
// aligned to its size (pairs even, the scratch resource's quad a multiple of 4), as the
// instructions that read them as one operand require.
class SgprPool {
 public:
  explicit SgprPool(const std::bitset<128>& used) {
    for (unsigned s = 0; s < kNumberedSgprs; ++s) free_[s] = !used[s];
  }
  std::optional<unsigned> take(unsigned count) {
    for (unsigned first = (kNumberedSgprs - count) / count * count;; first -= count) {
      bool all = true;
      for (unsigned s = first; s < first + count; ++s) all = all && free_[s];
      if (all) {
        for (unsigned s = first; s < first + count; ++s) free_[s] = false;
        return first;
      }
      if (first < count) return std::nullopt;
    }
  }

 private:
  std::bitset<kNumberedSgprs> free_;
};

// Where the instrumentation's SGPRs go in one kernel (Engine::prepare_kernel).
struct SgprAssignment {
  detail::ReservedSgprs reserved;
  detail::CallSgprs call;  // with probe calls
  // The envelope's SGPRs other than the scratch resource are taken at each point from those dead
  // there (Engine::point_call_sgprs), the kernel leaving too few unused for all of them; and
  // with scratch_per_point the scratch resource too, loaded from the wave's slot.
  bool call_per_point = false;
  bool scratch_per_point = false;
  // What the instrumentation keeps for the whole kernel, and so what no point may take or a
  // probe change: with the block layout every SGPR from the block up.
  std::bitset<128> kept;
  unsigned end = 0;  // one past the highest SGPR the instrumented kernel may use
};

// The block layout above `highest` where it fits, byte for byte what every kernel that leaves
// room for it has always had. Otherwise the SGPRs `used` leaves free: the reserved ones (but not
// `one`: increments set the temporary pair to 1 instead) and, with probe calls, the scratch
// resource kept, then the envelope's others kept too if they all fit, else taken per point; and
// where the scratch resource does not fit beside the reserved ones, it is taken per point as well.
std::optional<SgprAssignment> assign_sgprs(const std::bitset<128>& used, unsigned highest,
                                           bool translations, bool probe_calls,
                                           bool buffer_scratch) {
  const unsigned base = (highest + 3) / 4 * 4;
  const unsigned reserved_count = detail::ReservedSgprs::block(0, translations).count();
  const unsigned block_end = base + reserved_count + (probe_calls ? detail::CallSgprs::kCount : 0);
  if (block_end <= kNumberedSgprs) {
    SgprAssignment a;
    a.reserved = detail::ReservedSgprs::block(base, translations);
    a.call = detail::CallSgprs::block(base + reserved_count);
    for (unsigned s = base; s < kNumberedSgprs; ++s) a.kept[s] = true;
    a.end = block_end;
    return a;
  }
  const auto attempt = [&](bool keep_scratch) -> std::optional<SgprAssignment> {
    SgprAssignment a;
    SgprPool pool(used);
    const auto take = [&](unsigned count, unsigned& to) {
      const std::optional<unsigned> first = pool.take(count);
      if (!first) return false;
      to = *first;
      for (unsigned s = to; s < to + count; ++s) a.kept[s] = true;
      return true;
    };
    a.reserved.translations = translations;
    a.reserved.keeps_one = false;
    if (keep_scratch && !take(4, a.call.scratch_resource)) return std::nullopt;
    if (!take(2, a.reserved.slot) || !take(2, a.reserved.temporary)) return std::nullopt;
    if (translations && (!take(2, a.reserved.translation) || !take(2, a.reserved.translation_copy)))
      return std::nullopt;
    if (!take(1, a.reserved.scc_save) || !take(1, a.reserved.workitem)) return std::nullopt;
    if (probe_calls) {
      // All or none: a kept pool that fits some of them would gain nothing per point.
      const SgprPool before = pool;
      const std::bitset<128> kept_before = a.kept;
      a.call_per_point =
          !(take(2, a.call.exec_save) && take(2, a.call.vcc_save) && take(2, a.call.target) &&
            take(1, a.call.m0_save) && take(1, a.call.spill_offset));
      if (a.call_per_point) {
        pool = before;
        a.kept = kept_before;
      }
    }
    a.scratch_per_point = probe_calls && buffer_scratch && !keep_scratch;
    a.end = kNumberedSgprs;
    return a;
  };
  const bool needs_scratch = probe_calls && buffer_scratch;
  if (std::optional<SgprAssignment> a = attempt(needs_scratch)) return a;
  if (needs_scratch) return attempt(false);
  return std::nullopt;
}

// What the probe calls of one kernel share: the envelope's SGPRs, where the spill area and the
// probes' stack lie in the (grown) private segment, and the analysis's view of the kernel.
struct KernelCalls {
  detail::CallSgprs sgprs;
  bool sgprs_per_point = false;  // SgprAssignment::call_per_point
  // With sgprs_per_point: a VGPR above everything the kernel, its callees, the probes and the
  // envelope touch, in whose lanes a point short of dead SGPRs keeps the live ones its envelope
  // borrows (Engine::point_call_sgprs, Engine::call_probe).
  std::optional<unsigned> lane_vgpr;
  bool scratch_per_point = false;  // SgprAssignment::scratch_per_point
  // With scratch_per_point: where the prologue stores the wave's scratch resource in its slot.
  std::uint64_t scratch_resource_in_slot = 0;
  std::uint64_t spill_base = 0;  // per lane
  std::uint64_t stack_base = 0;  // per lane
  // Original addresses of the reachable s_swappc_b64 of the kernel, then of each device
  // function relocated with it (call_sites_of): the order of a call-site-indexed variable.
  std::vector<std::uint64_t> call_sites;
};

// The envelope's SGPRs at one point (Engine::point_call_sgprs): dead there, or live ones it
// borrows, kept meanwhile in lanes of KernelCalls::lane_vgpr.
struct PointSgprs {
  detail::CallSgprs call;
  std::vector<unsigned> borrowed;
};

// One kernel being rewritten: what prepare_kernel decides and expand_points builds, until
// lay_out has placed it.
struct KernelRewrite {
  KernelCode code;
  // The device functions relocated with this kernel: one copy per kernel, since the copy uses
  // the kernel's reserved SGPRs and arena layout.
  std::vector<KernelCode> functions;
  std::set<std::uint64_t> relocated;  // their original entries
  // Block keys: the kernel's blocks, then each relocated function's; a block-indexed element
  // is the block's position there.
  std::vector<std::uint64_t> blocks;
  std::unordered_map<std::uint64_t, std::size_t> block_index;
  // Block counting by flow conservation (plan_counters): per code entry, where the counters
  // go, and each block's count as a sum of them (in `blocks` order). Empty otherwise.
  std::unordered_map<std::uint64_t, CodeCounters> counting;
  std::uint32_t counters = 0;
  std::vector<CounterSum> block_sums;
  InstrumentedKernel instrumented;
  codeobj::KernelDescriptor descriptor;  // the instrumented kernel's
  detail::ReservedSgprs reserved;
  std::bitset<128> kept_sgprs;  // SgprAssignment::kept
  detail::PrologueInput prologue;
  std::optional<KernelCalls> calls;

  // expand_points: the chunks of the kernel's copy, then of each function's, over `pieces`.
  std::vector<Chunk> chunks;
  std::vector<Piece> pieces;
  std::vector<std::string> sources;  // the assembly text of the pieces that are not original
  std::vector<GotFixup> got;
  std::vector<CallFixup> retargeted;
  std::vector<TranslationFixup> translations;
  std::vector<StubFixup> stubs;
};

// What link needs of a laid-out kernel: offsets in the new section of the literal pairs (lo,
// then hi 8 bytes on: each the literal of an s_add_u32 / s_addc_u32) that depend on its address.
struct LaidOut {
  std::size_t kernel_index = 0;
  std::uint64_t start = 0;  // the kernel's new entry
  struct Literals {
    std::uint64_t at = 0;
    std::uint64_t value = 0;
  };
  std::vector<Literals> plus_base;   // become value + the section's address
  std::vector<Literals> minus_base;  // become value - the section's address
  std::vector<Literals> got;         // become the GOT slot `value` - (at - 4): PC-relative
  // A branch lay_out could not relocate: thrown when link reaches this kernel, so that every
  // kernel's preparation is checked first, as it always was.
  std::optional<std::string> error;
};

// Where point expansion is: the kernel, the code being copied, and the snippet text not yet
// made a piece (consecutive snippets are assembled together).
struct Cursor {
  KernelRewrite& kernel;
  const KernelCode& code;
  std::string text;
  std::optional<std::size_t> analysed;       // the analysis's index of `code`'s function
  std::map<std::size_t, std::size_t> stubs;  // conditional branch's index -> its stub chunk
};

// The plan's variable that bbcount's snippet counts blocks in, when nothing else uses it (see
// Engine::flow_variable_); "" when there is none.
std::string flow_variable(const Plan& plan) {
  std::string counted;
  for (const PointSpec& point : plan.points)
    if (point.where == PointKind::block_entry && point.snippet &&
        point.snippet->op == SnippetOp::increment && point.snippet->indexed_by_block)
      counted = point.snippet->variable;
  if (counted.empty()) return "";
  std::size_t uses = 0;
  for (const PointSpec& point : plan.points) {
    if (point.snippet && point.snippet->variable == counted) ++uses;
    if (point.call)
      for (const Argument& argument : point.call->args)
        if (argument.kind == ArgumentKind::variable && argument.name == counted) ++uses;
  }
  return uses == 1 ? counted : "";
}

class Engine {
 public:
  Engine(const codeobj::CodeObject& input, const Plan& plan, const NegativeControls& controls)
      : input_(input),
        plan_(plan),
        controls_(controls),
        toolchain_(toolchain_for(input.target().processor)),
        reader_(input) {}

  RewriteResult run();

 private:
  std::vector<std::size_t> selected_kernels() const;
  void check_plan() const;
  // An instruction point names an original address: one that starts no instruction of any
  // kernel or device function is a mistake, not a point that never runs.
  void check_instruction_points();
  void load_probe_library();
  const LoadedProbe& probe(const std::string& name) const;

  // ---- prepare_kernel: decoding, relocation set, descriptor, registers, arena, scratch ----
  KernelRewrite prepare_kernel(std::size_t kernel_index, codeobj::CodeObject& output);
  // The device functions relocated with the kernel, when points may lie in them.
  void relocate_callees(KernelRewrite& k, const detail::CalleeFootprint& callees);
  // Where the block counters of flow_variable_ go, for the kernel and each function.
  void plan_counters(KernelRewrite& k) const;
  // `blocks`: the original starts of every block the kernel's points can count, its own and
  // those of the device functions relocated with it (see block keys); `call_sites` likewise
  // every call the kernel's call points can instrument (call_sites_of).
  ArenaLayout layout_for(const KernelRewrite& k,
                         const std::vector<std::uint64_t>& call_sites) const;
  // Probe calls: the spill area, the probes' stack and the VGPRs they need.
  void reserve_for_probe_calls(KernelRewrite& k, codeobj::KernelMetadata& meta);

  // ---- expand_points: the code each point inserts ----
  void expand_points(KernelRewrite& k);
  void expand_code(KernelRewrite& k, const KernelCode& code);
  void expand_entry(Cursor& at);
  void expand_stubs(Cursor& at);
  void expand_instruction(Cursor& at, std::size_t index);
  // Updates of the block counters `counters` (of flow_variable_).
  void count(Cursor& at, const std::vector<std::uint32_t>& counters);
  // Those CodeCounters puts at `index` of one of its maps, in the code being expanded.
  void count_at(Cursor& at, std::map<std::size_t, std::vector<std::uint32_t>> CodeCounters::*where,
                std::size_t index);
  // The points before an instruction, and the call retargeting that goes with a call; returns
  // the text of the call that replaces the original one, if any.
  std::optional<std::string> expand_before(Cursor& at, std::size_t index);
  bool replaced_by_probe(Cursor& at, std::size_t index);
  std::string retarget_call(Cursor& at, const isa::Instruction& inst);
  std::string translate_call(Cursor& at, const isa::Instruction& inst);
  void correct_getpc(Cursor& at, const isa::Instruction& inst);
  void expand_after(Cursor& at, std::size_t index);
  // One point at one instruction: a snippet, or a probe call.
  void insert(Cursor& at, const PointSpec& point, std::uint64_t element,
              const isa::Instruction& inst, const isa::RegisterSet& live);
  std::string increment(const KernelRewrite& k, const std::string& variable,
                        std::uint64_t element) const;
  std::string store(const KernelRewrite& k, const Snippet& snippet, std::uint64_t element,
                    const isa::Instruction& inst) const;
  void call_probe(Cursor& at, const PointSpec& point, isa::RegisterSet live,
                  const isa::Instruction& inst);
  PointSgprs point_call_sgprs(const KernelRewrite& k, const detail::EnvelopeInput& in,
                              const std::string& context) const;
  std::vector<detail::EnvelopeArgument> envelope_arguments(const ProbeCall& call,
                                                           const InstrumentedKernel& instrumented,
                                                           const KernelCalls& calls,
                                                           const isa::Instruction& inst,
                                                           PointKind where, std::uint64_t point_id,
                                                           const std::string& context) const;
  isa::RegisterSet live_before(Cursor& at, const isa::Instruction& inst);
  isa::RegisterSet live_after(Cursor& at, const isa::Instruction& inst);
  std::size_t instruction_index(Cursor& at, const isa::Instruction& inst);
  // Pieces: the pending snippet text, and text that must be a piece of its own (a fixup
  // refers to it).
  static void flush(Cursor& at);
  static std::size_t add_text(KernelRewrite& k, std::string text);

  // ---- lay_out, link, emit_note ----
  // The bytes of each source (assembly text, one instruction a line).
  std::vector<std::vector<std::uint8_t>> encode(const std::vector<std::string>& sources);
  LaidOut lay_out(KernelRewrite& k, std::vector<std::uint8_t>& text);
  void link(codeobj::CodeObject& output, std::vector<std::uint8_t> text,
            const std::vector<LaidOut>& kernels);
  std::vector<std::uint8_t> emit_note(const codeobj::CodeObject& output);

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
  const NegativeControls& controls_;
  // The variable whose block counts are derived from edge counters (flow.h): one that the plan
  // uses only in one block_entry increment indexed by block, so that nothing else sees its
  // elements as they are stored. Empty: blocks are counted one counter each, as written.
  std::string flow_variable_;
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
  // amdhsa.kernels by .name and .symbol (the first kernel that has it, as find_kernel answers).
  std::unordered_map<std::string, std::size_t> metadata_index_;
  RewriteResult result_;
  Toolchain& toolchain_;
  CodeReader reader_;
};

RewriteResult Engine::run() {
  check_plan();
  flow_variable_ = flow_variable(plan_);
  check_instruction_points();
  if (plan_.has_calls()) load_probe_library();
  codeobj::CodeObject output = input_.clone();
  result_.note.tool = plan_.tool;
  result_.note.original_sha256 = sha256_hex(input_.write());
  result_.note.probe_library = plan_.probe_library;
  for (std::size_t i = 0; i < output.metadata().kernel_count(); ++i) {
    codeobj::KernelMetadata meta = output.metadata().kernel(i);
    metadata_index_.emplace(meta.name(), i);
    metadata_index_.emplace(meta.symbol(), i);
  }

  // Kernel by kernel, so that only one kernel's decoded code is held at a time.
  std::vector<LaidOut> laid_out;
  std::vector<std::uint8_t> text;
  for (std::size_t kernel_index : selected_kernels()) {
    KernelRewrite kernel = prepare_kernel(kernel_index, output);
    expand_points(kernel);
    laid_out.push_back(lay_out(kernel, text));
    // Written now with the old entry; link points it at the copy.
    output.set_descriptor(kernel_index, kernel.descriptor);
    result_.note.kernels.push_back(std::move(kernel.instrumented));
  }
  link(output, std::move(text), laid_out);
  result_.bytes = emit_note(output);
  return std::move(result_);
}

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
  // One executable holds both objects, so both must run on the agent: the same processor, and
  // features that agree or are Any in one of them (a library built for plain gfx90a serves
  // objects compiled for gfx90a:sramecc-:xnack-, as CLR compiles its blit kernels under ROCr).
  if (!library.target().compatible_with(input_.target()))
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
      case ArgumentKind::register_value:
      case ArgumentKind::register_reference: {
        // sN, s[a:a+1], vN, v[a:a+1], exec, vcc.
        const std::string& name = argument.name;
        arg.by_reference = argument.kind == ArgumentKind::register_reference;
        if (name == "exec" || name == "vcc") {
          arg.kind = name == "exec" ? Kind::exec : Kind::vcc;
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
          fail(context, "register argument '" + name +
                            "': expected sN, s[a:a+1], vN, v[a:a+1], exec or vcc");
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

ArenaLayout Engine::layout_for(const KernelRewrite& k,
                               const std::vector<std::uint64_t>& call_sites) const {
  const std::vector<std::uint64_t>& blocks = k.blocks;
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
      // Counted on edges: the slot holds the counters the block counts are derived from.
      if (variable.name == flow_variable_ && !k.block_sums.empty()) {
        variable.counters = k.counters;
        variable.sums = k.block_sums;
      }
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

void Engine::check_instruction_points() {
  for (const PointSpec& point : plan_.points)
    for (std::uint64_t address : point.addresses) {
      const analysis::Function* function = program().function_containing(address);
      if (!function || !function->instruction_index(address))
        fail(input_.name(), to_string(point.where) + " point at " + hex(address) +
                                ": no instruction of a kernel or device function starts there");
    }
}

KernelRewrite Engine::prepare_kernel(std::size_t kernel_index, codeobj::CodeObject& output) {
  const codeobj::Target& target = input_.target();
  KernelRewrite k;
  k.code = decode_kernel(reader_, kernel_index);
  const codeobj::Kernel& kernel = *k.code.kernel;
  const codeobj::KernelDescriptor& kd = kernel.descriptor;
  const auto found = metadata_index_.find(kernel.name);
  if (found == metadata_index_.end())
    fail(input_.name(), "kernel '" + kernel.name + "' is not in the metadata note");
  codeobj::KernelMetadata meta = output.metadata().kernel(found->second);

  InstrumentedKernel& instrumented = k.instrumented;
  instrumented.name = kernel.name;
  instrumented.descriptor_symbol = kernel.descriptor_symbol;
  const std::uint64_t old_kernarg = meta.kernarg_segment_size();
  instrumented.arena_arg_offset = (old_kernarg + 7) / 8 * 8;

  // The entry SGPRs: what the original expects, and what the instrumented kernel launches
  // with (dispatch and kernarg pointers, all three workgroup ids, all three work-item ids).
  detail::PrologueInput& prologue = k.prologue;
  prologue.target = target;
  prologue.original = detail::entry_sgprs(kd, target, kernel.name);
  prologue.original_vgpr_workitem_id = kd.enable_vgpr_workitem_id();
  codeobj::KernelDescriptor& new_kd = k.descriptor;
  new_kd = kd;
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
  user += (kd.enable_sgpr_dispatch_ptr() ? 0 : 2) + (kd.enable_sgpr_kernarg_segment_ptr() ? 0 : 2) +
          (adds_scratch_resource ? 4 : 0);
  if (user > 16)
    fail(input_.name(), "kernel '" + kernel.name + "': no room for the user SGPRs the " +
                            "instrumentation adds (" + std::to_string(user) + " > 16)");
  new_kd.set_user_sgpr_count(user);
  prologue.launched = detail::entry_sgprs(new_kd, target, kernel.name);

  // Reserved SGPRs: none that the kernel touches or the hardware initialises, so that neither
  // the original code nor the launch overwrites them (assign_sgprs).
  std::bitset<128> touched;
  bool makes_calls = false;
  for (std::size_t i = 0; i < k.code.instructions.size(); ++i) {
    const isa::Instruction& inst = k.code.instructions[i];
    touched |= inst.reads.sgpr | inst.writes.sgpr;
    makes_calls = makes_calls || (inst.flow == isa::ControlFlow::call && k.code.reachable[i]);
  }
  for (const EntrySgpr& e : prologue.launched)
    for (unsigned s = e.first; s < e.first + e.count; ++s) touched[s] = true;
  // The callees run at their original addresses, uninstrumented: the block must also lie
  // above every SGPR they (and what they call) touch.
  detail::CalleeFootprint callees;
  k.blocks = k.code.leaders;
  if (makes_calls) {
    const analysis::Program& analysed = program();
    callees = detail::callee_footprint(analysed, self_contained_, kernel.entry_address, kernel.name,
                                       input_.name());
    touched |= callees.used.sgpr;
    relocate_callees(k, callees);
  }
  for (std::size_t i = 0; i < k.blocks.size(); ++i) k.block_index[k.blocks[i]] = i;
  if (!flow_variable_.empty()) plan_counters(k);
  std::vector<std::uint64_t> call_sites = call_sites_of(k.code);
  for (const KernelCode& function : k.functions) {
    const std::vector<std::uint64_t> sites = call_sites_of(function);
    call_sites.insert(call_sites.end(), sites.begin(), sites.end());
  }
  instrumented.layout = layout_for(k, call_sites);
  // Likewise the SGPRs the probes write (their transitive footprint, from the library's note:
  // an SGPR a probe only reads, or never names, keeps its value across the call) and the
  // envelope's own ABI writes: the link pair s[30:31], the stack pointer s32 and, on
  // gfx908/gfx90a, the probe's scratch resource s[0:3].
  for (const auto& [name, loaded] : probes_)
    for (unsigned s = 0; s < kNumberedSgprs; ++s)
      touched[s] = touched[s] || loaded.clobbers.sgpr[s];
  if (probe_calls) {
    for (unsigned s = kLinkPair; s <= kStackPointer; ++s) touched[s] = true;
    if (buffer_scratch)
      for (unsigned s = 0; s < 4; ++s) touched[s] = true;
  }
  unsigned highest = 0, unused = 0;
  for (unsigned s = 0; s < kNumberedSgprs; ++s) {
    if (touched[s]) highest = s + 1;
    unused += !touched[s];
  }
  const auto translates = [&](const KernelCode& code) {
    for (std::size_t i = 0; i < code.instructions.size(); ++i)
      if (code.reachable[i] && computed_calls_.count(code.instructions[i].address)) return true;
    return false;
  };
  const bool translations =
      translates(k.code) || std::any_of(k.functions.begin(), k.functions.end(), translates);
  const bool increments =
      std::any_of(plan_.points.begin(), plan_.points.end(), [&](const PointSpec& point) {
        return point.snippet && point.snippet->op == SnippetOp::increment &&
               point.snippet->variable != flow_variable_;
      });
  const std::optional<SgprAssignment> assignment =
      assign_sgprs(touched, highest, translations, probe_calls, buffer_scratch);
  if (!assignment)
    fail(input_.name(),
         "kernel '" + kernel.name + "' " +
             (makes_calls || probe_calls ? "with its callees and probes uses" : "uses") +
             " SGPRs up to s" + std::to_string(highest - 1) + " and leaves " +
             std::to_string(unused) + " of s0..s" + std::to_string(kNumberedSgprs - 1) +
             " unused: no room for the SGPRs the instrumentation needs below s" +
             std::to_string(kNumberedSgprs));
  k.reserved = assignment->reserved;
  k.kept_sgprs = assignment->kept;
  const unsigned reserved_end = assignment->end;
  if (assignment->scratch_per_point) {
    // The wave's scratch resource, which the envelopes load from the slot.
    PerWaveVariable resource;
    resource.name = kScratchResourceVariable;
    resource.element_size = 16;
    resource.alignment = 16;
    instrumented.layout.add(resource);
  }
  prologue.reserved = k.reserved;
  prologue.arena_arg_offset = instrumented.arena_arg_offset;
  prologue.stride = instrumented.layout.stride();
  prologue.skip_sgpr_moves = controls_.test_skip_prologue_sgpr_moves;
  // Only where edge counting left no counter and nothing else increments (the other tools'
  // prologues stay as they were, byte for byte).
  prologue.sets_one =
      k.reserved.keeps_one && (k.block_sums.empty() || k.counters > 0 || increments);

  if (probe_calls) {
    k.calls.emplace();
    k.calls->sgprs = assignment->call;
    k.calls->sgprs_per_point = assignment->call_per_point;
    k.calls->scratch_per_point = assignment->scratch_per_point;
    if (assignment->scratch_per_point)
      k.calls->scratch_resource_in_slot =
          instrumented.layout.find(kScratchResourceVariable)->offset;
    k.calls->call_sites = call_sites;
    reserve_for_probe_calls(k, meta);
  }

  // Grants: SGPRs up to the reserved block(s) and every SGPR a probe names (one it only reads
  // may lie above them), plus the special registers; VGPRs for v0..v2.
  unsigned named = reserved_end;
  for (const auto& [name, loaded] : probes_) named = std::max(named, loaded.footprint.sgpr_count);
  const unsigned sgprs = named + kSpecialSgprs;
  if (kd.sgpr_grant() < sgprs) new_kd.set_granulated_wavefront_sgpr_count((sgprs + 7) / 8 - 1);
  if (!target.has_packed_work_item_ids() && kd.vgpr_grant(target) < 3)
    fail(input_.name(), "kernel '" + kernel.name + "': VGPR grant below 3");
  new_kd.kernarg_size = static_cast<std::uint32_t>(instrumented.arena_arg_offset + 8);

  // Descriptor and note in agreement (rewriting.md §6).
  meta.set_kernarg_segment_size(new_kd.kernarg_size);
  meta.set_sgpr_count(std::max<std::uint64_t>(meta.sgpr_count(), sgprs));
  codeobj::KernelArg arena_arg;
  arena_arg.name = "__wavekit_arena";
  arena_arg.offset = instrumented.arena_arg_offset;
  arena_arg.size = 8;
  // Hidden (AMDGPUUsage's hidden_none: the runtime leaves it alone): a launcher writes the
  // arena's address there, and runtimes that map explicit arguments to the program's own
  // (HIP's kernelParams) do not look for one more.
  arena_arg.value_kind = "hidden_none";
  meta.add_arg(arena_arg);
  return k;
}

void Engine::relocate_callees(KernelRewrite& k, const detail::CalleeFootprint& callees) {
  const codeobj::Kernel& kernel = *k.code.kernel;
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
  if (!points_in_functions) return;
  // Relocated code reaches the instrumented copies by retargeting each call's resolved target,
  // and by translating a target computed at run time (expand_before). Such a call reaches
  // every device function of the object (callee_footprint), so all are relocated; an object
  // that imports symbols has been refused there already.
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
    code.kernel_index = k.code.kernel_index;
    code.function = true;
    code.name = function && function->start == entry ? function->name : hex(entry);
    code.entry = entry;
    code.tail_calls = tail_calls_of(function);
    try {
      k.functions.push_back(decode_code(reader_, std::move(code)));
    } catch (const Error& error) {
      fail(input_.name(), "kernel '" + kernel.name + "' reaches a device function that " +
                              "cannot be relocated: " + error.what());
    }
    k.relocated.insert(entry);
    k.blocks.insert(k.blocks.end(), k.functions.back().leaders.begin(),
                    k.functions.back().leaders.end());
  }
}

namespace {

// A code's CFG over its blocks (code.leaders), for flow.h; `last` gets each block's last
// instruction. nullopt where conservation cannot be trusted: a trap (whose handler may end the
// wave), or an s_endpgm in a device function, which would end the wave inside a call its caller
// expects to return.
std::optional<detail::FlowGraph> flow_graph(const KernelCode& code,
                                            std::vector<std::size_t>& last) {
  detail::FlowGraph graph;
  graph.blocks = static_cast<std::uint32_t>(code.leaders.size());
  graph.entered_once = !code.function;
  std::unordered_map<std::uint64_t, std::uint32_t> block_at;
  for (std::uint32_t b = 0; b < graph.blocks; ++b) block_at[code.leaders[b]] = b;
  const auto block_of = [&](std::uint64_t address) -> std::optional<std::uint32_t> {
    const auto found = block_at.find(address);
    if (found == block_at.end()) return std::nullopt;
    return found->second;
  };
  last.clear();
  std::uint32_t block = 0;
  for (std::size_t i = 0; i < code.instructions.size() && block < graph.blocks; ++i) {
    if (!code.leader[i]) continue;
    std::size_t end = i;
    while (code.instructions[end].flow == isa::ControlFlow::none &&
           end + 1 < code.instructions.size() && !code.leader[end + 1])
      ++end;
    last.push_back(end);
    const isa::Instruction& inst = code.instructions[end];
    const std::optional<std::uint32_t> next = end + 1 < code.instructions.size()
                                                  ? block_of(code.instructions[end + 1].address)
                                                  : std::nullopt;
    const std::optional<std::uint32_t> target =
        inst.branch_target ? block_of(*inst.branch_target) : std::nullopt;
    switch (inst.flow) {
      case isa::ControlFlow::none:
      case isa::ControlFlow::call:  // the callee returns to the next instruction
        if (!next) return std::nullopt;
        graph.edges.push_back({block, *next, false});
        break;
      case isa::ControlFlow::branch:
        if (!target) return std::nullopt;
        graph.edges.push_back({block, *target, true});
        break;
      case isa::ControlFlow::conditional_branch:
        if (!target || !next) return std::nullopt;
        graph.edges.push_back({block, *target, true});
        if (*next != *target) graph.edges.push_back({block, *next, false});
        break;
      case isa::ControlFlow::end_program:
        if (code.function) return std::nullopt;
        graph.exits.push_back(block);
        break;
      case isa::ControlFlow::indirect:  // a return or a tail call (decode_code refuses others)
        graph.exits.push_back(block);
        break;
      case isa::ControlFlow::trap:
        return std::nullopt;
    }
    ++block;
  }
  if (last.size() != graph.blocks) return std::nullopt;
  return graph;
}

}  // namespace

void Engine::plan_counters(KernelRewrite& k) const {
  std::vector<const KernelCode*> codes{&k.code};
  for (const KernelCode& function : k.functions) codes.push_back(&function);
  // One code that cannot be trusted (a trap, a function that may end the wave) makes every
  // call's return doubtful: count the whole kernel one counter per block.
  std::vector<std::vector<std::size_t>> lasts(codes.size());
  std::vector<std::optional<detail::FlowGraph>> graphs;
  bool trusted = true;
  for (std::size_t c = 0; c < codes.size(); ++c) {
    graphs.push_back(flow_graph(*codes[c], lasts[c]));
    trusted = trusted && graphs.back().has_value();
  }
  if (!trusted) {
    // Per block, unchanged: block i's counter is element i (expand_before), nothing derived.
    return;
  }
  std::uint32_t base = 0;
  for (std::size_t c = 0; c < codes.size(); ++c) {
    const KernelCode& code = *codes[c];
    const detail::FlowGraph& graph = *graphs[c];
    const std::vector<std::size_t>& last = lasts[c];
    const detail::FlowCounters counters = detail::spanning_tree_counters(graph);
    const std::vector<detail::EdgePlace> places = detail::edge_places(graph);
    std::vector<std::size_t> first(graph.blocks);  // each block's first instruction
    for (std::size_t i = 0, b = 0; i < code.instructions.size() && b < graph.blocks; ++i)
      if (code.leader[i]) first[b++] = i;
    CodeCounters& placed = k.counting[code.entry];
    for (std::uint32_t n = 0; n < counters.counters.size(); ++n) {
      const detail::FlowCounters::Counter& counter = counters.counters[n];
      const std::uint32_t number = base + n;
      switch (counter.site) {
        case detail::FlowCounters::Site::block:
          placed.before[first[counter.index]].push_back(number);
          break;
        case detail::FlowCounters::Site::exit:
          placed.before[last[counter.index]].push_back(number);
          break;
        case detail::FlowCounters::Site::entry:
          placed.entry.push_back(number);
          break;
        case detail::FlowCounters::Site::edge: {
          const detail::FlowGraph::Edge& edge = graph.edges[counter.index];
          const std::size_t end = last[edge.from];
          const bool falls = code.instructions[end].flow == isa::ControlFlow::none;
          switch (places[counter.index]) {
            case detail::EdgePlace::target:
              placed.before[first[edge.to]].push_back(number);
              break;
            case detail::EdgePlace::source:
              (falls ? placed.after : placed.before)[end].push_back(number);
              break;
            case detail::EdgePlace::split:
              (edge.taken ? placed.taken : placed.after)[end].push_back(number);
              break;
          }
          break;
        }
      }
    }
    for (const detail::FlowSum& sum : counters.block_counts) {
      CounterSum shifted{sum.constant, {}};
      for (const auto& [counter, coefficient] : sum.terms)
        shifted.terms.emplace_back(base + counter, coefficient);
      k.block_sums.push_back(std::move(shifted));
    }
    base += static_cast<std::uint32_t>(counters.counters.size());
  }
  k.counters = base;
}

void Engine::reserve_for_probe_calls(KernelRewrite& k, codeobj::KernelMetadata& meta) {
  const codeobj::Target& target = input_.target();
  const codeobj::KernelDescriptor& kd = k.code.kernel->descriptor;
  codeobj::KernelDescriptor& new_kd = k.descriptor;
  KernelCalls& calls = *k.calls;
  if (!target.has_architected_flat_scratch()) {
    // The wave's scratch resource, saved before the prologue's moves can overwrite it: the
    // launch's V# with this wave's offset added to its base, as compiled kernels do.
    const EntrySgpr* resource =
        detail::find_entry(k.prologue.launched, EntryValue::private_segment_buffer);
    const EntrySgpr* offset =
        detail::find_entry(k.prologue.launched, EntryValue::private_segment_wave_offset);
    const std::string first = std::to_string(resource->first);
    const std::string wave_offset = "s" + std::to_string(offset->first);
    if (calls.scratch_per_point) {
      // Into the slot, through the temporary pair (free once the slot is claimed), and written
      // back at once: a probe's s_dcache_inv would drop it from the scalar cache.
      const unsigned t = k.reserved.temporary;
      const std::string pair = "s[" + std::to_string(t) + ":" + std::to_string(t + 1) + "]";
      const std::string slot =
          "s[" + std::to_string(k.reserved.slot) + ":" + std::to_string(k.reserved.slot + 1) + "]";
      k.prologue.save_before_moves =
          "s_add_u32 s" + std::to_string(t) + ", s" + first + ", " + wave_offset +
          "\ns_addc_u32 s" + std::to_string(t + 1) + ", s" + std::to_string(resource->first + 1) +
          ", 0\ns_store_dwordx2 " + pair + ", " + slot + ", " +
          hex(calls.scratch_resource_in_slot) + "\ns_store_dwordx2 s[" +
          std::to_string(resource->first + 2) + ":" + std::to_string(resource->first + 3) + "], " +
          slot + ", " + hex(calls.scratch_resource_in_slot + 8) + "\ns_dcache_wb\n";
    } else {
      const unsigned r = calls.sgprs.scratch_resource;
      k.prologue.save_before_moves =
          "s_mov_b64 s[" + std::to_string(r) + ":" + std::to_string(r + 1) + "], s[" + first + ":" +
          std::to_string(resource->first + 1) + "]\ns_mov_b64 s[" + std::to_string(r + 2) + ":" +
          std::to_string(r + 3) + "], s[" + std::to_string(resource->first + 2) + ":" +
          std::to_string(resource->first + 3) + "]\ns_add_u32 s" + std::to_string(r) + ", s" +
          std::to_string(r) + ", " + wave_offset + "\ns_addc_u32 s" + std::to_string(r + 1) +
          ", s" + std::to_string(r + 1) + ", 0\n";
    }
  }
  // The private segment: the kernel's own, then the spill area, then the probes' stack.
  // The spill area holds at most every VGPR a probe or the envelope writes, plus the two
  // VGPRs the SGPRs are spilled through, plus a pair passed by reference (saved whether
  // written or not).
  unsigned vgprs_needed = 0, spilled_vgprs = 0;
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
    const unsigned written = std::max(loaded.footprint.vgpr_count, dwords + 2);
    const bool by_reference =
        std::any_of(point.call->args.begin(), point.call->args.end(),
                    [](const Argument& a) { return a.kind == ArgumentKind::register_reference; });
    vgprs_needed = std::max(vgprs_needed, written);
    spilled_vgprs = std::max(spilled_vgprs, written + (by_reference ? 2 : 0));
    probe_stack = std::max(probe_stack, loaded.footprint.scratch_bytes);
  }
  if (calls.sgprs_per_point) {
    // Above the kernel's own VGPRs (its architectural ones where AGPRs share the file) and
    // every probe's and envelope's.
    const unsigned kernel_vgprs = target.has_unified_vgpr_file() && meta.agpr_count() != 0
                                      ? static_cast<unsigned>(meta.vgpr_count())
                                      : kd.vgpr_grant(target);
    const unsigned lane_vgpr = std::max(kernel_vgprs, vgprs_needed);
    if (lane_vgpr < kArchitecturalVgprs) {
      calls.lane_vgpr = lane_vgpr;
      vgprs_needed = lane_vgpr + 1;
    }
  }
  auto align16 = [](std::uint64_t n) { return (n + 15) / 16 * 16; };
  calls.spill_base = align16(kd.private_segment_fixed_size);
  calls.stack_base = align16(calls.spill_base + 4 * (spilled_vgprs + 2));
  // Inside relocated functions the spill area and the probe's stack lie spill_base above
  // s32 (call_envelope.h: stack_relative), and s32 reaches the kernel's own private segment
  // on its deepest static call chain: room for that once more.
  const std::uint64_t function_stack = k.relocated.empty() ? 0 : calls.spill_base;
  new_kd.private_segment_fixed_size =
      static_cast<std::uint32_t>(align16(function_stack + calls.stack_base + probe_stack));
  meta.set_private_segment_fixed_size(new_kd.private_segment_fixed_size);
  // VGPRs: the probes' and the envelope's; on the unified file of gfx90a/gfx942 the
  // accumulation registers start at ACCUM_OFFSET, which must stay above them.
  if (new_kd.vgpr_grant(target) < vgprs_needed) {
    codeobj::KernelDescriptor unit = new_kd;
    unit.set_granulated_workitem_vgpr_count(0);
    const unsigned granule = unit.vgpr_grant(target);
    new_kd.set_granulated_workitem_vgpr_count((vgprs_needed + granule - 1) / granule - 1);
  }
  if (target.has_unified_vgpr_file() && new_kd.accum_offset() < vgprs_needed) {
    if (meta.agpr_count() != 0)
      fail(input_.name(), "kernel '" + k.code.kernel->name + "' keeps AGPRs from v" +
                              std::to_string(new_kd.accum_offset()) + " on: no room for the " +
                              std::to_string(vgprs_needed) + " VGPRs its probe calls need");
    new_kd.set_accum_offset_field((vgprs_needed + 3) / 4 - 1);
  }
  meta.set_vgpr_count(std::max<std::uint64_t>(meta.vgpr_count(), vgprs_needed));
}

// ---- Point expansion ----

// Where each kind of point applies before an instruction (kernel_entry and function_entry
// points are the entry chunk's; call_return and after_instruction points follow the
// instruction). Blocks, memory instructions and calls are instrumented in the kernel and in the
// device functions relocated with it, so a recursive function's calls are too; a function
// takes function_entry / function_return points of its own.
bool at_block_entry(const KernelCode& code, std::size_t index) { return code.leader[index]; }
bool at_kernel_exit(const isa::Instruction& inst) {
  return inst.flow == isa::ControlFlow::end_program;
}
bool at_named_instruction(const PointSpec& point, const isa::Instruction& inst) {
  return std::find(point.addresses.begin(), point.addresses.end(), inst.address) !=
         point.addresses.end();
}
bool at_memory(const PointSpec& point, const isa::Instruction& inst) {
  const std::optional<MemoryKind> kind = memory_kind_of(inst.memory);
  return kind && (point.memory_kinds.empty() ||
                  std::find(point.memory_kinds.begin(), point.memory_kinds.end(), *kind) !=
                      point.memory_kinds.end());
}
bool at_call_site(const isa::Instruction& inst) { return inst.flow == isa::ControlFlow::call; }
bool at_function_return(const KernelCode& code, const isa::Instruction& inst) {
  return code.function && inst.is_return();
}

std::string pair_name(unsigned first) {
  return "s[" + std::to_string(first) + ":" + std::to_string(first + 1) + "]";
}
std::string sgpr_name(unsigned number) { return "s" + std::to_string(number); }

void Engine::flush(Cursor& at) {
  if (at.text.empty()) return;
  add_text(at.kernel, std::move(at.text));
  at.text.clear();
}

std::size_t Engine::add_text(KernelRewrite& k, std::string text) {
  k.sources.push_back(std::move(text));
  k.pieces.push_back({nullptr, k.sources.size() - 1});
  return k.pieces.size() - 1;
}

void Engine::expand_points(KernelRewrite& k) {
  expand_code(k, k.code);
  for (const KernelCode& function : k.functions) expand_code(k, function);
}

void Engine::expand_code(KernelRewrite& k, const KernelCode& code) {
  Cursor at{k, code, {}, std::nullopt, {}};
  expand_stubs(at);
  expand_entry(at);
  for (std::size_t index = 0; index < code.instructions.size(); ++index)
    expand_instruction(at, index);
}

// The entry chunk: a kernel's prologue and kernel_entry points, a device function's
// function_entry points. Branches back to the first block skip it (lay_out maps block starts
// past it), so it runs once per kernel launch or per call.
void Engine::expand_entry(Cursor& at) {
  const KernelCode& code = at.code;
  KernelRewrite& k = at.kernel;
  const std::size_t first_piece = k.pieces.size();
  if (!code.function) at.text = detail::entry_prologue(k.prologue);
  if (!code.function && k.calls && !k.relocated.empty()) {
    // Probe calls inside device functions put their spill area at the function's s32. A kernel
    // whose callees use no stack never sets s32: start it at the spill area, which lies above
    // the kernel's own private segment (the kernel's own code may still set it lower).
    const std::uint64_t lanes = input_.target().has_architected_flat_scratch() ? 1 : 64;
    at.text += "s_mov_b32 s" + std::to_string(kStackPointer) + ", " +
               hex(k.calls->spill_base * lanes) + "\n";
  }
  const PointKind entry_kind = code.function ? PointKind::function_entry : PointKind::kernel_entry;
  for (const PointSpec& point : plan_.points) {
    if (point.where != entry_kind) continue;
    // The point stands for the first instruction (its original_address); SCC is dead at a
    // kernel's entry, and across a call the ABI does not preserve it.
    const isa::Instruction& first = code.instructions.front();
    insert(at, point, 0, first, point.call ? live_before(at, first) : isa::RegisterSet{});
  }
  if (const auto counting = k.counting.find(code.entry); counting != k.counting.end())
    count(at, counting->second.entry);
  flush(at);
  k.chunks.push_back({Chunk::Kind::prologue, nullptr, first_piece, k.pieces.size(), false, {}});
}

// The stubs of the code's counted taken edges: the counters, then an s_branch to the branch's
// target. They go before the code's entry chunk, where nothing falls into them, and where a
// block of the rewritten code that starts in one maps (through the address map) to the code's
// first instruction, whose own block follows: what a wave ran there is still read as the
// original's blocks.
void Engine::expand_stubs(Cursor& at) {
  KernelRewrite& k = at.kernel;
  const auto counting = k.counting.find(at.code.entry);
  if (counting == k.counting.end()) return;
  for (const auto& [index, counters] : counting->second.taken) {
    const std::size_t first = k.pieces.size();
    count(at, counters);
    flush(at);
    const std::size_t branch = add_text(k, "s_branch 0\n");
    k.stubs.push_back({branch, *at.code.instructions[index].branch_target});
    at.stubs[index] = k.chunks.size();
    k.chunks.push_back({Chunk::Kind::stub, nullptr, first, k.pieces.size(), false, {}});
  }
}

void Engine::count(Cursor& at, const std::vector<std::uint32_t>& counters) {
  for (std::uint32_t counter : counters) at.text += increment(at.kernel, flow_variable_, counter);
}

void Engine::count_at(Cursor& at,
                      std::map<std::size_t, std::vector<std::uint32_t>> CodeCounters::*where,
                      std::size_t index) {
  const auto counting = at.kernel.counting.find(at.code.entry);
  if (counting == at.kernel.counting.end()) return;
  const auto& placed = counting->second.*where;
  if (const auto found = placed.find(index); found != placed.end()) count(at, found->second);
}

void Engine::expand_instruction(Cursor& at, std::size_t index) {
  KernelRewrite& k = at.kernel;
  const isa::Instruction& inst = at.code.instructions[index];
  const std::size_t before = k.pieces.size();
  const std::optional<std::string> replaced_call = expand_before(at, index);
  if (k.pieces.size() != before)
    k.chunks.push_back({Chunk::Kind::code, nullptr, before, k.pieces.size(), false, {}});

  // The instruction, with what follows it in its own chunk so that a branch to the next block
  // does not run it.
  Chunk copy{Chunk::Kind::instruction, &inst, k.pieces.size(), 0, false, {}};
  if (const auto stub = at.stubs.find(index); stub != at.stubs.end()) copy.stub = stub->second;
  if (replaced_call)
    add_text(k, *replaced_call);
  else if (replaced_by_probe(at, index))
    add_text(k, "s_nop 0\n");  // the chunk keeps a body: branches to the block still land
  else
    k.pieces.push_back({&inst, 0});
  if (inst.mnemonic == "s_getpc_b64") {
    correct_getpc(at, inst);
    copy.getpc = true;
  }
  expand_after(at, index);
  copy.end = k.pieces.size();
  k.chunks.push_back(copy);
}

std::optional<std::string> Engine::expand_before(Cursor& at, std::size_t index) {
  const KernelCode& code = at.code;
  const KernelRewrite& k = at.kernel;
  const isa::Instruction& inst = code.instructions[index];
  const bool reachable = code.reachable[index];
  for (const PointSpec& point : plan_.points) {
    if (!reachable) break;
    bool here = false;
    std::uint64_t element = 0;
    switch (point.where) {
      case PointKind::block_entry:
        // Counted on edges: the counters go where plan_counters put them, below; the block is
        // still one point instrumented (point ids stay those of one counter per block).
        if (point.snippet && point.snippet->variable == flow_variable_ && !k.counting.empty()) {
          result_.points_instrumented += at_block_entry(code, index);
          break;
        }
        here = at_block_entry(code, index);
        if (here && point.snippet && point.snippet->indexed_by_block)
          element = at.kernel.block_index.at(inst.address);
        break;
      case PointKind::kernel_exit:
        here = at_kernel_exit(inst);
        break;
      case PointKind::before_instruction:
        here = at_named_instruction(point, inst);
        break;
      case PointKind::memory:
        here = at_memory(point, inst);
        break;
      case PointKind::call_site:
        here = at_call_site(inst);
        break;
      case PointKind::function_return:
        here = at_function_return(code, inst);
        break;
      default:
        break;
    }
    // A call that replaces the instruction sees what is live after it: the instruction does
    // not run, so what it would have read need not be kept, and what it would have written
    // keeps its value.
    if (here)
      insert(at, point, element, inst,
             !point.call     ? isa::RegisterSet{}
             : point.replace ? live_after(at, inst)
                             : live_before(at, inst));
  }
  if (reachable) count_at(at, &CodeCounters::before, index);
  // Scalar stores (the capture region) and scalar atomics sit in the scalar cache until
  // written back; do that before the wave ends (rewriting.md §8).
  if (inst.flow == isa::ControlFlow::end_program) at.text += "s_dcache_wb\ns_waitcnt lgkmcnt(0)\n";

  std::optional<std::string> replaced_call;
  if (reachable && (inst.flow == isa::ControlFlow::call || code.tail_calls.count(inst.address))) {
    const auto target = call_targets_.find(inst.address);
    if (target != call_targets_.end() && at.kernel.relocated.count(target->second))
      replaced_call = retarget_call(at, inst);
    else if (computed_calls_.count(inst.address) && !controls_.test_skip_call_translation)
      replaced_call = translate_call(at, inst);
  }
  flush(at);
  return replaced_call;
}

// A call to a device function relocated with this kernel goes to the copy: the target pair
// (which the s_getpc_b64 correction makes the original entry) plus the distance, in the
// reserved temporary pair so that the code's own pair keeps its value, SCC kept. Returns the
// call that replaces the original (a tail call's s_setpc_b64 stays a jump, to the copy).
std::string Engine::retarget_call(Cursor& at, const isa::Instruction& inst) {
  flush(at);
  unsigned pair = 0;  // s_swappc_b64 s[30:31], s[pair:pair+1] or s_setpc_b64 s[pair:pair+1]
  while (pair < kNumberedSgprs && !inst.reads.sgpr[pair]) ++pair;
  const unsigned t = at.kernel.reserved.temporary;
  const std::string scc = sgpr_name(at.kernel.reserved.scc_save);
  const std::size_t piece =
      add_text(at.kernel, "s_cselect_b32 " + scc + ", 1, 0\ns_add_u32 s" + std::to_string(t) +
                              ", s" + std::to_string(pair) + ", 0x12345678\ns_addc_u32 s" +
                              std::to_string(t + 1) + ", s" + std::to_string(pair + 1) +
                              ", 0x12345678\ns_cmp_lg_u32 " + scc + ", 0\n");
  at.kernel.retargeted.push_back({piece, call_targets_.at(inst.address)});
  const bool tail = inst.flow != isa::ControlFlow::call;
  return (tail ? "s_setpc_b64 " : "s_swappc_b64 s[30:31], ") + pair_name(t) + "\n";
}

// A target computed at run time (unoptimised code reloads it from a spill) is the original
// run-time address of the callee, since relocated s_getpc_b64 results are corrected to the
// original PC. Compare it with each relocated function's original address, computed
// PC-relatively, and on a match call the copy instead; anything else (only a non-function
// address can be left: every device function of a self-contained object is relocated) is
// called unchanged, as the original would. The result goes to the reserved temporary pair, so
// that the code's own pair keeps its value; SCC kept.
std::string Engine::translate_call(Cursor& at, const isa::Instruction& inst) {
  flush(at);
  KernelRewrite& k = at.kernel;
  unsigned pair = 0;  // s_swappc_b64 s[30:31], s[pair:pair+1]
  while (pair < kNumberedSgprs && !inst.reads.sgpr[pair]) ++pair;
  const unsigned t = k.reserved.temporary;
  const unsigned original = k.reserved.translation;
  const unsigned copy_entry = k.reserved.translation_copy;
  const std::string scc = sgpr_name(k.reserved.scc_save);
  add_text(k, "s_cselect_b32 " + scc + ", 1, 0\ns_mov_b64 " + pair_name(t) + ", " +
                  pair_name(pair) + "\n");
  for (std::uint64_t callee : k.relocated) {
    const std::size_t piece = add_text(
        k, "s_getpc_b64 " + pair_name(original) + "\ns_add_u32 " + sgpr_name(original) + ", " +
               sgpr_name(original) + ", 0x12345678\ns_addc_u32 " + sgpr_name(original + 1) + ", " +
               sgpr_name(original + 1) + ", 0x12345678\ns_add_u32 " + sgpr_name(copy_entry) + ", " +
               sgpr_name(original) + ", 0x12345678\ns_addc_u32 " + sgpr_name(copy_entry + 1) +
               ", " + sgpr_name(original + 1) + ", 0x12345678\ns_cmp_eq_u64 " +
               pair_name(original) + ", " + pair_name(pair) + "\ns_cselect_b64 " + pair_name(t) +
               ", " + pair_name(copy_entry) + ", " + pair_name(t) + "\n");
    k.translations.push_back({piece, callee});
  }
  add_text(k, "s_cmp_lg_u32 " + scc + ", 0\n");
  return "s_swappc_b64 s[30:31], " + pair_name(t) + "\n";
}

// The code after s_getpc_b64 must still see the original PC: add (original - new) to the pair,
// keeping SCC. The literals are patched once the new address is known.
void Engine::correct_getpc(Cursor& at, const isa::Instruction& inst) {
  unsigned pair = 0;
  while (pair < kNumberedSgprs && !inst.writes.sgpr[pair]) ++pair;
  const std::string lo = sgpr_name(pair), hi = sgpr_name(pair + 1);
  const std::string scc = sgpr_name(at.kernel.reserved.scc_save);
  add_text(at.kernel, "s_cselect_b32 " + scc + ", 1, 0\ns_add_u32 " + lo + ", " + lo +
                          ", 0x12345678\ns_addc_u32 " + hi + ", " + hi +
                          ", 0x12345678\ns_cmp_lg_u32 " + scc + ", 0\n");
}

// Whether a before_instruction call replaces the instruction at `index`; refuses, naming the
// reason, an instruction whose absence the rewriter cannot make safe.
bool Engine::replaced_by_probe(Cursor& at, std::size_t index) {
  const KernelCode& code = at.code;
  const isa::Instruction& inst = code.instructions[index];
  if (!code.reachable[index]) return false;
  const bool replaced =
      std::any_of(plan_.points.begin(), plan_.points.end(), [&](const PointSpec& p) {
        return p.replace && p.where == PointKind::before_instruction &&
               at_named_instruction(p, inst);
      });
  if (!replaced) return false;
  const auto refuse = [&](const std::string& why) {
    fail(input_.name(), "kernel '" + at.kernel.instrumented.name + "'" +
                            (code.function ? ", function '" + code.name + "'" : "") +
                            ": cannot replace the instruction at " + hex(inst.address) + " (" +
                            inst.text + "): " + why);
  };
  if (inst.flow != isa::ControlFlow::none)
    refuse(
        "it changes control flow (a branch, call, return or s_endpgm): its block's successors "
        "depend on it");
  if (inst.mnemonic == "s_getpc_b64")
    refuse("the code after it depends on the PC it reads, which the rewriter corrects");
  return true;
}

// Code after the instruction: call_return points where the callee returns to, then
// after_instruction points.
void Engine::expand_after(Cursor& at, std::size_t index) {
  const KernelCode& code = at.code;
  const isa::Instruction& inst = code.instructions[index];
  const bool reachable = code.reachable[index];
  if (reachable && inst.flow == isa::ControlFlow::call)
    for (const PointSpec& point : plan_.points)
      if (point.where == PointKind::call_return) call_probe(at, point, live_after(at, inst), inst);
  for (const PointSpec& point : plan_.points) {
    if (!reachable || point.where != PointKind::after_instruction ||
        !at_named_instruction(point, inst))
      continue;
    if (inst.flow != isa::ControlFlow::none && inst.flow != isa::ControlFlow::call)
      fail(input_.name(), "kernel '" + at.kernel.instrumented.name + "'" +
                              (code.function ? ", function '" + code.name + "'" : "") +
                              ": after_instruction point at " + hex(inst.address) + " (" +
                              inst.text +
                              "): control does not fall through to after a branch, a return "
                              "or s_endpgm; use before_instruction, or points at the targets");
    // SCC as the original leaves it: a snippet keeps it (increments) or does not touch it.
    insert(at, point, 0, inst, point.call ? live_after(at, inst) : isa::RegisterSet{});
  }
  if (reachable) count_at(at, &CodeCounters::after, index);
  flush(at);
}

void Engine::insert(Cursor& at, const PointSpec& point, std::uint64_t element,
                    const isa::Instruction& inst, const isa::RegisterSet& live) {
  if (point.snippet) {
    at.text += point.snippet->op == SnippetOp::store
                   ? store(at.kernel, *point.snippet, element, inst)
                   : increment(at.kernel, point.snippet->variable, element);
    ++result_.points_instrumented;
  } else {
    call_probe(at, point, live, inst);
  }
}

// Increments an 8-byte per-wave counter: one s_atomic_add_x2 of the 64-bit 1 the prologue left
// in ReservedSgprs::one, or, in a kernel short of SGPRs that keeps no `one`, of a 1 moved into
// the temporary pair first (s_mov leaves SCC alone too). The atomic leaves SCC alone, so SCC's
// liveness at the point does not matter, and without glc it returns nothing: no wait, and the
// kernel's own LGKM operations in flight are not waited for either.
std::string Engine::increment(const KernelRewrite& k, const std::string& variable,
                              std::uint64_t element) const {
  const PlacedVariable* placed = k.instrumented.layout.find(variable);
  const std::uint64_t offset = placed->offset + element * placed->variable.element_size;
  if (placed->variable.element_size != 8)
    fail(input_.name(), "increment snippets need 8-byte elements ('" + variable + "' has " +
                            std::to_string(placed->variable.element_size) + ")");
  if (offset > kMaxSmemOffset)
    fail(input_.name(), "kernel '" + k.instrumented.name + "': per-wave variable '" + variable +
                            "' lies beyond the 1 MiB a scalar offset reaches");
  if (!k.reserved.keeps_one)
    return "s_mov_b64 " + pair_name(k.reserved.temporary) + ", 1\ns_atomic_add_x2 " +
           pair_name(k.reserved.temporary) + ", " + pair_name(k.reserved.slot) + ", " +
           hex(offset) + "\n";
  return "s_atomic_add_x2 " + pair_name(k.reserved.one) + ", " + pair_name(k.reserved.slot) + ", " +
         hex(offset) + "\n";
}

// Stores a uniform value into a per-wave variable's element with a scalar store (written back
// by the s_dcache_wb before s_endpgm); s_mov leaves SCC alone. Per-lane values have no single
// value to store: a probe call takes those.
std::string Engine::store(const KernelRewrite& k, const Snippet& snippet, std::uint64_t element,
                          const isa::Instruction& inst) const {
  const PlacedVariable* placed = k.instrumented.layout.find(snippet.variable);
  const std::uint32_t size = placed->variable.element_size;
  const std::uint64_t offset = placed->offset + element * size;
  const std::string where = "kernel '" + k.instrumented.name + "', store into '" +
                            snippet.variable + "' at " + hex(inst.address) + ": ";
  if (size != 4 && size != 8)
    fail(input_.name(), where + "store snippets need 4- or 8-byte elements");
  if (offset > kMaxSmemOffset)
    fail(input_.name(), where + "the element lies beyond the 1 MiB a scalar offset reaches");
  const unsigned t = k.reserved.temporary;
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
      immediate(result_.points_instrumented);
      break;
    case ArgumentKind::original_address:
      immediate(inst.address);
      break;
    case ArgumentKind::exec:
      text += "s_mov_b64 " + pair_name(t) + ", exec\n";
      break;
    case ArgumentKind::register_value:
      // The register may still be on its way from memory (an s_load just before the point).
      text += "s_waitcnt lgkmcnt(0)\n";
      if (value.name == "exec") {
        text += "s_mov_b64 " + pair_name(t) + ", exec\n";
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
  const std::string slot = pair_name(k.reserved.slot);
  text += size == 8
              ? "s_store_dwordx2 " + pair_name(t) + ", " + slot + ", " + hex(offset) + "\n"
              : "s_store_dword s" + std::to_string(t) + ", " + slot + ", " + hex(offset) + "\n";
  // The next snippet may overwrite the data registers: let the store take them first.
  text += "s_waitcnt lgkmcnt(0)\n";
  return text;
}

// Probe calls: the envelope around each (call_envelope.h), with the registers live at the
// point from the analysis library's liveness.
void Engine::call_probe(Cursor& at, const PointSpec& point, isa::RegisterSet live,
                        const isa::Instruction& inst) {
  flush(at);
  KernelRewrite& k = at.kernel;
  const KernelCode& code = at.code;
  const LoadedProbe& target = probe(point.call->probe);
  const std::string context = input_.name() + ": kernel '" + k.instrumented.name + "'" +
                              (code.function ? ", function '" + code.name + "'" : std::string()) +
                              ", " + to_string(point.where) + " point" + " at " +
                              hex(inst.address) + ", probe '" + target.footprint.name + "'";
  detail::EnvelopeInput in;
  in.target = input_.target();
  in.reserved = k.reserved;
  in.call = k.calls->sgprs;
  in.clobbers = target.clobbers;
  if (code.function) {
    // Inside a device function the ABI's registers are live whatever the analysis says: its
    // return address s[30:31], the stack pointer s32 and the frame pointer s33 belong to the
    // caller's view of the call, and the envelope puts its spill area and the probe's stack
    // above the function's own stack pointer (call_envelope.h: stack_relative).
    for (unsigned reg = 30; reg <= 33; ++reg) live.sgpr[reg] = true;
    in.stack_relative = true;
  } else if (!k.relocated.empty()) {
    // The relocated functions' points spill above s32, so the kernel's s32 must keep its
    // value across a probe call even where the kernel itself no longer reads it.
    live.sgpr[kStackPointer] = true;
  }
  in.live = live;
  in.args = envelope_arguments(*point.call, k.instrumented, *k.calls, inst, point.where,
                               result_.points_instrumented, context);
  std::vector<unsigned> borrowed;
  if (k.calls->sgprs_per_point) {
    PointSgprs sgprs = point_call_sgprs(k, in, context);
    in.call = sgprs.call;
    borrowed = std::move(sgprs.borrowed);
    for (unsigned reg : borrowed) in.live.sgpr[reg] = false;  // the envelope's to use
  }
  if (k.calls->scratch_per_point) in.scratch_resource_in_slot = k.calls->scratch_resource_in_slot;
  // A register the probe changes must be one the code at the point owns: not the
  // instrumentation's own SGPRs (which sit above every SGPR the kernel touches), nor what the
  // function ABI keeps there (a changed return address or stack pointer would not return).
  for (const detail::EnvelopeArgument& arg : in.args) {
    if (!arg.by_reference || arg.kind != detail::EnvelopeArgument::Kind::sgpr) continue;
    for (unsigned reg = arg.first; reg < arg.first + arg.count; ++reg) {
      const std::string name = "register_reference s" + std::to_string(reg) + ": ";
      if (k.kept_sgprs[reg])
        fail(context, name + "not one of the code's SGPRs (the instrumentation keeps it)");
      if (code.function && reg < 4 && !input_.target().has_architected_flat_scratch())
        fail(context, name + "s[0:3] hold the function's scratch resource");
      if (code.function && reg >= kLinkPair && reg <= kStackPointer + 1)
        fail(context, name + "s[30:31], s32 and s33 hold the function's return address, stack " +
                          "and frame pointers");
      if (!code.function && !k.relocated.empty() && reg == kStackPointer)
        fail(context, name + "s32 is the stack pointer of the device functions this kernel calls");
    }
  }
  in.uniform = point.call->uniform;
  in.spill_base = k.calls->spill_base;
  in.stack_base = k.calls->stack_base;
  in.skip_one_restore = controls_.test_skip_envelope_restore;
  in.misdecode_swizzle = controls_.test_misdecode_swizzle;
  const detail::Envelope envelope = detail::call_envelope(in, context);
  if (envelope.spill_bytes > k.calls->stack_base - k.calls->spill_base)
    fail(context, "internal: the spill area (" + std::to_string(envelope.spill_bytes) +
                      " bytes per lane) outgrew the room reserved for it");
  // Borrowed SGPRs go into the lane VGPR once their loads have arrived, and come back after
  // everything else (v_writelane / v_readlane ignore EXEC), with the gfx9 wait states an SGPR
  // written by a VALU needs before SALU, SMEM or VMEM read it.
  std::string keep, give_back;
  const std::string lanes = borrowed.empty() ? "" : "v" + std::to_string(*k.calls->lane_vgpr);
  for (std::size_t lane = 0; lane < borrowed.size(); ++lane) {
    keep += "v_writelane_b32 " + lanes + ", " + sgpr_name(borrowed[lane]) + ", " +
            std::to_string(lane) + "\n";
    give_back += "v_readlane_b32 " + sgpr_name(borrowed[lane]) + ", " + lanes + ", " +
                 std::to_string(lane) + "\n";
  }
  if (!borrowed.empty()) {
    keep = "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n" + keep;
    give_back += "s_nop 4\n";
  }
  add_text(k, keep + envelope.before);
  const std::string lo = sgpr_name(envelope.target_pair);
  const std::string hi = sgpr_name(envelope.target_pair + 1);
  k.got.push_back(
      {add_text(k, "s_getpc_b64 " + pair_name(envelope.target_pair) + "\ns_add_u32 " + lo + ", " +
                       lo + ", 0x12345678\ns_addc_u32 " + hi + ", " + hi + ", 0x12345678\n"),
       target.slot});
  add_text(k, envelope.after + give_back);
  ++result_.points_instrumented;
}

// The envelope's SGPRs at one point of a kernel that cannot keep them for good
// (SgprAssignment::call_per_point): SGPRs dead at the point that the probe does not write and
// the envelope neither writes for the ABI (s[0:3] on gfx908/gfx90a, s[30:31], s32) nor reads
// for an argument, besides those the instrumentation keeps. Where too few are dead, live ones
// under the same conditions are borrowed: the probe leaves them alone, so the lanes of the
// kernel's lane VGPR carry their values across the call. The scratch resource stays the kept
// one unless it is loaded at each point (scratch_per_point).
PointSgprs Engine::point_call_sgprs(const KernelRewrite& k, const detail::EnvelopeInput& in,
                                    const std::string& context) const {
  std::bitset<128> unavailable = k.kept_sgprs | in.clobbers.sgpr;
  for (unsigned s = kLinkPair; s <= kStackPointer; ++s) unavailable[s] = true;
  if (!in.target.has_architected_flat_scratch())
    for (unsigned s = 0; s < 4; ++s) unavailable[s] = true;
  const auto reads = [&](unsigned first, unsigned count) {
    for (unsigned s = first; s < first + count && s < kNumberedSgprs; ++s) unavailable[s] = true;
  };
  for (const detail::EnvelopeArgument& arg : in.args) {
    using Kind = detail::EnvelopeArgument::Kind;
    if (arg.kind == Kind::sgpr) reads(arg.first, arg.count);
    if (arg.kind != Kind::address) continue;
    if (arg.has_base) {
      const bool resource =
          arg.form == detail::AddressForm::buffer || arg.form == detail::AddressForm::scalar_buffer;
      reads(arg.base, resource ? 4 : arg.form == detail::AddressForm::scratch ? 1 : 2);
    }
    if (arg.has_soffset) reads(arg.soffset, 1);
  }
  const auto assign = [&](const std::bitset<128>& used) -> std::optional<detail::CallSgprs> {
    SgprPool pool(used);
    detail::CallSgprs call = k.calls->sgprs;
    const auto take = [&](unsigned count, unsigned& to) {
      const std::optional<unsigned> first = pool.take(count);
      if (first) to = *first;
      return first.has_value();
    };
    if (k.calls->scratch_per_point && !take(4, call.scratch_resource)) return std::nullopt;
    if (!take(2, call.exec_save) || !take(2, call.vcc_save) || !take(2, call.target) ||
        !take(1, call.m0_save) || !take(1, call.spill_offset))
      return std::nullopt;
    return call;
  };
  if (std::optional<detail::CallSgprs> dead = assign(unavailable | in.live.sgpr))
    return {*dead, {}};
  std::optional<detail::CallSgprs> call;
  if (k.calls->lane_vgpr) call = assign(unavailable);
  if (!call) {
    if (k.calls->scratch_per_point)
      fail(context,
           "the kernel keeps no SGPRs for the call envelope's scratch resource and envelope, and "
           "fewer than the 12 they need (four aligned, three pairs, two single SGPRs) are free at "
           "the point, dead or live and untouched by the probe");
    fail(context,
         "the kernel keeps no SGPRs for the call envelope, and fewer than the 8 it needs (three "
         "pairs and two single SGPRs) are free at the point, dead or live and untouched by the "
         "probe");
  }
  PointSgprs sgprs{*call, {}};
  const auto borrow = [&](unsigned first, unsigned count) {
    for (unsigned s = first; s < first + count; ++s)
      if (in.live.sgpr[s]) sgprs.borrowed.push_back(s);
  };
  if (k.calls->scratch_per_point) borrow(call->scratch_resource, 4);
  borrow(call->exec_save, 2);
  borrow(call->vcc_save, 2);
  borrow(call->target, 2);
  borrow(call->m0_save, 1);
  borrow(call->spill_offset, 1);
  return sgprs;
}

std::size_t Engine::instruction_index(Cursor& at, const isa::Instruction& inst) {
  if (!at.analysed) {
    const auto& functions = program().functions;
    const auto found =
        std::find_if(functions.begin(), functions.end(),
                     [&](const analysis::Function& f) { return f.start == at.code.entry; });
    if (found == functions.end())
      fail(input_.name(),
           at.code.label() + ": the analysis found no function at " + hex(at.code.entry));
    at.analysed = static_cast<std::size_t>(found - functions.begin());
  }
  const analysis::Function& function = program().functions[*at.analysed];
  const std::optional<std::size_t> index = function.instruction_index(inst.address);
  if (!index)
    fail(input_.name(), at.code.label() + ": the analysis does not reach " + hex(inst.address));
  return *index;
}

isa::RegisterSet Engine::live_before(Cursor& at, const isa::Instruction& inst) {
  const std::size_t index = instruction_index(at, inst);
  return liveness().live_before(*at.analysed, index);
}

isa::RegisterSet Engine::live_after(Cursor& at, const isa::Instruction& inst) {
  const std::size_t index = instruction_index(at, inst);
  return liveness().live_after(*at.analysed, index);
}

// ---- Layout: the kernel's copy and its functions' copies in the new section's bytes ----

// Each instruction line's bytes depend on that line alone (the inserted code has no labels, and
// no gfx9 encoding depends on where an instruction lies), and LLVM's AMDGPU assembler costs
// about 15 µs a line, while a rewrite emits the same lines over and over (the envelope's saves,
// waits, the counter updates of the same block of every kernel): each distinct line is
// assembled once per thread and processor, the new ones of a kernel in one pass of LLVM's
// assembler.
std::vector<std::vector<std::uint8_t>> Engine::encode(const std::vector<std::string>& sources) {
  auto for_each_line = [](std::string_view text, const auto& use) {
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      if (!line.empty()) use(line);
      if (end == std::string_view::npos) break;
      text.remove_prefix(end + 1);
    }
  };
  LineBytes& lines = toolchain_.lines;
  std::vector<std::string> missing;
  for (const std::string& source : sources)
    for_each_line(source, [&](std::string_view line) {
      if (lines.find(line) == lines.end()) {
        lines.emplace(std::string(line), std::vector<std::uint8_t>());
        missing.emplace_back(line);
      }
    });
  if (!missing.empty()) {
    std::vector<std::vector<std::uint8_t>> assembled = toolchain_.assembler.assemble_each(missing);
    for (std::size_t i = 0; i < missing.size(); ++i)
      lines.find(missing[i])->second = std::move(assembled[i]);
  }
  std::vector<std::vector<std::uint8_t>> bytes(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i)
    for_each_line(sources[i], [&](std::string_view line) {
      const std::vector<std::uint8_t>& encoded = lines.find(line)->second;
      bytes[i].insert(bytes[i].end(), encoded.begin(), encoded.end());
    });
  return bytes;
}

// A SOPP branch's distance in words from the instruction after it, when it fits 16 bits.
std::optional<std::int16_t> short_distance(std::uint64_t new_pc, std::uint64_t target) {
  const std::int64_t delta =
      (static_cast<std::int64_t>(target) - static_cast<std::int64_t>(new_pc + 4)) / 4;
  if (delta < INT16_MIN || delta > INT16_MAX) return std::nullopt;
  return static_cast<std::int16_t>(delta);
}

void patch_short_branch(std::vector<std::uint8_t>& text, std::uint64_t new_pc,
                        std::int16_t distance) {
  const auto simm = static_cast<std::uint16_t>(distance);
  text[new_pc] = static_cast<std::uint8_t>(simm & 0xff);
  text[new_pc + 1] = static_cast<std::uint8_t>(simm >> 8);
}

// The condition that skips a long jump: a relaxed conditional branch jumps over its long jump
// when its own condition fails. nullopt for a branch that cannot be relaxed (the debugger
// conditions).
std::optional<std::string> inverse_branch(const std::string& mnemonic) {
  static const std::map<std::string, std::string, std::less<>> inverse = {
      {"s_cbranch_scc0", "s_cbranch_scc1"},    {"s_cbranch_scc1", "s_cbranch_scc0"},
      {"s_cbranch_vccz", "s_cbranch_vccnz"},   {"s_cbranch_vccnz", "s_cbranch_vccz"},
      {"s_cbranch_execz", "s_cbranch_execnz"}, {"s_cbranch_execnz", "s_cbranch_execz"}};
  const auto found = inverse.find(mnemonic);
  if (found == inverse.end()) return std::nullopt;
  return found->second;
}

// Branch relaxation: a relocated branch whose target has moved out of SOPP's 16-bit range (the
// instrumentation grew the code between them past 128 KiB) becomes a long jump, as LLVM's
// branch relaxation makes one (SIInstrInfo::insertIndirectBranch): s_getpc_b64 / s_add_u32 /
// s_addc_u32 / s_setpc_b64 through the reserved temporary pair, which is free at a branch
// (store snippets use it only inside their own sequence), with SCC kept in scc_save around the
// add. A conditional branch becomes its inverse over the long jump.
struct LongJump {
  std::vector<std::uint8_t> bytes;  // the inverse condition (if any), then the jump
  std::uint64_t literal = 0;        // offset in `bytes` of the s_add_u32's literal
};

// A branch in the relocated code: its piece, where it goes (the original target's address, or
// a stub chunk's) and the original branch, for messages.
struct BranchSite {
  std::size_t piece = 0;
  std::optional<std::uint64_t> target;  // the original target; or
  std::optional<std::size_t> stub;      // the stub chunk it goes to instead
  std::uint64_t address = 0;            // the original branch's
  std::string mnemonic;
  bool conditional() const { return mnemonic != "s_branch"; }
};

LaidOut Engine::lay_out(KernelRewrite& k, std::vector<std::uint8_t>& text) {
  const std::vector<std::vector<std::uint8_t>> assembled = encode(k.sources);
  LaidOut out;
  out.kernel_index = k.code.kernel_index;

  // The branches, in one list: each instruction chunk's branch (to its target or to its stub),
  // then each stub's branch back to the original target.
  std::vector<BranchSite> branches;
  for (const Chunk& chunk : k.chunks) {
    if (chunk.kind != Chunk::Kind::instruction || !chunk.original->branch_target) continue;
    const isa::Instruction& inst = *chunk.original;
    BranchSite site{chunk.first, {}, chunk.stub, inst.address, inst.mnemonic};
    if (!chunk.stub) site.target = *inst.branch_target;
    branches.push_back(std::move(site));
  }
  for (const StubFixup& fix : k.stubs)
    branches.push_back({fix.piece, fix.target, {}, fix.target, "s_branch"});

  // The long jumps of the branches relaxed so far, by piece; each pass lays the code out with
  // them, and a pass that finds another branch out of range relaxes it and lays out again.
  // Relaxing only lengthens code, so the passes end (at most one per branch).
  std::map<std::size_t, LongJump> long_jumps;
  const auto long_jump = [&](const BranchSite& site) {
    const std::string scc = sgpr_name(k.reserved.scc_save);
    const unsigned t = k.reserved.temporary;
    std::string source;
    if (site.conditional())  // jump over the 32 bytes below: 8 words
      source = *inverse_branch(site.mnemonic) + " 8\n";
    source += "s_cselect_b32 " + scc + ", 1, 0\ns_getpc_b64 " + pair_name(t) + "\ns_add_u32 " +
              sgpr_name(t) + ", " + sgpr_name(t) + ", 0x12345678\ns_addc_u32 " + sgpr_name(t + 1) +
              ", " + sgpr_name(t + 1) + ", 0x12345678\ns_cmp_lg_u32 " + scc + ", 0\ns_setpc_b64 " +
              pair_name(t) + "\n";
    LongJump jump{encode({source}).front(), 0};
    const std::size_t prefix = site.conditional() ? 4 : 0;
    if (jump.bytes.size() != prefix + 32)
      throw Error("internal: a long jump assembled to " + std::to_string(jump.bytes.size()) +
                  " bytes");
    jump.literal = prefix + 4 + 4 + 4;  // s_cselect, s_getpc, then s_add_u32's opcode
    return jump;
  };

  const std::size_t text_start = text.size();
  std::vector<std::uint64_t> piece_offset(k.pieces.size());
  std::vector<std::uint64_t> chunk_offset(k.chunks.size());
  std::map<std::uint64_t, std::uint64_t> function_start;  // original entry -> copy's offset
  // Original address -> new offset, ascending by address (the last one where an address was
  // copied twice), as a sorted vector: one entry per instruction, looked up only by branches.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> new_offset_of;
  std::uint64_t instructions = 0;
  const auto target_offset = [&](const BranchSite& site) -> std::optional<std::uint64_t> {
    if (site.stub) return chunk_offset[*site.stub];
    const auto after = std::upper_bound(
        new_offset_of.begin(), new_offset_of.end(), *site.target,
        [](std::uint64_t address, const auto& entry) { return address < entry.first; });
    if (after == new_offset_of.begin() || std::prev(after)->first != *site.target)
      return std::nullopt;
    return std::prev(after)->second;
  };
  for (;;) {
    text.resize(text_start);
    function_start.clear();
    new_offset_of.clear();
    instructions = 0;
    // Each code starts at its entry chunk (its stubs come before it): the kernel's first, at a
    // 256-byte aligned entry, then each function's.
    std::size_t entries = 0;
    for (std::size_t c = 0; c < k.chunks.size(); ++c) {
      const Chunk& chunk = k.chunks[c];
      if (chunk.kind == Chunk::Kind::prologue) {
        if (entries == 0) {
          while (text.size() % 256) {
            const std::uint8_t nop[4] = {0x00, 0x00, 0x80, 0xbf};  // s_nop 0
            text.insert(text.end(), nop, nop + 4);
          }
          out.start = text.size();
        } else {
          function_start[k.functions[entries - 1].entry] = text.size();
        }
        ++entries;
      }
      chunk_offset[c] = text.size();
      for (std::size_t p = chunk.first; p < chunk.end; ++p) {
        piece_offset[p] = text.size();
        const Piece& piece = k.pieces[p];
        const auto relaxed = long_jumps.find(p);
        const std::span<const std::uint8_t> bytes =
            relaxed != long_jumps.end() ? std::span<const std::uint8_t>(relaxed->second.bytes)
            : piece.original            ? piece.original->bytes()
                                        : std::span<const std::uint8_t>(assembled[piece.source]);
        text.insert(text.end(), bytes.begin(), bytes.end());
      }
      if (chunk.kind == Chunk::Kind::instruction) ++instructions;
    }

    // Original -> new, per instruction of this kernel and its functions' copies. A branch to a
    // block start lands on the code inserted before it, so that the block's points run however
    // control arrives. Entry chunks are skipped on purpose: a branch back to the first block
    // must not run the prologue (rewriting.md §6) or function_entry points again.
    std::optional<std::size_t> pending;
    for (std::size_t c = 0; c < k.chunks.size(); ++c) {
      const Chunk& chunk = k.chunks[c];
      if (chunk.kind == Chunk::Kind::prologue || chunk.kind == Chunk::Kind::stub) {
        pending.reset();
        continue;
      }
      if (chunk.kind == Chunk::Kind::code) {
        if (!pending) pending = c;
        continue;
      }
      new_offset_of.emplace_back(chunk.original->address, chunk_offset[pending ? *pending : c]);
      pending.reset();
    }
    // Offsets grow with the chunk index, so sorting the pairs whole keeps equal addresses in
    // chunk order, as a stable sort by address would (std::stable_sort trips a deprecation
    // warning inside libstdc++ 12 under clang 22).
    std::sort(new_offset_of.begin(), new_offset_of.end());

    bool relaxed_more = false;
    for (const BranchSite& site : branches) {
      const std::optional<std::uint64_t> to = target_offset(site);
      if (!to || long_jumps.contains(site.piece) || short_distance(piece_offset[site.piece], *to))
        continue;
      if (site.conditional() && !inverse_branch(site.mnemonic)) {
        if (!out.error)
          out.error = "kernel '" + k.instrumented.name + "': relocated " + site.mnemonic + " at " +
                      hex(site.address) + " is out of the 16-bit range";
        continue;
      }
      long_jumps.emplace(site.piece, long_jump(site));
      relaxed_more = true;
    }
    if (!relaxed_more) break;
  }
  result_.instructions_relocated += instructions;
  result_.branches_relaxed += long_jumps.size();

  // Branches (their distance does not depend on where the section lands), the s_getpc_b64
  // corrections and the address map.
  for (const BranchSite& site : branches) {
    const std::optional<std::uint64_t> to = target_offset(site);
    if (!to) {
      if (!out.error)
        out.error = "kernel '" + k.instrumented.name + "': branch at " + hex(site.address) +
                    " targets " + hex(*site.target) + ", outside the relocated code";
      continue;
    }
    const std::uint64_t at = piece_offset[site.piece];
    if (const auto relaxed = long_jumps.find(site.piece); relaxed != long_jumps.end()) {
      // s_getpc_b64 gives the address of the s_add_u32 after it, 4 bytes before the literal.
      const std::uint64_t literal = at + relaxed->second.literal;
      const std::uint64_t distance = *to - (literal - 4);
      for (unsigned half = 0; half < 2; ++half) {
        const auto word = static_cast<std::uint32_t>(distance >> (32 * half));
        std::memcpy(text.data() + literal + 8 * half, &word, 4);
      }
    } else if (const auto distance = short_distance(at, *to)) {
      patch_short_branch(text, at, *distance);
    }
  }
  for (std::size_t c = 0; c < k.chunks.size(); ++c) {
    const Chunk& chunk = k.chunks[c];
    if (chunk.kind != Chunk::Kind::instruction) continue;
    const isa::Instruction& inst = *chunk.original;
    const std::uint64_t new_pc = chunk_offset[c];
    if (chunk.getpc)
      // s_getpc_b64 gives the address of the next instruction: original vs. relocated.
      // Layout after the 4-byte s_getpc: s_cselect (4), s_add_u32 (4 + literal),
      // s_addc_u32 (4 + literal), s_cmp (4).
      out.minus_base.push_back(
          {new_pc + inst.size + 4 + 4, inst.address + inst.size - (new_pc + inst.size)});
    result_.note.address_map.push_back({new_pc, inst.address, inst.size});
  }
  // s_getpc_b64 (4 bytes) gives the address after itself; the s_add_u32 and s_addc_u32
  // literals follow their 4-byte opcodes.
  for (const GotFixup& fix : k.got) out.got.push_back({piece_offset[fix.piece] + 4 + 4, fix.slot});
  for (const CallFixup& fix : k.retargeted)
    // s_cselect (4), then s_add_u32 and s_addc_u32 with their literals after 4 bytes.
    out.plus_base.push_back(
        {piece_offset[fix.piece] + 4 + 4, function_start.at(fix.callee) - fix.callee});
  for (const TranslationFixup& fix : k.translations) {
    // s_getpc_b64 (4) gives the address after itself; then two s_add_u32 / s_addc_u32 pairs,
    // each instruction 4 bytes of opcode and a 4-byte literal.
    const std::uint64_t pc = piece_offset[fix.piece] + 4;
    out.minus_base.push_back({piece_offset[fix.piece] + 4 + 4, fix.callee - pc});
    out.plus_base.push_back(
        {piece_offset[fix.piece] + 4 + 16 + 4, function_start.at(fix.callee) - fix.callee});
  }
  return out;
}

// ---- Linking: the section placed, and what depends on its address ----

void Engine::link(codeobj::CodeObject& output, std::vector<std::uint8_t> text,
                  const std::vector<LaidOut>& kernels) {
  // The GOT: one 8-byte slot per probe, after the code, filled by the loader through an
  // R_AMDGPU_ABS64 relocation against the probe's alias (rewriting.md §4).
  while (text.size() % 8) text.push_back(0);
  const std::uint64_t got_offset = text.size();
  text.resize(text.size() + 8 * slots_.size(), 0);

  codeobj::NewSection section;
  section.name = ".wavekit.text";
  section.flags = ELF::SHF_ALLOC | ELF::SHF_EXECINSTR;
  section.alignment = 256;
  section.data = text;
  const std::size_t section_index = output.add_loaded_section(std::move(section));
  const std::uint64_t base = output.sections()[section_index].address;

  auto patch64 = [&](std::size_t at, std::uint64_t value) {
    const std::uint32_t lo = static_cast<std::uint32_t>(value);
    const std::uint32_t hi = static_cast<std::uint32_t>(value >> 32);
    std::memcpy(&text[at], &lo, 4);
    std::memcpy(&text[at + 8], &hi, 4);
  };
  for (const LaidOut& kernel : kernels) {
    if (kernel.error) fail(input_.name(), *kernel.error);
    for (const LaidOut::Literals& fix : kernel.got)
      patch64(fix.at, got_offset + 8 * fix.value - (fix.at - 4));
    for (const LaidOut::Literals& fix : kernel.plus_base) patch64(fix.at, fix.value + base);
    for (const LaidOut::Literals& fix : kernel.minus_base) patch64(fix.at, fix.value - base);
    codeobj::KernelDescriptor kd = output.kernels()[kernel.kernel_index].descriptor;
    kd.kernel_code_entry_byte_offset =
        static_cast<std::int64_t>(base + kernel.start) -
        static_cast<std::int64_t>(output.kernels()[kernel.kernel_index].descriptor_address);
    output.set_descriptor(kernel.kernel_index, kd);
  }
  // The address map in the section's addresses, adjacent runs merged.
  std::vector<AddressRange> merged;
  for (AddressRange range : result_.note.address_map) {
    range.new_address += base;
    if (!merged.empty() && merged.back().new_address + merged.back().size == range.new_address &&
        merged.back().original_address + merged.back().size == range.original_address)
      merged.back().size += range.size;
    else
      merged.push_back(range);
  }
  result_.note.address_map = std::move(merged);
  output.replace_section_data(section_index, std::move(text));
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    codeobj::Symbol alias;
    alias.name = kProbeAliasPrefix + slots_[slot];
    alias.type = ELF::STT_NOTYPE;
    alias.binding = ELF::STB_GLOBAL;
    const std::uint32_t index = output.add_dynamic_symbol(alias);
    output.add_dynamic_relocation(base + got_offset + 8 * slot, ELF::R_AMDGPU_ABS64, index, 0);
  }
}

// ---- The WAVEKIT note, in a section of its own ----

std::vector<std::uint8_t> Engine::emit_note(const codeobj::CodeObject& output) {
  codeobj::Note note;
  note.name = kNoteName;
  note.type = kNoteTypeRewrite;
  note.desc = encode_note(result_.note);
  // Added to the object as written so far, a second generation of its layout: every rewrite
  // wavekit has made (and cached) puts the note after the sections the rewrite moved, and the
  // bytes must stay those.
  codeobj::CodeObject with_note = codeobj::CodeObject::parse(output.write(), input_.name());
  with_note.add_note(kNoteSectionName, std::move(note));
  return with_note.write();
}

}  // namespace

RewriteResult rewrite(const codeobj::CodeObject& object, const Plan& plan) {
  return Engine(object, plan, NegativeControls{}).run();
}

RewriteResult rewrite(const codeobj::CodeObject& object, const Plan& plan,
                      const NegativeControls& controls) {
  return Engine(object, plan, controls).run();
}

namespace {

std::vector<BlockView> block_views(const KernelCode& code) {
  std::vector<BlockView> blocks;
  for (std::size_t b = 0; b < code.leaders.size(); ++b) {
    BlockView block;
    block.index = b;
    block.start = code.leaders[b];
    const std::uint64_t next = b + 1 < code.leaders.size() ? code.leaders[b + 1] : UINT64_MAX;
    for (std::size_t i = 0; i < code.instructions.size(); ++i) {
      const isa::Instruction& inst = code.instructions[i];
      if (inst.address < block.start || inst.address >= next || !code.reachable[i]) continue;
      InstructionView iv;
      iv.address = inst.address;
      iv.size = inst.size;
      iv.text = inst.text;
      iv.mnemonic = inst.mnemonic;
      iv.is_branch = inst.flow == isa::ControlFlow::branch ||
                     inst.flow == isa::ControlFlow::conditional_branch;
      iv.is_call = inst.flow == isa::ControlFlow::call;
      iv.is_return = inst.is_return();
      iv.is_tail_call = code.tail_calls.count(inst.address) > 0;
      iv.is_end = inst.flow == isa::ControlFlow::end_program;
      iv.memory = memory_kind_of(inst.memory);
      iv.stores = inst.access == isa::MemoryAccess::store;
      iv.writes = inst.writes;
      block.end = inst.address + inst.size;
      block.instructions.push_back(std::move(iv));
    }
    blocks.push_back(std::move(block));
  }
  return blocks;
}

}  // namespace

std::vector<KernelView> analyse_kernels(const codeobj::CodeObject& object) {
  CodeReader reader(object);
  const analysis::Program program = analysis::analyze(analysis::make_input(object));
  std::vector<KernelView> views;
  for (std::size_t i = 0; i < object.kernels().size(); ++i) {
    KernelView view;
    view.name = object.kernels()[i].name;
    view.descriptor_symbol = object.kernels()[i].descriptor_symbol;
    view.entry = object.kernels()[i].entry_address;
    view.blocks = block_views(decode_kernel(reader, i));
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
  CodeReader reader(object);
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
    code.tail_calls = tail_calls_of(&function);
    try {
      view.blocks = block_views(decode_code(reader, std::move(code)));
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
