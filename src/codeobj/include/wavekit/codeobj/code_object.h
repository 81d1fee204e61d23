// The code-object model: an AMDGPU ELF (HSA OS ABI) read into data the model owns, so that it can
// be inspected, modified (by the rewriter) and written back. Writing an unmodified object gives
// back the input byte for byte; after a modification the writer keeps every unchanged section
// where it was and lays out what grew or is new after the existing contents.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavekit/codeobj/kernel_descriptor.h"
#include "wavekit/codeobj/metadata.h"
#include "wavekit/support/error.h"

namespace wavekit::codeobj {

// The processor and features from e_flags, and the code object version from EI_ABIVERSION.
struct Target {
  enum class Feature { Unsupported, Any, Off, On };  // xnack / sramecc setting (COV4+)

  std::string processor;  // "gfx908", "gfx90a", "gfx942", ...
  unsigned mach = 0;      // e_flags & EF_AMDGPU_MACH
  Feature xnack = Feature::Unsupported;
  Feature sramecc = Feature::Unsupported;
  unsigned code_object_version = 0;  // 4, 5 or 6
  unsigned generic_version = 0;      // COV6 generic targets (e_flags bits 24..31), else 0

  // "gfx90a:sramecc+:xnack-" style target id (features that are Any are omitted).
  std::string target_id() const;
  // Whether code objects of the two targets can run on one agent, so load into one executable
  // (AMDGPUUsage, "Target ID"): the same processor, and each feature the same or Any in one
  // of them ("gfx90a" with "gfx90a:sramecc-:xnack-", not "gfx90a:xnack+" with ":xnack-").
  bool compatible_with(const Target& other) const;
  // gfx90a and later: unified VGPR/AGPR file, accum_offset in rsrc3, packed work-item ids.
  bool has_unified_vgpr_file() const;
  bool has_packed_work_item_ids() const;
  // gfx940/941/942/950: architected flat scratch (no FLAT_SCRATCH_INIT user SGPRs).
  bool has_architected_flat_scratch() const;
};

// Decodes e_flags + EI_ABIVERSION. Supported: gfx908, gfx90a, gfx942 (and gfx940/941/950,
// gfx9-generic, which are recognised). RDNA (gfx10xx/11xx/12xx) throws "... is not supported
// yet (wave32)"; anything else throws naming the mach value.
Target decode_target(std::uint32_t e_flags, std::uint8_t abi_version, const std::string& context);
// The EF_AMDGPU_MACH name of a processor ("gfx90a" -> 0x3f); throws for an unknown name.
unsigned mach_of_processor(const std::string& processor);

struct Section {
  std::string name;
  std::uint32_t name_offset = 0;  // in .shstrtab
  std::uint32_t type = 0;         // SHT_*
  std::uint64_t flags = 0;        // SHF_*
  std::uint64_t address = 0;
  std::uint64_t offset = 0;  // file offset (assigned by the writer for new/grown sections)
  std::uint64_t size = 0;    // sh_size (for SHT_NOBITS the memory size; data stays empty)
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t alignment = 0;
  std::uint64_t entry_size = 0;
  std::vector<std::uint8_t> data;  // the contents (empty for SHT_NOBITS)

  bool is_alloc() const;
  bool is_executable() const;
  bool contains_address(std::uint64_t vaddr) const;
};

struct Segment {
  std::uint32_t type = 0;   // PT_*
  std::uint32_t flags = 0;  // PF_R / PF_W / PF_X
  std::uint64_t offset = 0;
  std::uint64_t vaddr = 0;
  std::uint64_t paddr = 0;
  std::uint64_t file_size = 0;
  std::uint64_t memory_size = 0;
  std::uint64_t alignment = 0;
};

struct Symbol {
  std::string name;
  std::uint32_t name_offset = 0;  // in the linked string table (assigned for new symbols)
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::uint8_t type = 0;            // STT_*
  std::uint8_t binding = 0;         // STB_*
  std::uint8_t visibility = 0;      // STV_* (st_other & 3)
  std::uint8_t other = 0;           // the whole st_other byte
  std::uint16_t section_index = 0;  // SHN_UNDEF, SHN_ABS or a section index

  bool is_defined() const { return section_index != 0; }
};

struct Relocation {
  std::uint32_t section_index = 0;  // the SHT_RELA / SHT_REL section holding it
  std::uint64_t offset = 0;         // r_offset (a virtual address in a loaded object)
  std::uint32_t type = 0;           // R_AMDGPU_*
  std::uint32_t symbol_index = 0;   // into the section's linked symbol table
  std::int64_t addend = 0;
  std::string symbol_name;  // resolved from the linked symbol table ("" for index 0)

  std::string type_name() const;  // "R_AMDGPU_ABS64", from llvm/BinaryFormat/ELFRelocs/AMDGPU.def
};

struct DynamicEntry {
  std::int64_t tag = 0;  // DT_*
  std::uint64_t value = 0;
};

struct Note {
  std::uint32_t section_index = 0;
  std::string name;  // "AMDGPU"
  std::uint32_t type = 0;
  std::vector<std::uint8_t> desc;
};

struct Kernel {
  std::string name;               // "k"
  std::string descriptor_symbol;  // "k.kd"
  std::uint64_t descriptor_address = 0;
  std::uint64_t entry_address = 0;  // descriptor_address + kernel_code_entry_byte_offset
  KernelDescriptor descriptor;
  std::optional<std::size_t> metadata_index;  // index into amdhsa.kernels, if listed there
};

// What add_loaded_section() creates.
struct NewSection {
  std::string name;           // e.g. ".wavekit.text"
  std::uint32_t type = 1;     // SHT_PROGBITS
  std::uint64_t flags = 0x6;  // SHF_ALLOC | SHF_EXECINSTR
  std::uint64_t alignment = 256;
  std::vector<std::uint8_t> data;
};

class CodeObject {
 public:
  // Parses and validates an AMDGPU code object. Every problem (truncation, a non-AMDGPU ELF,
  // an unsupported target, a misaligned descriptor, a corrupt note) throws wavekit::Error
  // whose message starts with `name_for_errors`.
  static CodeObject parse(std::span<const std::uint8_t> bytes, std::string name_for_errors);
  // Emits the ELF. Byte-identical to the input when nothing was modified.
  std::vector<std::uint8_t> write() const;
  // A copy to modify while this one stays as it is, without parsing the bytes again (the
  // model is not copyable implicitly: its metadata document is not).
  CodeObject clone() const;

  const std::string& name() const { return name_; }
  const Target& target() const { return target_; }
  std::uint16_t elf_type() const { return elf_type_; }
  std::uint32_t elf_flags() const { return elf_flags_; }

  const std::vector<Section>& sections() const { return sections_; }
  const Section* section(const std::string& name) const;  // nullptr if absent
  std::optional<std::size_t> section_index(const std::string& name) const;
  const std::vector<Segment>& segments() const { return segments_; }
  const std::vector<Symbol>& symbols() const { return symbols_; }                  // .symtab
  const std::vector<Symbol>& dynamic_symbols() const { return dynamic_symbols_; }  // .dynsym
  const std::vector<Relocation>& relocations() const { return relocations_; }      // all RELA/REL
  const std::vector<DynamicEntry>& dynamic_entries() const { return dynamic_; }
  const std::vector<Note>& notes() const { return notes_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const Kernel* find_kernel(const std::string& name) const;  // by name or descriptor symbol

  Metadata& metadata() { return metadata_; }
  const Metadata& metadata() const { return metadata_; }

  // The bytes at a virtual address, from the section that holds them; throws if any byte of
  // the range is not backed by file contents of one allocated section.
  std::span<const std::uint8_t> read(std::uint64_t vaddr, std::uint64_t size) const;
  // The symbol (.symtab first, then .dynsym) whose [value, value+size) holds vaddr, preferring
  // functions; nullptr if none.
  const Symbol* symbol_at(std::uint64_t vaddr) const;

  // ---- Mutation, for the rewriter ----
  // Overwrites bytes at a virtual address (same rules as read()).
  void patch(std::uint64_t vaddr, std::span<const std::uint8_t> bytes);
  // Replaces a section's contents; it may grow (the writer then moves it, and for an allocated
  // section gives it a new address in a new segment and updates .dynamic to match).
  void replace_section_data(std::size_t section_index, std::vector<std::uint8_t> data);
  // Appends an allocated section mapped by a new PT_LOAD segment placed after every existing
  // segment (page-aligned). Returns the section's index; its address is in sections().
  std::size_t add_loaded_section(NewSection section);
  // Appends a symbol to .dynsym (name into .dynstr; .hash/.gnu.hash rebuilt). Undefined
  // symbols (section_index 0) are what a relocation against an external name needs.
  // Returns the new symbol's index.
  std::uint32_t add_dynamic_symbol(Symbol symbol);
  // Appends a symbol to .symtab (locals are inserted before the first global, as ELF
  // requires; returns the index it got).
  std::uint32_t add_symbol(Symbol symbol);
  // Appends a relocation to .rela.dyn (created, with its DT_RELA* entries, if absent);
  // symbol_index refers to .dynsym.
  void add_dynamic_relocation(std::uint64_t offset, std::uint32_t type, std::uint32_t symbol_index,
                              std::int64_t addend);
  // Re-encodes a kernel's descriptor into the object.
  void set_descriptor(std::size_t kernel_index, const KernelDescriptor& descriptor);
  // Appends an allocated SHT_NOTE section named `section_name` holding `note` (4-byte aligned),
  // mapped as add_loaded_section maps a section, as LIEF's Binary::add(const Note&) adds one.
  // The note joins notes(), so that writing keeps it when the metadata note is re-encoded.
  // Returns the section's index.
  std::size_t add_note(std::string section_name, Note note);

 private:
  void rebuild_kernels();
  void refresh_descriptor(Kernel& kernel);
  void write_bytes(std::uint64_t vaddr, std::span<const std::uint8_t> bytes);
  std::size_t append_load_segment(std::size_t section_index);
  void grow_alloc_section(std::size_t section_index);
  void serialize_dynamic();
  void refresh_descriptors();
  void update_dynamic_sizes(std::size_t section_index);
  void set_section_contents(std::size_t section_index, std::vector<std::uint8_t> data);
  std::uint32_t add_string(std::size_t string_table_index, const std::string& text);
  void serialize_symbols(std::size_t table_index, const std::vector<Symbol>& symbols);
  void rebuild_dynamic_hashes();
  void serialize_relocations(std::size_t section_index);

  std::string name_;
  std::vector<std::uint8_t> original_;  // the parsed bytes, kept for gaps and padding
  std::uint16_t elf_type_ = 0;
  std::uint32_t elf_flags_ = 0;
  std::uint16_t shstrndx_ = 0;
  Target target_;
  std::vector<Section> sections_;
  std::vector<std::uint64_t> original_section_sizes_;  // to know which sections grew
  // Sections given a new address in a new PT_LOAD segment (grown or added): {section, segment}.
  // The writer places their contents at the end of the file and points the segment there.
  std::vector<std::pair<std::size_t, std::size_t>> relocated_sections_;
  std::vector<Segment> segments_;
  std::vector<Symbol> symbols_;
  std::vector<Symbol> dynamic_symbols_;
  std::vector<Relocation> relocations_;
  std::vector<DynamicEntry> dynamic_;
  std::vector<Note> notes_;
  std::vector<Kernel> kernels_;
  Metadata metadata_;
};

// Description for `wavekit inspect`: {"target", "code_object_version", "kernels": [{"name",
// "descriptor_symbol", "entry", "descriptor": {amdhsa directives}, "metadata": {note map}}]}.
nlohmann::json describe_json(const CodeObject& object);
// The same for people: target, then per kernel its addresses, resources and arguments.
std::string describe_text(const CodeObject& object);

}  // namespace wavekit::codeobj
