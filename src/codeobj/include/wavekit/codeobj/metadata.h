// The AMDGPU metadata note (NT_AMDGPU_METADATA, name "AMDGPU"): a MessagePack map read and
// written with LLVM's msgpack::Document, with typed accessors for what the loader, the
// emulator and the rewriter need. The runtime sizes launches from this note, not from the
// kernel descriptor, so a rewriter that changes a descriptor must change the note with it.
#pragma once

#include <llvm/BinaryFormat/MsgPackDocument.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wavekit::codeobj {

// One entry of a kernel's `.args` list.
struct KernelArg {
  std::string name;          // .name (optional in the note; empty if absent)
  std::string type_name;     // .type_name (optional)
  std::uint64_t offset = 0;  // .offset
  std::uint64_t size = 0;    // .size
  std::string value_kind;  // .value_kind, e.g. "global_buffer", "by_value", "hidden_block_count_x"
  std::string address_space;  // .address_space (optional)
  bool is_hidden() const { return value_kind.rfind("hidden_", 0) == 0; }
};

// A view of one map in `amdhsa.kernels`; valid while its Metadata lives.
class KernelMetadata {
 public:
  KernelMetadata(llvm::msgpack::MapDocNode map, bool* modified) : map_(map), modified_(modified) {}

  std::string name() const;    // .name
  std::string symbol() const;  // .symbol (the descriptor symbol, "<name>.kd")
  std::vector<KernelArg> args() const;
  // An integer-valued key such as ".kernarg_segment_size"; nullopt if absent.
  std::optional<std::uint64_t> integer(const std::string& key) const;
  std::uint64_t kernarg_segment_size() const {
    return integer(".kernarg_segment_size").value_or(0);
  }
  std::uint64_t kernarg_segment_align() const {
    return integer(".kernarg_segment_align").value_or(0);
  }
  std::uint64_t group_segment_fixed_size() const {
    return integer(".group_segment_fixed_size").value_or(0);
  }
  std::uint64_t private_segment_fixed_size() const {
    return integer(".private_segment_fixed_size").value_or(0);
  }
  std::uint64_t sgpr_count() const { return integer(".sgpr_count").value_or(0); }
  std::uint64_t vgpr_count() const { return integer(".vgpr_count").value_or(0); }
  std::uint64_t agpr_count() const { return integer(".agpr_count").value_or(0); }
  std::uint64_t wavefront_size() const { return integer(".wavefront_size").value_or(0); }
  std::uint64_t max_flat_workgroup_size() const {
    return integer(".max_flat_workgroup_size").value_or(0);
  }
  std::uint64_t sgpr_spill_count() const { return integer(".sgpr_spill_count").value_or(0); }
  std::uint64_t vgpr_spill_count() const { return integer(".vgpr_spill_count").value_or(0); }
  bool uses_dynamic_stack() const;  // .uses_dynamic_stack (COV5+), false if absent

  // Mutation (marks the note for re-encoding on write).
  void set_integer(const std::string& key, std::uint64_t value);
  void set_private_segment_fixed_size(std::uint64_t v) {
    set_integer(".private_segment_fixed_size", v);
  }
  void set_kernarg_segment_size(std::uint64_t v) { set_integer(".kernarg_segment_size", v); }
  void set_sgpr_count(std::uint64_t v) { set_integer(".sgpr_count", v); }
  void set_vgpr_count(std::uint64_t v) { set_integer(".vgpr_count", v); }
  void set_agpr_count(std::uint64_t v) { set_integer(".agpr_count", v); }
  void set_uses_dynamic_stack(bool value);
  // Appends an argument to `.args` (keys written: .offset .size .value_kind and, when
  // non-empty, .name .type_name .address_space).
  void add_arg(const KernelArg& arg);

  // This kernel's map as JSON, keys exactly as in the note (".name", ".args", ...).
  nlohmann::json to_json() const;

  llvm::msgpack::MapDocNode node() { return map_; }

 private:
  llvm::msgpack::MapDocNode map_;
  bool* modified_;
};

class Metadata {
 public:
  Metadata();
  Metadata(Metadata&&) noexcept;
  Metadata& operator=(Metadata&&) noexcept;
  ~Metadata();

  // Decodes a note descriptor; garbage gives a wavekit::Error naming `context`.
  static Metadata decode(std::span<const std::uint8_t> msgpack, const std::string& context);
  // Re-encodes with LLVM's msgpack writer. If nothing was modified, returns the bytes that were
  // decoded, unchanged.
  std::vector<std::uint8_t> encode() const;
  bool modified() const { return modified_; }
  // A copy (the document is not copyable: it is read again from what encode() gives, so an
  // unmodified note keeps its bytes exactly).
  Metadata clone() const;

  bool empty() const;  // no note was present
  // amdhsa.version as [major, minor] ({0,0} if absent), amdhsa.target ("" if absent).
  std::pair<unsigned, unsigned> version() const;
  std::string target() const;

  std::size_t kernel_count() const;
  KernelMetadata kernel(std::size_t index);
  // The kernel whose .name (or .symbol) equals `name`; nullopt if none.
  std::optional<KernelMetadata> find_kernel(const std::string& name);

  // Direct access to the document; taking it non-const marks the note as modified.
  llvm::msgpack::Document& document();
  const llvm::msgpack::Document& document() const;

  // The whole note as JSON, keys as in the note (what llvm-readelf-22 --notes shows as YAML).
  nlohmann::json to_json() const;

 private:
  std::unique_ptr<llvm::msgpack::Document> document_;
  std::vector<std::uint8_t> original_;
  bool modified_ = false;
};

// MessagePack node -> JSON (maps with string keys become objects, arrays arrays, scalars the
// same scalar).
nlohmann::json msgpack_to_json(const llvm::msgpack::DocNode& node);

}  // namespace wavekit::codeobj
