// The per-wave arena and the WAVEKIT note that describes it.
//
// Every instrumented kernel gets one slot of `stride` bytes per wave: the capture region
// (wavekit/probe/capture.h) first, then each declared per-wave variable, 8-byte aligned. The
// rewritten object carries the layout in a note of its own (name "WAVEKIT", type
// kNoteTypeRewrite, a MessagePack map; docs/rewrite.md gives the schema), so that a launcher
// with no other knowledge can allocate waves x stride bytes, pass the pointer in the appended
// kernel argument and decode the slots by variable name afterwards.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wavekit/support/error.h"

namespace wavekit::codeobj {
class CodeObject;
}

namespace wavekit::rewrite {

inline constexpr const char* kNoteName = "WAVEKIT";
inline constexpr std::uint32_t kNoteTypeRewrite = 1;
inline constexpr const char* kNoteSectionName = ".note.wavekit";
// 3 when a variable's elements are derived (CounterSum): a 2.x reader would take its counters
// for the elements. A note without one is written as 2.0, as before; this build reads both.
inline constexpr unsigned kNoteVersionMajor = 3;
inline constexpr unsigned kNoteVersionMinor = 0;
inline constexpr unsigned kNoteVersionMajorPlain = 2;

// One derived element: constant + the sum of coefficient x counter (bbcount's block counts from
// its edge counters, by flow conservation).
struct CounterSum {
  std::int64_t constant = 0;
  std::vector<std::pair<std::uint32_t, std::int64_t>> terms;  // (counter, coefficient)
  bool operator==(const CounterSum&) const = default;
};

struct PerWaveVariable {
  std::string name;
  std::uint32_t element_size = 8;  // bytes per element
  std::uint32_t count = 1;         // elements
  std::uint32_t alignment = 8;     // at least 8 (rewriting.md §7)
  // Optional: what each element stands for, as an original code address (bbcount: one
  // counter per basic block, keyed by the block's original start address).
  std::vector<std::uint64_t> keys;
  // Optional: the elements are not stored but derived. The slot holds `counters` 8-byte
  // counters instead, and element i is sums[i] over them (element_size 8, one sum per element).
  std::uint32_t counters = 0;
  std::vector<CounterSum> sums;

  bool derived() const { return !sums.empty(); }
  // Bytes in the slot: the elements, or the counters they are derived from.
  std::uint64_t size() const {
    return derived() ? std::uint64_t{8} * counters : std::uint64_t{element_size} * count;
  }
};

struct PlacedVariable {
  PerWaveVariable variable;
  std::uint64_t offset = 0;  // from the start of the wave's slot
};

class ArenaLayout {
 public:
  ArenaLayout();  // holds just the capture region

  // Places a variable after the previous ones; throws wavekit::Error for a duplicate or empty
  // name, a zero size, an alignment that is not a power of two, or keys that do not match count.
  const PlacedVariable& add(PerWaveVariable variable);

  const std::vector<PlacedVariable>& variables() const { return variables_; }
  const PlacedVariable* find(const std::string& name) const;
  // Bytes per wave, a multiple of 8 (and of the largest alignment).
  std::uint64_t stride() const;

 private:
  std::vector<PlacedVariable> variables_;
  std::uint64_t end_ = 0;
  std::uint64_t max_alignment_ = 8;
};

// One instrumented kernel, as the launcher needs to know it.
struct InstrumentedKernel {
  std::string name;                    // .name in the AMDGPU note
  std::string descriptor_symbol;       // "<name>.kd"
  std::uint64_t arena_arg_offset = 0;  // kernarg offset of the appended 8-byte arena pointer
  ArenaLayout layout;
};

// A run of relocated code: [new_address, new_address + size) came from original_address on.
// Instructions are copied one for one, so inside a run both sides advance together; inserted
// code sits between runs and maps to the original instruction it precedes.
struct AddressRange {
  std::uint64_t new_address = 0;
  std::uint64_t original_address = 0;
  std::uint64_t size = 0;
};

struct RewriteNote {
  std::string tool;             // "bbcount", "callret", "custom" ...
  std::string original_sha256;  // hex digest of the input object: sites are (hash, address)
  std::string probe_library;    // file name the launcher loads into the same executable ("" none)
  bool needs_hostcall = false;  // the launcher must run the hostcall service
  std::vector<InstrumentedKernel> kernels;
  std::vector<AddressRange> address_map;

  const InstrumentedKernel* find_kernel(const std::string& name) const;  // by name or symbol
  // The original address of a rewritten one; nullopt outside the relocated code.
  std::optional<std::uint64_t> original_address(std::uint64_t new_address) const;
  // For a block start in the rewritten code (possibly in inserted code): the original address
  // of the first relocated instruction at or after it, i.e. the instruction the inserted code
  // runs for. nullopt past the relocated code.
  std::optional<std::uint64_t> original_instruction_at_or_after(std::uint64_t new_address) const;
};

// Lowercase hex SHA-256 of a code object: how the note and the preload cache name an input.
std::string sha256_hex(std::span<const std::uint8_t> bytes);

// The note's descriptor (MessagePack, written with LLVM's msgpack::Document, keys sorted).
std::vector<std::uint8_t> encode_note(const RewriteNote& note);
// Throws wavekit::Error naming `context` and the offending key for anything malformed.
RewriteNote decode_note(std::span<const std::uint8_t> desc, const std::string& context);
// The note of a rewritten code object; nullopt for an object wavekit did not rewrite.
std::optional<RewriteNote> find_note(const codeobj::CodeObject& object);

// The note as JSON (same keys), for `wavekit inspect`-style output and tests.
nlohmann::json note_to_json(const RewriteNote& note);

// The number of waves a dispatch launches: ceil(grid/workgroup) per dimension, times
// ceil(workgroup x*y*z / 64). Throws for zero sizes.
std::uint64_t dispatch_wave_count(const std::uint32_t grid_size[3],
                                  const std::uint16_t workgroup_size[3]);

// What a launcher does for a dispatch of an instrumented kernel: allocate arena_size() bytes
// of zeroed, host-coherent memory, write the header there (fill_arena_header), put the
// arena's address at kernel.arena_arg_offset in the kernarg segment, and after the dispatch
// hand the arena to the tool's reporter. `grid_size` is in work-items, as in the AQL packet.
std::uint64_t arena_size(const InstrumentedKernel& kernel, const std::uint32_t grid_size[3],
                         const std::uint16_t workgroup_size[3]);
void fill_arena_header(std::span<std::uint8_t> arena, const InstrumentedKernel& kernel,
                       const std::uint32_t grid_size[3], const std::uint16_t workgroup_size[3]);

// One wave's slot, decoded: its identity (from the capture region and the header's geometry)
// and a view of its bytes.
struct WaveSlot {
  std::uint64_t wave_id = 0;
  std::uint32_t workgroup_id[3] = {0, 0, 0};
  std::uint32_t wave_in_workgroup = 0;
  std::span<const std::uint8_t> bytes;  // the whole slot (stride bytes)
};
// The slots of the waves that ran (the ones they claimed from the header's next_slot), in
// wave order. Throws wavekit::Error when the arena is shorter than its header says, the
// header's stride disagrees with the note, next_slot is not a slot boundary within the arena,
// or a slot holds no wave of the dispatch or the same wave as another.
std::vector<WaveSlot> read_arena(std::span<const std::uint8_t> arena,
                                 const InstrumentedKernel& kernel);
// Element `index` of a variable in a slot, as an unsigned integer of the variable's element
// size (1, 2, 4 or 8 bytes). A derived element is computed from the slot's counters; one that
// comes out negative or beyond 64 bits cannot be a count: that throws wavekit::Error.
std::uint64_t read_element(const WaveSlot& slot, const PlacedVariable& variable, std::size_t index);
// The plain value of type T at byte `offset` of a slot (a field of a tool's record, as the
// probes laid it out). Throws wavekit::Error when it does not lie inside the slot.
template <typename T>
T read_slot_field(const WaveSlot& slot, std::uint64_t offset) {
  if (offset > slot.bytes.size() || slot.bytes.size() - offset < sizeof(T))
    throw Error("a " + std::to_string(sizeof(T)) + "-byte field at offset " +
                std::to_string(offset) + " lies outside the " + std::to_string(slot.bytes.size()) +
                "-byte slot of wave " + std::to_string(slot.wave_id));
  T value;
  std::memcpy(&value, slot.bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace wavekit::rewrite
