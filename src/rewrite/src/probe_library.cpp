#include "wavekit/rewrite/probe_library.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/MC/MCExpr.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "abi.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/codeobj/msgpack_shape.h"
#include "wavekit/isa/isa.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

namespace ELF = llvm::ELF;
using detail::kNumberedSgprs;
using detail::kStackPointer;

struct Function {
  std::string name;
  std::uint64_t address = 0;
  std::vector<isa::Instruction> instructions;
  isa::RegisterSet reads, writes;
  std::uint64_t frame_bytes = 0;  // per lane
  bool frame_unbounded = false;   // the frame is addressed through computed pointers
  std::vector<std::uint64_t> callees;
};

// An immediate operand's value. A literal the disassembler marks as forced ("lit(...)") comes
// as an expression, not a plain immediate.
std::optional<std::int64_t> immediate(const llvm::MCInst& inst, unsigned index) {
  if (index >= inst.getNumOperands()) return std::nullopt;
  const llvm::MCOperand& operand = inst.getOperand(index);
  if (operand.isImm()) return operand.getImm();
  std::int64_t value = 0;
  if (operand.isExpr() && operand.getExpr()->evaluateAsAbsolute(value)) return value;
  return std::nullopt;
}

// The callee of `s_swappc_b64 s[30:31], s[x:x+1]` (or of a tail call's `s_setpc_b64 s[x:x+1]`)
// at `index`, from the compiler's pc-relative shape: s_getpc_b64 s[x:x+1]; s_add_u32 sx, sx,
// lo; s_addc_u32 sx+1, sx+1, hi.
std::optional<std::uint64_t> call_target(const std::vector<isa::Instruction>& code,
                                         std::size_t index, const isa::Decoder& decoder) {
  const llvm::MCInst& call = code[index].mc;
  const unsigned operand = code[index].is_jump() ? 0 : 1;
  if (call.getNumOperands() <= operand || !call.getOperand(operand).isReg()) return std::nullopt;
  const isa::RegisterSet target = decoder.register_set(call.getOperand(operand).getReg());
  std::optional<std::int64_t> lo, hi;
  for (std::size_t i = index; i-- > 0;) {
    const isa::Instruction& inst = code[i];
    if ((inst.writes.sgpr & target.sgpr).none()) continue;
    if (inst.mnemonic == "s_addc_u32" && !hi && immediate(inst.mc, 2)) {
      hi = immediate(inst.mc, 2);
    } else if (inst.mnemonic == "s_add_u32" && !lo && immediate(inst.mc, 2)) {
      lo = immediate(inst.mc, 2);
    } else if (inst.mnemonic == "s_getpc_b64" && lo && hi) {
      const std::uint64_t offset =
          static_cast<std::uint32_t>(*lo) |
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(*hi)) << 32);
      return inst.address + inst.size + offset;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Whether instruction `index` of `function` copies the caller's frame pointer aside
// (`s_mov_b32 sX, s33`) for the function to put back at its end (`s_mov_b32 s33, sX`): a
// non-leaf function's prologue, which computes no address.
bool saves_frame_pointer(const Function& function, std::size_t index) {
  const isa::Instruction& inst = function.instructions[index];
  unsigned saved = 0, source = 0;
  if (std::sscanf(inst.text.c_str(), "s_mov_b32 s%u, s%u", &saved, &source) != 2 ||
      source != kStackPointer + 1 || inst.text != "s_mov_b32 s" + std::to_string(saved) + ", s33")
    return false;
  const std::string restore = "s_mov_b32 s33, s" + std::to_string(saved);
  return std::any_of(function.instructions.begin() + static_cast<std::ptrdiff_t>(index) + 1,
                     function.instructions.end(),
                     [&](const isa::Instruction& later) { return later.text == restore; });
}

unsigned highest(const auto& bits, unsigned limit) {
  unsigned count = 0;
  for (unsigned i = 0; i < limit; ++i)
    if (bits[i]) count = i + 1;
  return count;
}

}  // namespace

std::vector<std::uint8_t> post_process_probe_library(const codeobj::CodeObject& library,
                                                     std::vector<ProbeFootprint>* footprints) {
  const isa::Decoder decoder(library.target().processor);
  const bool per_lane_stack = library.target().has_architected_flat_scratch();

  // Every function with a size, from .symtab (which names local helpers too), else .dynsym.
  std::map<std::uint64_t, Function> functions;
  const auto& symbols = library.symbols().empty() ? library.dynamic_symbols() : library.symbols();
  for (const codeobj::Symbol& symbol : symbols) {
    if (symbol.type != ELF::STT_FUNC || !symbol.is_defined() || symbol.size == 0) continue;
    if (functions.count(symbol.value)) continue;
    Function function;
    function.name = symbol.name;
    function.address = symbol.value;
    function.instructions =
        decoder.decode_all(library.read(symbol.value, symbol.size), symbol.value);
    for (std::size_t i = 0; i < function.instructions.size(); ++i) {
      const isa::Instruction& inst = function.instructions[i];
      function.reads |= inst.reads;
      function.writes |= inst.writes;
      // The frame: what the function adds to the stack pointer (per wave before gfx94x).
      if (inst.writes.sgpr[kStackPointer] &&
          (inst.mnemonic == "s_add_u32" || inst.mnemonic == "s_add_i32" ||
           inst.mnemonic == "s_addk_i32")) {
        const llvm::MCInst& mc = inst.mc;
        for (unsigned op = 1; op < mc.getNumOperands(); ++op)
          if (immediate(mc, op).value_or(0) > 0) {
            const auto bytes = static_cast<std::uint64_t>(*immediate(mc, op));
            function.frame_bytes =
                std::max(function.frame_bytes, per_lane_stack ? bytes : bytes / 64);
          }
      }
      // Frame slots addressed from the stack or frame pointer with a constant offset (a leaf
      // uses them without moving s32). The offset is per lane; 16 bytes covers the widest
      // access. Any other read of s32/s33 (outside frame set-up, which writes them) computes
      // an address into the frame, which bounds nothing.
      const bool reads_frame_pointer =
          inst.reads.sgpr[kStackPointer] || inst.reads.sgpr[kStackPointer + 1];
      const bool sets_up_frame =
          inst.writes.sgpr[kStackPointer] || inst.writes.sgpr[kStackPointer + 1];
      const bool frame_access =
          inst.memory == isa::MemoryKind::scratch || inst.memory == isa::MemoryKind::buffer;
      if (reads_frame_pointer && frame_access) {
        if (inst.text.find(" offen") != std::string::npos) function.frame_unbounded = true;
        const std::size_t at = inst.text.find("offset:");
        const std::uint64_t offset =
            at == std::string::npos ? 0 : std::stoull(inst.text.substr(at + 7), nullptr, 0);
        function.frame_bytes = std::max<std::uint64_t>(function.frame_bytes, offset + 16);
      } else if (reads_frame_pointer && !sets_up_frame && !saves_frame_pointer(function, i)) {
        function.frame_unbounded = true;
      }
      if (inst.flow == isa::ControlFlow::call || inst.is_jump()) {
        const std::optional<std::uint64_t> target = call_target(function.instructions, i, decoder);
        if (!target)
          fail(library.name(), "function '" + symbol.name + "' makes an indirect " +
                                   (inst.is_jump() ? "jump" : "call") + " at " + hex(inst.address) +
                                   ": its footprint cannot be bounded");
        function.callees.push_back(*target);
      }
    }
    functions.emplace(symbol.value, std::move(function));
  }

  // Transitive footprints, refusing recursion (its stack has no static bound).
  struct Total {
    isa::RegisterSet reads, writes;
    std::uint64_t scratch = 0;
    bool unbounded = false;
    std::set<std::uint64_t> callees;
  };
  std::map<std::uint64_t, Total> totals;
  std::set<std::uint64_t> active;
  std::function<const Total&(std::uint64_t, const std::string&)> total_of =
      [&](std::uint64_t address, const std::string& caller) -> const Total& {
    if (auto done = totals.find(address); done != totals.end()) return done->second;
    auto found = functions.find(address);
    if (found == functions.end())
      fail(library.name(), "'" + caller + "' calls " + hex(address) + ", which is not a function");
    if (!active.insert(address).second)
      fail(library.name(),
           "'" + found->second.name + "' is recursive: its stack has no static bound");
    Total total{found->second.reads, found->second.writes, 0, found->second.frame_unbounded, {}};
    for (std::uint64_t callee : found->second.callees) {
      const Total& inner = total_of(callee, found->second.name);
      total.reads |= inner.reads;
      total.writes |= inner.writes;
      total.scratch = std::max(total.scratch, inner.scratch);
      total.unbounded = total.unbounded || inner.unbounded;
      total.callees.insert(callee);
      total.callees.insert(inner.callees.begin(), inner.callees.end());
    }
    total.scratch += found->second.frame_bytes;
    active.erase(address);
    return totals.emplace(address, std::move(total)).first->second;
  };

  codeobj::CodeObject output = library.clone();
  std::vector<ProbeFootprint> probes;
  for (const codeobj::Symbol& symbol : library.dynamic_symbols()) {
    if (symbol.type != ELF::STT_FUNC || !symbol.is_defined() || symbol.binding != ELF::STB_GLOBAL ||
        symbol.visibility != ELF::STV_DEFAULT || !functions.count(symbol.value))
      continue;
    const Total& total = total_of(symbol.value, symbol.name);
    const isa::RegisterSet used = total.reads | total.writes;
    ProbeFootprint probe;
    probe.name = symbol.name;
    probe.alias = kProbeAliasPrefix + symbol.name;
    probe.address = symbol.value;
    probe.sgpr_count = highest(used.sgpr, kNumberedSgprs);
    probe.vgpr_count = highest(used.vgpr, 256);
    probe.agpr_count = highest(used.agpr, 256);
    probe.writes_vcc = total.writes.vcc();
    probe.writes_m0 = total.writes.m0();
    probe.writes_exec = total.writes.exec();
    probe.writes_scc = total.writes.scc;
    probe.scratch_bytes = total.scratch;
    probe.scratch_unbounded = total.unbounded;
    probe.calls = !functions.at(symbol.value).callees.empty();
    for (std::uint64_t callee : total.callees) probe.callees.push_back(functions.at(callee).name);
    probe.clobbers = total.writes.to_string();
    probes.push_back(probe);

    codeobj::Symbol alias = symbol;
    alias.name = probe.alias;
    alias.type = ELF::STT_OBJECT;
    alias.name_offset = 0;
    output.add_dynamic_symbol(alias);
    output.add_symbol(alias);
  }
  if (probes.empty())
    fail(library.name(), "exports no probes (WAVEKIT_PROBE functions: global, default visibility)");
  std::sort(probes.begin(), probes.end(),
            [](const ProbeFootprint& a, const ProbeFootprint& b) { return a.name < b.name; });

  codeobj::Note note;
  note.name = kNoteName;
  note.type = kNoteTypeProbes;
  note.desc = encode_probe_note(probes);
  output.add_note(kProbeNoteSectionName, std::move(note));

  if (footprints) *footprints = probes;
  return output.write();
}

std::vector<std::uint8_t> encode_probe_note(const std::vector<ProbeFootprint>& probes) {
  llvm::msgpack::Document document;
  llvm::msgpack::MapDocNode root = document.getRoot().getMap(/*Convert=*/true);
  llvm::msgpack::ArrayDocNode version = document.getArrayNode();
  version.push_back(document.getNode(std::uint64_t{kNoteVersionMajor}));
  version.push_back(document.getNode(std::uint64_t{kNoteVersionMinor}));
  root["wavekit.version"] = version;
  llvm::msgpack::ArrayDocNode list = document.getArrayNode();
  for (const ProbeFootprint& probe : probes) {
    llvm::msgpack::MapDocNode map = document.getMapNode();
    map[".name"] = document.getNode(probe.name, /*Copy=*/true);
    map[".alias"] = document.getNode(probe.alias, /*Copy=*/true);
    map[".address"] = document.getNode(probe.address);
    map[".sgpr_count"] = document.getNode(std::uint64_t{probe.sgpr_count});
    map[".vgpr_count"] = document.getNode(std::uint64_t{probe.vgpr_count});
    map[".agpr_count"] = document.getNode(std::uint64_t{probe.agpr_count});
    map[".writes_vcc"] = document.getNode(probe.writes_vcc);
    map[".writes_m0"] = document.getNode(probe.writes_m0);
    map[".writes_exec"] = document.getNode(probe.writes_exec);
    map[".writes_scc"] = document.getNode(probe.writes_scc);
    map[".scratch_bytes"] = document.getNode(probe.scratch_bytes);
    map[".scratch_unbounded"] = document.getNode(probe.scratch_unbounded);
    map[".calls"] = document.getNode(probe.calls);
    llvm::msgpack::ArrayDocNode callees = document.getArrayNode();
    for (const std::string& callee : probe.callees)
      callees.push_back(document.getNode(callee, true));
    map[".callees"] = callees;
    map[".clobbers"] = document.getNode(probe.clobbers, /*Copy=*/true);
    list.push_back(map);
  }
  root["wavekit.probes"] = list;
  std::string bytes;
  document.writeToBlob(bytes);
  return {bytes.begin(), bytes.end()};
}

std::vector<ProbeFootprint> decode_probe_note(std::span<const std::uint8_t> desc,
                                              const std::string& context) {
  codeobj::check_msgpack_shape(
      std::string_view(reinterpret_cast<const char*>(desc.data()), desc.size()), context,
      "WAVEKIT probe note");
  llvm::msgpack::Document document;
  auto bad = [&](const std::string& what) -> void { fail(context, "WAVEKIT probe note: " + what); };
  if (!document.readFromBlob(
          llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false) ||
      !document.getRoot().isMap())
    bad("the descriptor is not a MessagePack map");
  llvm::msgpack::MapDocNode root = document.getRoot().getMap();
  auto field = [&](llvm::msgpack::MapDocNode map, const char* key) {
    auto found = map.find(key);
    if (found == map.end()) bad(std::string("missing key '") + key + "'");
    return found->second;
  };
  auto number = [&](llvm::msgpack::MapDocNode map, const char* key) -> std::uint64_t {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() != llvm::msgpack::Type::UInt)
      bad(std::string("'") + key + "' is not an unsigned integer");
    return node.getUInt();
  };
  auto text = [&](llvm::msgpack::MapDocNode map, const char* key) -> std::string {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() != llvm::msgpack::Type::String)
      bad(std::string("'") + key + "' is not a string");
    return node.getString().str();
  };
  auto flag = [&](llvm::msgpack::MapDocNode map, const char* key) -> bool {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() != llvm::msgpack::Type::Boolean)
      bad(std::string("'") + key + "' is not a boolean");
    return node.getBool();
  };
  if (!field(root, "wavekit.probes").isArray()) bad("'wavekit.probes' is not an array");
  std::vector<ProbeFootprint> probes;
  // The node is kept in a variable: a range-for over getArray() of field()'s temporary would
  // iterate an array whose node is already destroyed (stack-use-after-scope under ASan).
  llvm::msgpack::DocNode probe_list = field(root, "wavekit.probes");
  for (llvm::msgpack::DocNode node : probe_list.getArray()) {
    if (!node.isMap()) bad("a probe entry is not a map");
    llvm::msgpack::MapDocNode map = node.getMap();
    ProbeFootprint probe;
    probe.name = text(map, ".name");
    probe.alias = text(map, ".alias");
    probe.address = number(map, ".address");
    probe.sgpr_count = static_cast<unsigned>(number(map, ".sgpr_count"));
    probe.vgpr_count = static_cast<unsigned>(number(map, ".vgpr_count"));
    probe.agpr_count = static_cast<unsigned>(number(map, ".agpr_count"));
    probe.writes_vcc = flag(map, ".writes_vcc");
    probe.writes_m0 = flag(map, ".writes_m0");
    probe.writes_exec = flag(map, ".writes_exec");
    probe.writes_scc = flag(map, ".writes_scc");
    probe.scratch_bytes = number(map, ".scratch_bytes");
    probe.scratch_unbounded = flag(map, ".scratch_unbounded");
    probe.calls = flag(map, ".calls");
    if (!field(map, ".callees").isArray()) bad("'.callees' is not an array");
    llvm::msgpack::DocNode callee_list = field(map, ".callees");
    for (llvm::msgpack::DocNode callee : callee_list.getArray()) {
      if (callee.getKind() != llvm::msgpack::Type::String)
        bad("a '.callees' entry is not a string");
      probe.callees.push_back(callee.getString().str());
    }
    probe.clobbers = text(map, ".clobbers");
    probes.push_back(std::move(probe));
  }
  return probes;
}

std::optional<std::vector<ProbeFootprint>> find_probe_note(const codeobj::CodeObject& library) {
  for (const codeobj::Note& note : library.notes())
    if (note.name == kNoteName && note.type == kNoteTypeProbes)
      return decode_probe_note(note.desc, library.name());
  return std::nullopt;
}

nlohmann::json footprint_to_json(const ProbeFootprint& probe) {
  return {{"name", probe.name},
          {"alias", probe.alias},
          {"address", probe.address},
          {"sgpr_count", probe.sgpr_count},
          {"vgpr_count", probe.vgpr_count},
          {"agpr_count", probe.agpr_count},
          {"writes_vcc", probe.writes_vcc},
          {"writes_m0", probe.writes_m0},
          {"writes_exec", probe.writes_exec},
          {"writes_scc", probe.writes_scc},
          {"scratch_bytes", probe.scratch_bytes},
          {"calls", probe.calls},
          {"callees", probe.callees},
          {"clobbers", probe.clobbers}};
}

isa::RegisterSet clobber_set(const ProbeFootprint& probe) {
  isa::RegisterSet set;
  std::istringstream words(probe.clobbers);
  std::string word;
  auto bad = [&] {
    throw Error("probe '" + probe.name + "': unknown register '" + word + "' in its clobbers");
  };
  while (words >> word) {
    // Special registers: a pair, or one half of it ("vcc_lo").
    static const std::pair<const char*, unsigned> kPairs[] = {
        {"flat_scratch", isa::sgpr_id::flat_scratch_lo},
        {"xnack_mask", isa::sgpr_id::xnack_mask_lo},
        {"vcc", isa::sgpr_id::vcc_lo},
        {"exec", isa::sgpr_id::exec_lo}};
    bool special = false;
    for (const auto& [name, lo] : kPairs) {
      const std::string base = name;
      if (word == base)
        set.sgpr[lo] = set.sgpr[lo + 1] = true;
      else if (word == base + "_lo")
        set.sgpr[lo] = true;
      else if (word == base + "_hi")
        set.sgpr[lo + 1] = true;
      else
        continue;
      special = true;
    }
    if (special) continue;
    if (word == "scc") {
      set.scc = true;
      continue;
    }
    if (word == "m0") {
      set.sgpr[isa::sgpr_id::m0] = true;
      continue;
    }
    // Runs: s5, s[0:3], v[0:9], a2, ttmp[0:1].
    const std::size_t digits = word.find_first_of("0123456789[");
    if (digits == std::string::npos || digits == 0) bad();
    const std::string kind = word.substr(0, digits);
    unsigned first = 0, last = 0;
    if (word[digits] == '[') {
      if (std::sscanf(word.c_str() + digits, "[%u:%u]", &first, &last) != 2) bad();
    } else {
      first = last = static_cast<unsigned>(std::stoul(word.substr(digits)));
    }
    for (unsigned r = first; r <= last; ++r) {
      if (kind == "s" && r < kNumberedSgprs)
        set.sgpr[r] = true;
      else if (kind == "ttmp" && r < 16)
        set.sgpr[isa::sgpr_id::ttmp0 + r] = true;
      else if (kind == "v" && r < 256)
        set.vgpr[r] = true;
      else if (kind == "a" && r < 256)
        set.agpr[r] = true;
      else
        bad();
    }
  }
  return set;
}

}  // namespace wavekit::rewrite
