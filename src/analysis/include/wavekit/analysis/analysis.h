// Program analysis of AMDGPU code: functions (from symbols, and for stripped objects from
// kernel-descriptor entry points and resolved call targets), basic blocks and edges, the call
// graph, dominators and natural loops, and register liveness.
//
// Block definition (the emulator's ground-truth block counts use it): a block starts at a
// function entry, at a branch target, and after every instruction that ends a block. These
// end a block: s_branch, s_cbranch_* (successors: target, then fall-through), s_setpc_b64 (no
// successors inside the function: a return or a computed jump), s_endpgm (none), s_trap
// (falls through: the trap handler may resume), and s_swappc_b64 (falls through to the return
// point; the callee is an edge of the call graph, not of the CFG). Ending a block at a call
// gives the return point a block of its own, which is where call-return probes go.
//
// Only code reachable from the entry is part of a function: alignment padding (s_nop, s_code_end
// after the last s_endpgm) belongs to no block.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavekit/isa/isa.h"

namespace wavekit::analysis {

// What the analysis needs from a code object; make_input (codeobj_input.h) fills it from a
// wavekit::codeobj::CodeObject.
struct ProgramInput {
  struct CodeRange {
    std::uint64_t address = 0;
    std::span<const std::uint8_t> bytes;
  };
  struct FunctionSymbol {
    std::string name;
    std::uint64_t address = 0;
    std::uint64_t size = 0;  // 0: unknown (the function ends where its reachable code ends)
  };
  struct KernelEntry {
    std::string name;
    std::uint64_t entry = 0;  // descriptor address + kernel_code_entry_byte_offset
  };
  std::string processor;                  // "gfx90a" (a target id with features is accepted)
  std::vector<CodeRange> code;            // the executable sections
  std::vector<KernelEntry> kernels;       // from the kernel descriptors
  std::vector<FunctionSymbol> functions;  // STT_FUNC symbols (empty when stripped)
  // GOT slots with a relocation against a named symbol: slot address -> symbol name.
  std::map<std::uint64_t, std::string> got_symbols;
};

struct Block {
  std::uint64_t start = 0;
  std::uint64_t end = 0;              // one past the last instruction's last byte
  std::size_t first_instruction = 0;  // index into Function::instructions
  std::size_t instruction_count = 0;
  std::vector<std::size_t> successors;    // indices into Function::blocks (taken target first)
  std::vector<std::size_t> predecessors;  // indices into Function::blocks
  // Branch targets outside this function (e.g. a tail jump) or not on an instruction boundary.
  std::vector<std::uint64_t> external_successors;
};

struct CallSite {
  std::uint64_t address = 0;  // the s_swappc_b64, or a tail call's s_setpc_b64
  // A sibling (tail) call: s_setpc_b64 to another function's entry, which then returns to this
  // function's caller (clang -O2 emits it for `return f(...)`). Only resolved ones are listed;
  // any other computed s_setpc_b64 but a return stays a jump the analysis cannot follow.
  bool tail = false;
  // How the target register pair got its value.
  enum class Resolution { unresolved, pc_relative, got } resolution = Resolution::unresolved;
  std::optional<std::uint64_t> target;    // pc_relative: the callee's address
  std::optional<std::uint64_t> got_slot;  // got: the slot the target was loaded from
  std::string target_name;                // the callee function's name, or the GOT slot's symbol
};

struct Loop {
  std::size_t header = 0;             // block index
  std::vector<std::size_t> blocks;    // every block of the loop, header included, sorted
  std::vector<std::size_t> latches;   // blocks with a back edge to the header
  std::optional<std::size_t> parent;  // index into Function::loops of the enclosing loop
};

struct Function {
  enum class Kind { kernel, device };
  std::string name;  // symbol or kernel name; "function_0x<addr>" when stripped
  Kind kind = Kind::device;
  std::uint64_t start = 0;
  std::uint64_t end = 0;  // symbol end if known, else the end of the reachable code
  std::vector<isa::Instruction> instructions;  // reachable instructions, by address
  std::vector<Block> blocks;                   // by start address; blocks[0] is the entry
  std::vector<CallSite> calls;
  std::vector<isa::DecodeError> decode_errors;  // undecodable words met on reachable paths
  // Dominator tree: immediate dominator of each block (the entry's is itself); blocks that
  // are unreachable from the entry cannot occur (blocks are built by reachability).
  std::vector<std::size_t> immediate_dominator;
  std::vector<Loop> loops;

  const Block* block_containing(std::uint64_t address) const;
  std::optional<std::size_t> block_index(std::uint64_t address) const;        // containing block
  std::optional<std::size_t> instruction_index(std::uint64_t address) const;  // exact start
  bool dominates(std::size_t a, std::size_t b) const;  // block a dominates block b
  std::vector<std::uint64_t> block_starts() const;     // sorted
};

struct Program {
  std::string processor;
  std::vector<Function> functions;  // by start address
  // Call graph: for each function, the indices of the functions its resolved calls reach.
  std::vector<std::vector<std::size_t>> callees;

  const Function* function_containing(std::uint64_t address) const;
  const Function* find_function(std::string_view name) const;
  const Block* block_containing(std::uint64_t address) const;
};

// Builds functions, blocks, edges, calls, dominators and loops. Undecodable code on a reachable
// path is recorded in Function::decode_errors (the block ends there), never a crash.
Program analyze(const ProgramInput& input);

struct LivenessOptions {
  // A vector write under EXEC leaves inactive lanes untouched, so an earlier value can still be
  // live in those lanes (e.g. across the two halves of a divergent if/else). false (default):
  // VGPR/AGPR writes by EXEC-masked instructions do not end liveness, which is safe for code
  // that clobbers whole registers (probes run with EXEC all ones). true: LLVM's convention,
  // every write ends liveness.
  bool vector_writes_kill = false;
};

// Registers live before each instruction (index as in Function::instructions), interprocedural:
// a call reads what its callee may read before writing, a return keeps live what any caller
// needs after its call; unresolved calls and returns to unknown callers keep everything live.
class Liveness {
 public:
  Liveness(const Program& program, LivenessOptions options = {});

  const isa::RegisterSet& live_before(std::size_t function, std::size_t instruction) const;
  isa::RegisterSet live_after(std::size_t function, std::size_t instruction) const;
  const isa::RegisterSet& block_live_in(std::size_t function, std::size_t block) const;
  const isa::RegisterSet& block_live_out(std::size_t function, std::size_t block) const;
  // What the function may read from its caller (live at its entry).
  const isa::RegisterSet& entry_live(std::size_t function) const;

 private:
  struct FunctionLiveness {
    std::vector<isa::RegisterSet> before;  // per instruction
    std::vector<isa::RegisterSet> block_in, block_out;
  };
  const Program& program_;
  std::vector<FunctionLiveness> functions_;
};

}  // namespace wavekit::analysis
