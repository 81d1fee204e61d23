#include "wavekit/rewrite/arena.h"

#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/BinaryFormat/MsgPackWriter.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/codeobj/msgpack_shape.h"
#include "wavekit/probe/capture.h"
#include "wavekit/support/error.h"

namespace wavekit::rewrite {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Reading side: every lookup names the key it wanted, so a corrupt note says what is wrong.
class Reader {
 public:
  explicit Reader(std::string context) : context_(std::move(context)) {}

  [[noreturn]] void bad(const std::string& what) const { fail(context_, "WAVEKIT note: " + what); }

  llvm::msgpack::DocNode field(llvm::msgpack::MapDocNode map, const std::string& key) const {
    auto found = map.find(key);
    if (found == map.end()) bad("missing key '" + key + "'");
    return found->second;
  }
  std::uint64_t integer(llvm::msgpack::MapDocNode map, const std::string& key) const {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() == llvm::msgpack::Type::UInt) return node.getUInt();
    if (node.getKind() == llvm::msgpack::Type::Int && node.getInt() >= 0) return node.getInt();
    bad("'" + key + "' is not an unsigned integer");
  }
  std::string string(llvm::msgpack::MapDocNode map, const std::string& key) const {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() != llvm::msgpack::Type::String) bad("'" + key + "' is not a string");
    return node.getString().str();
  }
  bool boolean(llvm::msgpack::MapDocNode map, const std::string& key) const {
    llvm::msgpack::DocNode node = field(map, key);
    if (node.getKind() != llvm::msgpack::Type::Boolean) bad("'" + key + "' is not a boolean");
    return node.getBool();
  }
  llvm::msgpack::ArrayDocNode array(llvm::msgpack::MapDocNode map, const std::string& key) const {
    llvm::msgpack::DocNode node = field(map, key);
    if (!node.isArray()) bad("'" + key + "' is not an array");
    return node.getArray();
  }
  llvm::msgpack::MapDocNode map_of(llvm::msgpack::DocNode node, const std::string& what) const {
    if (!node.isMap()) bad(what + " is not a map");
    return node.getMap();
  }
  std::int64_t signed_element(llvm::msgpack::DocNode node, const std::string& what) const {
    if (node.getKind() == llvm::msgpack::Type::Int) return node.getInt();
    if (node.getKind() == llvm::msgpack::Type::UInt && node.getUInt() <= INT64_MAX)
      return static_cast<std::int64_t>(node.getUInt());
    bad(what + " is not a 64-bit integer");
  }
  std::uint64_t element(llvm::msgpack::DocNode node, const std::string& what) const {
    if (node.getKind() == llvm::msgpack::Type::UInt) return node.getUInt();
    if (node.getKind() == llvm::msgpack::Type::Int && node.getInt() >= 0) return node.getInt();
    bad(what + " is not an unsigned integer");
  }

 private:
  std::string context_;
};

}  // namespace

ArenaLayout::ArenaLayout() : end_(probe::kCaptureSize) {}

const PlacedVariable& ArenaLayout::add(PerWaveVariable variable) {
  if (variable.name.empty()) throw Error("per-wave variable: the name is empty");
  if (find(variable.name))
    throw Error("per-wave variable '" + variable.name + "' is declared twice");
  if (variable.element_size == 0 || variable.count == 0)
    throw Error("per-wave variable '" + variable.name + "' has size 0");
  variable.alignment = std::max<std::uint32_t>(variable.alignment, 8);
  if (!std::has_single_bit(variable.alignment))
    throw Error("per-wave variable '" + variable.name + "': alignment " +
                std::to_string(variable.alignment) + " is not a power of two");
  if (!variable.keys.empty() && variable.keys.size() != variable.count)
    throw Error("per-wave variable '" + variable.name + "' has " +
                std::to_string(variable.keys.size()) + " keys for " +
                std::to_string(variable.count) + " elements");
  if (variable.derived()) {
    if (variable.element_size != 8 || variable.sums.size() != variable.count)
      throw Error("per-wave variable '" + variable.name +
                  "': derived elements need 8 bytes each and one sum per element");
    for (const CounterSum& sum : variable.sums)
      for (const auto& [counter, coefficient] : sum.terms)
        if (counter >= variable.counters)
          throw Error("per-wave variable '" + variable.name + "': a sum names counter " +
                      std::to_string(counter) + " of " + std::to_string(variable.counters));
  }
  // Every resident wave gets a slot: past this a launcher could not provision the arena.
  constexpr std::uint64_t kMaxSlotBytes = std::uint64_t{256} << 20;
  const std::uint64_t offset = align_up(end_, variable.alignment);
  if (variable.size() > kMaxSlotBytes || offset + variable.size() > kMaxSlotBytes)
    throw Error("per-wave variable '" + variable.name + "': " +
                (variable.derived() ? "8 x " + std::to_string(variable.counters)
                                    : std::to_string(variable.element_size) + " x " +
                                          std::to_string(variable.count)) +
                " bytes would make a wave's arena slot larger than the 256 MiB a launcher "
                "provisions per wave");
  end_ = offset + variable.size();
  max_alignment_ = std::max<std::uint64_t>(max_alignment_, variable.alignment);
  variables_.push_back(PlacedVariable{std::move(variable), offset});
  return variables_.back();
}

const PlacedVariable* ArenaLayout::find(const std::string& name) const {
  for (const PlacedVariable& placed : variables_)
    if (placed.variable.name == name) return &placed;
  return nullptr;
}

std::uint64_t ArenaLayout::stride() const { return align_up(end_, max_alignment_); }

const InstrumentedKernel* RewriteNote::find_kernel(const std::string& name) const {
  for (const InstrumentedKernel& kernel : kernels)
    if (kernel.name == name || kernel.descriptor_symbol == name) return &kernel;
  return nullptr;
}

std::optional<std::uint64_t> RewriteNote::original_address(std::uint64_t new_address) const {
  for (const AddressRange& range : address_map)
    if (new_address >= range.new_address && new_address < range.new_address + range.size)
      return range.original_address + (new_address - range.new_address);
  return std::nullopt;
}

std::optional<std::uint64_t> RewriteNote::original_instruction_at_or_after(
    std::uint64_t new_address) const {
  if (std::optional<std::uint64_t> inside = original_address(new_address)) return inside;
  const AddressRange* next = nullptr;
  for (const AddressRange& range : address_map)
    if (range.new_address > new_address && (!next || range.new_address < next->new_address))
      next = &range;
  if (!next) return std::nullopt;
  return next->original_address;
}

namespace {

bool has_derived_variables(const RewriteNote& note) {
  for (const InstrumentedKernel& kernel : note.kernels)
    for (const PlacedVariable& placed : kernel.layout.variables())
      if (placed.variable.derived()) return true;
  return false;
}

}  // namespace

// The note is written as a stream rather than built as a msgpack::Document: a note of
// thousands of kernels is a million nodes, and building and freeing them cost more than
// writing. The bytes are those of a Document of the same content (maps in ascending key order,
// as its writeToBlob emits them), so that notes stay byte-identical across the two ways.
class NoteWriter {
 public:
  NoteWriter() : stream_(bytes_), writer_(stream_) {}
  // A map of `size` entries; each entry is key(...) then its value.
  void map(std::size_t size) { writer_.writeMapSize(static_cast<std::uint32_t>(size)); }
  void array(std::size_t size) { writer_.writeArraySize(static_cast<std::uint32_t>(size)); }
  void key(std::string_view name) { writer_.write(llvm::StringRef(name)); }
  void value(std::string_view text) { writer_.write(llvm::StringRef(text)); }
  void value(std::uint64_t number) { writer_.write(number); }
  void value(std::int64_t number) { writer_.write(number); }
  void value(bool flag) { writer_.write(flag); }
  std::vector<std::uint8_t> finish() {
    stream_.flush();
    return {bytes_.begin(), bytes_.end()};
  }

 private:
  std::string bytes_;
  llvm::raw_string_ostream stream_;
  llvm::msgpack::Writer writer_;
};

void write_variable(NoteWriter& out, const PlacedVariable& placed) {
  const PerWaveVariable& variable = placed.variable;
  out.map(variable.derived() ? 8 : 6);
  out.key(".alignment");
  out.value(std::uint64_t{variable.alignment});
  out.key(".count");
  out.value(std::uint64_t{variable.count});
  if (variable.derived()) {
    out.key(".counters");
    out.value(std::uint64_t{variable.counters});
  }
  out.key(".element_size");
  out.value(std::uint64_t{variable.element_size});
  out.key(".keys");
  out.array(variable.keys.size());
  for (std::uint64_t key : variable.keys) out.value(key);
  out.key(".name");
  out.value(variable.name);
  out.key(".offset");
  out.value(placed.offset);
  if (variable.derived()) {
    // Per element: [constant, counter, coefficient, counter, coefficient, ...].
    out.key(".sums");
    out.array(variable.sums.size());
    for (const CounterSum& sum : variable.sums) {
      out.array(1 + 2 * sum.terms.size());
      out.value(sum.constant);
      for (const auto& [counter, coefficient] : sum.terms) {
        out.value(std::uint64_t{counter});
        out.value(coefficient);
      }
    }
  }
}

std::vector<std::uint8_t> encode_note(const RewriteNote& note) {
  NoteWriter out;
  const bool derived = has_derived_variables(note);
  out.map(7);
  out.key("wavekit.address_map");
  out.array(note.address_map.size());
  for (const AddressRange& range : note.address_map) {
    out.array(3);
    out.value(range.new_address);
    out.value(range.original_address);
    out.value(range.size);
  }
  out.key("wavekit.kernels");
  out.array(note.kernels.size());
  for (const InstrumentedKernel& kernel : note.kernels) {
    out.map(6);
    out.key(".arena_arg_offset");
    out.value(kernel.arena_arg_offset);
    out.key(".capture_size");
    out.value(std::uint64_t{probe::kCaptureSize});
    out.key(".name");
    out.value(kernel.name);
    out.key(".stride");
    out.value(kernel.layout.stride());
    out.key(".symbol");
    out.value(kernel.descriptor_symbol);
    out.key(".variables");
    out.array(kernel.layout.variables().size());
    for (const PlacedVariable& placed : kernel.layout.variables()) write_variable(out, placed);
  }
  out.key("wavekit.needs_hostcall");
  out.value(note.needs_hostcall);
  out.key("wavekit.original_sha256");
  out.value(note.original_sha256);
  out.key("wavekit.probe_library");
  out.value(note.probe_library);
  out.key("wavekit.tool");
  out.value(note.tool);
  out.key("wavekit.version");
  out.array(2);
  out.value(std::uint64_t{derived ? kNoteVersionMajor : kNoteVersionMajorPlain});
  out.value(std::uint64_t{derived ? kNoteVersionMinor : 0});
  return out.finish();
}

RewriteNote decode_note(std::span<const std::uint8_t> desc, const std::string& context) {
  Reader reader(context);
  codeobj::check_msgpack_shape(
      std::string_view(reinterpret_cast<const char*>(desc.data()), desc.size()), context,
      "WAVEKIT note");
  llvm::msgpack::Document document;
  if (!document.readFromBlob(
          llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()),
          /*Multi=*/false))
    reader.bad("the descriptor is not valid MessagePack");
  llvm::msgpack::MapDocNode root = reader.map_of(document.getRoot(), "the descriptor");

  llvm::msgpack::ArrayDocNode version = reader.array(root, "wavekit.version");
  const std::uint64_t major =
      version.size() == 2 ? reader.element(version[0], "wavekit.version[0]") : 0;
  if (major != kNoteVersionMajor && major != kNoteVersionMajorPlain)
    reader.bad("unsupported wavekit.version (this build reads " +
               std::to_string(kNoteVersionMajorPlain) + ".x and " +
               std::to_string(kNoteVersionMajor) + ".x)");

  RewriteNote note;
  note.tool = reader.string(root, "wavekit.tool");
  note.original_sha256 = reader.string(root, "wavekit.original_sha256");
  note.probe_library = reader.string(root, "wavekit.probe_library");
  note.needs_hostcall = reader.boolean(root, "wavekit.needs_hostcall");

  for (llvm::msgpack::DocNode node : reader.array(root, "wavekit.kernels")) {
    llvm::msgpack::MapDocNode map = reader.map_of(node, "a wavekit.kernels entry");
    InstrumentedKernel kernel;
    kernel.name = reader.string(map, ".name");
    kernel.descriptor_symbol = reader.string(map, ".symbol");
    kernel.arena_arg_offset = reader.integer(map, ".arena_arg_offset");
    if (reader.integer(map, ".capture_size") != probe::kCaptureSize)
      reader.bad("kernel '" + kernel.name + "': .capture_size is not " +
                 std::to_string(probe::kCaptureSize));
    for (llvm::msgpack::DocNode var_node : reader.array(map, ".variables")) {
      llvm::msgpack::MapDocNode var = reader.map_of(var_node, "a .variables entry");
      PerWaveVariable variable;
      variable.name = reader.string(var, ".name");
      variable.element_size = static_cast<std::uint32_t>(reader.integer(var, ".element_size"));
      variable.count = static_cast<std::uint32_t>(reader.integer(var, ".count"));
      variable.alignment = static_cast<std::uint32_t>(reader.integer(var, ".alignment"));
      for (llvm::msgpack::DocNode key : reader.array(var, ".keys"))
        variable.keys.push_back(reader.element(key, ".keys element"));
      if (var.find(".sums") != var.end()) {
        if (major == kNoteVersionMajorPlain)
          reader.bad("kernel '" + kernel.name + "': derived elements in a 2.x note");
        variable.counters = static_cast<std::uint32_t>(reader.integer(var, ".counters"));
        for (llvm::msgpack::DocNode sum_node : reader.array(var, ".sums")) {
          if (!sum_node.isArray() || sum_node.getArray().size() % 2 != 1)
            reader.bad("a .sums entry is not [constant, counter, coefficient, ...]");
          llvm::msgpack::ArrayDocNode flat = sum_node.getArray();
          CounterSum sum;
          sum.constant = reader.signed_element(flat[0], ".sums constant");
          for (std::size_t i = 1; i < flat.size(); i += 2) {
            const std::uint64_t counter = reader.element(flat[i], ".sums counter");
            if (counter > UINT32_MAX) reader.bad(".sums counter out of range");
            sum.terms.emplace_back(static_cast<std::uint32_t>(counter),
                                   reader.signed_element(flat[i + 1], ".sums coefficient"));
          }
          variable.sums.push_back(std::move(sum));
        }
      }
      const std::uint64_t offset = reader.integer(var, ".offset");
      try {
        if (kernel.layout.add(std::move(variable)).offset != offset)
          reader.bad("kernel '" + kernel.name +
                     "': variable offsets do not follow the layout rule");
      } catch (const Error& error) {
        reader.bad(std::string("kernel '") + kernel.name + "': " + error.what());
      }
    }
    if (reader.integer(map, ".stride") != kernel.layout.stride())
      reader.bad("kernel '" + kernel.name + "': .stride disagrees with its variables");
    note.kernels.push_back(std::move(kernel));
  }

  for (llvm::msgpack::DocNode node : reader.array(root, "wavekit.address_map")) {
    if (!node.isArray() || node.getArray().size() != 3)
      reader.bad("a wavekit.address_map entry is not [new, original, size]");
    llvm::msgpack::ArrayDocNode triple = node.getArray();
    note.address_map.push_back(AddressRange{reader.element(triple[0], "address_map new"),
                                            reader.element(triple[1], "address_map original"),
                                            reader.element(triple[2], "address_map size")});
  }
  return note;
}

std::optional<RewriteNote> find_note(const codeobj::CodeObject& object) {
  for (const codeobj::Note& note : object.notes())
    if (note.name == kNoteName && note.type == kNoteTypeRewrite)
      return decode_note(note.desc, object.name());
  return std::nullopt;
}

nlohmann::json note_to_json(const RewriteNote& note) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const InstrumentedKernel& kernel : note.kernels) {
    nlohmann::json variables = nlohmann::json::array();
    for (const PlacedVariable& placed : kernel.layout.variables()) {
      nlohmann::json variable = {{".name", placed.variable.name},
                                 {".offset", placed.offset},
                                 {".element_size", placed.variable.element_size},
                                 {".count", placed.variable.count},
                                 {".alignment", placed.variable.alignment},
                                 {".keys", placed.variable.keys}};
      if (placed.variable.derived()) {
        nlohmann::json sums = nlohmann::json::array();
        for (const CounterSum& sum : placed.variable.sums) {
          nlohmann::json flat = nlohmann::json::array({sum.constant});
          for (const auto& [counter, coefficient] : sum.terms) {
            flat.push_back(counter);
            flat.push_back(coefficient);
          }
          sums.push_back(flat);
        }
        variable[".counters"] = placed.variable.counters;
        variable[".sums"] = sums;
      }
      variables.push_back(variable);
    }
    kernels.push_back({{".name", kernel.name},
                       {".symbol", kernel.descriptor_symbol},
                       {".arena_arg_offset", kernel.arena_arg_offset},
                       {".stride", kernel.layout.stride()},
                       {".capture_size", probe::kCaptureSize},
                       {".variables", variables}});
  }
  nlohmann::json ranges = nlohmann::json::array();
  for (const AddressRange& range : note.address_map)
    ranges.push_back({range.new_address, range.original_address, range.size});
  const bool derived = has_derived_variables(note);
  return {
      {"wavekit.version",
       {derived ? kNoteVersionMajor : kNoteVersionMajorPlain, derived ? kNoteVersionMinor : 0u}},
      {"wavekit.tool", note.tool},
      {"wavekit.original_sha256", note.original_sha256},
      {"wavekit.probe_library", note.probe_library},
      {"wavekit.needs_hostcall", note.needs_hostcall},
      {"wavekit.kernels", kernels},
      {"wavekit.address_map", ranges}};
}

std::uint64_t arena_size(const InstrumentedKernel& kernel, const std::uint32_t grid_size[3],
                         const std::uint16_t workgroup_size[3]) {
  return probe::kArenaHeaderSize +
         dispatch_wave_count(grid_size, workgroup_size) * kernel.layout.stride();
}

void fill_arena_header(std::span<std::uint8_t> arena, const InstrumentedKernel& kernel,
                       const std::uint32_t grid_size[3], const std::uint16_t workgroup_size[3]) {
  if (arena.size() < arena_size(kernel, grid_size, workgroup_size))
    throw Error("arena for kernel '" + kernel.name + "': " + std::to_string(arena.size()) +
                " bytes, the dispatch needs " +
                std::to_string(arena_size(kernel, grid_size, workgroup_size)));
  probe::ArenaHeader header{};
  std::uint32_t items = 1;
  for (int dim = 0; dim < 3; ++dim) {
    header.workgroup_size[dim] = workgroup_size[dim];
    header.grid_workgroups[dim] = (grid_size[dim] + workgroup_size[dim] - 1) / workgroup_size[dim];
    items *= workgroup_size[dim];
  }
  header.waves_per_workgroup = static_cast<std::uint16_t>((items + 63) / 64);
  header.wave_count = dispatch_wave_count(grid_size, workgroup_size);
  header.stride = kernel.layout.stride();
  header.next_slot = probe::kArenaHeaderSize;
  std::memcpy(arena.data(), &header, sizeof header);
}

std::vector<WaveSlot> read_arena(std::span<const std::uint8_t> arena,
                                 const InstrumentedKernel& kernel) {
  probe::ArenaHeader header;
  if (arena.size() < sizeof header)
    throw Error("arena for kernel '" + kernel.name + "': shorter than its header");
  std::memcpy(&header, arena.data(), sizeof header);
  const std::string where = "arena for kernel '" + kernel.name + "': ";
  if (header.stride != kernel.layout.stride())
    throw Error(where + "header stride " + std::to_string(header.stride) +
                " disagrees with the note's " + std::to_string(kernel.layout.stride()));
  if (arena.size() < probe::kArenaHeaderSize + header.wave_count * header.stride)
    throw Error(where + std::to_string(arena.size()) + " bytes cannot hold the " +
                std::to_string(header.wave_count) + " waves its header announces");
  // The waves claimed slots in the order they started: next_slot says how many did.
  const std::uint64_t claimed_bytes = header.next_slot - probe::kArenaHeaderSize;
  if (header.next_slot < probe::kArenaHeaderSize || claimed_bytes % header.stride != 0 ||
      claimed_bytes / header.stride > header.wave_count)
    throw Error(where + "next_slot " + std::to_string(header.next_slot) +
                " is not the end of one of its " + std::to_string(header.wave_count) + " slots");
  const std::uint32_t size_x = header.workgroup_size[0], size_y = header.workgroup_size[1];
  std::vector<WaveSlot> slots;
  for (std::uint64_t index = 0; index < claimed_bytes / header.stride; ++index) {
    WaveSlot slot;
    slot.bytes = arena.subspan(probe::kArenaHeaderSize + index * header.stride, header.stride);
    probe::CaptureRegion capture;
    std::memcpy(&capture, slot.bytes.data(), sizeof capture);
    // The wave's numbering, the emulator's and the hardware's: lanes hold consecutive flat
    // work-item ids from 64 * wave_in_workgroup, and workgroups count x fastest.
    std::uint32_t id[3];
    for (unsigned dim = 0; dim < 3; ++dim)
      id[dim] = probe::workitem_component(capture.first_workitem, dim);
    const std::uint64_t flat =
        id[0] + std::uint64_t{size_x} * (id[1] + std::uint64_t{size_y} * id[2]);
    bool valid = flat % 64 == 0 && flat / 64 < header.waves_per_workgroup;
    for (unsigned dim = 0; dim < 3; ++dim)
      valid = valid && id[dim] < header.workgroup_size[dim] &&
              capture.workgroup_id[dim] < header.grid_workgroups[dim];
    if (!valid)
      throw Error(
          where + "slot " + std::to_string(index) + " holds no wave of the dispatch (workgroup " +
          std::to_string(capture.workgroup_id[0]) + "," + std::to_string(capture.workgroup_id[1]) +
          "," + std::to_string(capture.workgroup_id[2]) + ", first work-item " +
          std::to_string(id[0]) + "," + std::to_string(id[1]) + "," + std::to_string(id[2]) + ")");
    for (unsigned dim = 0; dim < 3; ++dim) slot.workgroup_id[dim] = capture.workgroup_id[dim];
    slot.wave_in_workgroup = static_cast<std::uint32_t>(flat / 64);
    const std::uint64_t workgroup =
        capture.workgroup_id[0] +
        std::uint64_t{header.grid_workgroups[0]} *
            (capture.workgroup_id[1] +
             std::uint64_t{header.grid_workgroups[1]} * capture.workgroup_id[2]);
    slot.wave_id = workgroup * header.waves_per_workgroup + slot.wave_in_workgroup;
    slots.push_back(slot);
  }
  std::sort(slots.begin(), slots.end(),
            [](const WaveSlot& a, const WaveSlot& b) { return a.wave_id < b.wave_id; });
  for (std::size_t i = 1; i < slots.size(); ++i)
    if (slots[i].wave_id == slots[i - 1].wave_id)
      throw Error(where + "two slots hold wave " + std::to_string(slots[i].wave_id));
  return slots;
}

std::uint64_t read_element(const WaveSlot& slot, const PlacedVariable& variable,
                           std::size_t index) {
  const std::uint32_t size = variable.variable.element_size;
  if (index >= variable.variable.count || (size != 1 && size != 2 && size != 4 && size != 8))
    throw Error("per-wave variable '" + variable.variable.name + "': no integer element " +
                std::to_string(index));
  if (variable.variable.derived()) {
    const CounterSum& sum = variable.variable.sums[index];
    std::int64_t value = sum.constant;
    bool overflow = false;
    for (const auto& [counter, coefficient] : sum.terms) {
      std::uint64_t stored = 0;
      std::memcpy(&stored, slot.bytes.data() + variable.offset + 8 * std::uint64_t{counter}, 8);
      std::int64_t term = 0;
      overflow = overflow || stored > INT64_MAX ||
                 __builtin_mul_overflow(static_cast<std::int64_t>(stored), coefficient, &term) ||
                 __builtin_add_overflow(value, term, &value);
    }
    // Flow conservation gives every count of a wave that ran to its end: anything else means
    // the counters and the sums disagree.
    if (overflow || value < 0)
      throw Error("per-wave variable '" + variable.variable.name + "': element " +
                  std::to_string(index) + " of wave " + std::to_string(slot.wave_id) +
                  (overflow ? " overflows" : " derives to " + std::to_string(value)) +
                  " from its counters: they do not fit the note's sums");
    return static_cast<std::uint64_t>(value);
  }
  std::uint64_t value = 0;
  std::memcpy(&value, slot.bytes.data() + variable.offset + index * size, size);
  return value;
}

std::uint64_t dispatch_wave_count(const std::uint32_t grid_size[3],
                                  const std::uint16_t workgroup_size[3]) {
  std::uint64_t workgroups = 1;
  std::uint64_t items_per_group = 1;
  for (int dim = 0; dim < 3; ++dim) {
    if (grid_size[dim] == 0 || workgroup_size[dim] == 0)
      throw Error("dispatch: grid and workgroup sizes must be non-zero in every dimension");
    workgroups *= (grid_size[dim] + workgroup_size[dim] - 1) / workgroup_size[dim];
    items_per_group *= workgroup_size[dim];
  }
  return workgroups * ((items_per_group + 63) / 64);
}

}  // namespace wavekit::rewrite
