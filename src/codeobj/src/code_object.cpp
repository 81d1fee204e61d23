// Reading a code object into the model. LLVM's ELFFile does the bounds-checked parsing of the
// container; the model copies what it finds so that it owns its data.
#include "wavekit/codeobj/code_object.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/Error.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::codeobj {

namespace ELF = llvm::ELF;
using ElfFile = llvm::object::ELFFile<llvm::object::ELF64LE>;

namespace {

template <typename T>
T unwrap(llvm::Expected<T> value, const std::string& context, const std::string& what) {
  if (!value) fail(context, what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

void check_identification(std::span<const std::uint8_t> bytes, const std::string& context) {
  if (bytes.size() < 4 || std::memcmp(bytes.data(), ELF::ElfMagic, 4) != 0) {
    fail(context, "not an ELF file (no \\x7fELF magic)");
  }
  if (bytes.size() < sizeof(ELF::Elf64_Ehdr)) {
    fail(context, "truncated ELF header (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (bytes[ELF::EI_CLASS] != ELF::ELFCLASS64 || bytes[ELF::EI_DATA] != ELF::ELFDATA2LSB) {
    fail(context, "not a 64-bit little-endian ELF, so not an AMDGPU code object");
  }
  std::uint16_t machine = 0;
  std::memcpy(&machine, bytes.data() + offsetof(ELF::Elf64_Ehdr, e_machine), sizeof machine);
  if (machine != ELF::EM_AMDGPU) {
    fail(context, "not an AMDGPU code object (e_machine is " + std::to_string(machine) +
                      ", expected EM_AMDGPU = 224)");
  }
  if (bytes[ELF::EI_OSABI] != ELF::ELFOSABI_AMDGPU_HSA) {
    fail(context, "EI_OSABI is " + std::to_string(bytes[ELF::EI_OSABI]) +
                      ", expected 64 (ELFOSABI_AMDGPU_HSA): not an HSA code object");
  }
}

Symbol to_symbol(const ElfFile::Elf_Sym& sym, llvm::StringRef strtab, const std::string& context) {
  Symbol symbol;
  symbol.name = unwrap(sym.getName(strtab), context, "bad symbol name").str();
  symbol.name_offset = sym.st_name;
  symbol.value = sym.st_value;
  symbol.size = sym.st_size;
  symbol.type = sym.getType();
  symbol.binding = sym.getBinding();
  symbol.other = sym.st_other;
  symbol.visibility = sym.getVisibility();
  symbol.section_index = sym.st_shndx;
  return symbol;
}

}  // namespace

bool Section::is_alloc() const { return flags & ELF::SHF_ALLOC; }
bool Section::is_executable() const { return flags & ELF::SHF_EXECINSTR; }
bool Section::contains_address(std::uint64_t vaddr) const {
  return is_alloc() && vaddr >= address && vaddr - address < size;
}

std::string Relocation::type_name() const {
  switch (type) {
#define ELF_RELOC(name, value) \
  case value:                  \
    return #name;
#include <llvm/BinaryFormat/ELFRelocs/AMDGPU.def>
#undef ELF_RELOC
  }
  return "R_AMDGPU_unknown(" + std::to_string(type) + ")";
}

namespace {

// What a loader needs of the layout, checked before anything relies on it: every allocated
// section inside a PT_LOAD segment (an object whose e_phnum hides its segments cannot be
// loaded), and alignments that are powers of two no larger than the 64 KiB a GPU page-aligns
// to (the writer pads to them).
void check_layout(const CodeObject& object, std::uint16_t phnum, const std::string& context) {
  constexpr std::uint64_t kMaxAlignment = 1 << 16;
  if (phnum == ELF::PN_XNUM)
    fail(context,
         "e_phnum is PN_XNUM (0xffff): extended program-header counts are not used by "
         "code objects");
  if (object.sections().empty())
    fail(context,
         "has no section headers (e_shnum 0): the symbol tables that name its kernels "
         "are missing");
  for (const Segment& segment : object.segments()) {
    if (segment.type == ELF::PT_LOAD && segment.alignment > kMaxAlignment)
      fail(context, "a PT_LOAD segment at " + hex(segment.vaddr) + " has alignment " +
                        std::to_string(segment.alignment) + " (more than 64 KiB)");
  }
  for (const Section& section : object.sections()) {
    if (section.alignment > kMaxAlignment ||
        (section.alignment > 1 && !std::has_single_bit(section.alignment)))
      fail(context, "section " + section.name + " has alignment " +
                        std::to_string(section.alignment) +
                        " (not a power of two of at most 64 KiB)");
    if (!(section.flags & ELF::SHF_ALLOC) || section.size == 0) continue;
    const bool loaded =
        std::any_of(object.segments().begin(), object.segments().end(), [&](const Segment& s) {
          return s.type == ELF::PT_LOAD && section.address >= s.vaddr &&
                 section.address - s.vaddr < s.memory_size && section.size <= s.memory_size &&
                 section.address - s.vaddr <= s.memory_size - section.size;
        });
    if (!loaded)
      fail(context, "allocated section " + section.name + " at " + hex(section.address) +
                        " lies in no PT_LOAD segment (the object has " + std::to_string(phnum) +
                        " program headers), so it cannot be loaded");
  }
}

}  // namespace

CodeObject CodeObject::parse(std::span<const std::uint8_t> bytes, std::string name_for_errors) {
  const std::string& context = name_for_errors;
  check_identification(bytes, context);

  CodeObject object;
  object.name_ = name_for_errors;
  object.original_.assign(bytes.begin(), bytes.end());
  llvm::StringRef buffer(reinterpret_cast<const char*>(object.original_.data()),
                         object.original_.size());
  ElfFile elf = unwrap(ElfFile::create(buffer), context, "corrupt ELF");
  const auto& header = elf.getHeader();
  object.elf_type_ = header.e_type;
  object.elf_flags_ = header.e_flags;
  object.shstrndx_ = header.e_shstrndx;
  if (header.e_type != ELF::ET_DYN) {
    fail(context, "e_type is " + std::to_string(header.e_type) +
                      ", expected ET_DYN: a relocatable (.o) or other non-loadable AMDGPU ELF is "
                      "not a code object");
  }
  object.target_ = decode_target(header.e_flags, header.e_ident[ELF::EI_ABIVERSION], context);

  // Program headers. The header's own fields must be the standard sizes, or our writer would
  // not reproduce them.
  if (header.e_phnum != 0 && header.e_phentsize != sizeof(ElfFile::Elf_Phdr)) {
    fail(context, "e_phentsize is " + std::to_string(header.e_phentsize) + ", expected 56");
  }
  for (const auto& phdr : unwrap(elf.program_headers(), context, "corrupt program headers")) {
    object.segments_.push_back(Segment{phdr.p_type, phdr.p_flags, phdr.p_offset, phdr.p_vaddr,
                                       phdr.p_paddr, phdr.p_filesz, phdr.p_memsz, phdr.p_align});
  }

  auto sections = unwrap(elf.sections(), context, "corrupt section header table");
  if (!sections.empty() && header.e_shentsize != sizeof(ElfFile::Elf_Shdr)) {
    fail(context, "e_shentsize is " + std::to_string(header.e_shentsize) + ", expected 64");
  }
  for (const auto& shdr : sections) {
    Section section;
    section.name = unwrap(elf.getSectionName(shdr), context, "bad section name").str();
    section.name_offset = shdr.sh_name;
    section.type = shdr.sh_type;
    section.flags = shdr.sh_flags;
    section.address = shdr.sh_addr;
    section.offset = shdr.sh_offset;
    section.size = shdr.sh_size;
    section.link = shdr.sh_link;
    section.info = shdr.sh_info;
    section.alignment = shdr.sh_addralign;
    section.entry_size = shdr.sh_entsize;
    if (shdr.sh_type != ELF::SHT_NOBITS && shdr.sh_type != ELF::SHT_NULL) {
      auto contents = unwrap(elf.getSectionContents(shdr), context,
                             "section " + section.name + " lies outside the file");
      section.data.assign(contents.begin(), contents.end());
    }
    object.sections_.push_back(std::move(section));
  }
  for (const auto& section : object.sections_) {
    object.original_section_sizes_.push_back(section.data.size());
  }
  check_layout(object, header.e_phnum, context);

  // Symbols, relocations, .dynamic and notes, section by section.
  for (std::size_t index = 0; index < sections.size(); ++index) {
    const auto& shdr = sections[index];
    const std::string& section_name = object.sections_[index].name;
    switch (shdr.sh_type) {
      case ELF::SHT_SYMTAB:
      case ELF::SHT_DYNSYM: {
        auto strtab = unwrap(elf.getStringTableForSymtab(shdr), context,
                             "bad string table for " + section_name);
        auto& table = shdr.sh_type == ELF::SHT_SYMTAB ? object.symbols_ : object.dynamic_symbols_;
        for (const auto& sym :
             unwrap(elf.symbols(&shdr), context, "corrupt symbol table " + section_name)) {
          table.push_back(to_symbol(sym, strtab, context));
        }
        break;
      }
      case ELF::SHT_RELA:
      case ELF::SHT_REL: {
        std::vector<Symbol> linked;
        if (shdr.sh_link != 0) {
          auto symtab = unwrap(elf.getSection(shdr.sh_link), context,
                               "bad symbol table link of " + section_name);
          auto strtab = unwrap(elf.getStringTableForSymtab(*symtab), context,
                               "bad string table for the symbols of " + section_name);
          for (const auto& sym : unwrap(elf.symbols(symtab), context, "corrupt symbol table")) {
            linked.push_back(to_symbol(sym, strtab, context));
          }
        }
        auto add = [&](std::uint64_t offset, std::uint32_t type, std::uint32_t symbol_index,
                       std::int64_t addend) {
          Relocation relocation{
              static_cast<std::uint32_t>(index), offset, type, symbol_index, addend, ""};
          if (symbol_index != 0) {
            if (symbol_index >= linked.size()) {
              fail(context, "relocation in " + section_name + " at " + hex(offset) +
                                " refers to symbol " + std::to_string(symbol_index) +
                                ", which does not exist");
            }
            relocation.symbol_name = linked[symbol_index].name;
          }
          object.relocations_.push_back(std::move(relocation));
        };
        if (shdr.sh_type == ELF::SHT_RELA) {
          for (const auto& rela : unwrap(elf.relas(shdr), context, "corrupt " + section_name)) {
            add(rela.r_offset, rela.getType(false), rela.getSymbol(false), rela.r_addend);
          }
        } else {
          for (const auto& rel : unwrap(elf.rels(shdr), context, "corrupt " + section_name)) {
            add(rel.r_offset, rel.getType(false), rel.getSymbol(false), 0);
          }
        }
        break;
      }
      case ELF::SHT_DYNAMIC: {
        auto entries = unwrap(elf.template getSectionContentsAsArray<ElfFile::Elf_Dyn>(shdr),
                              context, "corrupt .dynamic");
        for (const auto& entry : entries) {
          object.dynamic_.push_back(DynamicEntry{entry.getTag(), entry.getVal()});
        }
        break;
      }
      case ELF::SHT_NOTE: {
        llvm::Error error = llvm::Error::success();
        for (const auto& note : elf.notes(shdr, error)) {
          auto desc = note.getDesc(shdr.sh_addralign);
          object.notes_.push_back(Note{static_cast<std::uint32_t>(index), note.getName().str(),
                                       note.getType(),
                                       std::vector<std::uint8_t>(desc.begin(), desc.end())});
        }
        if (error)
          fail(context,
               "corrupt note in " + section_name + ": " + llvm::toString(std::move(error)));
        break;
      }
      default:
        break;
    }
  }

  // The metadata note: exactly one NT_AMDGPU_METADATA from "AMDGPU".
  const Note* metadata_note = nullptr;
  for (const auto& note : object.notes_) {
    if (note.name == "AMDGPU" && note.type == ELF::NT_AMDGPU_METADATA) {
      if (metadata_note) fail(context, "more than one AMDGPU metadata note");
      metadata_note = &note;
    }
  }
  if (metadata_note) {
    object.metadata_ = Metadata::decode(metadata_note->desc, context);
  }
  object.rebuild_kernels();
  return object;
}

void CodeObject::rebuild_kernels() {
  const std::string& context = name_;
  kernels_.clear();
  auto find_symbol = [this](const std::string& symbol_name) -> const Symbol* {
    for (const auto* table : {&symbols_, &dynamic_symbols_}) {
      for (const auto& symbol : *table) {
        if (symbol.name == symbol_name && symbol.is_defined()) return &symbol;
      }
    }
    return nullptr;
  };
  auto add_kernel = [&](const std::string& name, const std::string& descriptor_symbol,
                        std::optional<std::size_t> metadata_index) {
    // Kernel names end up in JSON (inspect --json), which must be UTF-8.
    const auto* begin = reinterpret_cast<const llvm::UTF8*>(descriptor_symbol.data());
    if (!llvm::isLegalUTF8String(&begin, begin + descriptor_symbol.size())) {
      fail(context, "a kernel descriptor symbol name is not UTF-8");
    }
    const Symbol* symbol = find_symbol(descriptor_symbol);
    if (!symbol) {
      fail(context, "kernel " + name + ": its descriptor symbol " + descriptor_symbol +
                        " is in neither .symtab nor .dynsym");
    }
    Kernel kernel;
    kernel.name = name;
    kernel.descriptor_symbol = descriptor_symbol;
    kernel.descriptor_address = symbol->value;
    kernel.metadata_index = metadata_index;
    if (kernel.descriptor_address % KernelDescriptor::kAlignment != 0) {
      fail(context, "kernel descriptor " + descriptor_symbol + " at " +
                        hex(kernel.descriptor_address) + " is not 64-byte aligned");
    }
    std::span<const std::uint8_t> bytes;
    try {
      bytes = read(kernel.descriptor_address, KernelDescriptor::kSize);
    } catch (const Error& error) {
      fail(context, "kernel descriptor " + descriptor_symbol + " is out of range: " + error.what());
    }
    kernel.descriptor = KernelDescriptor::decode(bytes);
    if (kernel.descriptor.wave32()) {
      fail(context, "kernel " + name + " is wave32, which is not supported yet");
    }
    // The command processor loads the enabled user SGPRs in order and the workgroup ids after
    // USER_SGPR_COUNT: a count that disagrees with the enables puts them where the code does
    // not look (the kernel would run, with wrong results).
    const KernelDescriptor& kd = kernel.descriptor;
    const bool architected_scratch = target_.processor == "gfx942";
    const unsigned needed = 4 * kd.enable_sgpr_private_segment_buffer() +
                            2 * kd.enable_sgpr_dispatch_ptr() + 2 * kd.enable_sgpr_queue_ptr() +
                            2 * kd.enable_sgpr_kernarg_segment_ptr() +
                            2 * kd.enable_sgpr_dispatch_id() +
                            (architected_scratch ? 0 : 2 * kd.enable_sgpr_flat_scratch_init()) +
                            kd.enable_sgpr_private_segment_size() + kd.kernarg_preload_length();
    if (kd.user_sgpr_count() != needed) {
      fail(context, "kernel " + name + ": its descriptor's USER_SGPR_COUNT is " +
                        std::to_string(kd.user_sgpr_count()) + " but the user SGPRs it enables " +
                        "(and its preloaded kernel arguments) take " + std::to_string(needed));
    }
    kernel.entry_address =
        kernel.descriptor_address +
        static_cast<std::uint64_t>(kernel.descriptor.kernel_code_entry_byte_offset);
    bool entry_in_code = std::any_of(sections_.begin(), sections_.end(), [&](const Section& s) {
      return s.is_executable() && s.contains_address(kernel.entry_address);
    });
    if (!entry_in_code) {
      fail(context, "kernel " + name + ": entry " + hex(kernel.entry_address) +
                        " (descriptor + kernel_code_entry_byte_offset) is not in executable code");
    }
    kernels_.push_back(std::move(kernel));
  };

  for (std::size_t i = 0; i < metadata_.kernel_count(); ++i) {
    KernelMetadata kernel = metadata_.kernel(i);
    add_kernel(kernel.name(), kernel.symbol(), i);
  }
  // Descriptors that the note does not list (a note-less object): every STT_OBJECT "<k>.kd".
  for (const auto* table : {&symbols_, &dynamic_symbols_}) {
    for (const auto& symbol : *table) {
      if (symbol.type != ELF::STT_OBJECT || !symbol.is_defined() || symbol.name.size() <= 3 ||
          symbol.name.compare(symbol.name.size() - 3, 3, ".kd") != 0) {
        continue;
      }
      bool known = std::any_of(kernels_.begin(), kernels_.end(),
                               [&](const Kernel& k) { return k.descriptor_symbol == symbol.name; });
      if (!known)
        add_kernel(symbol.name.substr(0, symbol.name.size() - 3), symbol.name, std::nullopt);
    }
  }
}

const Section* CodeObject::section(const std::string& name) const {
  auto index = section_index(name);
  return index ? &sections_[*index] : nullptr;
}

std::optional<std::size_t> CodeObject::section_index(const std::string& name) const {
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    if (sections_[i].name == name) return i;
  }
  return std::nullopt;
}

const Kernel* CodeObject::find_kernel(const std::string& name) const {
  for (const auto& kernel : kernels_) {
    if (kernel.name == name || kernel.descriptor_symbol == name) return &kernel;
  }
  return nullptr;
}

std::span<const std::uint8_t> CodeObject::read(std::uint64_t vaddr, std::uint64_t size) const {
  for (const auto& section : sections_) {
    if (!section.is_alloc() || section.type == ELF::SHT_NOBITS || vaddr < section.address) continue;
    std::uint64_t offset = vaddr - section.address;
    if (offset < section.data.size() && size <= section.data.size() - offset) {
      return std::span<const std::uint8_t>(section.data).subspan(offset, size);
    }
  }
  throw Error(name_ + ": no section holds the " + std::to_string(size) + " bytes at " + hex(vaddr));
}

const Symbol* CodeObject::symbol_at(std::uint64_t vaddr) const {
  const Symbol* best = nullptr;
  for (const auto* table : {&symbols_, &dynamic_symbols_}) {
    for (const auto& symbol : *table) {
      if (!symbol.is_defined() || symbol.section_index >= ELF::SHN_LORESERVE) continue;
      bool inside =
          vaddr >= symbol.value && vaddr - symbol.value < std::max<std::uint64_t>(symbol.size, 1);
      if (!inside) continue;
      if (!best || (symbol.type == ELF::STT_FUNC && best->type != ELF::STT_FUNC)) best = &symbol;
    }
  }
  return best;
}

}  // namespace wavekit::codeobj
