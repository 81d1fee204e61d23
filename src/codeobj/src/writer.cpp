// Writing the model back to an ELF, and the mutations the rewriter needs.
//
// Layout policy: every section keeps its file offset and address unless it grew past the
// bytes it had or is new. Such sections go to the end of the file; allocated ones have been
// given (by the mutation that grew or added them) a fresh address in a PT_LOAD segment of their
// own, above every existing segment, so nothing that code or descriptors already point at moves.
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFTypes.h>

#include <algorithm>
#include <cstring>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"

namespace wavekit::codeobj {

namespace ELF = llvm::ELF;

namespace {

// New segments are page-aligned like lld's (max-page-size 4096 for AMDGPU).
constexpr std::uint64_t kPageSize = 0x1000;

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  if (alignment <= 1) return value;
  return (value + alignment - 1) / alignment * alignment;
}

template <typename T>
void put(std::vector<std::uint8_t>& out, std::uint64_t offset, const T& value) {
  if (out.size() < offset + sizeof(T)) out.resize(offset + sizeof(T));
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

void put_bytes(std::vector<std::uint8_t>& out, std::uint64_t offset,
               std::span<const std::uint8_t> bytes) {
  if (out.size() < offset + bytes.size()) out.resize(offset + bytes.size());
  std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(offset));
}

// The notes of one SHT_NOTE section, serialised with the section's alignment (4 or 8).
std::vector<std::uint8_t> serialize_notes(const std::vector<Note>& notes, std::size_t section_index,
                                          std::uint64_t alignment) {
  const std::uint64_t pad = alignment == 8 ? 8 : 4;
  std::vector<std::uint8_t> out;
  for (const auto& note : notes) {
    if (note.section_index != section_index) continue;
    ELF::Elf64_Word header[3] = {static_cast<ELF::Elf64_Word>(note.name.size() + 1),
                                 static_cast<ELF::Elf64_Word>(note.desc.size()), note.type};
    std::uint64_t start = out.size();
    put(out, start, header);
    std::uint64_t name_at = start + sizeof header;
    put_bytes(
        out, name_at,
        std::span(reinterpret_cast<const std::uint8_t*>(note.name.c_str()), note.name.size() + 1));
    std::uint64_t desc_at = align_up(name_at + note.name.size() + 1, pad);
    out.resize(desc_at);
    put_bytes(out, desc_at, note.desc);
    out.resize(align_up(out.size(), pad));
  }
  return out;
}

}  // namespace

std::vector<std::uint8_t> CodeObject::write() const {
  std::vector<Section> sections = sections_;
  std::vector<Segment> segments = segments_;
  std::vector<std::pair<std::size_t, std::size_t>> relocated = relocated_sections_;

  // A modified metadata note is re-encoded into its section; if it no longer fits there it
  // moves to the end of the file, outside the loaded segments (the loader finds notes
  // through PT_NOTE's file offset).
  std::optional<std::size_t> moved_note_section;
  if (metadata_.modified()) {
    std::vector<Note> notes = notes_;
    for (auto& note : notes) {
      if (note.name == "AMDGPU" && note.type == ELF::NT_AMDGPU_METADATA)
        note.desc = metadata_.encode();
    }
    for (std::size_t index = 0; index < sections.size(); ++index) {
      Section& section = sections[index];
      if (section.type != ELF::SHT_NOTE) continue;
      std::vector<std::uint8_t> data = serialize_notes(notes, index, section.alignment);
      if (data == section.data) continue;
      std::uint64_t old_offset = section.offset;
      std::uint64_t old_size = section.size;
      section.data = std::move(data);
      section.size = section.data.size();
      if (section.data.size() > original_section_sizes_[index]) {
        moved_note_section = index;
        section.flags &= ~static_cast<std::uint64_t>(ELF::SHF_ALLOC);
        section.address = 0;
      }
      for (auto& segment : segments) {
        if (segment.type == ELF::PT_NOTE && segment.offset == old_offset &&
            segment.file_size == old_size) {
          segment.file_size = segment.memory_size = section.size;
          if (moved_note_section) segment.vaddr = segment.paddr = 0;
        }
      }
    }
  }

  std::vector<std::uint8_t> out = original_;
  const auto& original_header = *reinterpret_cast<const ELF::Elf64_Ehdr*>(original_.data());
  std::uint64_t end = out.size();

  // Place the sections that do not fit where they were.
  auto needs_placement = [&](std::size_t index) {
    bool given_a_new_segment =
        std::any_of(relocated.begin(), relocated.end(),
                    [index](const auto& entry) { return entry.first == index; });
    return index >= original_section_sizes_.size() || given_a_new_segment ||
           sections[index].data.size() > original_section_sizes_[index] ||
           moved_note_section == index;
  };
  for (std::size_t index = 0; index < sections.size(); ++index) {
    Section& section = sections[index];
    if (section.type == ELF::SHT_NULL) continue;
    if (!needs_placement(index)) {
      if (section.type != ELF::SHT_NOBITS) put_bytes(out, section.offset, section.data);
      continue;
    }
    std::uint64_t alignment = std::max<std::uint64_t>(section.alignment, 1);
    if (section.is_alloc()) alignment = std::max(alignment, kPageSize);
    section.offset = align_up(end, alignment);
    put_bytes(out, section.offset, section.data);
    end = std::max(end, section.offset + section.data.size());
    for (const auto& [relocated_section, segment_index] : relocated) {
      if (relocated_section == index) segments[segment_index].offset = section.offset;
    }
    for (auto& segment : segments) {
      if (segment.type == ELF::PT_NOTE && moved_note_section == index) {
        segment.offset = section.offset;
      }
      if (segment.type == ELF::PT_DYNAMIC && section.type == ELF::SHT_DYNAMIC) {
        segment.offset = section.offset;
      }
    }
  }

  // The program header table stays where it was unless it has more entries than before; then it
  // moves to the end, and PT_PHDR (which must describe a loaded table) becomes PT_NULL.
  std::uint64_t phoff = original_header.e_phoff;
  if (segments.size() > original_header.e_phnum) {
    phoff = align_up(end, 8);
    for (auto& segment : segments) {
      if (segment.type == ELF::PT_PHDR) segment = Segment{};
    }
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    ELF::Elf64_Phdr phdr{s.type,  s.flags,     s.offset,      s.vaddr,
                         s.paddr, s.file_size, s.memory_size, s.alignment};
    put(out, phoff + i * sizeof phdr, phdr);
  }
  if (!segments.empty())
    end = std::max<std::uint64_t>(end, phoff + segments.size() * sizeof(ELF::Elf64_Phdr));

  std::uint64_t shoff = original_header.e_shoff;
  if (sections.size() > original_section_sizes_.size()) shoff = align_up(end, 8);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    ELF::Elf64_Shdr shdr{s.name_offset, s.type, s.flags, s.address,   s.offset,
                         s.size,        s.link, s.info,  s.alignment, s.entry_size};
    put(out, shoff + i * sizeof shdr, shdr);
  }

  // Header fields change only where a table moved or grew, so that whatever the input held
  // (e.g. an e_phoff with no program headers) survives an unmodified round trip.
  ELF::Elf64_Ehdr header = original_header;
  if (segments.size() != original_header.e_phnum) {
    header.e_phoff = phoff;
    header.e_phnum = static_cast<ELF::Elf64_Half>(segments.size());
  }
  if (sections.size() != original_section_sizes_.size()) {
    header.e_shoff = shoff;
    header.e_shnum = static_cast<ELF::Elf64_Half>(sections.size());
  }
  header.e_flags = elf_flags_;
  put(out, 0, header);
  return out;
}

// ---- Mutations ----

void CodeObject::refresh_descriptor(Kernel& kernel) {
  kernel.descriptor =
      KernelDescriptor::decode(read(kernel.descriptor_address, KernelDescriptor::kSize));
  kernel.entry_address =
      kernel.descriptor_address +
      static_cast<std::uint64_t>(kernel.descriptor.kernel_code_entry_byte_offset);
}

void CodeObject::refresh_descriptors() {
  for (auto& kernel : kernels_) refresh_descriptor(kernel);
}

void CodeObject::patch(std::uint64_t vaddr, std::span<const std::uint8_t> bytes) {
  write_bytes(vaddr, bytes);
  refresh_descriptors();
}

void CodeObject::write_bytes(std::uint64_t vaddr, std::span<const std::uint8_t> bytes) {
  read(vaddr, bytes.size());  // throws, naming the range, if no section holds it
  for (auto& section : sections_) {
    if (section.type != ELF::SHT_NOBITS && section.contains_address(vaddr) &&
        vaddr - section.address + bytes.size() <= section.data.size()) {
      std::copy(bytes.begin(), bytes.end(),
                section.data.begin() + static_cast<std::ptrdiff_t>(vaddr - section.address));
      break;
    }
  }
}

void CodeObject::set_descriptor(std::size_t kernel_index, const KernelDescriptor& descriptor) {
  if (kernel_index >= kernels_.size()) {
    throw Error(name_ + ": kernel index " + std::to_string(kernel_index) + " is out of range");
  }
  auto bytes = descriptor.encode();
  const std::uint64_t address = kernels_[kernel_index].descriptor_address;
  write_bytes(address, bytes);
  // Only the descriptors these bytes overlap change (decoding every kernel's at each of a
  // many-kernel object's edits would be quadratic).
  for (Kernel& kernel : kernels_)
    if (kernel.descriptor_address < address + bytes.size() &&
        address < kernel.descriptor_address + KernelDescriptor::kSize)
      refresh_descriptor(kernel);
}

std::size_t CodeObject::append_load_segment(std::size_t section_index) {
  Section& section = sections_[section_index];
  std::uint64_t top = 0;
  for (const auto& segment : segments_) {
    // An empty segment still claims its page, so that no two segments share an address.
    if (segment.type == ELF::PT_LOAD) {
      top = std::max(top, segment.vaddr + std::max<std::uint64_t>(segment.memory_size, 1));
    }
  }
  section.address = align_up(top, std::max(kPageSize, section.alignment));
  Segment segment;
  segment.type = ELF::PT_LOAD;
  segment.flags = ELF::PF_R | (section.flags & ELF::SHF_WRITE ? ELF::PF_W : 0) |
                  (section.flags & ELF::SHF_EXECINSTR ? ELF::PF_X : 0);
  segment.vaddr = segment.paddr = section.address;
  segment.file_size = section.data.size();
  segment.memory_size = section.size;
  segment.alignment = kPageSize;
  // PT_LOAD entries must stay sorted by address: insert after the last one.
  std::size_t position = 0;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i].type == ELF::PT_LOAD) position = i + 1;
  }
  segments_.insert(segments_.begin() + static_cast<std::ptrdiff_t>(position), segment);
  for (auto& [relocated_section, segment_index] : relocated_sections_) {
    if (segment_index >= position) ++segment_index;
  }
  relocated_sections_.emplace_back(section_index, position);
  return position;
}

void CodeObject::serialize_dynamic() {
  auto index = section_index(".dynamic");
  if (!index) return;
  std::vector<std::uint8_t> data;
  for (const auto& entry : dynamic_) {
    ELF::Elf64_Dyn dyn{};
    dyn.d_tag = entry.tag;
    dyn.d_un.d_val = entry.value;
    put(data, data.size(), dyn);
  }
  set_section_contents(*index, std::move(data));
}

// DT_STRSZ / DT_RELASZ follow the size of .dynstr / the dynamic RELA section.
void CodeObject::update_dynamic_sizes(std::size_t index) {
  const Section& section = sections_[index];
  bool changed = false;
  for (auto& entry : dynamic_) {
    bool is_size_of_this = (entry.tag == ELF::DT_STRSZ && section.name == ".dynstr") ||
                           (entry.tag == ELF::DT_RELASZ && section.type == ELF::SHT_RELA);
    if (is_size_of_this && entry.value != section.size) {
      entry.value = section.size;
      changed = true;
    }
  }
  if (changed) serialize_dynamic();
}

void CodeObject::grow_alloc_section(std::size_t index) {
  Section& section = sections_[index];
  const std::uint64_t old_address = section.address;
  auto existing = std::find_if(relocated_sections_.begin(), relocated_sections_.end(),
                               [index](const auto& entry) { return entry.first == index; });
  if (existing != relocated_sections_.end()) {
    // Already alone in a segment of its own at the top: the segment grows with it, unless
    // another segment was appended above it since.
    Segment& segment = segments_[existing->second];
    bool is_top = std::none_of(segments_.begin(), segments_.end(), [&](const Segment& other) {
      return other.type == ELF::PT_LOAD && other.vaddr > segment.vaddr;
    });
    if (is_top || section.size <= segment.memory_size) {
      segment.file_size = section.data.size();
      segment.memory_size = section.size;
      if (section.type == ELF::SHT_DYNAMIC) {
        for (auto& dynamic_segment : segments_) {
          if (dynamic_segment.type == ELF::PT_DYNAMIC) {
            dynamic_segment.file_size = dynamic_segment.memory_size = section.size;
          }
        }
      }
      update_dynamic_sizes(index);
      return;
    }
    // Another segment lies above: move the section once more, to a new segment at the top,
    // and drop the segment it leaves (it held nothing else).
    const std::size_t abandoned = existing->second;
    segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(abandoned));
    relocated_sections_.erase(existing);
    for (auto& entry : relocated_sections_) {
      if (entry.second > abandoned) --entry.second;
    }
  }
  append_load_segment(index);
  const std::uint64_t new_address = section.address;
  // Whatever pointed at the old place now points at the new one: .dynamic's table addresses,
  // PT_DYNAMIC, and symbols defined in the section (e.g. _DYNAMIC).
  bool dynamic_changed = false;
  for (auto& entry : dynamic_) {
    switch (entry.tag) {
      case ELF::DT_SYMTAB:
      case ELF::DT_STRTAB:
      case ELF::DT_HASH:
      case ELF::DT_GNU_HASH:
      case ELF::DT_RELA:
      case ELF::DT_REL:
      case ELF::DT_VERSYM:
      case ELF::DT_RELR:
        if (entry.value == old_address) {
          entry.value = new_address;
          dynamic_changed = true;
        }
        break;
      default:
        break;
    }
  }
  for (const char* table_name : {".symtab", ".dynsym"}) {
    auto table_index = section_index(table_name);
    if (!table_index) continue;
    auto& table = std::string(table_name) == ".symtab" ? symbols_ : dynamic_symbols_;
    bool moved = false;
    for (auto& symbol : table) {
      if (symbol.section_index == index) {
        symbol.value = symbol.value - old_address + new_address;
        moved = true;
      }
    }
    if (moved) serialize_symbols(*table_index, table);
  }
  if (section.type == ELF::SHT_DYNAMIC) {
    for (auto& segment : segments_) {
      if (segment.type == ELF::PT_DYNAMIC) {
        segment.vaddr = segment.paddr = new_address;
        segment.file_size = segment.memory_size = section.size;
      }
    }
  }
  if (dynamic_changed) serialize_dynamic();
  update_dynamic_sizes(index);
}

void CodeObject::set_section_contents(std::size_t index, std::vector<std::uint8_t> data) {
  Section& section = sections_[index];
  section.data = std::move(data);
  section.size = section.data.size();
  const bool is_new = index >= original_section_sizes_.size();
  const bool fits = !is_new && section.data.size() <= original_section_sizes_[index];
  const bool already_moved =
      std::any_of(relocated_sections_.begin(), relocated_sections_.end(),
                  [index](const auto& entry) { return entry.first == index; });
  if (section.is_alloc() && (already_moved || !fits)) {
    grow_alloc_section(index);
  } else if (section.is_alloc()) {
    update_dynamic_sizes(index);
  }
}

void CodeObject::replace_section_data(std::size_t index, std::vector<std::uint8_t> data) {
  if (index >= sections_.size() || sections_[index].type == ELF::SHT_NULL ||
      sections_[index].type == ELF::SHT_NOBITS) {
    throw Error(name_ + ": section index " + std::to_string(index) +
                " does not name a section with contents");
  }
  set_section_contents(index, std::move(data));
  refresh_descriptors();
}

std::size_t CodeObject::add_loaded_section(NewSection added) {
  auto shstrtab_index = static_cast<std::size_t>(shstrndx_);
  if (shstrtab_index == 0 || shstrtab_index >= sections_.size()) {
    throw Error(name_ + ": cannot add a section to an object without a section name table");
  }
  if (!(added.flags & ELF::SHF_ALLOC)) {
    throw Error(name_ + ": add_loaded_section needs SHF_ALLOC in the flags of " + added.name);
  }
  Section& names = sections_[shstrtab_index];
  Section section;
  section.name = added.name;
  section.name_offset = static_cast<std::uint32_t>(names.data.size());
  names.data.insert(names.data.end(), added.name.begin(), added.name.end());
  names.data.push_back(0);
  names.size = names.data.size();
  section.type = added.type;
  section.flags = added.flags;
  section.alignment = added.alignment;
  section.data = std::move(added.data);
  section.size = section.data.size();
  sections_.push_back(std::move(section));
  std::size_t index = sections_.size() - 1;
  append_load_segment(index);
  return index;
}

std::size_t CodeObject::add_note(std::string section_name, Note note) {
  note.section_index = 0;
  NewSection section;
  section.name = std::move(section_name);
  section.type = ELF::SHT_NOTE;
  section.flags = ELF::SHF_ALLOC;
  section.alignment = 4;
  section.data = serialize_notes({note}, 0, section.alignment);
  const std::size_t index = add_loaded_section(std::move(section));
  note.section_index = static_cast<std::uint32_t>(index);
  notes_.push_back(std::move(note));
  return index;
}

CodeObject CodeObject::clone() const {
  CodeObject copy;
  copy.name_ = name_;
  copy.original_ = original_;
  copy.elf_type_ = elf_type_;
  copy.elf_flags_ = elf_flags_;
  copy.shstrndx_ = shstrndx_;
  copy.target_ = target_;
  copy.sections_ = sections_;
  copy.original_section_sizes_ = original_section_sizes_;
  copy.relocated_sections_ = relocated_sections_;
  copy.segments_ = segments_;
  copy.symbols_ = symbols_;
  copy.dynamic_symbols_ = dynamic_symbols_;
  copy.relocations_ = relocations_;
  copy.dynamic_ = dynamic_;
  copy.notes_ = notes_;
  copy.kernels_ = kernels_;
  copy.metadata_ = metadata_.clone();
  return copy;
}

}  // namespace wavekit::codeobj
