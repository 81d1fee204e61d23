// Bad input gets a wavekit::Error naming the problem: never a crash, a hang or silence.
#include <gtest/gtest.h>
#include <llvm/BinaryFormat/ELF.h>

#include <cstring>
#include <functional>

#include "test_support.h"
#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {
namespace {

using testing::load;

// Parses `bytes` and returns the error message ("" if it parsed).
std::string parse_error(const std::vector<std::uint8_t>& bytes) {
  try {
    CodeObject::parse(bytes, "bad.co");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
  std::string message = parse_error(bytes);
  EXPECT_NE(message.find(fragment), std::string::npos) << "message: '" << message << "'";
  EXPECT_EQ(message.rfind("bad.co: ", 0), 0u) << message;
}

// Rewrites st_value of every symbol named `name` in .symtab and .dynsym.
void set_symbol_value(std::vector<std::uint8_t>& bytes, const std::string& name,
                      std::uint64_t value) {
  CodeObject object = CodeObject::parse(bytes, "good");
  for (const auto* table_name : {".symtab", ".dynsym"}) {
    const Section* table = object.section(table_name);
    if (!table) continue;
    const auto& symbols =
        std::string(table_name) == ".symtab" ? object.symbols() : object.dynamic_symbols();
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (symbols[i].name != name) continue;
      std::uint64_t at = table->offset + i * sizeof(llvm::ELF::Elf64_Sym) +
                         offsetof(llvm::ELF::Elf64_Sym, st_value);
      std::memcpy(&bytes[at], &value, sizeof value);
    }
  }
}

// The file offset of the metadata note's descriptor.
std::uint64_t metadata_desc_offset(const std::vector<std::uint8_t>& bytes) {
  CodeObject object = CodeObject::parse(bytes, "good");
  const Section& note = object.sections()[object.notes().front().section_index];
  // namesz, descsz, type, then "AMDGPU\0" padded to 4 bytes.
  return note.offset + 12 + 8;
}

TEST(BadInput, NotElfAtAll) {
  expect_error({}, "not an ELF file");
  expect_error({'h', 'e', 'l', 'l', 'o'}, "not an ELF file");
  expect_error({0x7f, 'E', 'L', 'F', 2, 1}, "truncated ELF header");
}

TEST(BadInput, HostElfIsNotAnAmdgpuCodeObject) {
  expect_error(load(WAVEKIT_CODEOBJ_FATBIN), "not an AMDGPU code object (e_machine is 62");
}

TEST(BadInput, WrongOsAbi) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  bytes[llvm::ELF::EI_OSABI] = 0;
  expect_error(bytes, "EI_OSABI is 0, expected 64");
}

TEST(BadInput, Wave32TargetIsRefusedClearly) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  std::uint32_t flags = 0;
  std::memcpy(&flags, &bytes[offsetof(llvm::ELF::Elf64_Ehdr, e_flags)], 4);
  flags = (flags & ~0xffu) | llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100;
  std::memcpy(&bytes[offsetof(llvm::ELF::Elf64_Ehdr, e_flags)], &flags, 4);
  expect_error(bytes, "gfx1100 is not supported yet (wave32)");
}

TEST(BadInput, MisalignedDescriptor) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  CodeObject object = CodeObject::parse(bytes, "good");
  const Kernel& kernel = object.kernels()[0];
  set_symbol_value(bytes, kernel.descriptor_symbol, kernel.descriptor_address + 4);
  expect_error(bytes, kernel.descriptor_symbol + " at ");
  expect_error(bytes, "is not 64-byte aligned");
}

TEST(BadInput, DescriptorOutsideTheObject) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  CodeObject object = CodeObject::parse(bytes, "good");
  set_symbol_value(bytes, object.kernels()[0].descriptor_symbol, 0x7fff0000);
  expect_error(bytes, "is out of range");
}

TEST(BadInput, GarbageInTheMetadataNote) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  bytes[metadata_desc_offset(bytes)] = 0xc1;  // a MessagePack byte that is never used
  expect_error(bytes, "AMDGPU metadata note is not valid MessagePack");
  bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  std::uint64_t desc = metadata_desc_offset(bytes);
  std::memset(&bytes[desc], 0x00, 1);  // a lone positive fixint, then trailing bytes
  EXPECT_NE(parse_error(bytes), "");
}

TEST(BadInput, SectionHeadersOutsideTheFile) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  std::uint64_t shoff = bytes.size() - 8;
  std::memcpy(&bytes[offsetof(llvm::ELF::Elf64_Ehdr, e_shoff)], &shoff, 8);
  expect_error(bytes, "corrupt section header table");
}

// Every prefix of a real object either parses (it cannot: sections are at the end) or gives an
// error naming the object; none crashes.
TEST(BadInput, EveryTruncationIsAnError) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  for (std::size_t size = 0; size < bytes.size(); size += 7) {
    std::vector<std::uint8_t> prefix(bytes.begin(),
                                     bytes.begin() + static_cast<std::ptrdiff_t>(size));
    std::string message = parse_error(prefix);
    EXPECT_FALSE(message.empty()) << "a " << size << "-byte prefix parsed";
  }
}

// Flipping any single byte of the headers and tables never crashes (errors are fine; so is
// success where the byte does not matter).
TEST(BadInput, SingleByteCorruptionsNeverCrash) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  for (std::size_t at = 0; at < bytes.size(); at += 3) {
    auto corrupted = bytes;
    corrupted[at] ^= 0xa5;
    try {
      CodeObject object = CodeObject::parse(corrupted, "corrupted");
      describe_json(object);
      object.write();
    } catch (const Error&) {
    }
  }
}

// The fields a loader sizes a launch from must have their types: a string where an integer
// belongs used to read as 0 (an argument at offset 0), and `.args` that is not a list as a
// kernel without arguments.
TEST(BadInput, MetadataFieldsOfTheWrongType) {
  const auto with = [](const std::function<void(llvm::msgpack::MapDocNode)>& change) {
    CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "good");
    llvm::msgpack::Document& document = object.metadata().document();
    change(document.getRoot().getMap()["amdhsa.kernels"].getArray()[0].getMap());
    return object.write();
  };
  const auto first_arg = [](llvm::msgpack::MapDocNode kernel) {
    return kernel[".args"].getArray()[0].getMap();
  };
  expect_error(with([&](llvm::msgpack::MapDocNode kernel) {
                 first_arg(kernel)[".offset"] = kernel.getDocument()->getNode("8", true);
               }),
               ".args[0].offset is not a non-negative integer");
  expect_error(with([&](llvm::msgpack::MapDocNode kernel) {
                 first_arg(kernel)[".size"] = kernel.getDocument()->getNode(-8);
               }),
               ".args[0].size is not a non-negative integer");
  expect_error(with([&](llvm::msgpack::MapDocNode kernel) {
                 first_arg(kernel).erase(first_arg(kernel).find(".value_kind"));
               }),
               ".args[0] has no string .value_kind");
  expect_error(with([](llvm::msgpack::MapDocNode kernel) {
                 kernel[".args"] = kernel.getDocument()->getNode("none", true);
               }),
               ".args is not an array");
  expect_error(with([](llvm::msgpack::MapDocNode kernel) {
                 kernel[".kernarg_segment_size"] = kernel.getDocument()->getNode(1.5);
               }),
               ".kernarg_segment_size is not a non-negative integer");
}

void set_header_u16(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint16_t value) {
  std::memcpy(&bytes[offset], &value, sizeof value);
}

// An e_phnum that hides the PT_LOAD segments made an object that no loader can use; the
// extended count PN_XNUM is not used by code objects.
TEST(BadInput, ProgramHeaderCountThatHidesTheSegments) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  set_header_u16(bytes, offsetof(llvm::ELF::Elf64_Ehdr, e_phnum), 0xffff);
  expect_error(bytes, "PN_XNUM");
  bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  set_header_u16(bytes, offsetof(llvm::ELF::Elf64_Ehdr, e_phnum), 1);
  expect_error(bytes, "lies in no PT_LOAD segment (the object has 1 program headers)");
}

TEST(BadInput, NoSectionHeaders) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  set_header_u16(bytes, offsetof(llvm::ELF::Elf64_Ehdr, e_shnum), 0);
  set_header_u16(bytes, offsetof(llvm::ELF::Elf64_Ehdr, e_shstrndx), 0);
  expect_error(bytes, "has no section headers (e_shnum 0)");
}

// A huge sh_addralign made the writer pad without end (vector::_M_default_append).
TEST(BadInput, HugeSectionAlignment) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  CodeObject object = CodeObject::parse(bytes, "good");
  std::uint64_t shoff = 0;
  std::memcpy(&shoff, &bytes[offsetof(llvm::ELF::Elf64_Ehdr, e_shoff)], 8);
  const auto index = object.section_index(".shstrtab");
  ASSERT_TRUE(index);
  const std::uint64_t alignment = std::uint64_t{1} << 40;
  std::memcpy(&bytes[shoff + *index * sizeof(llvm::ELF::Elf64_Shdr) +
                     offsetof(llvm::ELF::Elf64_Shdr, sh_addralign)],
              &alignment, 8);
  expect_error(bytes, "section .shstrtab has alignment 1099511627776");
}

}  // namespace
}  // namespace wavekit::codeobj
