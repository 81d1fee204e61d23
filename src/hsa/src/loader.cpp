#include "wavekit/hsa/loader.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/Error.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/codeobj/msgpack_shape.h"
#include "wavekit/support/text.h"

namespace wavekit::hsa {

namespace {

using ElfFile = llvm::object::ELF64LEFile;
using ElfSym = ElfFile::Elf_Sym;
using ElfShdr = ElfFile::Elf_Shdr;

[[noreturn]] void reject(LoaderErrorKind kind, const std::string& object, const std::string& why) {
  throw LoaderError(kind, object + ": " + why);
}

[[noreturn]] void invalid(const std::string& object, const std::string& why) {
  reject(LoaderErrorKind::invalid_code_object, object, why);
}

template <typename T>
T take(llvm::Expected<T> value, const std::string& object, const char* what) {
  if (!value) invalid(object, std::string(what) + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

// Integer or unsigned msgpack scalar under `key` of `map`; `fallback` when absent.
std::uint64_t integer_key(llvm::msgpack::MapDocNode& map, llvm::StringRef key,
                          std::uint64_t fallback) {
  auto it = map.find(key);
  if (it == map.end()) return fallback;
  const llvm::msgpack::DocNode& node = it->second;
  if (node.getKind() == llvm::msgpack::Type::UInt) return node.getUInt();
  if (node.getKind() == llvm::msgpack::Type::Int) return static_cast<std::uint64_t>(node.getInt());
  if (node.getKind() == llvm::msgpack::Type::Boolean) return node.getBool() ? 1 : 0;
  return fallback;
}

std::string string_key(llvm::msgpack::MapDocNode& map, llvm::StringRef key) {
  auto it = map.find(key);
  if (it == map.end() || !it->second.isString()) return {};
  return it->second.getString().str();
}

// The processor part of a target id "amdgcn-amd-amdhsa--gfx90a:xnack-" -> "gfx90a".
std::string processor_of_target_id(const std::string& target_id) {
  auto dashes = target_id.rfind("--");
  std::string processor = dashes == std::string::npos ? target_id : target_id.substr(dashes + 2);
  return processor.substr(0, processor.find(':'));
}

}  // namespace

std::string processor_from_mach(unsigned mach) {
  switch (mach) {
    case llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX908:
      return "gfx908";
    case llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A:
      return "gfx90a";
    case llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942:
      return "gfx942";
    default:
      return {};
  }
}

// One object's host image and what freeze() needs to relocate it.
struct Executable::ObjectImage {
  std::string name;
  std::vector<std::uint8_t> elf;  // a private copy: relocation happens later, at freeze()
  std::uint8_t* base = nullptr;   // host address of virtual address 0
  std::uint64_t size = 0;
  ~ObjectImage() { std::free(base); }
};

Executable::Executable() = default;
Executable::~Executable() = default;

const LoadedObject& Executable::load(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (frozen_)
    reject(LoaderErrorKind::frozen_executable, name,
           "the executable is frozen; load objects before freezing");
  auto image = std::make_unique<ObjectImage>();
  image->name = name;
  image->elf.assign(bytes.begin(), bytes.end());
  llvm::StringRef data(reinterpret_cast<const char*>(image->elf.data()), image->elf.size());

  // One validation for every tool: what `wavekit inspect` refuses (an unsupported processor
  // such as gfx1100, a descriptor whose entry is not code, metadata fields of the wrong type, a
  // user-SGPR count that disagrees with the enables, ...) is not loaded either.
  try {
    (void)codeobj::CodeObject::parse(bytes, name);
  } catch (const Error& error) {
    const std::string message = error.what();
    const std::string prefix = name + ": ";
    invalid(name, message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
  }
  if (image->elf.size() < llvm::ELF::EI_NIDENT ||
      std::memcmp(image->elf.data(), llvm::ELF::ElfMagic, 4) != 0)
    invalid(name, "not an ELF file");
  if (image->elf[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      image->elf[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB)
    invalid(name, "not a 64-bit little-endian ELF file");
  ElfFile file = take(ElfFile::create(data), name, "malformed ELF");
  const auto& header = file.getHeader();
  if (header.e_machine != llvm::ELF::EM_AMDGPU)
    invalid(name, "not an AMDGPU code object (e_machine " + std::to_string(header.e_machine) + ")");
  if (header.e_ident[llvm::ELF::EI_OSABI] != llvm::ELF::ELFOSABI_AMDGPU_HSA)
    invalid(name, "not an HSA code object (EI_OSABI " +
                      std::to_string(header.e_ident[llvm::ELF::EI_OSABI]) + ")");
  if (header.e_type != llvm::ELF::ET_DYN)
    invalid(name, "not a linked code object (e_type is not ET_DYN)");
  unsigned abi_version = header.e_ident[llvm::ELF::EI_ABIVERSION];
  if (abi_version < llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4 ||
      abi_version > llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6)
    invalid(name, "code object version " + std::to_string(abi_version + 2) +
                      " is not supported (4, 5 and 6 are)");

  LoadedObject object;
  object.name = name;
  object.code_object_version = abi_version + 2;

  // One allocation covers every PT_LOAD at its virtual address, so that vaddr-relative
  // references (s_getpc-based code, the GOT) stay valid without moving anything.
  auto phdrs = take(file.program_headers(), name, "program headers");
  std::uint64_t alignment = 4096;
  for (const auto& phdr : phdrs) {
    if (phdr.p_type != llvm::ELF::PT_LOAD) continue;
    if (phdr.p_filesz > phdr.p_memsz)
      invalid(name, "PT_LOAD at " + hex(phdr.p_vaddr) + " has p_filesz > p_memsz");
    if (phdr.p_offset + phdr.p_filesz < phdr.p_offset ||
        phdr.p_offset + phdr.p_filesz > image->elf.size())
      invalid(name, "PT_LOAD at " + hex(phdr.p_vaddr) + " extends past the end of the file");
    if (phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr || phdr.p_vaddr + phdr.p_memsz > (1ull << 32))
      invalid(name, "PT_LOAD at " + hex(phdr.p_vaddr) + " is implausibly large");
    image->size = std::max<std::uint64_t>(image->size, phdr.p_vaddr + phdr.p_memsz);
    if (phdr.p_align > alignment && phdr.p_align <= (1u << 16)) alignment = phdr.p_align;
  }
  if (image->size == 0) invalid(name, "no PT_LOAD segments");
  std::uint64_t allocation = (image->size + alignment - 1) / alignment * alignment;
  image->base = static_cast<std::uint8_t*>(std::aligned_alloc(alignment, allocation));
  if (!image->base)
    throw Error(name + ": cannot allocate " + std::to_string(allocation) +
                " bytes for the code object");
  std::memset(image->base, 0, allocation);
  for (const auto& phdr : phdrs) {
    if (phdr.p_type != llvm::ELF::PT_LOAD) continue;
    std::memcpy(image->base + phdr.p_vaddr, image->elf.data() + phdr.p_offset, phdr.p_filesz);
    LoadedObject::Segment segment;
    segment.address = reinterpret_cast<std::uint64_t>(image->base) + phdr.p_vaddr;
    segment.size = phdr.p_memsz;
    segment.executable = phdr.p_flags & llvm::ELF::PF_X;
    segment.writable = phdr.p_flags & llvm::ELF::PF_W;
    object.segments.push_back(segment);
    if (segment.executable && !object.code_address) {
      object.code_address = segment.address;
      object.code_size = segment.size;
    }
  }
  object.load_base = reinterpret_cast<std::uint64_t>(image->base);
  object.load_size = image->size;

  // The metadata note: kernels and their launch sizes.
  llvm::msgpack::Document metadata;
  bool have_metadata = false;
  for (const auto& phdr : phdrs) {
    if (phdr.p_type != llvm::ELF::PT_NOTE) continue;
    llvm::Error error = llvm::Error::success();
    for (const auto& note : file.notes(phdr, error)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      auto desc = note.getDescAsStringRef(phdr.p_align);
      try {
        codeobj::check_msgpack_shape(std::string_view(desc.data(), desc.size()), name,
                                     "AMDGPU metadata note");
      } catch (const Error& error) {
        invalid(name, error.what());
      }
      if (!metadata.readFromBlob(desc, false))
        invalid(name, "the AMDGPU metadata note is not valid MessagePack");
      have_metadata = true;
    }
    if (error) invalid(name, "malformed note segment: " + llvm::toString(std::move(error)));
  }
  if (!have_metadata || !metadata.getRoot().isMap())
    invalid(name, "no AMDGPU metadata note (NT_AMDGPU_METADATA)");
  auto& root = metadata.getRoot().getMap();
  object.target_id = string_key(root, "amdhsa.target");
  object.target = processor_of_target_id(object.target_id);
  if (object.target.empty())
    object.target = processor_from_mach(header.e_flags & llvm::ELF::EF_AMDGPU_MACH);
  if (object.target.empty())
    invalid(name, "cannot tell the target processor (no amdhsa.target, unknown e_flags)");
  if (!target_.empty() && object.target != target_)
    reject(LoaderErrorKind::incompatible_code_object, name,
           "code object is for " + object.target + " but the executable already holds " + target_ +
               " code");

  // Symbols as ROCr reads them: .symtab, or .dynsym when the object was stripped.
  auto sections = take(file.sections(), name, "section headers");
  const ElfShdr* symbol_table = nullptr;
  for (const auto& section : sections)
    if (section.sh_type == llvm::ELF::SHT_SYMTAB) symbol_table = &section;
  if (!symbol_table)
    for (const auto& section : sections)
      if (section.sh_type == llvm::ELF::SHT_DYNSYM) symbol_table = &section;
  if (!symbol_table) invalid(name, "no symbol table (.symtab or .dynsym)");
  auto symbols = take(file.symbols(symbol_table), name, "symbol table");
  auto strings = take(file.getStringTableForSymtab(*symbol_table), name, "symbol string table");
  std::map<std::string, const ElfSym*, std::less<>> defined;
  for (const auto& symbol : symbols) {
    if (symbol.st_shndx == llvm::ELF::SHN_UNDEF) continue;
    auto symbol_name = take(symbol.getName(strings), name, "symbol name");
    if (!symbol_name.empty()) defined.emplace(symbol_name.str(), &symbol);
  }

  auto in_image = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= image->size && size <= image->size - offset;
  };

  std::vector<KernelInfo> new_kernels;
  std::vector<VariableInfo> new_variables;
  std::vector<std::string> new_agent_symbols;
  auto kernels_node = root.find("amdhsa.kernels");
  if (kernels_node != root.end() && kernels_node->second.isArray()) {
    for (auto& entry : kernels_node->second.getArray()) {
      if (!entry.isMap()) invalid(name, "an amdhsa.kernels entry is not a map");
      auto& map = entry.getMap();
      KernelInfo kernel;
      kernel.name = string_key(map, ".name");
      kernel.symbol = string_key(map, ".symbol");
      if (kernel.symbol.empty()) kernel.symbol = kernel.name + ".kd";
      kernel.kernarg_segment_size = integer_key(map, ".kernarg_segment_size", 0);
      kernel.kernarg_segment_align = integer_key(map, ".kernarg_segment_align", 8);
      kernel.group_segment_fixed_size = integer_key(map, ".group_segment_fixed_size", 0);
      kernel.private_segment_fixed_size = integer_key(map, ".private_segment_fixed_size", 0);
      kernel.wavefront_size = integer_key(map, ".wavefront_size", 64);
      kernel.max_flat_workgroup_size = integer_key(map, ".max_flat_workgroup_size", 1024);
      kernel.sgpr_count = integer_key(map, ".sgpr_count", 0);
      kernel.vgpr_count = integer_key(map, ".vgpr_count", 0);
      kernel.uses_dynamic_stack = integer_key(map, ".uses_dynamic_stack", 0) != 0;
      kernel.code_object_version = object.code_object_version;
      auto args = map.find(".args");
      if (args != map.end() && args->second.isArray()) {
        for (auto& arg_node : args->second.getArray()) {
          if (!arg_node.isMap())
            invalid(name, "kernel " + kernel.name + ": an .args entry is not a map");
          auto& arg_map = arg_node.getMap();
          KernelArgument arg;
          arg.name = string_key(arg_map, ".name");
          arg.type_name = string_key(arg_map, ".type_name");
          arg.value_kind = string_key(arg_map, ".value_kind");
          arg.address_space = string_key(arg_map, ".address_space");
          arg.offset = integer_key(arg_map, ".offset", 0);
          arg.size = integer_key(arg_map, ".size", 0);
          if (std::uint64_t(arg.offset) + arg.size > kernel.kernarg_segment_size)
            invalid(name, "kernel " + kernel.name + ": argument at offset " +
                              std::to_string(arg.offset) + " lies outside .kernarg_segment_size " +
                              std::to_string(kernel.kernarg_segment_size));
          kernel.args.push_back(std::move(arg));
        }
      }
      auto descriptor = defined.find(kernel.symbol);
      if (descriptor == defined.end())
        invalid(name, "kernel " + kernel.name + ": descriptor symbol '" + kernel.symbol +
                          "' is not defined");
      if (!in_image(descriptor->second->st_value, 64))
        invalid(name, "kernel " + kernel.name + ": descriptor at " +
                          hex(descriptor->second->st_value) + " lies outside the loaded segments");
      kernel.descriptor_address = object.load_base + descriptor->second->st_value;
      new_agent_symbols.push_back(kernel.symbol);
      new_kernels.push_back(std::move(kernel));
    }
  }

  // Variables: GLOBAL/WEAK STT_OBJECT/STT_COMMON that are not kernel descriptors.
  for (const auto& [symbol_name, symbol] : defined) {
    unsigned type = symbol->getType();
    unsigned binding = symbol->getBinding();
    if (type != llvm::ELF::STT_OBJECT && type != llvm::ELF::STT_COMMON) continue;
    if (binding != llvm::ELF::STB_GLOBAL && binding != llvm::ELF::STB_WEAK) continue;
    bool is_descriptor = std::any_of(new_kernels.begin(), new_kernels.end(),
                                     [&](const KernelInfo& k) { return k.symbol == symbol_name; });
    if (is_descriptor) continue;
    if (!in_image(symbol->st_value, symbol->st_size))
      invalid(name, "variable '" + symbol_name + "' lies outside the loaded segments");
    new_variables.push_back(
        {symbol_name, object.load_base + symbol->st_value, symbol->st_size, false});
    new_agent_symbols.push_back(symbol_name);
  }

  // Nothing above touched the executable, so a bad object leaves it as it was.
  for (std::size_t i = 0; i < new_agent_symbols.size(); ++i)
    if (agent_symbols_.count(new_agent_symbols[i]) ||
        std::find(new_agent_symbols.begin(), new_agent_symbols.begin() + i, new_agent_symbols[i]) !=
            new_agent_symbols.begin() + i)
      reject(LoaderErrorKind::variable_already_defined, name,
             "symbol '" + new_agent_symbols[i] + "' is already defined in this executable");
  for (auto& kernel : new_kernels) {
    agent_symbols_[kernel.symbol] = kernel.descriptor_address;
    kernels_.push_back(std::move(kernel));
  }
  for (auto& variable : new_variables) {
    agent_symbols_[variable.name] = variable.address;
    variables_.push_back(std::move(variable));
  }
  for (const auto& section : sections) {
    if (section.sh_type != llvm::ELF::SHT_DYNSYM) continue;
    auto dynamic_symbols = take(file.symbols(&section), name, "dynamic symbol table");
    auto dynamic_strings =
        take(file.getStringTableForSymtab(section), name, "dynamic string table");
    for (const auto& symbol : dynamic_symbols) {
      if (symbol.st_shndx != llvm::ELF::SHN_UNDEF || symbol.getType() != llvm::ELF::STT_NOTYPE)
        continue;
      auto symbol_name = take(symbol.getName(dynamic_strings), name, "symbol name");
      if (!symbol_name.empty()) undefined_references_.insert(symbol_name.str());
    }
  }
  target_ = object.target;
  images_.push_back(std::move(image));
  objects_.push_back(std::move(object));
  return objects_.back();
}

void Executable::define_global_variable(const std::string& name, std::uint64_t address) {
  if (frozen_)
    reject(LoaderErrorKind::frozen_executable, name,
           "cannot define a variable in a frozen executable");
  if (agent_symbols_.count(name))
    reject(LoaderErrorKind::variable_already_defined, name,
           "symbol is already defined in this executable");
  agent_symbols_[name] = address;
  variables_.push_back({name, address, 0, true});
}

void Executable::freeze() {
  if (frozen_) reject(LoaderErrorKind::frozen_executable, "executable", "already frozen");
  for (auto& image : images_) relocate(*image);
  frozen_ = true;
}

void Executable::relocate(ObjectImage& image) {
  const std::string& name = image.name;
  llvm::StringRef data(reinterpret_cast<const char*>(image.elf.data()), image.elf.size());
  ElfFile file = take(ElfFile::create(data), name, "malformed ELF");
  auto sections = take(file.sections(), name, "section headers");
  const std::uint64_t base = reinterpret_cast<std::uint64_t>(image.base);
  for (const auto& section : sections) {
    if (section.sh_type == llvm::ELF::SHT_REL)
      invalid(name, "SHT_REL relocations are not used by AMDGPU");
    if (section.sh_type != llvm::ELF::SHT_RELA) continue;
    // A linked object's dynamic relocations (.rela.dyn) refer to .dynsym via sh_link.
    const ElfShdr* symbol_table =
        take(file.getSection(section.sh_link), name, "relocation symbol table");
    auto symbols = take(file.symbols(symbol_table), name, "relocation symbol table");
    auto strings =
        take(file.getStringTableForSymtab(*symbol_table), name, "relocation string table");
    for (const auto& rela : take(file.relas(section), name, "relocations")) {
      unsigned type = rela.getType(false);
      unsigned index = rela.getSymbol(false);
      std::uint64_t symbol_value = 0;
      std::string symbol_name;
      if (index != 0) {
        if (index >= symbols.size())
          invalid(name, "relocation at " + hex(rela.r_offset) + " names symbol " +
                            std::to_string(index) + ", past the symbol table");
        const ElfSym& symbol = symbols[index];
        symbol_name = take(symbol.getName(strings), name, "symbol name").str();
        switch (symbol.getType()) {
          case llvm::ELF::STT_OBJECT:
          case llvm::ELF::STT_FUNC:
          case llvm::ELF::STT_SECTION:
            symbol_value = base + symbol.st_value;
            break;
          case llvm::ELF::STT_NOTYPE: {
            auto found = agent_symbols_.find(symbol_name);
            if (found != agent_symbols_.end()) symbol_value = found->second;
            break;
          }
          default:
            invalid(name, "relocation at " + hex(rela.r_offset) + " against symbol '" +
                              symbol_name + "' of type " + std::to_string(symbol.getType()) +
                              " (the loader accepts OBJECT, FUNC, SECTION, NOTYPE)");
        }
      }
      std::uint64_t value = symbol_value + static_cast<std::uint64_t>(rela.r_addend);
      auto need_symbol = [&] {
        if (symbol_value == 0)
          reject(LoaderErrorKind::variable_undefined, name,
                 "relocation at " + hex(rela.r_offset) + " refers to undefined symbol '" +
                     symbol_name +
                     "' (define it in another loaded code object as an STT_OBJECT, or with "
                     "hsa_executable_agent_global_variable_define)");
      };
      auto write = [&](const void* bytes, std::size_t size) {
        if (rela.r_offset > image.size || size > image.size - rela.r_offset)
          invalid(name,
                  "relocation at " + hex(rela.r_offset) + " lies outside the loaded segments");
        std::memcpy(image.base + rela.r_offset, bytes, size);
      };
      switch (type) {
        case llvm::ELF::R_AMDGPU_NONE:
          break;
        case llvm::ELF::R_AMDGPU_ABS64: {
          need_symbol();
          write(&value, 8);
          break;
        }
        case llvm::ELF::R_AMDGPU_ABS32:
        case llvm::ELF::R_AMDGPU_ABS32_LO: {
          need_symbol();
          std::uint32_t low = static_cast<std::uint32_t>(value);
          write(&low, 4);
          break;
        }
        case llvm::ELF::R_AMDGPU_ABS32_HI: {
          need_symbol();
          std::uint32_t high = static_cast<std::uint32_t>(value >> 32);
          write(&high, 4);
          break;
        }
        case llvm::ELF::R_AMDGPU_RELATIVE64: {
          std::uint64_t relocated = base + static_cast<std::uint64_t>(rela.r_addend);
          write(&relocated, 8);
          break;
        }
        default:
          invalid(name, "relocation at " + hex(rela.r_offset) + " has type " +
                            std::to_string(type) + ", which the HSA loader does not apply");
      }
    }
  }
}

const KernelInfo* Executable::find_kernel(std::string_view name) const {
  for (const auto& kernel : kernels_)
    if (kernel.name == name || kernel.symbol == name) return &kernel;
  return nullptr;
}

const KernelInfo* Executable::kernel_at(std::uint64_t descriptor_address) const {
  for (const auto& kernel : kernels_)
    if (kernel.descriptor_address == descriptor_address) return &kernel;
  return nullptr;
}

const VariableInfo* Executable::find_variable(std::string_view name) const {
  for (const auto& variable : variables_)
    if (variable.name == name) return &variable;
  return nullptr;
}

}  // namespace wavekit::hsa
