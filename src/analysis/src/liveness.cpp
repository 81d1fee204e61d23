#include <algorithm>

#include "wavekit/analysis/analysis.h"

namespace wavekit::analysis {

namespace {

using isa::ControlFlow;
using isa::RegisterSet;

RegisterSet everything() {
  RegisterSet all;
  all.sgpr.set();
  all.vgpr.set();
  all.agpr.set();
  all.scc = true;
  return all;
}

// What an instruction's writes end the liveness of.
RegisterSet kills(const isa::Instruction& inst, const LivenessOptions& options) {
  RegisterSet killed = inst.writes;
  // v_writelane writes one lane: never a whole-register write.
  bool partial_vector_write = inst.mnemonic.starts_with("v_writelane") ||
                              (!options.vector_writes_kill && inst.reads.exec());
  if (partial_vector_write) {
    killed.vgpr.reset();
    killed.agpr.reset();
  }
  return killed;
}

}  // namespace

Liveness::Liveness(const Program& program, LivenessOptions options) : program_(program) {
  const std::size_t function_count = program.functions.size();
  functions_.resize(function_count);
  // Interprocedural facts, grown to a fixed point: what each function may read on entry, and
  // what must stay live when it returns (the union over its call sites of what is live after
  // the call). A device function nobody here calls may be called from anywhere.
  std::vector<RegisterSet> entry_live(function_count), return_live(function_count);
  std::vector<bool> has_callers(function_count, false);
  for (const auto& list : program.callees) {
    for (std::size_t callee : list) has_callers[callee] = true;
  }
  for (std::size_t f = 0; f < function_count; ++f) {
    if (!has_callers[f]) return_live[f] = everything();
  }
  std::map<std::uint64_t, std::size_t> function_at;
  for (std::size_t f = 0; f < function_count; ++f) function_at[program.functions[f].start] = f;
  auto callee_of = [&](const Function& function, std::uint64_t call) -> std::optional<std::size_t> {
    for (const CallSite& site : function.calls) {
      if (site.address != call || !site.target) continue;
      if (auto it = function_at.find(*site.target); it != function_at.end()) return it->second;
    }
    return std::nullopt;
  };

  std::vector<std::vector<RegisterSet>> instruction_kills(function_count);
  for (std::size_t f = 0; f < function_count; ++f) {
    for (const auto& inst : program.functions[f].instructions) {
      instruction_kills[f].push_back(kills(inst, options));
    }
  }

  for (bool changed = true; changed;) {
    changed = false;
    std::vector<RegisterSet> next_return_live = return_live;
    for (std::size_t f = 0; f < function_count; ++f) {
      const Function& function = program.functions[f];
      FunctionLiveness& live = functions_[f];
      const std::size_t blocks = function.blocks.size();
      live.block_in.assign(blocks, {});
      live.block_out.assign(blocks, {});
      live.before.assign(function.instructions.size(), {});
      // Transfer through one block, backwards; records per-instruction results when asked.
      auto transfer = [&](std::size_t b, bool record) {
        const Block& block = function.blocks[b];
        RegisterSet current = live.block_out[b];
        for (std::size_t k = block.instruction_count; k-- > 0;) {
          std::size_t i = block.first_instruction + k;
          const isa::Instruction& inst = function.instructions[i];
          if (inst.flow == ControlFlow::call) {
            // After the call returns, what is live here must be kept by the callee.
            if (auto callee = callee_of(function, inst.address)) {
              next_return_live[*callee] |= current;
              // The callee runs after s_swappc_b64 wrote the return address: what it reads
              // on entry, less that, is read here.
              current -= instruction_kills[f][i];
              current |= entry_live[*callee] - inst.writes;
              current |= inst.reads;
            } else {
              current = everything();
            }
          } else {
            current -= instruction_kills[f][i];
            current |= inst.reads;
          }
          if (record) live.before[i] = current;
        }
        return current;
      };
      auto exit_live = [&](std::size_t b) {
        const Block& block = function.blocks[b];
        const isa::Instruction& last =
            function.instructions[block.first_instruction + block.instruction_count - 1];
        RegisterSet out;
        if (!block.external_successors.empty()) out = everything();
        switch (last.flow) {
          case ControlFlow::end_program:
            break;
          case ControlFlow::indirect: {
            if (function.kind == Function::Kind::device && last.is_return()) {
              out |= return_live[f];
            } else if (auto callee = callee_of(function, last.address)) {
              // A tail call: the callee reads what it reads on entry, and returns to this
              // function's caller, so what that caller keeps live it must keep too.
              out |= entry_live[*callee];
              next_return_live[*callee] |= return_live[f];
            } else {
              out |= everything();
            }
            break;
          }
          default:
            break;
        }
        // A block that can fall through but has no block after it (undecodable code next, or
        // the end of the function's range) continues somewhere unknown.
        bool has_fall_through_block =
            std::any_of(block.successors.begin(), block.successors.end(),
                        [&](std::size_t s) { return function.blocks[s].start == block.end; });
        if (!last.ends_flow() && !has_fall_through_block) out = everything();
        return out;
      };
      for (bool block_changed = true; block_changed;) {
        block_changed = false;
        for (std::size_t b = blocks; b-- > 0;) {
          RegisterSet out = exit_live(b);
          for (std::size_t successor : function.blocks[b].successors)
            out |= live.block_in[successor];
          live.block_out[b] = out;
          RegisterSet in = transfer(b, false);
          if (in != live.block_in[b]) {
            live.block_in[b] = in;
            block_changed = true;
          }
        }
      }
      for (std::size_t b = 0; b < blocks; ++b) transfer(b, true);
      RegisterSet entry = blocks ? live.block_in[0] : RegisterSet{};
      if (entry != entry_live[f]) {
        entry_live[f] = entry;
        changed = true;
      }
    }
    if (next_return_live != return_live) {
      return_live = std::move(next_return_live);
      changed = true;
    }
  }
}

const isa::RegisterSet& Liveness::live_before(std::size_t function, std::size_t instruction) const {
  return functions_.at(function).before.at(instruction);
}

isa::RegisterSet Liveness::live_after(std::size_t function, std::size_t instruction) const {
  const Function& f = program_.functions.at(function);
  auto block = f.block_index(f.instructions.at(instruction).address);
  const Block& b = f.blocks[*block];
  if (instruction + 1 < b.first_instruction + b.instruction_count) {
    return functions_[function].before[instruction + 1];
  }
  return functions_[function].block_out[*block];
}

const isa::RegisterSet& Liveness::block_live_in(std::size_t function, std::size_t block) const {
  return functions_.at(function).block_in.at(block);
}

const isa::RegisterSet& Liveness::block_live_out(std::size_t function, std::size_t block) const {
  return functions_.at(function).block_out.at(block);
}

const isa::RegisterSet& Liveness::entry_live(std::size_t function) const {
  static const isa::RegisterSet nothing;  // a function without code (undecodable entry)
  const auto& blocks = functions_.at(function).block_in;
  return blocks.empty() ? nothing : blocks.front();
}

}  // namespace wavekit::analysis
