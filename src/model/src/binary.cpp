#include "wavekit/model/binary.h"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "llvm/Demangle/Demangle.h"
#include "wavekit/analysis/analysis.h"
#include "wavekit/analysis/report.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/emu/emu.h"
#include "wavekit/hsa/launch.h"
#include "wavekit/isa/isa.h"
#include "wavekit/model/compare.h"
#include "wavekit/model/machine.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

#ifndef WAVEKIT_MODEL_CLANG
#define WAVEKIT_MODEL_CLANG "clang-22"
#endif
#ifndef WAVEKIT_MODEL_HIP_INCLUDE
#define WAVEKIT_MODEL_HIP_INCLUDE ""
#endif

namespace wavekit::model {

namespace fs = std::filesystem;

CacheModel CacheModel::of(const Machine& machine) {
  CacheModel cache;
  cache.l2_bytes = std::uint64_t(machine.get("memory.l2_bytes"));
  cache.line_bytes = unsigned(machine.get("memory.l2_line_bytes"));
  cache.sector_bytes = unsigned(machine.get("memory.l2_sector_bytes"));
  if (machine.has("memory.dram_fetch_bytes"))
    cache.dram_fetch_bytes = unsigned(machine.get("memory.dram_fetch_bytes"));
  // Resident threads of the whole GPU, in the emulator's 64-lane waves.
  double threads = machine.compute_units() * machine.get("occupancy.max_threads_per_unit");
  cache.concurrent_waves = unsigned(std::max(1.0, threads / 64));
  cache.units = unsigned(machine.compute_units());
  // Half the unit's L1/shared array: the rest is the shared-memory carve-out.
  cache.l1_bytes = std::uint64_t(machine.get("memory.l1_bytes_per_unit") / 2);
  return cache;
}

std::string substitute(const std::string& text, const Parameters& parameters) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find('{', pos);
    if (open == std::string::npos) {
      out += text.substr(pos);
      break;
    }
    std::size_t close = text.find('}', open);
    if (close == std::string::npos) throw Error("'" + text + "': '{' without '}'");
    out += text.substr(pos, open - pos);
    double value = evaluate(text.substr(open + 1, close - open - 1), parameters);
    out += format_number(value);
    pos = close + 1;
  }
  return out;
}

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) parts.push_back(item);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

double number(const std::string& spec, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end) throw Error("--arg " + spec + ": '" + text + "' is not a number");
  return value;
}

// The generated buffer forms; nullopt for the forms `wavekit launch` parses.
std::optional<hsa::ArgumentSpec> generated_argument(const std::string& spec, std::mt19937_64& rng) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string kind = spec.substr(0, colon);
  static const std::set<std::string> kinds = {"f32rand", "f64rand", "i32rand", "u32iota",
                                              "f32fill", "f64fill", "i32fill"};
  if (!kinds.count(kind)) return std::nullopt;
  std::vector<std::string> fields = split(spec.substr(colon + 1), ':');
  if (fields.empty()) throw Error("--arg " + spec + ": no element count");
  double count_value = number(spec, fields[0]);
  if (count_value < 0 || count_value > 1e10 || count_value != std::floor(count_value))
    throw Error("--arg " + spec + ": element count '" + fields[0] + "' is not a count");
  std::size_t count = std::size_t(count_value);
  hsa::ArgumentSpec argument;
  argument.kind = hsa::ArgumentSpec::Kind::file;
  argument.text = spec;
  auto want = [&](std::size_t n) {
    if (fields.size() != n)
      throw Error("--arg " + spec + ": " + kind + " takes " + std::to_string(n - 1) +
                  " value(s) after the count");
  };
  auto put = [&](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    argument.bytes.insert(argument.bytes.end(), p, p + bytes);
  };
  if (kind == "f32rand" || kind == "f64rand") {
    double lo = 0, hi = 1;
    if (fields.size() == 3) {
      lo = number(spec, fields[1]);
      hi = number(spec, fields[2]);
    } else {
      want(1);
    }
    std::uniform_real_distribution<double> uniform(lo, hi);
    for (std::size_t i = 0; i < count; ++i) {
      double v = uniform(rng);
      if (kind == "f32rand") {
        float f = float(v);
        put(&f, 4);
      } else {
        put(&v, 8);
      }
    }
  } else if (kind == "i32rand") {
    want(3);
    std::uniform_int_distribution<std::int64_t> uniform(std::int64_t(number(spec, fields[1])),
                                                        std::int64_t(number(spec, fields[2])));
    for (std::size_t i = 0; i < count; ++i) {
      std::int32_t v = std::int32_t(uniform(rng));
      put(&v, 4);
    }
  } else if (kind == "u32iota") {
    want(1);
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t v = std::uint32_t(i);
      put(&v, 4);
    }
  } else {
    want(2);
    double v = number(spec, fields[1]);
    for (std::size_t i = 0; i < count; ++i) {
      if (kind == "f32fill") {
        float f = float(v);
        put(&f, 4);
      } else if (kind == "f64fill") {
        put(&v, 8);
      } else {
        std::int32_t n = std::int32_t(v);
        put(&n, 4);
      }
    }
  }
  if (argument.bytes.empty()) argument.bytes.resize(1);
  return argument;
}

std::string resolve_kernel(const codeobj::CodeObject& object, const std::string& wanted,
                           const std::string& path) {
  std::vector<std::string> exact, by_name;
  std::string names;
  for (const auto& kernel : object.kernels()) {
    names += (names.empty() ? "" : ", ") + llvm::demangle(kernel.name);
    if (kernel.name == wanted) exact.push_back(kernel.name);
    std::string demangled = llvm::demangle(kernel.name);
    std::string base = demangled.substr(0, demangled.find('('));
    if (base.rfind("void ", 0) == 0) base = base.substr(5);
    // "ns::k<int>" matches "k", "k<int>", "ns::k<int>" and the whole spelling.
    std::string unqualified =
        base.substr(base.rfind("::") == std::string::npos ? 0 : base.rfind("::") + 2);
    if (demangled == wanted || base == wanted || unqualified == wanted ||
        kernel_base_name(demangled) == wanted)
      by_name.push_back(kernel.name);
  }
  if (exact.size() == 1) return exact.front();
  if (by_name.size() == 1) return by_name.front();
  if (by_name.size() > 1) {
    std::string list;
    for (const auto& n : by_name) list += (list.empty() ? "" : ", ") + llvm::demangle(n);
    throw Error(path + ": kernel name '" + wanted + "' is ambiguous (" + list +
                "): give the mangled name or the whole signature");
  }
  throw Error(path + ": no kernel named '" + wanted +
              "' (kernels: " + (names.empty() ? "none" : names) + ")");
}

hsa::Dimensions dimensions(const std::vector<std::string>& components, const Parameters& p,
                           const std::string& what) {
  if (components.empty() || components.size() > 3)
    throw Error(what + ": 1 to 3 components (X[,Y[,Z]])");
  hsa::Dimensions d;
  d.count = unsigned(components.size());
  for (std::size_t i = 0; i < components.size(); ++i) {
    std::string text = components[i];
    if (text.size() > 1 && text.front() == '{' && text.back() == '}')
      text = text.substr(1, text.size() - 2);
    double value = std::ceil(evaluate(text, p) - 1e-9);
    if (value < 1 || value > 4294967295.0)
      throw Error(what + ": component '" + components[i] + "' is " + format_number(value) +
                  " (must be 1 to 2^32-1)");
    d.size[i] = std::uint32_t(value);
  }
  return d;
}

struct Decoded {
  InstructionClass cls;
  std::string mnemonic;
  bool waits_for_vector_memory = false;  // an s_waitcnt on vmcnt
  bool multiplies_by_log2e = false;      // a v_mul_f32 by the literal +-log2(e): expf begins
  bool reciprocal = false;               // a v_div_fixup_f32 of the numerator +-1.0: 1/x
  int library_flops = 0;  // what NVIDIA counts for a library call beyond these instructions
  bool starts_memory_phase = false;  // a vmcnt wait for a load issued since the last phase
};

// Library calls whose FLOPs are counted as NVIDIA's, from Nsight Compute on the H200
// (bench/model/h200/mathfuncs.csv: logf 24, powf 61) and, for powf's two parts, from its SASS
// (the log of the base, which nvcc hoists out of loops as clang does, 37; the exp2 with the
// exponent's checks, 24). The HIP shim marks powf's parts by encodings clang does not choose
// itself (src/model/hip/include/hip/hip_runtime.h: v_log_f32_e64 and v_exp_f32_e64 of an
// |operand|); the accurate logf is LLVM's expansion, whose multiply by ln 2's high part
// (0x3f317217) no other expansion has. The count here is what NVIDIA's has beyond the AMD
// instructions' own: the exp part's multiply counts 1, logf's expansion 7.
int library_flops(const isa::Instruction& inst) {
  const bool abs = inst.text.find('|') != std::string::npos;
  if (inst.mnemonic == "v_log_f32_e64" && abs) return 37;  // powf's log part
  if (inst.mnemonic == "v_exp_f32_e64" && abs) return 23;  // powf's exp part
  if (inst.mnemonic.rfind("v_mul_f32", 0) == 0 && inst.text.find("0x3f317217") != std::string::npos)
    return 17;  // logf
  return 0;
}

// The waits on vector memory that begin a dependent memory phase: those that wait for a load
// (a vector memory instruction that returns data) issued after the last such wait. Clang issues
// a wave's independent loads back to back and waits for them one at a time (SwishGradient's
// three: vmcnt(2), vmcnt(1), vmcnt(0)); the later waits end while the first one's latency
// passes, since their loads were in flight with it. NVIDIA's code waits once for such a group
// (its scoreboard), so the group is one latency, not three. Each block is read in order with
// the queue of outstanding vector memory instructions (vmcnt counts loads and stores in issue
// order on gfx9: vmcnt(N) waits for all but the N most recent); a block with one predecessor
// earlier in address order continues that block's queue, any other starts from an unknown one,
// and a wait that reaches past the known queue into it counts as a phase (as every wait did
// before). Returns the waits' addresses.
std::unordered_set<std::uint64_t> memory_phase_waits(const analysis::Program& program) {
  std::unordered_set<std::uint64_t> phases;
  struct Outstanding {
    bool load;
    std::uint64_t sequence;
  };
  struct State {
    std::vector<Outstanding> queue;  // oldest first
    bool unknown_older = true;       // instructions from before the block may be outstanding
    std::uint64_t phase_start = 0;   // instructions issued before this sequence number were in
                                     // flight at the last phase's wait
  };
  for (const analysis::Function& function : program.functions) {
    std::vector<std::optional<State>> at_end(function.blocks.size());
    std::uint64_t sequence = 1;
    for (std::size_t b = 0; b < function.blocks.size(); ++b) {
      const analysis::Block& block = function.blocks[b];
      State state;
      if (block.predecessors.size() == 1 && block.predecessors[0] < b &&
          at_end[block.predecessors[0]])
        state = *at_end[block.predecessors[0]];
      else
        state.phase_start = sequence;
      for (std::size_t i = block.first_instruction;
           i < block.first_instruction + block.instruction_count; ++i) {
        const isa::Instruction& inst = function.instructions[i];
        const isa::MemoryKind kind = inst.memory;
        if (kind == isa::MemoryKind::global || kind == isa::MemoryKind::flat ||
            kind == isa::MemoryKind::scratch || kind == isa::MemoryKind::buffer) {
          const bool load = inst.access == isa::MemoryAccess::load ||
                            (inst.access == isa::MemoryAccess::atomic && inst.writes.vgpr.any());
          state.queue.push_back({load, sequence++});
          continue;
        }
        if (inst.flow == isa::ControlFlow::call) {
          state = State{};
          state.phase_start = sequence;
          continue;
        }
        if (inst.mnemonic != "s_waitcnt") continue;
        const std::size_t at = inst.text.find("vmcnt(");
        if (at == std::string::npos) continue;
        const std::size_t keep = std::size_t(std::strtoul(inst.text.c_str() + at + 6, nullptr, 10));
        const std::size_t waited = state.queue.size() > keep ? state.queue.size() - keep : 0;
        bool phase = waited == 0 && state.unknown_older;
        for (std::size_t q = 0; q < waited; ++q)
          if (state.queue[q].load && state.queue[q].sequence >= state.phase_start) phase = true;
        if (waited > 0 || keep == 0) state.unknown_older = false;
        state.queue.erase(state.queue.begin(), state.queue.begin() + std::ptrdiff_t(waited));
        if (phase) {
          phases.insert(inst.address);
          state.phase_start = sequence;
        }
      }
      at_end[b] = std::move(state);
    }
  }
  return phases;
}

// The results of a packed 32-bit instruction or a VGPR move, each with the VGPRs it reads. The
// decoder's read set has both registers of every 64-bit source of a packed instruction, but
// op_sel and op_sel_hi choose which one each half of the result takes: the lo half reads the
// source's high register where op_sel's bit is set, the hi half where op_sel_hi's bit is set
// (llvm-objdump prints them only where they differ from [0,...] and [1,...]); v_pk_mov_b32's lo
// half is src0's and its hi half src1's, op_sel choosing each one's register. Clang's SLP code
// reads one register of a pair so (HeCBench dct8x8's IDCT8x8). Empty for any other instruction
// and for text this does not parse.
struct ResultReads {
  std::size_t reg = 0;
  std::bitset<256> reads;
};

std::vector<ResultReads> result_reads(const isa::Instruction& inst) {
  const std::string& m = inst.mnemonic;
  const bool pair_move = m.rfind("v_pk_mov_b32", 0) == 0;
  const bool move = m == "v_mov_b32_e32" || m == "v_mov_b32_e64";
  if (!pair_move && !move && m.rfind("v_pk_fma_f32", 0) != 0 && m.rfind("v_pk_mul_f32", 0) != 0 &&
      m.rfind("v_pk_add_f32", 0) != 0)
    return {};
  std::istringstream words(inst.text);
  std::string word;
  words >> word;  // the mnemonic
  std::vector<std::string> operands;
  while (words >> word) {
    const bool more = word.ends_with(',');
    operands.push_back(more ? word.substr(0, word.size() - 1) : word);
    if (!more) break;
  }
  // The VGPRs of an operand: v[a:b] or vN; none for SGPRs and constants.
  auto registers = [](const std::string& operand, unsigned& first, unsigned& last) {
    if (std::sscanf(operand.c_str(), "v[%u:%u]", &first, &last) == 2) return last < 256;
    if (std::sscanf(operand.c_str(), "v%u", &first) == 1 &&
        operand.find('[') == std::string::npos) {
      last = first;
      return first < 256;
    }
    return false;
  };
  if (operands.size() < 2) return {};
  unsigned dst_first = 0, dst_last = 0;
  if (!registers(operands[0], dst_first, dst_last)) return {};
  // Every VGPR the decoder has the instruction read must be one of the operands parsed here.
  std::bitset<256> mentioned;
  if (move) {
    ResultReads result{dst_first, {}};
    unsigned first = 0, last = 0;
    if (registers(operands[1], first, last)) {
      result.reads.set(first);
      mentioned.set(first);
    }
    if (mentioned != inst.reads.vgpr) return {};
    return {result};
  }
  if (dst_last != dst_first + 1) return {};
  auto selects = [&](const std::string& name, int fallback) {
    std::array<int, 3> bits{fallback, fallback, fallback};
    const std::size_t at = inst.text.find(" " + name + ":[");
    if (at == std::string::npos) return bits;
    const char* p = inst.text.c_str() + at + name.size() + 3;
    for (int& bit : bits) {
      if (*p != '0' && *p != '1') break;
      bit = *p - '0';
      p += 2;  // the digit and ',' or ']'
    }
    return bits;
  };
  const std::array<int, 3> lo = selects("op_sel", 0), hi = selects("op_sel_hi", 1);
  ResultReads low{dst_first, {}}, high{dst_last, {}};
  for (std::size_t s = 1; s < operands.size() && s <= lo.size(); ++s) {
    unsigned first = 0, last = 0;
    if (!registers(operands[s], first, last)) continue;
    if (last != first + 1) return {};
    mentioned.set(first).set(last);
    const std::size_t source = s - 1;
    if (pair_move) {
      (source == 0 ? low : high).reads.set(lo[source] ? last : first);
    } else {
      low.reads.set(lo[source] ? last : first);
      high.reads.set(hi[source] ? last : first);
    }
  }
  if (mentioned != inst.reads.vgpr) return {};
  return {low, high};
}

}  // namespace

TrafficResult simulate_traffic(
    const std::vector<std::vector<emu::MemoryAccessRecord>>& waves,
    const std::function<std::optional<AccessInfo>(const emu::MemoryAccessRecord&)>& info,
    const CacheModel& cache) {
  TrafficResult result;
  const unsigned sectors_per_line = std::max(1u, cache.line_bytes / cache.sector_bytes);
  // Sectors a read miss brings in together (aligned within the line).
  const unsigned fetch_sectors =
      std::clamp(cache.dram_fetch_bytes / std::max(1u, cache.sector_bytes), 1u, sectors_per_line);
  const std::uint64_t sets = std::max<std::uint64_t>(
      1, cache.l2_bytes / (std::uint64_t(cache.line_bytes) * cache.associativity));
  struct Line {
    std::uint64_t tag = ~0ull;
    std::uint32_t valid = 0, dirty = 0;
    std::uint32_t fetched_along = 0;  // valid through another sector's DRAM access, not yet read
    std::uint64_t stamp = 0;
  };
  std::vector<Line> lines(sets * cache.associativity);
  std::uint64_t clock = 0;
  // The footprint: which sectors were read and written, a bit each, in groups of 128 (one hash
  // lookup an access, none while accesses stay in the group: three sets of sectors made the
  // footprint most of a large dispatch's model).
  struct Group {
    std::bitset<128> read, written;
  };
  std::unordered_map<std::uint64_t, Group> footprint;
  std::uint64_t last_group = ~0ull;
  Group* group = nullptr;
  auto touch = [&](std::uint64_t sector, bool store, bool atomic) {
    ++clock;
    result.sector_accesses += 1;
    if (sector / 128 != last_group) {
      last_group = sector / 128;
      group = &footprint[last_group];
    }
    if (store || atomic) group->written.set(sector % 128);
    if (!store || atomic) group->read.set(sector % 128);
    std::uint64_t line_address = sector / sectors_per_line;
    unsigned bit = unsigned(sector % sectors_per_line);
    // Hash the set index so power-of-two strides spread as the hardware's hashed sets do.
    std::uint64_t hashed = line_address ^ (line_address >> 13) ^ (line_address >> 27);
    Line* set = &lines[(hashed % sets) * cache.associativity];
    Line* hit = nullptr;
    for (unsigned way = 0; way < cache.associativity; ++way)
      if (set[way].tag == line_address) hit = &set[way];
    if (!hit) {
      Line* victim = &set[0];
      for (unsigned way = 1; way < cache.associativity; ++way)
        if (set[way].stamp < victim->stamp) victim = &set[way];
      result.dram_write_bytes += double(std::popcount(victim->dirty)) * cache.sector_bytes;
      *victim = Line{};
      victim->tag = line_address;
      hit = victim;
    }
    hit->stamp = clock;
    const std::uint32_t mask = 1u << bit;
    if (hit->valid & mask) {
      // A sector that came with another's DRAM access arrived with it: the first access to it
      // waited for DRAM as that one did, and counts as a miss for the hit rate (the latency
      // term's), not for the DRAM bytes.
      if (!(hit->fetched_along & mask)) result.sector_hits += 1;
    } else if (!store || atomic) {
      // A read miss fetches its sector and the others of its DRAM access that are not valid.
      const unsigned first = bit / fetch_sectors * fetch_sectors;
      for (unsigned b = first; b < first + fetch_sectors; ++b)
        if (!(hit->valid & (1u << b))) {
          result.dram_read_bytes += cache.sector_bytes;
          hit->valid |= 1u << b;
          if (b != bit) hit->fetched_along |= 1u << b;
        }
    }
    hit->fetched_along &= ~mask;
    hit->valid |= mask;
    if (store || atomic) hit->dirty |= mask;
  };
  // Per-unit L1s: sector-granular, LRU, fully associative within 4-way sets of lines.
  struct L1 {
    std::vector<Line> lines;
    std::uint64_t clock = 0;
  };
  const unsigned l1_ways = 4;
  const std::uint64_t l1_sets =
      cache.l1_bytes
          ? std::max<std::uint64_t>(1, cache.l1_bytes / (std::uint64_t(cache.line_bytes) * l1_ways))
          : 0;
  std::vector<L1> l1s(cache.units && cache.l1_bytes ? cache.units : 0);
  for (auto& l1 : l1s) l1.lines.resize(l1_sets * l1_ways);
  // Returns true when the load hits in the unit's L1 (and allocates it otherwise).
  auto l1_load = [&](L1& l1, std::uint64_t sector) {
    ++l1.clock;
    result.l1_sector_accesses += 1;
    std::uint64_t line_address = sector / sectors_per_line;
    std::uint32_t mask = 1u << unsigned(sector % sectors_per_line);
    Line* set = &l1.lines[(line_address % l1_sets) * l1_ways];
    Line* hit = nullptr;
    for (unsigned way = 0; way < l1_ways; ++way)
      if (set[way].tag == line_address) hit = &set[way];
    if (!hit) {
      Line* victim = &set[0];
      for (unsigned way = 1; way < l1_ways; ++way)
        if (set[way].stamp < victim->stamp) victim = &set[way];
      *victim = Line{};
      victim->tag = line_address;
      hit = victim;
    }
    hit->stamp = l1.clock;
    bool was = hit->valid & mask;
    hit->valid |= mask;
    if (was) result.l1_sector_hits += 1;
    return was;
  };
  auto l1_invalidate = [&](L1& l1, std::uint64_t sector) {
    std::uint64_t line_address = sector / sectors_per_line;
    Line* set = &l1.lines[(line_address % l1_sets) * l1_ways];
    for (unsigned way = 0; way < l1_ways; ++way)
      if (set[way].tag == line_address)
        set[way].valid &= ~(1u << unsigned(sector % sectors_per_line));
  };
  std::size_t current_wave = 0;
  std::vector<std::uint64_t> sectors;
  auto process = [&](const emu::MemoryAccessRecord& record) {
    if (record.kind != emu::MemoryAccessKind::global &&
        record.kind != emu::MemoryAccessKind::flat && record.kind != emu::MemoryAccessKind::scalar)
      return;
    std::optional<AccessInfo> access = info(record);
    if (!access) return;
    sectors.clear();
    for (std::uint64_t address : record.addresses) {
      if (record.kind == emu::MemoryAccessKind::flat && address >= emu::kSharedApertureBase)
        continue;  // LDS or private through a generic pointer
      std::uint64_t first = address / cache.sector_bytes;
      std::uint64_t last =
          (address + std::max(1u, access->bytes_per_lane) - 1) / cache.sector_bytes;
      for (std::uint64_t s = first; s <= last; ++s) sectors.push_back(s);
    }
    std::sort(sectors.begin(), sectors.end());
    sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
    L1* l1 = nullptr;
    if (!l1s.empty())
      l1 = &l1s[(current_wave / std::max(1u, cache.waves_per_workgroup)) % l1s.size()];
    for (std::uint64_t s : sectors) {
      if (l1 && !access->store && !access->atomic && l1_load(*l1, s)) continue;
      if (l1 && (access->store || access->atomic)) l1_invalidate(*l1, s);
      touch(s, access->store, access->atomic);
    }
  };
  const std::size_t batch = std::max(1u, cache.concurrent_waves);
  for (std::size_t start = 0; start < waves.size(); start += batch) {
    std::size_t end = std::min(waves.size(), start + batch);
    std::size_t longest = 0;
    for (std::size_t w = start; w < end; ++w) longest = std::max(longest, waves[w].size());
    for (std::size_t k = 0; k < longest; ++k)
      for (std::size_t w = start; w < end; ++w)
        if (k < waves[w].size()) {
          current_wave = w;
          process(waves[w][k]);
        }
  }
  for (const Line& line : lines)
    result.dram_write_bytes += double(std::popcount(line.dirty)) * cache.sector_bytes;
  std::size_t read = 0, written = 0, touched = 0;
  for (const auto& [index, sectors] : footprint) {
    read += sectors.read.count();
    written += sectors.written.count();
    touched += (sectors.read | sectors.written).count();
  }
  result.footprint_read_bytes = double(read) * cache.sector_bytes;
  result.footprint_write_bytes = double(written) * cache.sector_bytes;
  result.footprint_bytes = double(touched) * cache.sector_bytes;
  return result;
}

KernelModel count_launch(const LaunchSpec& spec, const CountOptions& options) {
  std::vector<std::uint8_t> bytes = read_file(spec.code_object);
  codeobj::CodeObject object = codeobj::CodeObject::parse(bytes, spec.code_object);
  const std::string symbol = resolve_kernel(object, spec.kernel, spec.code_object);

  hsa::LaunchRequest request;
  request.code_object = spec.code_object;
  request.kernel = symbol;
  request.block = dimensions(spec.block, spec.parameters, "--block");
  if (!spec.blocks.empty() && !spec.grid.empty())
    throw Error("give the launch as blocks or as a grid of work-items, not both");
  if (!spec.blocks.empty()) {
    hsa::Dimensions blocks = dimensions(spec.blocks, spec.parameters, "--blocks");
    request.grid = blocks;
    request.grid.count = std::max(blocks.count, request.block.count);
    for (int axis = 0; axis < 3; ++axis) {
      std::uint64_t items = std::uint64_t(blocks.size[axis]) * request.block.size[axis];
      if (items > 0xffffffffull) throw Error("--blocks: more than 2^32 work-items along an axis");
      request.grid.size[axis] = std::uint32_t(items);
    }
  } else if (!spec.grid.empty()) {
    request.grid = dimensions(spec.grid, spec.parameters, "--grid");
  } else {
    throw Error("no launch geometry: give --blocks (workgroups) or --grid (work-items)");
  }
  std::mt19937_64 rng(spec.seed);
  for (const std::string& raw : spec.arguments) {
    std::string text = substitute(raw, spec.parameters);
    if (auto generated = generated_argument(text, rng))
      request.arguments.push_back(std::move(*generated));
    else
      request.arguments.push_back(hsa::parse_argument(text));
  }
  if (!spec.dynamic_lds.empty()) {
    std::string text = spec.dynamic_lds;
    if (text.size() > 1 && text.front() == '{' && text.back() == '}')
      text = text.substr(1, text.size() - 2);
    double lds = evaluate(text, spec.parameters);
    if (!(lds >= 0 && lds <= 0xffffffffu))
      throw Error("--lds: not a byte count: " + spec.dynamic_lds);
    request.dynamic_lds_bytes = std::uint32_t(std::ceil(lds));
  }
  request.host_threads = spec.host_threads;
  request.record_instruction_counts = true;
  request.record_memory_accesses = options.simulate_cache;
  request.keep_memory_records = options.simulate_cache;
  hsa::LaunchOutcome outcome = hsa::launch(request);
  if (!outcome.ok)
    throw Error("kernel " + llvm::demangle(symbol) +
                " did not run to completion on the emulator: " + outcome.error);

  DispatchRecords records;
  for (int axis = 0; axis < 3; ++axis) {
    records.grid[axis] = request.grid.size[axis];
    records.block[axis] = request.block.size[axis];
  }
  records.dynamic_lds_bytes = request.dynamic_lds_bytes;
  // The kernel's object: the one loaded first (no libraries are loaded here).
  records.object_base = outcome.object_bases.empty() ? 0 : outcome.object_bases.front().second;
  records.instruction_counts = std::move(outcome.instruction_counts);
  records.memory_records = std::move(outcome.memory_records);
  records.waves = outcome.waves;
  records.instructions = outcome.instructions;
  records.waves_per_workgroup = outcome.waves_per_workgroup;
  KernelModel model = count_dispatch(object, symbol, records, options, spec.code_object);
  model.parameters = spec.parameters;
  return model;
}

KernelModel count_dispatch(const codeobj::CodeObject& object, const std::string& symbol,
                           const DispatchRecords& records, const CountOptions& options,
                           const std::string& origin) {
  const codeobj::Kernel* kernel_info = object.find_kernel(symbol);
  const std::uint64_t base = records.object_base;
  isa::Decoder decoder(object.target().processor);
  std::map<std::uint64_t, Decoded> decoded;  // by pc, in address order
  for (const emu::InstructionCount& count : records.instruction_counts) {
    if (count.object != base) continue;
    std::optional<isa::Instruction> inst;
    for (std::uint64_t size : {16u, 12u, 8u, 4u}) {
      std::span<const std::uint8_t> code;
      try {
        code = object.read(count.pc, size);
      } catch (const Error&) {
        continue;
      }
      if (code.size() < 4) continue;
      inst = decoder.decode(code, count.pc);
      if (inst) break;
    }
    if (!inst)
      throw Error(origin + ": cannot decode the executed instruction at " +
                  std::to_string(count.pc));
    unsigned dst = unsigned(inst->writes.vgpr.count() + inst->writes.agpr.count());
    Decoded d{classify(inst->mnemonic, std::string(isa::to_string(inst->memory)),
                       std::string(isa::to_string(inst->access)), dst),
              inst->mnemonic,
              inst->mnemonic == "s_waitcnt" && inst->text.find("vmcnt") != std::string::npos,
              inst->mnemonic.rfind("v_mul_f32", 0) == 0 &&
                  (inst->text.find("0x3fb8aa3b") != std::string::npos ||
                   inst->text.find("0xbfb8aa3b") != std::string::npos),
              inst->mnemonic.rfind("v_div_fixup_f32", 0) == 0 &&
                  (inst->text.ends_with(", 1.0") || inst->text.ends_with(", -1.0")),
              library_flops(*inst)};
    if (d.library_flops) {
      d.cls.per_lane.emplace_back("ops.fp32.library", 1);
      d.cls.per_lane.emplace_back("flops.fp32", d.library_flops);
    }
    decoded.emplace(count.pc, std::move(d));
  }
  // Packed FP32 arithmetic (v_pk_fma/mul/add_f32) counts two elements; where clang's SLP
  // vectorizer paired chains of unequal length, one half's result is never used, and NVIDIA's
  // scalar code has no such operation: that half counts nothing (qrg icnd, fhd, IDCT8x8). A
  // value is dead when every path from its instruction, followed through the blocks after it (a
  // loop's back edge too) while EXEC is not written, writes its register before a live read, or
  // ends the program; an EXEC write, a call or a jump the analysis cannot follow leaves the
  // answer to the analysis's liveness (conservative: a masked write ends nothing). A read is
  // live unless it is made only by dead results of packed instructions or moves: an unused half
  // is often the end of a chain of unused halves (IDCT8x8's accumulations, each half's sum
  // feeding the next FMA's same half), so deadness is iterated until nothing changes, starting
  // from nothing dead (a cycle of values that only read each other stays live).
  std::optional<analysis::Program> program;
  {
    struct Candidate {
      std::uint64_t pc;
      std::size_t function, index;
      const analysis::Block* block;
      std::vector<ResultReads> results;
      bool counted;  // packed FP arithmetic whose halves are counted (moves only pass values on)
    };
    std::vector<Candidate> candidates;
    for (auto& [pc, d] : decoded) {
      const std::string& m = d.mnemonic;
      if (m.rfind("v_pk_fma_f32", 0) != 0 && m.rfind("v_pk_mul_f32", 0) != 0 &&
          m.rfind("v_pk_add_f32", 0) != 0)
        continue;
      if (!program) program = analysis::analyze(analysis::make_input(object));
      const analysis::Function* function = program->function_containing(pc);
      if (!function) continue;
      const std::size_t f = std::size_t(function - program->functions.data());
      if (std::none_of(candidates.begin(), candidates.end(),
                       [&](const Candidate& c) { return c.function == f; }))
        for (std::size_t i = 0; i < function->instructions.size(); ++i) {
          const isa::Instruction& inst = function->instructions[i];
          const analysis::Block* block = program->block_containing(inst.address);
          std::vector<ResultReads> results = result_reads(inst);
          if (!block || results.empty()) continue;
          const bool counted = inst.mnemonic.rfind("v_pk_mov_b32", 0) != 0 &&
                               inst.mnemonic.rfind("v_mov_b32", 0) != 0;
          candidates.push_back({inst.address, f, i, block, std::move(results), counted});
        }
    }
    std::optional<analysis::Liveness> liveness;
    std::set<std::pair<std::uint64_t, std::size_t>> dead_values;  // (address, register)
    std::unordered_map<std::uint64_t, const Candidate*> candidate_at;
    for (const Candidate& c : candidates) candidate_at.emplace(c.pc, &c);
    // Whether `next` reads `reg` for a result that is not known to be dead.
    auto live_read = [&](const isa::Instruction& next, std::size_t reg) {
      const auto at = candidate_at.find(next.address);
      if (at == candidate_at.end()) return bool(next.reads.vgpr[reg]);
      for (const ResultReads& result : at->second->results)
        if (result.reads[reg] && !dead_values.count({next.address, result.reg})) return true;
      return false;
    };
    auto dead = [&](const Candidate& c, std::size_t reg) {
      const analysis::Function& function = program->functions[c.function];
      enum { read, written, unknown, through };
      auto scan = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i) {
          const isa::Instruction& next = function.instructions[i];
          if (live_read(next, reg)) return read;
          if (next.writes.exec() || next.flow == isa::ControlFlow::call ||
              next.flow == isa::ControlFlow::indirect)
            return unknown;
          if (next.writes.vgpr[reg]) return written;
        }
        return through;
      };
      auto live_after = [&] {
        if (!liveness) liveness.emplace(*program);
        return bool(liveness->live_after(c.function, c.index).vgpr[reg]);
      };
      std::vector<std::size_t> work;
      std::unordered_set<std::size_t> seen;
      auto follow = [&](const analysis::Block& from) {
        if (!from.external_successors.empty()) return false;
        for (std::size_t s : from.successors)
          if (seen.insert(s).second) work.push_back(s);
        return true;
      };
      const analysis::Block* at = c.block;
      std::size_t from = c.index + 1, to = c.block->first_instruction + c.block->instruction_count;
      while (true) {
        const auto outcome = scan(from, to);
        if (outcome == read) return false;
        if (outcome == unknown || (outcome == through && !follow(*at))) return !live_after();
        if (work.empty()) return true;  // every path wrote it or ended the program
        at = &function.blocks[work.back()];
        work.pop_back();
        from = at->first_instruction;
        to = from + at->instruction_count;
      }
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (const Candidate& c : candidates)
        for (const ResultReads& result : c.results)
          if (!dead_values.count({c.pc, result.reg}) && dead(c, result.reg)) {
            dead_values.insert({c.pc, result.reg});
            changed = true;
          }
    }
    for (const Candidate& c : candidates) {
      const auto d = decoded.find(c.pc);
      if (!c.counted || d == decoded.end()) continue;
      const double live_halves =
          double(std::count_if(c.results.begin(), c.results.end(), [&](const ResultReads& result) {
            return !dead_values.count({c.pc, result.reg});
          }));
      for (auto& [key, weight] : d->second.cls.per_lane)
        if (key.rfind("flops.fp32", 0) == 0 || key.rfind("ops.fp32.", 0) == 0)
          weight *= live_halves / 2;
    }
  }
  {
    if (!program) program = analysis::analyze(analysis::make_input(object));
    const std::unordered_set<std::uint64_t> phase_waits = memory_phase_waits(*program);
    for (auto& [pc, d] : decoded)
      d.starts_memory_phase = d.waits_for_vector_memory && phase_waits.count(pc);
  }
  // Divisions: the FP instructions of an expansion (from v_div_scale to v_div_fixup) count no
  // FLOPs of their own; the v_div_fixup carries NVIDIA's count for the whole
  // division (docs/model.md: fp32 10 FLOP, a reciprocal 1/x 5; fp64 15 FLOP plus 2 fp32 FLOP).
  // A reciprocal: nvcc's 1.0f / x is MUFU.RCP, 2 FFMA and an FADD, not the division's sequence
  // (Nsight Compute on the H200: bench/model/h200/mathfuncs.csv).
  // Integer divisions: clang expands a 32-bit integer division through the float reciprocal
  // (v_cvt_f32_u32, v_rcp_iflag_f32, a v_mul_f32 by 0x4f7ffffe, v_cvt_u32_f32...); NVIDIA's
  // expansion has no FP arithmetic (I2F, MUFU.RCP, integer multiply-adds). The multiply that
  // follows a v_rcp_iflag_f32 is counted as integer work, not as a FLOP.
  {
    bool pending = false;
    for (auto& [pc, d] : decoded) {
      std::string m = d.mnemonic;
      for (const char* suffix : {"_e32", "_e64"})
        if (m.size() > 4 && m.ends_with(suffix)) m.resize(m.size() - 4);
      if (m == "v_rcp_iflag_f32") {
        pending = true;
        continue;
      }
      if (pending && m == "v_mul_f32") {
        d.cls.per_lane.clear();
        d.cls.per_lane.emplace_back("ops.valu", 1);
        d.cls.per_lane.emplace_back("ops.int", 1);
        pending = false;
      }
    }
  }
  // Which instructions belong to a division's expansion is read from the registers, not from
  // the addresses: the scheduler interleaves expansions with each other and with the code
  // around them (che's Laplacian: three fp64 divisions, the second one's Newton steps after
  // the first one's v_div_fixup, the stencil's own adds inside the first one's span). Each
  // block is read in order: a v_div_scale's results belong to a new division, or to the open
  // one whose first v_div_scale read the same registers (the denominator's and the numerator's
  // scaling); an instruction that reads a register holding a division's value is part of that
  // division (its results too), until the division's v_div_fixup, which reads the last of them
  // and ends it; any other write ends what the register held.
  {
    std::unordered_map<std::uint64_t, std::string> member;  // pc -> the division's precision
    std::unordered_set<std::uint64_t> fixups;
    for (const analysis::Function& function : program->functions)
      for (const analysis::Block& block : function.blocks) {
        std::array<int, 256> division{};  // per VGPR: the division whose value it holds (0: none)
        std::map<int, std::string> precision;
        std::map<int, std::pair<std::bitset<256>, std::bitset<128>>> scaled;  // open: its sources
        int next = 1;
        for (std::size_t i = block.first_instruction;
             i < block.first_instruction + block.instruction_count; ++i) {
          const isa::Instruction& inst = function.instructions[i];
          const std::string& m = inst.mnemonic;
          int owner = 0;
          if (m.rfind("v_div_scale_", 0) == 0) {
            const std::pair sources{inst.reads.vgpr, inst.reads.sgpr};
            for (const auto& [open, read] : scaled)
              if (read == sources) owner = open;
            if (!owner) {
              owner = next++;
              precision[owner] = m.find("_f64") != std::string::npos ? "fp64" : "fp32";
              scaled[owner] = sources;
            }
          } else {
            for (std::size_t r = 0; r < 256 && !owner; ++r)
              if (inst.reads.vgpr[r]) owner = division[r];
          }
          if (owner && m.rfind("v_div_fixup_", 0) == 0) {
            fixups.insert(inst.address);
            member[inst.address] = precision[owner];
            for (int& d : division)
              if (d == owner) d = 0;
            scaled.erase(owner);
            owner = 0;
          } else if (owner) {
            member[inst.address] = precision[owner];
          }
          for (std::size_t r = 0; r < 256; ++r)
            if (inst.writes.vgpr[r]) division[r] = owner;
        }
      }
    for (auto& [pc, d] : decoded) {
      auto found = member.find(pc);
      if (found == member.end() || d.library_flops) continue;  // (a marked call keeps its count)
      const std::string& open = found->second;
      auto& lanes = d.cls.per_lane;
      if (fixups.count(pc)) {
        lanes.erase(std::remove_if(lanes.begin(), lanes.end(),
                                   [](const auto& e) { return e.first.rfind("flops.", 0) == 0; }),
                    lanes.end());
        lanes.emplace_back("ops." + open + ".div", 1);
        if (open == "fp32") {
          lanes.emplace_back("flops.fp32", d.reciprocal ? 5 : 10);
        } else {
          lanes.emplace_back("flops.fp64", 15);
          lanes.emplace_back("flops.fp32", 2);
        }
        continue;
      }
      lanes.erase(std::remove_if(lanes.begin(), lanes.end(),
                                 [&](const auto& e) { return e.first == "flops." + open; }),
                  lanes.end());
    }
  }

  // The denormal-range wrappers LLVM puts around the hardware log2 and exp2 (llvm.log2.f32,
  // llvm.exp2.f32: exp2f, log2f, the shim's fast powf and tanhf): log2 of an input scaled by
  // 2^32 where it is tiny, then a v_sub of 32.0 (or 0) chosen by v_cndmask; exp2 of an argument
  // to which a v_add (or the addend of a v_fma/v_fmac) gives 64.0 (or 0) where it is below
  // -126, the result scaled back by v_ldexp. NVIDIA's MUFU.LG2 and MUFU.EX2 have no such
  // arithmetic (exp2f is 0 FLOP on the H200, -use_fast_math's powf 1: the multiply,
  // bench/model/h200/mathfuncs.csv): the wrapper's add counts none, a fused one its multiply
  // (none where the range compare's v_mul computed that product already).
  // Found per block by the registers: the v_sub reads a v_log_f32 result and a select of 32.0;
  // the add, whose result a v_exp_f32 reads next, a select of 64.0 (the constants' registers
  // as the function's last v_mov_b32 of a literal before, in address order).
  {
    auto operands = [](const std::string& text) {
      std::vector<std::string> out;
      std::size_t space = text.find(' ');
      if (space == std::string::npos) return out;
      std::stringstream list(text.substr(space + 1));
      std::string item;
      while (std::getline(list, item, ',')) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        out.push_back(item);
      }
      return out;
    };
    auto vgpr = [](const std::string& operand) -> int {
      if (operand.size() < 2 || operand[0] != 'v' || operand[1] < '0' || operand[1] > '9')
        return -1;
      return std::atoi(operand.c_str() + 1);
    };
    enum Source { none, log_result, select_32, select_64 };
    for (const analysis::Function& function : program->functions) {
      std::unordered_map<int, std::uint32_t> constant;  // VGPR -> its literal (address order)
      std::unordered_map<std::uint64_t, std::unordered_map<int, std::uint32_t>> constants_at;
      for (const isa::Instruction& inst : function.instructions) {
        constants_at[inst.address] = constant;
        const std::vector<std::string> ops = operands(inst.text);
        for (std::size_t r = 0; r < 256; ++r)
          if (inst.writes.vgpr[r]) constant.erase(int(r));
        if (inst.mnemonic.rfind("v_mov_b32", 0) == 0 && ops.size() == 2 && vgpr(ops[0]) >= 0 &&
            ops[1].rfind("0x", 0) == 0)
          constant[vgpr(ops[0])] = std::uint32_t(std::stoul(ops[1], nullptr, 16));
      }
      for (const analysis::Block& block : function.blocks) {
        std::array<Source, 256> source{};
        const std::size_t end = block.first_instruction + block.instruction_count;
        for (std::size_t i = block.first_instruction; i < end; ++i) {
          const isa::Instruction& inst = function.instructions[i];
          const std::string& m = inst.mnemonic;
          const std::vector<std::string> ops = operands(inst.text);
          auto from = [&](std::size_t k) {
            const int r = k < ops.size() ? vgpr(ops[k]) : -1;
            return r >= 0 && r < 256 ? source[std::size_t(r)] : none;
          };
          // Read by a v_exp_f32 before it is written again in the block.
          auto feeds_exp = [&](int r) {
            for (std::size_t j = i + 1; j < end && r >= 0; ++j) {
              const isa::Instruction& next = function.instructions[j];
              if (next.reads.vgpr[std::size_t(r)]) return next.mnemonic.rfind("v_exp_f32", 0) == 0;
              if (next.writes.vgpr[std::size_t(r)]) return false;
            }
            return false;
          };
          // A fused range add recomputes the product the range compare's v_mul computed (the
          // same operands, neither written since): that v_mul is the product NVIDIA counts.
          auto product_computed = [&](std::size_t at, const std::string& a, const std::string& b) {
            for (std::size_t j = at; j-- > block.first_instruction;) {
              const isa::Instruction& before = function.instructions[j];
              const std::vector<std::string> o = operands(before.text);
              if (before.mnemonic.rfind("v_mul_f32", 0) == 0 && o.size() == 3 &&
                  ((o[1] == a && o[2] == b) || (o[1] == b && o[2] == a)))
                return true;
              for (const std::string& r : {a, b}) {
                const std::string bare = r.substr(r.find_first_not_of("-|"));
                const int v = vgpr(bare);
                if (v >= 0 && before.writes.vgpr[std::size_t(v)]) return false;
              }
            }
            return false;
          };
          int fused = -1;  // the FLOPs a wrapper keeps (-1: not a wrapper)
          const int d = ops.empty() ? -1 : vgpr(ops[0]);
          if (m.rfind("v_sub_f32", 0) == 0 && ops.size() == 3 && from(1) == log_result &&
              from(2) == select_32)
            fused = 0;
          else if (m.rfind("v_add_f32", 0) == 0 && ops.size() == 3 &&
                   (from(1) == select_64 || from(2) == select_64) && feeds_exp(d))
            fused = 0;
          else if ((m.rfind("v_fmac_f32", 0) == 0 && ops.size() == 3 && d >= 0 &&
                    source[std::size_t(d)] == select_64 && feeds_exp(d)) ||
                   (m.rfind("v_fma_f32", 0) == 0 && ops.size() == 4 && from(3) == select_64 &&
                    feeds_exp(d)))
            fused = product_computed(i, ops[1], ops[2]) ? 0 : 1;
          if (fused >= 0) {
            auto found = decoded.find(inst.address);
            if (found != decoded.end() && !found->second.library_flops) {
              // Reclassified: the range add as "other" (as the selects and v_ldexp), a fused
              // one as its multiply, so that the ops still sum to the FLOPs.
              auto& lanes = found->second.cls.per_lane;
              lanes.erase(std::remove_if(lanes.begin(), lanes.end(),
                                         [](const auto& e) {
                                           return e.first == "flops.fp32" ||
                                                  e.first.rfind("ops.fp32.", 0) == 0;
                                         }),
                          lanes.end());
              lanes.emplace_back(fused ? "ops.fp32.mul" : "ops.fp32.other", 1);
              if (fused) lanes.emplace_back("flops.fp32", fused);
            }
          }
          Source written = none;
          if (m.rfind("v_log_f32", 0) == 0) written = log_result;
          if (m.rfind("v_cndmask_b32", 0) == 0 && ops.size() >= 3 && ops[1] == "0") {
            const auto& known = constants_at[inst.address];
            const int r = vgpr(ops[2]);
            auto value = known.find(r);
            if (value != known.end() && value->second == 0x42000000u) written = select_32;
            if (value != known.end() && value->second == 0x42800000u) written = select_64;
          }
          for (std::size_t r = 0; r < 256; ++r)
            if (inst.writes.vgpr[r]) source[r] = written;
        }
      }
    }
  }

  // expf: LLVM's gfx90a expansion (v_mul_f32 by log2(e), a v_fma/v_fmac pair for the low bits,
  // v_rndne, v_sub, v_add, then v_exp_f32, v_ldexp and range selects) has 7 FLOP; NVIDIA's
  // (4 FFMA, an FADD and an FMUL around MUFU.EX2) has 10. As for divisions, the FP instructions
  // of the expansion up to its v_exp_f32 count no FLOPs of their own and the v_exp_f32 carries
  // NVIDIA's count (docs/model.md). Only with the v_rndne of its range reduction: a multiply by
  // log2(e) straight into v_exp_f32 is the fast __expf, NVIDIA's FMUL and MUFU.EX2, already its
  // count. exp2f and the shim's powf have no such multiply. The expansion is read from the
  // registers, as a division's (the scheduler interleaves it with other code: pointwise's
  // sigmoids with the exp2 of a tanhf): per block in order, a multiply by log2(e) begins one, an
  // instruction that reads a register holding its value joins it (its results too), and the
  // v_exp_f32 that reads one ends it.
  for (const analysis::Function& function : program->functions)
    for (const analysis::Block& block : function.blocks) {
      std::array<int, 256> expansion{};  // per VGPR: the expansion whose value it holds (0: none)
      std::map<int, std::vector<Decoded*>> members;
      std::map<int, bool> reduced;  // a v_rndne_f32 among its members
      int next = 1;
      for (std::size_t i = block.first_instruction;
           i < block.first_instruction + block.instruction_count; ++i) {
        const isa::Instruction& inst = function.instructions[i];
        auto found = decoded.find(inst.address);
        Decoded* d =
            found == decoded.end() || found->second.library_flops ? nullptr : &found->second;
        int owner = 0;
        if (d && d->multiplies_by_log2e) {
          owner = next++;
        } else {
          for (std::size_t r = 0; r < 256 && !owner; ++r)
            if (inst.reads.vgpr[r]) owner = expansion[r];
        }
        if (owner && d) {
          members[owner].push_back(d);
          if (inst.mnemonic.rfind("v_rndne_f32", 0) == 0) reduced[owner] = true;
        }
        if (owner && inst.mnemonic.rfind("v_exp_f32", 0) == 0) {
          if (reduced[owner] && d) {
            for (Decoded* member : members[owner]) {
              auto& lanes = member->cls.per_lane;
              lanes.erase(std::remove_if(lanes.begin(), lanes.end(),
                                         [](const auto& e) { return e.first == "flops.fp32"; }),
                          lanes.end());
            }
            d->cls.per_lane.emplace_back("ops.fp32.exp", 1);
            d->cls.per_lane.emplace_back("flops.fp32", 10);
          }
          for (int& e : expansion)
            if (e == owner) e = 0;
          members.erase(owner);
          owner = 0;
        }
        for (std::size_t r = 0; r < 256; ++r)
          if (inst.writes.vgpr[r]) expansion[r] = owner;
      }
    }

  KernelModel model;
  model.name = llvm::demangle(symbol);
  model.symbol = symbol;
  for (int axis = 0; axis < 3; ++axis) {
    model.threads_per_block[axis] = records.block[axis];
    model.blocks[axis] =
        (std::uint64_t(records.grid[axis]) + records.block[axis] - 1) / records.block[axis];
  }
  for (const char* key : {"flops.fp16", "flops.fp32", "flops.fp64", "ops.valu", "instructions.wave",
                          "sync.memory_phases"})
    model.counts[key] = 0;
  for (const emu::InstructionCount& count : records.instruction_counts) {
    auto found = decoded.find(count.pc);
    if (count.object != base || found == decoded.end()) continue;
    const InstructionClass& cls = found->second.cls;
    for (const auto& [key, weight] : cls.per_issue)
      model.counts[key] += weight * double(count.executions);
    for (const auto& [key, weight] : cls.per_lane)
      model.counts[key] += weight * double(count.lanes);
    if (found->second.waits_for_vector_memory)
      model.counts["sync.vmem_waits"] += double(count.executions);
    if (found->second.starts_memory_phase)
      model.counts["sync.memory_phases"] += double(count.executions);
  }
  if (kernel_info) {
    model.counts["resources.lds_bytes_per_block"] =
        double(kernel_info->descriptor.group_segment_fixed_size) + records.dynamic_lds_bytes;
    model.counts["resources.vgprs"] = kernel_info->descriptor.vgpr_grant(object.target());
  }
  if (options.simulate_cache) {
    auto info = [&](const emu::MemoryAccessRecord& record) -> std::optional<AccessInfo> {
      auto found = decoded.find(record.pc);
      if (found == decoded.end() || found->second.cls.space != "global") return std::nullopt;
      AccessInfo a;
      a.store = found->second.cls.access == "store";
      a.atomic = found->second.cls.access == "atomic";
      a.bytes_per_lane = found->second.cls.bytes_per_lane;
      return a;
    };
    CacheModel cache = options.cache;
    cache.waves_per_workgroup = std::max(1u, records.waves_per_workgroup);
    TrafficResult traffic = simulate_traffic(records.memory_records, info, cache);
    model.counts["dram.read.bytes"] = traffic.dram_read_bytes;
    model.counts["dram.write.bytes"] = traffic.dram_write_bytes;
    model.counts["footprint.read.bytes"] = traffic.footprint_read_bytes;
    model.counts["footprint.write.bytes"] = traffic.footprint_write_bytes;
    model.counts["footprint.bytes"] = traffic.footprint_bytes;
    model.counts["l2.hit_rate"] =
        traffic.sector_accesses ? traffic.sector_hits / traffic.sector_accesses : 0.0;
    model.counts["l2.request.bytes"] = traffic.sector_accesses * cache.sector_bytes;
    if (traffic.l1_sector_accesses)
      model.counts["l1.hit_rate"] = traffic.l1_sector_hits / traffic.l1_sector_accesses;
    model.notes.push_back("DRAM bytes from a " + format_number(double(options.cache.l2_bytes)) +
                          "-byte L2 model (" + std::to_string(options.cache.sector_bytes) +
                          "-byte sectors, " + std::to_string(options.cache.concurrent_waves) +
                          " waves interleaved); dirty sectors are written back by the end");
  }
  model.notes.push_back("counted on the emulator (" + std::string(object.target().processor) +
                        ", " + std::to_string(records.waves) + " waves, " +
                        std::to_string(records.instructions) + " wave-instructions)");
  return model;
}

std::optional<std::string> fit_polynomial(const std::string& parameter,
                                          const std::vector<double>& x,
                                          const std::vector<double>& y, double tolerance,
                                          std::size_t max_degree) {
  const std::size_t n = x.size();
  if (n == 0 || n != y.size()) return std::nullopt;
  for (std::size_t degree = 0; degree <= std::min<std::size_t>(max_degree, n - 1); ++degree) {
    const std::size_t k = degree + 1;
    // Least squares in scaled x (x / max x), normal equations, Gaussian elimination.
    double scale = 1;
    for (double v : x) scale = std::max(scale, std::fabs(v));
    std::vector<long double> a(k * (k + 1), 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<long double> powers(k);
      long double t = x[i] / scale, p = 1;
      for (std::size_t j = 0; j < k; ++j, p *= t) powers[j] = p;
      for (std::size_t r = 0; r < k; ++r) {
        for (std::size_t c = 0; c < k; ++c) a[r * (k + 1) + c] += powers[r] * powers[c];
        a[r * (k + 1) + k] += powers[r] * y[i];
      }
    }
    bool singular = false;
    for (std::size_t col = 0; col < k && !singular; ++col) {
      std::size_t pivot = col;
      for (std::size_t r = col + 1; r < k; ++r)
        if (std::fabs(a[r * (k + 1) + col]) > std::fabs(a[pivot * (k + 1) + col])) pivot = r;
      if (std::fabs(a[pivot * (k + 1) + col]) < 1e-300L) singular = true;
      for (std::size_t c = 0; c <= k; ++c) std::swap(a[col * (k + 1) + c], a[pivot * (k + 1) + c]);
      for (std::size_t r = 0; r < k && !singular; ++r) {
        if (r == col) continue;
        long double f = a[r * (k + 1) + col] / a[col * (k + 1) + col];
        for (std::size_t c = col; c <= k; ++c) a[r * (k + 1) + c] -= f * a[col * (k + 1) + c];
      }
    }
    if (singular) continue;
    std::vector<double> coefficient(k);
    for (std::size_t j = 0; j < k; ++j) {
      long double c = a[j * (k + 1) + k] / a[j * (k + 1) + j];
      c /= std::pow((long double)scale, (long double)j);
      double rounded = std::round(double(c) * 1024) / 1024;  // exact counts have such coefficients
      coefficient[j] = std::fabs(rounded - double(c)) <= 1e-9 * std::max(1.0, std::fabs(double(c)))
                           ? rounded
                           : double(c);
    }
    bool fits = true;
    for (std::size_t i = 0; i < n && fits; ++i) {
      double predicted = 0, p = 1;
      for (std::size_t j = 0; j < k; ++j, p *= x[i]) predicted += coefficient[j] * p;
      fits = std::fabs(predicted - y[i]) <= tolerance * std::max(1.0, std::fabs(y[i]));
    }
    if (!fits) continue;
    std::string expression;
    for (std::size_t j = k; j-- > 0;) {
      if (coefficient[j] == 0 && !(j == 0 && expression.empty())) continue;
      std::string term = format_number(std::fabs(coefficient[j]));
      if (j >= 1) term += "*" + parameter;
      if (j >= 2) term += "^" + std::to_string(j);
      if (expression.empty())
        expression = (coefficient[j] < 0 ? "-" : "") + term;
      else
        expression += (coefficient[j] < 0 ? " - " : " + ") + term;
    }
    return expression;
  }
  return std::nullopt;
}

FitOutcome fit_counts(const std::string& parameter, const std::vector<KernelModel>& runs,
                      const std::optional<KernelModel>& check, double tolerance) {
  if (runs.size() < 2) throw Error("fitting needs at least two runs at different sizes");
  std::vector<double> x;
  for (const auto& run : runs) {
    auto found = run.parameters.find(parameter);
    if (found == run.parameters.end())
      throw Error("run of " + run.name + " has no value of parameter '" + parameter + "'");
    x.push_back(found->second);
  }
  FitOutcome outcome;
  KernelModel& model = outcome.model;
  model = runs.back();
  model.source = "fit";
  model.counts.clear();
  model.notes.clear();
  model.parameters.erase(parameter);
  model.parameters[parameter] = x.back();
  std::set<std::string> keys;
  for (const auto& run : runs)
    for (const auto& [key, value] : run.counts) keys.insert(key);
  auto values = [&](const std::string& key) {
    std::vector<double> y;
    for (const auto& run : runs) y.push_back(run.count(key));
    return y;
  };
  // The L2 model's traffic cannot grow faster than the bytes the kernel moves: its fits are
  // held to the highest degree of the global memory bytes' exact fits. A higher degree through
  // sector-granular runs follows the L2 model's warm-up at the small sizes and explodes when
  // extrapolated (hypterm_2: 14x the measured DRAM bytes at 77 z-blocks from runs at 2-4).
  std::size_t traffic_degree = 0;
  for (const auto& key : keys) {
    if (key.rfind("memory.global.", 0) != 0 || !key.ends_with(".bytes")) continue;
    std::size_t degree = 0;
    while (degree < 3 && !fit_polynomial(parameter, x, values(key), tolerance, degree)) ++degree;
    traffic_degree = std::max(traffic_degree, degree);
  }
  std::vector<std::string> inexact;
  for (const auto& key : keys) {
    std::vector<double> y = values(key);
    if (key == "l2.hit_rate" || key == "l1.hit_rate" || key.rfind("resources.", 0) == 0) {
      model.counts[key] = y.back();  // a rate and the kernel's resources are not extrapolated
      continue;
    }
    // The L2 model's figures are sector-granular, not exact polynomials: a looser tolerance.
    bool traffic =
        key.rfind("dram.", 0) == 0 || key.rfind("footprint.", 0) == 0 || key.rfind("l2.", 0) == 0;
    auto expression =
        traffic ? fit_polynomial(parameter, x, y, std::max(tolerance, 0.02), traffic_degree)
                : fit_polynomial(parameter, x, y, tolerance);
    if (!expression) {
      inexact.push_back(key);
      // Best effort: linear through the last two runs.
      std::size_t n = x.size();
      double slope = (y[n - 1] - y[n - 2]) / (x[n - 1] - x[n - 2]);
      double intercept = y[n - 1] - slope * x[n - 1];
      expression = format_number(slope) + "*" + parameter + (intercept < 0 ? " - " : " + ") +
                   format_number(std::fabs(intercept));
    }
    if (expression->find(parameter) == std::string::npos)
      model.counts[key] = evaluate(*expression, {});
    else
      model.counts_expression[key] = *expression;
  }
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<double> y;
    for (const auto& run : runs) y.push_back(double(run.blocks[axis]));
    bool varies = std::any_of(y.begin(), y.end(), [&](double v) { return v != y.front(); });
    if (!varies) continue;
    auto expression = fit_polynomial(parameter, x, y, 1e-9);
    if (!expression)
      throw Error("launch geometry of " + model.name + " along axis " + std::to_string(axis) +
                  " is no polynomial of " + parameter +
                  " over the fitted sizes: choose sizes that fill whole blocks");
    model.blocks_expression[axis] = *expression;
  }
  std::string sizes;
  for (double v : x) sizes += (sizes.empty() ? "" : ", ") + format_number(v);
  model.notes.push_back("counts fitted as polynomials of " + parameter + " over runs at " +
                        parameter + " = " + sizes);
  if (!inexact.empty()) {
    std::string list;
    for (const auto& k : inexact) list += (list.empty() ? "" : ", ") + k;
    model.notes.push_back(
        "no polynomial of degree <= 3 (traffic: <= " + std::to_string(traffic_degree) +
        ", the global bytes' degree) fits (linear through the last two runs): " + list);
  }
  if (check) {
    auto found = check->parameters.find(parameter);
    if (found == check->parameters.end())
      throw Error("the check run has no value of '" + parameter + "'");
    KernelModel predicted = model.at({{parameter, found->second}});
    std::map<std::string, double> largest_of_kind;
    for (const auto& [key, value] : check->counts) {
      std::string kind = key.substr(0, key.find('.'));
      largest_of_kind[kind] = std::max(largest_of_kind[kind], value);
    }
    for (const auto& [key, actual] : check->counts) {
      if (key == "l2.hit_rate" || key == "l1.hit_rate" || key.rfind("resources.", 0) == 0) continue;
      std::string kind = key.substr(0, key.find('.'));
      if (actual < 0.01 * largest_of_kind[kind]) continue;
      double error = std::fabs(predicted.count(key) - actual) / std::max(1.0, actual);
      if (error > outcome.worst_check_error) {
        outcome.worst_check_error = error;
        outcome.worst_check_count = key;
      }
    }
    std::ostringstream note;
    note << "held-out check at " << parameter << " = " << format_number(found->second)
         << ": worst relative error " << outcome.worst_check_error * 100 << " %";
    if (!outcome.worst_check_count.empty()) note << " (" << outcome.worst_check_count << ")";
    model.notes.push_back(note.str());
  }
  return outcome;
}

std::string build_hip(const std::string& source, const std::string& output_directory,
                      const std::vector<std::string>& extra_flags, const std::string& target) {
  if (!fs::exists(source)) throw Error("HIP source " + source + " does not exist");
  fs::create_directories(output_directory);
  fs::path output =
      fs::path(output_directory) / (fs::path(source).stem().string() + "." + target + ".co");
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string command = quote(WAVEKIT_MODEL_CLANG) +
                        " -x hip --offload-device-only --no-gpu-bundle-output -nogpulib -nogpuinc"
                        " -O2 -mcode-object-version=5 --offload-arch=" +
                        target + " -I" + quote(WAVEKIT_MODEL_HIP_INCLUDE) +
                        // The shim comes first, as hipcc's runtime wrapper header does: headers
                        // a source includes before it (clang's cuda_wrappers/<algorithm>) use
                        // __host__ __device__.
                        // (absolute: a bare file name has an empty parent, and an empty -I
                        // would take the next argument as its directory)
                        " -include hip/hip_runtime.h -I" +
                        quote(fs::absolute(source).parent_path().string());
  for (const auto& flag : extra_flags) command += " " + quote(flag);
  command += " -o " + quote(output.string()) + " " + quote(source) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw Error("cannot run " + std::string(WAVEKIT_MODEL_CLANG));
  std::string diagnostics;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) diagnostics.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0 || !fs::exists(output)) {
    if (diagnostics.size() > 4000) diagnostics = diagnostics.substr(0, 4000) + "\n...";
    throw Error("HIP source " + source + " does not build for " + target + " with " +
                WAVEKIT_MODEL_CLANG + ":\n" + diagnostics);
  }
  return output.string();
}

}  // namespace wavekit::model
