// analysis against independent constructions: blocks and edges rebuilt from llvm-objdump-22's
// text, the stripped object against its unstripped original, and hand-assembled programs whose
// dominators, loops and liveness are worked out by hand.
#include "wavekit/analysis/analysis.h"

#include <gtest/gtest.h>

#include <set>

#include "../isa/corpus_elf.h"
#include "program_input.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/isa/isa.h"

namespace wavekit::isa {
void PrintTo(const RegisterSet& set, std::ostream* out) { *out << "{" << set.to_string() << "}"; }
}  // namespace wavekit::isa

namespace {

using wavekit::analysis::Function;
using wavekit::analysis::Liveness;
using wavekit::analysis::Program;
using wavekit::isa::RegisterSet;

struct ExpectedBlock {
  std::uint64_t end = 0;
  std::set<std::uint64_t> successors;
  bool operator==(const ExpectedBlock&) const = default;
};

// Blocks of the function at `entry` rebuilt from objdump's text alone: leaders are the entry,
// the printed targets of branches, and the instruction after s_branch, s_cbranch_*, s_setpc_b64,
// s_swappc_b64, s_endpgm and s_trap; blocks reachable from the entry only.
std::map<std::uint64_t, ExpectedBlock> blocks_from_objdump(
    const std::map<std::uint64_t, wavekit::testing::ObjdumpInstruction>& listing,
    std::uint64_t entry, std::uint64_t end) {
  auto mnemonic = [](const std::string& text) { return text.substr(0, text.find(' ')); };
  auto target_of = [&](std::uint64_t address,
                       const std::string& text) -> std::optional<std::uint64_t> {
    std::string m = mnemonic(text);
    if (m != "s_branch" && m.rfind("s_cbranch_", 0) != 0) return std::nullopt;
    auto simm16 = static_cast<std::int16_t>(std::stoi(text.substr(text.find(' ') + 1)));
    return address + 4 + 4 * static_cast<std::int64_t>(simm16);
  };
  std::map<std::uint64_t, ExpectedBlock> blocks;
  std::vector<std::uint64_t> work{entry};
  std::set<std::uint64_t> leaders{entry};
  // First pass: all leaders reachable from the entry.
  std::set<std::uint64_t> visited;
  while (!work.empty()) {
    std::uint64_t address = work.back();
    work.pop_back();
    while (address < end && listing.count(address) && visited.insert(address).second) {
      const auto& inst = listing.at(address);
      std::string m = mnemonic(inst.text);
      std::uint64_t next = address + inst.size;
      if (auto target = target_of(address, inst.text)) {
        if (leaders.insert(*target).second) work.push_back(*target);
      }
      bool stops = m == "s_branch" || m == "s_setpc_b64" || m.rfind("s_endpgm", 0) == 0;
      bool ends = stops || m.rfind("s_cbranch_", 0) == 0 || m == "s_swappc_b64" || m == "s_trap";
      if (ends) {
        if (!stops && leaders.insert(next).second) work.push_back(next);
        break;
      }
      address = next;
    }
  }
  // Second pass: each leader's block runs to the next leader or a block-ending instruction.
  for (std::uint64_t leader : leaders) {
    if (!listing.count(leader) || leader >= end) continue;
    ExpectedBlock block;
    std::uint64_t address = leader;
    while (true) {
      const auto& inst = listing.at(address);
      std::string m = mnemonic(inst.text);
      std::uint64_t next = address + inst.size;
      block.end = next;
      if (auto target = target_of(address, inst.text)) block.successors.insert(*target);
      bool stops = m == "s_branch" || m == "s_setpc_b64" || m.rfind("s_endpgm", 0) == 0;
      bool ends = stops || m.rfind("s_cbranch_", 0) == 0 || m == "s_swappc_b64" || m == "s_trap";
      if (ends || leaders.count(next) || next >= end) {
        if (!stops && leaders.count(next)) block.successors.insert(next);
        break;
      }
      address = next;
    }
    blocks[leader] = block;
  }
  return blocks;
}

std::map<std::uint64_t, ExpectedBlock> blocks_of(const Function& function) {
  std::map<std::uint64_t, ExpectedBlock> blocks;
  for (const auto& block : function.blocks) {
    ExpectedBlock expected{block.end, {}};
    for (std::size_t s : block.successors) expected.successors.insert(function.blocks[s].start);
    for (std::uint64_t s : block.external_successors) expected.successors.insert(s);
    blocks[block.start] = expected;
  }
  return blocks;
}

Program analyze_object(const wavekit::corpus::CorpusObject& object) {
  auto loaded = wavekit::testing::load_program_input(object.path, object.targets.front());
  return wavekit::analysis::analyze(loaded.input);
}

TEST(Analysis, BlocksAndEdgesMatchObjdumpForEveryCorpusObject) {
  std::size_t functions = 0, blocks = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    SCOPED_TRACE(object.name);
    Program program = analyze_object(object);
    auto listing = wavekit::testing::objdump_instructions(object.path);
    for (const Function& function : program.functions) {
      SCOPED_TRACE(function.name);
      EXPECT_TRUE(function.decode_errors.empty());
      auto expected = blocks_from_objdump(listing, function.start,
                                          function.end > function.start ? function.end : ~0ull);
      EXPECT_EQ(blocks_of(function), expected);
      // block_containing agrees with the block list for every instruction.
      for (const auto& inst : function.instructions) {
        const auto* block = function.block_containing(inst.address);
        ASSERT_NE(block, nullptr);
        EXPECT_LE(block->start, inst.address);
        EXPECT_LT(inst.address, block->end);
      }
      ++functions;
      blocks += function.blocks.size();
    }
    // Every kernel of the manifest is a kernel function of the program.
    for (const auto& kernel : object.kernels) {
      const Function* function = program.find_function(kernel);
      ASSERT_NE(function, nullptr) << kernel;
      EXPECT_EQ(function->kind, Function::Kind::kernel);
    }
  }
  EXPECT_GT(functions, 80u);
  EXPECT_GT(blocks, functions * 2);
}

const wavekit::corpus::CorpusObject& corpus_object(const std::string& name) {
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.name == name) return object;
  }
  throw std::runtime_error("no corpus object " + name);
}

std::set<std::string> callee_names(const Program& program, const std::string& caller,
                                   bool all_resolved) {
  std::set<std::string> names;
  const Function* function = program.find_function(caller);
  EXPECT_NE(function, nullptr) << caller;
  if (!function) return names;
  for (const auto& call : function->calls) {
    if (call.resolution == wavekit::analysis::CallSite::Resolution::unresolved) {
      EXPECT_FALSE(all_resolved) << caller << " call at " << call.address;
      continue;
    }
    EXPECT_EQ(call.resolution, wavekit::analysis::CallSite::Resolution::pc_relative);
    names.insert(call.target_name);
  }
  return names;
}

TEST(Analysis, CallGraphOfTheCallsKernels) {
  for (const char* name : {"calls_gfx908_O2_cov5", "calls_gfx90a_O2_cov5", "calls_gfx942_O2_cov5",
                           "calls_gfx908_O2_cov4"}) {
    SCOPED_TRACE(name);
    Program program = analyze_object(corpus_object(name));
    EXPECT_EQ(callee_names(program, "call_chain", true),
              (std::set<std::string>{"_Z10polynomialii", "_Z3mixii"}));
    EXPECT_EQ(callee_names(program, "recursive_fib", true),
              (std::set<std::string>{"_Z9fibonaccii"}));
    EXPECT_EQ(callee_names(program, "_Z9fibonaccii", true),
              (std::set<std::string>{"_Z9fibonaccii"}));
  }
  // At -O0 the id helper is a call too, and a callee address reloaded from a spill
  // (v_readlane after an earlier call) is beyond the s_getpc_b64 pattern: unresolved.
  Program o0 = analyze_object(corpus_object("calls_gfx90a_O0_cov5"));
  EXPECT_EQ(callee_names(o0, "call_chain", false),
            (std::set<std::string>{"_Z10polynomialii", "_Z3mixii", "_Z14wk_global_id_xv"}));
  EXPECT_EQ(callee_names(o0, "_Z9fibonaccii", false), (std::set<std::string>{"_Z9fibonaccii"}));
}

TEST(Analysis, StrippedObjectFindsTheSameFunctionsFromEntriesAndCalls) {
  Program stripped = analyze_object(corpus_object("calls_gfx90a_O2_cov5_stripped"));
  Program original = analyze_object(corpus_object("calls_gfx90a_O2_cov5"));
  ASSERT_EQ(stripped.functions.size(), original.functions.size());
  for (std::size_t f = 0; f < original.functions.size(); ++f) {
    const Function& a = original.functions[f];
    const Function& b = stripped.functions[f];
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.block_starts(), b.block_starts()) << a.name;
    if (a.kind == Function::Kind::device) {
      EXPECT_EQ(b.name.rfind("function_0x", 0), 0u) << b.name;  // no symbol to name it
    } else {
      EXPECT_EQ(a.name, b.name);
    }
  }
  EXPECT_EQ(stripped.callees, original.callees);
}

TEST(Analysis, LoopsInTheCorpus) {
  Program program = analyze_object(corpus_object("basic_gfx90a_O2_cov5"));
  const Function* collatz = program.find_function("collatz_steps");
  ASSERT_NE(collatz, nullptr);
  ASSERT_FALSE(collatz->loops.empty());
  for (const auto& loop : collatz->loops) {
    for (std::size_t block : loop.blocks) EXPECT_TRUE(collatz->dominates(loop.header, block));
    for (std::size_t latch : loop.latches) {
      const auto& successors = collatz->blocks[latch].successors;
      EXPECT_NE(std::find(successors.begin(), successors.end(), loop.header), successors.end());
    }
  }
  // Straight-line kernels have none.
  EXPECT_TRUE(program.find_function("vector_add")->loops.empty());
}

TEST(Analysis, KernelEntryLivenessIsWithinTheLaunchState) {
  // Only hardware-initialised SGPRs can be live at the entry of a kernel that makes no calls:
  // user and system SGPRs (at most 16 with the corpus's settings), EXEC, FLAT_SCRATCH -- and
  // M0: LLVM's MC descriptions of the DS encodings shared with gfx8 list M0 as an implicit use,
  // which keeps it (harmlessly) live up to the entry. (VGPRs are not checked: compiled code
  // reads undefined halves of register pairs, which liveness rightly reports. Kernels with
  // calls are not checked: callees save callee-saved registers, a read.)
  std::size_t checked = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    SCOPED_TRACE(object.name);
    Program program = analyze_object(object);
    Liveness liveness(program, {.vector_writes_kill = true});
    for (std::size_t f = 0; f < program.functions.size(); ++f) {
      const Function& function = program.functions[f];
      if (function.kind != Function::Kind::kernel || !function.calls.empty()) continue;
      RegisterSet allowed;
      for (unsigned s = 0; s < 16; ++s) allowed.sgpr.set(s);
      for (unsigned id : {wavekit::isa::sgpr_id::exec_lo, wavekit::isa::sgpr_id::exec_hi,
                          wavekit::isa::sgpr_id::m0, wavekit::isa::sgpr_id::flat_scratch_lo,
                          wavekit::isa::sgpr_id::flat_scratch_hi}) {
        allowed.sgpr.set(id);
      }
      allowed.vgpr.set();
      allowed.agpr.set();
      EXPECT_TRUE(allowed.contains(liveness.entry_live(f)))
          << function.name << ": " << liveness.entry_live(f).to_string();
      ++checked;
    }
  }
  EXPECT_GT(checked, 50u);
}

// Hand-assembled programs at address 0x1000.
struct Assembled {
  std::vector<std::uint8_t> bytes;
  Program program;
};

Assembled assemble(const std::string& source,
                   std::vector<wavekit::analysis::ProgramInput::KernelEntry> kernels,
                   std::vector<wavekit::analysis::ProgramInput::FunctionSymbol> functions = {}) {
  Assembled out;
  out.bytes = wavekit::isa::Assembler("gfx90a").assemble(source);
  wavekit::analysis::ProgramInput input;
  input.processor = "gfx90a";
  input.code.push_back({0x1000, out.bytes});
  input.kernels = std::move(kernels);
  input.functions = std::move(functions);
  out.program = wavekit::analysis::analyze(input);
  return out;
}

RegisterSet set_of(std::initializer_list<unsigned> sgprs, std::initializer_list<unsigned> vgprs,
                   bool scc = false, bool exec = false) {
  RegisterSet set;
  for (unsigned s : sgprs) set.sgpr.set(s);
  for (unsigned v : vgprs) set.vgpr.set(v);
  set.scc = scc;
  if (exec) {
    set.sgpr.set(wavekit::isa::sgpr_id::exec_lo);
    set.sgpr.set(wavekit::isa::sgpr_id::exec_hi);
  }
  return set;
}

TEST(Analysis, LivenessOfAHandWorkedKernel) {
  // Instruction                          live before (writes kill; worked by hand)
  //   s_mov_b32 s0, 1                    s1 v[2:5] exec
  //   s_cmp_eq_u32 s0, s1                s0 s1 v[2:5] exec
  //   s_cbranch_scc1 skip                v[2:5] exec scc
  //   v_add_u32_e32 v1, v1, v2  (*)      v[1:2] v[4:5] exec   (* v1 read before any write)
  // skip:
  //   global_store_dword v[4:5], v1, off v1 v[4:5] exec
  //   s_endpgm                           {}
  auto code = assemble(
      "s_mov_b32 s0, 1\n"
      "s_cmp_eq_u32 s0, s1\n"
      "s_cbranch_scc1 skip\n"
      "v_add_u32_e32 v1, v1, v2\n"
      "skip:\n"
      "global_store_dword v[4:5], v1, off\n"
      "s_endpgm\n",
      {{"k", 0x1000}});
  ASSERT_EQ(code.program.functions.size(), 1u);
  const Function& k = code.program.functions[0];
  ASSERT_EQ(k.blocks.size(), 3u);
  EXPECT_EQ(k.block_starts(), (std::vector<std::uint64_t>{0x1000, 0x100c, 0x1010}));
  EXPECT_EQ(k.blocks[0].successors, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(k.immediate_dominator, (std::vector<std::size_t>{0, 0, 0}));
  Liveness kill(code.program, {.vector_writes_kill = true});
  EXPECT_EQ(kill.live_before(0, 0), set_of({1}, {1, 2, 4, 5}, false, true));
  EXPECT_EQ(kill.live_before(0, 1), set_of({0, 1}, {1, 2, 4, 5}, false, true));
  EXPECT_EQ(kill.live_before(0, 2), set_of({}, {1, 2, 4, 5}, true, true));
  EXPECT_EQ(kill.live_before(0, 3), set_of({}, {1, 2, 4, 5}, false, true));
  EXPECT_EQ(kill.live_before(0, 4), set_of({}, {1, 4, 5}, false, true));
  EXPECT_EQ(kill.live_before(0, 5), RegisterSet{});
  EXPECT_EQ(kill.live_after(0, 4), RegisterSet{});
}

TEST(Analysis, MaskedVectorWritesDoNotEndLivenessByDefault) {
  // v1 is written under EXEC between its definition and its use: lanes outside EXEC keep the
  // first value, so by default v1 stays live across the second write.
  auto code = assemble(
      "v_mov_b32_e32 v1, 0\n"
      "s_mov_b64 exec, s[2:3]\n"
      "v_mov_b32_e32 v1, 1\n"
      "s_mov_b64 exec, -1\n"
      "global_store_dword v[4:5], v1, off\n"
      "s_endpgm\n",
      {{"k", 0x1000}});
  Liveness safe(code.program);
  EXPECT_TRUE(safe.live_before(0, 2).vgpr[1]);
  Liveness kill(code.program, {.vector_writes_kill = true});
  EXPECT_FALSE(kill.live_before(0, 2).vgpr[1]);
}

TEST(Analysis, NestedLoopsAndDominators) {
  // b0: entry; b1: outer header; b2: inner header/latch; b3: outer latch; b4: exit.
  auto code = assemble(
      "s_mov_b32 s0, 0\n"
      "outer:\n"
      "s_mov_b32 s1, 0\n"
      "inner:\n"
      "s_add_u32 s1, s1, 1\n"
      "s_cmp_lt_u32 s1, 4\n"
      "s_cbranch_scc1 inner\n"
      "s_add_u32 s0, s0, 1\n"
      "s_cmp_lt_u32 s0, 3\n"
      "s_cbranch_scc1 outer\n"
      "s_endpgm\n",
      {{"k", 0x1000}});
  const Function& k = code.program.functions[0];
  ASSERT_EQ(k.blocks.size(), 5u);
  EXPECT_EQ(k.immediate_dominator, (std::vector<std::size_t>{0, 0, 1, 2, 3}));
  ASSERT_EQ(k.loops.size(), 2u);
  const auto& outer = k.loops[0].header == 1 ? k.loops[0] : k.loops[1];
  const auto& inner = k.loops[0].header == 2 ? k.loops[0] : k.loops[1];
  EXPECT_EQ(outer.blocks, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(inner.blocks, (std::vector<std::size_t>{2}));
  EXPECT_EQ(inner.latches, (std::vector<std::size_t>{2}));
  EXPECT_EQ(outer.latches, (std::vector<std::size_t>{3}));
  EXPECT_FALSE(outer.parent.has_value());
  ASSERT_TRUE(inner.parent.has_value());
  EXPECT_EQ(k.loops[*inner.parent].header, 1u);
}

TEST(Analysis, CallsResolveAndLivenessCrossesThem) {
  // The kernel calls `callee` (known only through the call: no symbol), which reads v0 and v1
  // and returns through s[30:31]; after the call the kernel stores v0 through v[2:3].
  auto code = assemble(
      "s_getpc_b64 s[4:5]\n"
      "s_add_u32 s4, s4, 24\n"  // s_getpc_b64 gives 0x1004; the callee is at 0x101c
      "s_addc_u32 s5, s5, 0\n"
      "s_swappc_b64 s[30:31], s[4:5]\n"
      "global_store_dword v[2:3], v0, off\n"
      "s_endpgm\n"
      "v_add_u32_e32 v0, v0, v1\n"
      "s_setpc_b64 s[30:31]\n",
      {{"k", 0x1000}});
  const Program& program = code.program;
  ASSERT_EQ(program.functions.size(), 2u);
  const Function& callee = program.functions[1];
  EXPECT_EQ(callee.start, 0x101cu);
  EXPECT_EQ(callee.name, "function_0x101c");
  ASSERT_EQ(program.functions[0].calls.size(), 1u);
  EXPECT_EQ(program.functions[0].calls[0].target, 0x101cu);
  EXPECT_EQ(program.callees, (std::vector<std::vector<std::size_t>>{{1}, {}}));
  // The call ends its block; the return point starts one.
  EXPECT_EQ(program.functions[0].block_starts(), (std::vector<std::uint64_t>{0x1000, 0x1010}));

  Liveness liveness(program, {.vector_writes_kill = true});
  // Callee entry: v0, v1 (read), s[30:31] (return), and v[2:3] exec (live in the caller after
  // the call, passed through).
  EXPECT_EQ(liveness.entry_live(1), set_of({30, 31}, {0, 1, 2, 3}, false, true));
  // Before the call: the callee's inputs and the target, but not s[30:31], which the call
  // itself writes.
  EXPECT_EQ(liveness.live_before(0, 3), set_of({4, 5}, {0, 1, 2, 3}, false, true));
  EXPECT_EQ(liveness.live_before(0, 0), set_of({}, {0, 1, 2, 3}, false, true));
}

TEST(Analysis, TailCallsAreCallsAndLivenessFlowsThroughThem) {
  // The kernel calls f; f ends in a sibling call to g (s_setpc_b64 to g's entry, as clang -O2
  // emits `return g(...)`); g returns to the kernel. After the call the kernel stores v0.
  auto code = assemble(
      "s_getpc_b64 s[4:5]\n"
      "s_add_u32 s4, s4, 24\n"  // f at 0x101c
      "s_addc_u32 s5, s5, 0\n"
      "s_swappc_b64 s[30:31], s[4:5]\n"
      "global_store_dword v[2:3], v0, off\n"
      "s_endpgm\n"
      "v_mov_b32_e32 v1, v0\n"  // f
      "s_getpc_b64 s[4:5]\n"
      "s_add_u32 s4, s4, 12\n"  // s_getpc_b64 gives 0x1024; g is at 0x1030
      "s_addc_u32 s5, s5, 0\n"
      "s_setpc_b64 s[4:5]\n"
      "v_add_u32_e32 v0, 1, v1\n"  // g
      "s_setpc_b64 s[30:31]\n",
      {{"k", 0x1000}});
  const Program& program = code.program;
  ASSERT_EQ(program.functions.size(), 3u);
  const Function& f = program.functions[1];
  EXPECT_EQ(program.functions[2].start, 0x1030u);
  ASSERT_EQ(f.calls.size(), 1u);
  EXPECT_TRUE(f.calls[0].tail);
  EXPECT_FALSE(program.functions[0].calls[0].tail);
  EXPECT_EQ(f.calls[0].address, 0x102cu);
  EXPECT_EQ(f.calls[0].target, 0x1030u);
  EXPECT_EQ(program.callees, (std::vector<std::vector<std::size_t>>{{1}, {2}, {}}));

  Liveness liveness(program, {.vector_writes_kill = true});
  // g returns to the kernel: what the kernel keeps live after its call to f (v[2:3], exec)
  // passes through g; v0 is g's result.
  EXPECT_EQ(liveness.entry_live(2), set_of({30, 31}, {1, 2, 3}, false, true));
  // Before the tail call: g's entry and the target pair, nothing more (not "everything").
  EXPECT_EQ(liveness.live_before(1, 4), set_of({4, 5, 30, 31}, {1, 2, 3}, false, true));
  EXPECT_EQ(liveness.entry_live(1), set_of({30, 31}, {0, 2, 3}, false, true));
  // A computed s_setpc_b64 that is neither a return nor resolved stays no call.
  auto computed = assemble(
      "s_getpc_b64 s[4:5]\n"
      "s_add_u32 s4, s4, 24\n"
      "s_addc_u32 s5, s5, 0\n"
      "s_swappc_b64 s[30:31], s[4:5]\n"
      "global_store_dword v[2:3], v0, off\n"
      "s_endpgm\n"
      "s_setpc_b64 s[6:7]\n",
      {{"k", 0x1000}});
  ASSERT_EQ(computed.program.functions.size(), 2u);
  EXPECT_TRUE(computed.program.functions[1].calls.empty());
}

TEST(Analysis, BadCodeIsReportedNotFatal) {
  // A branch into the middle of an 8-byte instruction and an undecodable word after it.
  std::vector<std::uint8_t> bytes = wavekit::isa::Assembler("gfx90a").assemble(
      "s_cbranch_scc1 1\n"  // -> 0x1008: the literal of the next instruction
      "s_mov_b32 s0, 0x12345678\n"
      "s_endpgm\n");
  for (std::uint8_t b : {0xff, 0xff, 0xff, 0xff}) bytes.push_back(b);
  wavekit::analysis::ProgramInput input;
  input.processor = "gfx90a";
  input.code.push_back({0x1000, bytes});
  input.kernels.push_back({"k", 0x1000});
  input.kernels.push_back({"bad", 0x1000 + bytes.size() - 4});
  Program program = wavekit::analysis::analyze(input);
  ASSERT_EQ(program.functions.size(), 2u);
  ASSERT_FALSE(program.functions[0].decode_errors.empty());
  EXPECT_NE(program.functions[0].decode_errors[0].message.find("0x1008"), std::string::npos)
      << program.functions[0].decode_errors[0].message;
  ASSERT_FALSE(program.functions[1].decode_errors.empty());
  EXPECT_TRUE(program.functions[1].blocks.empty());
  Liveness liveness(program);  // must not crash on a function without blocks
  EXPECT_TRUE(liveness.entry_live(1).empty());
  input.kernels.push_back({"outside", 0x9000});
  EXPECT_THROW(wavekit::analysis::analyze(input), std::runtime_error);
}

TEST(Analysis, CorruptedCodeNeverCrashes) {
  // Every corpus object's code with 1 byte in 50 overwritten (deterministically): branches
  // into nowhere, undecodable words, calls to garbage. Analysis and liveness must finish and
  // report what they could not decode; only the outcome's consistency is checked.
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::size_t errors = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    SCOPED_TRACE(object.name);
    auto loaded = wavekit::testing::load_program_input(object.path, object.targets.front());
    std::vector<std::uint8_t> code(loaded.input.code.front().bytes.begin(),
                                   loaded.input.code.front().bytes.end());
    for (std::size_t i = 0; i < code.size() / 50; ++i) {
      code[next() % code.size()] = static_cast<std::uint8_t>(next());
    }
    loaded.input.code.front().bytes = code;
    Program program = wavekit::analysis::analyze(loaded.input);
    Liveness liveness(program);
    for (const Function& function : program.functions) {
      errors += function.decode_errors.size();
      for (const auto& block : function.blocks) {
        EXPECT_GT(block.instruction_count, 0u);
        EXPECT_LT(block.start, block.end);
      }
    }
  }
  EXPECT_GT(errors, 0u);  // the corruption was seen
}

}  // namespace
