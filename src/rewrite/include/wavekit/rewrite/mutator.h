// The mutator API: open a code object, look at its kernels, blocks and instructions, say what
// to insert where, write the instrumented object. A block counter is a page of code:
//
//   auto mutator = Mutator::open(wavekit::read_file("k.co"), "k.co");
//   PerWaveVariable counts;  counts.name = "block_counts";  counts.element_size = 8;
//   mutator.declare(counts);
//   Snippet count;  count.variable = "block_counts";  count.indexed_by_block = true;
//   PointSpec point;  point.where = PointKind::block_entry;  point.snippet = count;
//   mutator.at(point);
//   wavekit::write_file("k.bbcount.co", mutator.write().bytes);
//
// A variable that a block-indexed snippet uses gets one element per basic block of each
// kernel, keyed by the blocks' original addresses (its declared count is replaced).
//
// Everything a point can name is an ORIGINAL address: the rewritten object keeps the original
// code where it was and runs a relocated copy, and its WAVEKIT note maps the copy back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavekit/isa/isa.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"
#include "wavekit/rewrite/tools.h"

namespace wavekit::codeobj {
class CodeObject;
}

namespace wavekit::rewrite {

struct InstructionView {
  std::uint64_t address = 0;  // original virtual address
  std::uint32_t size = 0;
  std::string text;                  // LLVM's disassembly
  std::string mnemonic;              // "s_cbranch_execz"
  bool is_branch = false;            // direct SOPP branch (conditional or not)
  bool is_call = false;              // s_swappc_b64
  bool is_return = false;            // s_setpc_b64 s[30:31] (the compiler's return)
  bool is_tail_call = false;         // s_setpc_b64 to another function's entry
  bool is_end = false;               // s_endpgm
  std::optional<MemoryKind> memory;  // for memory instructions
  bool stores = false;               // a memory store (no atomic)
  isa::RegisterSet writes;           // every register it defines, explicitly or implicitly
};

struct BlockView {
  std::size_t index = 0;    // in the kernel: the bbcount counter index
  std::uint64_t start = 0;  // original address of the first instruction
  std::uint64_t end = 0;    // one past the last instruction
  std::vector<InstructionView> instructions;
};

struct KernelView {
  std::string name;
  std::string descriptor_symbol;
  std::uint64_t entry = 0;  // original entry address
  std::vector<BlockView> blocks;
  // Entries of the device functions the kernel reaches through calls with static targets,
  // transitively, ascending (see functions()).
  std::vector<std::uint64_t> callees;
  // Entries of the device functions a rewrite relocates with the kernel when points may lie in
  // device functions, ascending: `callees`, or every device function of the object when a call
  // the kernel reaches has a target computed at run time (it may reach any of them). Block
  // indices (and block points' ids) run over the kernel's blocks, then these functions'.
  std::vector<std::uint64_t> relocated_callees;
};

// A device function: found from its symbol, or in a stripped object from the calls that reach
// it (named "function_0x<entry>" then). Its blocks follow the kernels' rule. A function the
// rewriter cannot relocate (a computed jump other than its return, a branch out of it) has no
// blocks and says why in `refusal`; function points then refuse the kernels that reach it.
struct FunctionView {
  std::string name;
  bool named = false;       // the name comes from a symbol
  std::uint64_t entry = 0;  // original entry address
  std::vector<BlockView> blocks;
  std::string refusal;
};

// The rewriter's result: the object, and what it did, for reports and benchmarks.
struct RewriteResult {
  std::vector<std::uint8_t> bytes;
  RewriteNote note;
  std::uint64_t instructions_relocated = 0;
  std::uint64_t points_instrumented = 0;
  // Branches whose relocated distance left SOPP's 16-bit range, made long jumps.
  std::uint64_t branches_relaxed = 0;
};

class Mutator {
 public:
  // Opens an AMDGPU code object, or, from a fat binary / offload bundle / host ELF with
  // .hip_fatbin, the code object for `processor` (required when there are several). Throws
  // wavekit::Error naming `name` for anything it cannot rewrite (wave32 targets, no kernels).
  static Mutator open(std::span<const std::uint8_t> bytes, std::string name,
                      std::string processor = {});
  Mutator(Mutator&&) noexcept;
  Mutator& operator=(Mutator&&) noexcept;
  ~Mutator();

  const codeobj::CodeObject& object() const;
  // The kernels with their basic blocks (computed once, on first use).
  const std::vector<KernelView>& kernels() const;
  const KernelView* kernel(const std::string& name) const;
  // The device functions, by entry address (computed once, on first use).
  const std::vector<FunctionView>& functions() const;
  const FunctionView* function(const std::string& name) const;

  // Restricts instrumentation to these kernels (by name or descriptor symbol; default: all).
  void select_kernels(std::vector<std::string> names);
  // Declares a per-wave variable. count == 0 with keys empty means "one element per basic
  // block of each kernel" (bbcount), laid out per kernel with the block addresses as keys.
  void declare(PerWaveVariable variable);
  void at(PointSpec point);
  // The plan built so far (what `wavekit rewrite --plan` would read).
  Plan plan() const;
  void set_tool_name(std::string tool);

  RewriteResult write() const;

 private:
  struct State;
  explicit Mutator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The engine behind Mutator::write and `wavekit rewrite`: code object in, code object out.
// Deterministic: the same input and plan give the same bytes. Refuses (wavekit::Error naming the
// kernel and the reason) anything it cannot instrument correctly.
RewriteResult rewrite(const codeobj::CodeObject& object, const Plan& plan);

// The basic blocks of each kernel, as the rewriter (and bbcount's keys) see them.
std::vector<KernelView> analyse_kernels(const codeobj::CodeObject& object);
// The device functions and their basic blocks (what function points and after/before
// instruction points inside functions see).
std::vector<FunctionView> analyse_functions(const codeobj::CodeObject& object);

}  // namespace wavekit::rewrite
