#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>
#include <unordered_map>

#include "llvm/MC/MCExpr.h"
#include "wavekit/analysis/analysis.h"
#include "wavekit/isa/caching_decoder.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::analysis {

namespace {

using isa::ControlFlow;
using isa::Instruction;

// Every code range decoded once, linearly (AMDGPU code is dword-aligned and the compiler puts
// no data in .text), with an address index.
struct DecodedCode {
  std::vector<Instruction> instructions;                        // by address
  std::vector<isa::DecodeError> errors;                         // by address
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [begin, end) of each range

  const Instruction* at(std::uint64_t address) const {
    auto it = std::lower_bound(instructions.begin(), instructions.end(), address,
                               [](const Instruction& i, std::uint64_t a) { return i.address < a; });
    return it != instructions.end() && it->address == address ? &*it : nullptr;
  }
  const isa::DecodeError* error_at(std::uint64_t address) const {
    for (const auto& error : errors) {
      if (error.address == address) return &error;
    }
    return nullptr;
  }
  std::optional<std::uint64_t> range_end(std::uint64_t address) const {
    for (auto [begin, end] : ranges) {
      if (address >= begin && address < end) return end;
    }
    return std::nullopt;
  }
};

struct Entry {
  std::string name;
  Function::Kind kind = Function::Kind::device;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};

bool ends_block(const Instruction& inst) { return inst.flow != ControlFlow::none; }

// The register number of operand `index` of an SGPR-pair or SGPR operand (first register).
std::optional<unsigned> first_sgpr(const isa::Decoder& decoder, const Instruction& inst,
                                   unsigned index) {
  if (index >= inst.mc.getNumOperands() || !inst.mc.getOperand(index).isReg()) return std::nullopt;
  auto set = decoder.register_set(inst.mc.getOperand(index).getReg().id());
  for (unsigned s = 0; s < 128; ++s) {
    if (set.sgpr[s]) return s;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> immediate(const Instruction& inst, unsigned index) {
  if (index >= inst.mc.getNumOperands()) return std::nullopt;
  const llvm::MCOperand& operand = inst.mc.getOperand(index);
  std::int64_t value = 0;
  if (operand.isImm()) {
    value = operand.getImm();
  } else if (!operand.isExpr() || !operand.getExpr()->evaluateAsAbsolute(value)) {
    // The disassembler wraps a forced literal ("lit(0xffffffff)") in a constant expression.
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(value & 0xffffffff);
}

// The value s[reg:reg+1] holds before instruction `before` if it was computed PC-relatively:
//   s_getpc_b64 s[r:r+1]; s_add_u32 sr, sr, lo; s_addc_u32 sr+1, sr+1, hi
// The scan looks back through the function's instructions in address order, giving up at any
// other write to the pair.
std::optional<std::uint64_t> pc_relative_value(const isa::Decoder& decoder,
                                               const std::vector<Instruction>& code,
                                               std::size_t before, unsigned reg) {
  std::optional<std::uint32_t> low, high;
  constexpr std::size_t kWindow = 64;
  for (std::size_t back = 1; back <= std::min(before, kWindow); ++back) {
    const Instruction& inst = code[before - back];
    bool writes_low = inst.writes.sgpr[reg], writes_high = inst.writes.sgpr[reg + 1];
    if (!writes_low && !writes_high) continue;
    auto destination = first_sgpr(decoder, inst, 0);
    if (inst.mnemonic == "s_addc_u32" && !high && destination == reg + 1 &&
        first_sgpr(decoder, inst, 1) == reg + 1) {
      high = immediate(inst, 2);
      if (!high) return std::nullopt;
    } else if (inst.mnemonic == "s_add_u32" && high && !low && destination == reg &&
               first_sgpr(decoder, inst, 1) == reg) {
      low = immediate(inst, 2);
      if (!low) return std::nullopt;
    } else if (inst.mnemonic == "s_getpc_b64" && destination == reg) {
      // s_getpc_b64 yields the address of the next instruction.
      std::uint64_t pc = inst.address + inst.size;
      std::uint64_t offset = (std::uint64_t{high.value_or(0)} << 32) | low.value_or(0);
      if (low.has_value() != high.has_value()) return std::nullopt;
      return pc + offset;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

CallSite resolve_call(const isa::Decoder& decoder, const std::vector<Instruction>& code,
                      std::size_t call_index, const ProgramInput& input) {
  const Instruction& call = code[call_index];
  CallSite site;
  site.address = call.address;
  site.tail = call.flow != ControlFlow::call;
  // s_swappc_b64 sdst, ssrc; s_setpc_b64 ssrc
  auto target_reg = first_sgpr(decoder, call, site.tail ? 0 : 1);
  if (!target_reg) return site;
  if (auto value = pc_relative_value(decoder, code, call_index, *target_reg)) {
    site.resolution = CallSite::Resolution::pc_relative;
    site.target = *value;
    return site;
  }
  // GOT: s_load_dwordx2 s[t:t+1], s[x:x+1], offset, with s[x:x+1] PC-relative.
  for (std::size_t back = 1; back <= std::min<std::size_t>(call_index, 64); ++back) {
    std::size_t index = call_index - back;
    const Instruction& inst = code[index];
    if (!inst.writes.sgpr[*target_reg] && !inst.writes.sgpr[*target_reg + 1]) continue;
    if (inst.mnemonic != "s_load_dwordx2" || first_sgpr(decoder, inst, 0) != target_reg) break;
    auto base = first_sgpr(decoder, inst, 1);
    auto offset = immediate(inst, 2);
    if (!base || !offset) break;
    if (auto value = pc_relative_value(decoder, code, index, *base)) {
      site.resolution = CallSite::Resolution::got;
      site.got_slot = *value + *offset;
      if (auto symbol = input.got_symbols.find(*site.got_slot); symbol != input.got_symbols.end()) {
        site.target_name = symbol->second;
      }
    }
    break;
  }
  return site;
}

void compute_dominators(Function& function) {
  std::size_t n = function.blocks.size();
  // Reverse postorder from the entry.
  std::vector<std::size_t> order, position(n, 0);
  std::vector<char> visited(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}};
  visited[0] = 1;
  while (!stack.empty()) {
    auto& [block, next] = stack.back();
    if (next < function.blocks[block].successors.size()) {
      std::size_t successor = function.blocks[block].successors[next++];
      if (!visited[successor]) {
        visited[successor] = 1;
        stack.push_back({successor, 0});
      }
    } else {
      order.push_back(block);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  // Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm".
  constexpr std::size_t kUndefined = static_cast<std::size_t>(-1);
  std::vector<std::size_t>& idom = function.immediate_dominator;
  idom.assign(n, kUndefined);
  idom[0] = 0;
  auto intersect = [&](std::size_t a, std::size_t b) {
    while (a != b) {
      while (position[a] > position[b]) a = idom[a];
      while (position[b] > position[a]) b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t block : order) {
      if (block == 0) continue;
      std::size_t candidate = kUndefined;
      for (std::size_t predecessor : function.blocks[block].predecessors) {
        if (idom[predecessor] == kUndefined) continue;
        candidate = candidate == kUndefined ? predecessor : intersect(predecessor, candidate);
      }
      if (candidate != idom[block]) {
        idom[block] = candidate;
        changed = true;
      }
    }
  }
}

void find_loops(Function& function) {
  std::map<std::size_t, Loop> by_header;
  for (std::size_t block = 0; block < function.blocks.size(); ++block) {
    for (std::size_t successor : function.blocks[block].successors) {
      if (!function.dominates(successor, block)) continue;  // not a back edge
      Loop& loop = by_header[successor];
      loop.header = successor;
      loop.latches.push_back(block);
      // The natural loop: the header plus everything that reaches the latch without it.
      std::set<std::size_t> body(loop.blocks.begin(), loop.blocks.end());
      body.insert(successor);
      std::vector<std::size_t> work;
      if (body.insert(block).second) work.push_back(block);
      while (!work.empty()) {
        std::size_t current = work.back();
        work.pop_back();
        for (std::size_t predecessor : function.blocks[current].predecessors) {
          if (body.insert(predecessor).second) work.push_back(predecessor);
        }
      }
      loop.blocks.assign(body.begin(), body.end());
    }
  }
  for (auto& [header, loop] : by_header) function.loops.push_back(std::move(loop));
  // The parent is the smallest other loop whose blocks include this loop's header.
  for (std::size_t i = 0; i < function.loops.size(); ++i) {
    for (std::size_t j = 0; j < function.loops.size(); ++j) {
      if (i == j) continue;
      const auto& outer = function.loops[j].blocks;
      if (outer.size() <= function.loops[i].blocks.size()) continue;
      if (!std::binary_search(outer.begin(), outer.end(), function.loops[i].header)) continue;
      auto& parent = function.loops[i].parent;
      if (!parent || function.loops[*parent].blocks.size() > outer.size()) parent = j;
    }
  }
}

// Explores the code reachable from `entry` within [entry.address, limit) and builds blocks.
Function build_function(const Entry& entry, std::uint64_t limit, const DecodedCode& code) {
  Function function;
  function.name = entry.name;
  function.kind = entry.kind;
  function.start = entry.address;

  std::set<std::uint64_t> leaders{entry.address};
  std::set<std::uint64_t> reached;  // instruction addresses
  std::deque<std::uint64_t> work{entry.address};
  std::set<std::uint64_t> error_addresses;
  while (!work.empty()) {
    std::uint64_t address = work.front();
    work.pop_front();
    while (address >= entry.address && address < limit && !reached.count(address)) {
      const Instruction* inst = code.at(address);
      if (!inst) {
        error_addresses.insert(address);
        break;
      }
      reached.insert(address);
      if (inst->branch_target) {
        std::uint64_t target = *inst->branch_target;
        if (target >= entry.address && target < limit) {
          if (!code.at(target)) {
            error_addresses.insert(target);
          } else if (leaders.insert(target).second) {
            work.push_back(target);
          }
        }
      }
      address += inst->size;
      if (ends_block(*inst)) {
        if (!inst->ends_flow()) {
          leaders.insert(address);  // the fall-through of a conditional branch, call or trap
          if (address < limit) work.push_back(address);
        }
        break;
      }
    }
  }
  for (std::uint64_t address : error_addresses) {
    isa::DecodeError error;
    if (const auto* known = code.error_at(address)) {
      error = *known;
    } else {
      error = {address, "no instruction starts at " + hex(address) +
                            " (a branch or fall-through into the middle of an instruction)"};
    }
    function.decode_errors.push_back(error);
  }

  function.instructions.reserve(reached.size());
  for (std::uint64_t address : reached) function.instructions.push_back(*code.at(address));

  // Blocks: runs of consecutive reached instructions, split at leaders and after terminators.
  std::unordered_map<std::uint64_t, std::size_t> block_at;
  for (std::size_t i = 0; i < function.instructions.size(); ++i) {
    const Instruction& inst = function.instructions[i];
    bool starts =
        i == 0 || leaders.count(inst.address) || ends_block(function.instructions[i - 1]) ||
        function.instructions[i - 1].address + function.instructions[i - 1].size != inst.address;
    if (starts) {
      block_at[inst.address] = function.blocks.size();
      function.blocks.push_back({inst.address, inst.address, i, 0, {}, {}, {}});
    }
    Block& block = function.blocks.back();
    block.end = inst.address + inst.size;
    ++block.instruction_count;
  }
  // The entry must be blocks[0]; with reachability from the entry it is the lowest address.
  for (Block& block : function.blocks) {
    const Instruction& last =
        function.instructions[block.first_instruction + block.instruction_count - 1];
    auto link = [&](std::uint64_t target) {
      auto found = block_at.find(target);
      if (found == block_at.end()) {
        block.external_successors.push_back(target);
      } else {
        block.successors.push_back(found->second);
      }
    };
    if (last.branch_target) link(*last.branch_target);
    bool falls_through = !last.ends_flow();
    if (falls_through && block_at.count(block.end)) link(block.end);
  }
  for (std::size_t b = 0; b < function.blocks.size(); ++b) {
    for (std::size_t successor : function.blocks[b].successors) {
      function.blocks[successor].predecessors.push_back(b);
    }
  }
  function.end = entry.size
                     ? entry.address + entry.size
                     : (function.blocks.empty() ? entry.address : function.blocks.back().end);
  if (!function.blocks.empty()) {
    compute_dominators(function);
    find_loops(function);
  }
  return function;
}

}  // namespace

const Block* Function::block_containing(std::uint64_t address) const {
  auto index = block_index(address);
  return index ? &blocks[*index] : nullptr;
}

std::optional<std::size_t> Function::block_index(std::uint64_t address) const {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), address,
                             [](std::uint64_t a, const Block& b) { return a < b.start; });
  if (it == blocks.begin()) return std::nullopt;
  --it;
  if (address >= it->end) return std::nullopt;
  return static_cast<std::size_t>(it - blocks.begin());
}

std::optional<std::size_t> Function::instruction_index(std::uint64_t address) const {
  auto it = std::lower_bound(instructions.begin(), instructions.end(), address,
                             [](const Instruction& i, std::uint64_t a) { return i.address < a; });
  if (it == instructions.end() || it->address != address) return std::nullopt;
  return static_cast<std::size_t>(it - instructions.begin());
}

bool Function::dominates(std::size_t a, std::size_t b) const {
  for (std::size_t current = b;; current = immediate_dominator[current]) {
    if (current == a) return true;
    if (current == 0 || current >= immediate_dominator.size()) return a == 0;
  }
}

std::vector<std::uint64_t> Function::block_starts() const {
  std::vector<std::uint64_t> starts;
  starts.reserve(blocks.size());
  for (const Block& block : blocks) starts.push_back(block.start);
  return starts;
}

const Function* Program::function_containing(std::uint64_t address) const {
  for (const Function& function : functions) {
    if (function.block_containing(address)) return &function;
  }
  return nullptr;
}

const Function* Program::find_function(std::string_view name) const {
  for (const Function& function : functions) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

const Block* Program::block_containing(std::uint64_t address) const {
  const Function* function = function_containing(address);
  return function ? function->block_containing(address) : nullptr;
}

Program analyze(const ProgramInput& input) {
  isa::Decoder decoder(input.processor);
  isa::CachingDecoder caching(decoder);
  Program program;
  program.processor = input.processor;

  DecodedCode code;
  for (const auto& range : input.code) {
    auto decoded = caching.decode_range(range.bytes, range.address);
    code.instructions.insert(code.instructions.end(),
                             std::make_move_iterator(decoded.instructions.begin()),
                             std::make_move_iterator(decoded.instructions.end()));
    code.errors.insert(code.errors.end(), decoded.errors.begin(), decoded.errors.end());
    code.ranges.push_back({range.address, range.address + range.bytes.size()});
  }
  std::sort(code.instructions.begin(), code.instructions.end(),
            [](const Instruction& a, const Instruction& b) { return a.address < b.address; });

  // Entries: kernels, then function symbols, then (as they are found) call targets.
  std::map<std::uint64_t, Entry> entries;
  for (const auto& kernel : input.kernels) {
    if (!code.range_end(kernel.entry)) {
      fail(kernel.name, "kernel entry " + hex(kernel.entry) + " is outside the code");
    }
    entries[kernel.entry] = {kernel.name, Function::Kind::kernel, kernel.entry, 0};
  }
  for (const auto& symbol : input.functions) {
    if (!code.range_end(symbol.address)) continue;  // not code we were given
    auto [it, inserted] = entries.insert(
        {symbol.address, {symbol.name, Function::Kind::device, symbol.address, symbol.size}});
    if (!inserted) it->second.size = symbol.size;  // a kernel's own symbol gives its size
  }

  std::deque<std::uint64_t> work;
  for (const auto& [address, entry] : entries) work.push_back(address);
  std::map<std::uint64_t, Function> built;
  while (!work.empty()) {
    std::uint64_t address = work.front();
    work.pop_front();
    if (built.count(address)) continue;
    const Entry& entry = entries.at(address);
    std::uint64_t limit = *code.range_end(address);
    if (entry.size) {
      limit = std::min(limit, address + entry.size);
    } else if (auto next = entries.upper_bound(address); next != entries.end()) {
      limit = std::min(limit, next->first);
    }
    Function function = build_function(entry, limit, code);
    for (std::size_t i = 0; i < function.instructions.size(); ++i) {
      // A device function's jump is a tail call when its target resolves to a function entry.
      const bool jump =
          function.kind == Function::Kind::device && function.instructions[i].is_jump();
      if (function.instructions[i].flow != ControlFlow::call && !jump) continue;
      CallSite site = resolve_call(decoder, function.instructions, i, input);
      // A jump into this function's own reachable code (other than its entry) is a branch the
      // analysis cannot follow, not a call. A target beyond it is another function's entry,
      // even where no symbol says so (a stripped object).
      if (jump &&
          (site.resolution == CallSite::Resolution::unresolved ||
           (site.target && *site.target != address && function.block_containing(*site.target))))
        continue;
      if (site.target && code.range_end(*site.target) && code.at(*site.target)) {
        if (!entries.count(*site.target)) {
          entries[*site.target] = {"function_" + hex(*site.target), Function::Kind::device,
                                   *site.target, 0};
          work.push_back(*site.target);
        }
      }
      function.calls.push_back(std::move(site));
    }
    built.emplace(address, std::move(function));
  }
  for (auto& [address, function] : built) program.functions.push_back(std::move(function));

  std::map<std::uint64_t, std::size_t> index_of;
  for (std::size_t f = 0; f < program.functions.size(); ++f) {
    index_of[program.functions[f].start] = f;
  }
  program.callees.resize(program.functions.size());
  for (std::size_t f = 0; f < program.functions.size(); ++f) {
    for (CallSite& site : program.functions[f].calls) {
      if (!site.target) continue;
      auto callee = index_of.find(*site.target);
      if (callee == index_of.end()) continue;
      site.target_name = program.functions[callee->second].name;
      auto& list = program.callees[f];
      if (std::find(list.begin(), list.end(), callee->second) == list.end()) {
        list.push_back(callee->second);
      }
    }
  }
  return program;
}

}  // namespace wavekit::analysis
