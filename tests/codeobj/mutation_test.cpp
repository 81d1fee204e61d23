// What the rewriter does to an object, checked by reading the result with the LLVM tools.
#include <gtest/gtest.h>
#include <llvm/BinaryFormat/ELF.h>

#include "test_support.h"
#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {
namespace {

using testing::load;

TEST(Mutation, AddedExecutableSectionGetsItsOwnSegment) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  std::uint64_t top = 0;
  for (const auto& segment : object.segments()) {
    if (segment.type == llvm::ELF::PT_LOAD)
      top = std::max(top, segment.vaddr + segment.memory_size);
  }
  // s_nop 0; s_endpgm (gfx9 encodings 0xbf800000, 0xbf810000).
  NewSection added;
  added.name = ".wavekit.text";
  added.data = {0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x81, 0xbf};
  std::size_t index = object.add_loaded_section(added);
  std::uint64_t address = object.sections()[index].address;
  EXPECT_GE(address, top);
  EXPECT_EQ(address % 0x1000, 0u);
  EXPECT_EQ(object.read(address + 4, 4)[3], 0xbf);

  std::string path = testing::scratch_path("added_section.co");
  testing::save(path, object.write());
  auto oracle = testing::readelf_json(path, "-S -l");
  bool section_seen = false;
  for (const auto& section : oracle.at("Sections")) {
    if (section.at("Section").at("Name").at("Name") == ".wavekit.text") {
      section_seen = true;
      EXPECT_EQ(section.at("Section").at("Address").get<std::uint64_t>(), address);
      EXPECT_EQ(section.at("Section").at("Flags").at("Value").get<std::uint64_t>(),
                llvm::ELF::SHF_ALLOC | llvm::ELF::SHF_EXECINSTR);
    }
  }
  EXPECT_TRUE(section_seen);
  bool segment_seen = false;
  for (const auto& segment : oracle.at("ProgramHeaders")) {
    const auto& header = segment.at("ProgramHeader");
    if (header.at("Type").at("Value") == llvm::ELF::PT_LOAD &&
        header.at("VirtualAddress").get<std::uint64_t>() == address) {
      segment_seen = true;
      EXPECT_EQ(header.at("Flags").at("Value").get<std::uint32_t>(),
                llvm::ELF::PF_R | llvm::ELF::PF_X);
      EXPECT_EQ(header.at("FileSize").get<std::uint64_t>(), 8u);
      EXPECT_EQ(header.at("Offset").get<std::uint64_t>() % 0x1000, address % 0x1000);
    }
  }
  EXPECT_TRUE(segment_seen);
  // objdump disassembles the new code, and the old code is unchanged.
  std::string disassembly = testing::run(std::string(WAVEKIT_LLVM_OBJDUMP) +
                                         " -d --mcpu=gfx942 -j .wavekit.text " + path);
  EXPECT_NE(disassembly.find("s_nop 0"), std::string::npos) << disassembly;
  EXPECT_NE(disassembly.find("s_endpgm"), std::string::npos) << disassembly;
  std::string before = testing::run(std::string(WAVEKIT_LLVM_OBJDUMP) +
                                    " -d --mcpu=gfx942 -j .text " + WAVEKIT_CODEOBJ_UNSTRIPPED);
  std::string after =
      testing::run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=gfx942 -j .text " + path);
  EXPECT_EQ(before.substr(before.find("Disassembly")), after.substr(after.find("Disassembly")));
  // And the result parses back with the same kernels.
  CodeObject reread = CodeObject::parse(load(path), path);
  ASSERT_EQ(reread.kernels().size(), object.kernels().size());
  EXPECT_EQ(reread.kernels()[0].entry_address, object.kernels()[0].entry_address);
  EXPECT_NE(reread.section(".wavekit.text"), nullptr);
}

TEST(Mutation, GrownDynamicStringTableMovesAndDynamicFollows) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  std::size_t index = *object.section_index(".dynstr");
  std::vector<std::uint8_t> grown = object.sections()[index].data;
  std::string extra = "wavekit_probe_name_that_does_not_fit";
  grown.insert(grown.end(), extra.begin(), extra.end());
  grown.push_back(0);
  object.replace_section_data(index, grown);
  std::uint64_t new_address = object.sections()[index].address;
  std::string path = testing::scratch_path("grown_dynstr.co");
  testing::save(path, object.write());
  auto oracle = testing::readelf_json(path, "-d --dyn-syms");
  std::map<std::string, std::uint64_t> dynamic;
  for (const auto& entry : oracle.at("DynamicSection")) {
    dynamic[entry.at("Type").get<std::string>()] = entry.at("Value").get<std::uint64_t>();
  }
  EXPECT_EQ(dynamic["STRTAB"], new_address);
  EXPECT_EQ(dynamic["STRSZ"], grown.size());
  // Names still resolve through the moved table.
  CodeObject original = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  ASSERT_EQ(oracle.at("DynamicSymbols").size(), original.dynamic_symbols().size());
  for (std::size_t i = 0; i < original.dynamic_symbols().size(); ++i) {
    EXPECT_EQ(oracle.at("DynamicSymbols")[i].at("Symbol").at("Name").at("Name").get<std::string>(),
              original.dynamic_symbols()[i].name);
  }
}

TEST(Mutation, PatchChangesOnlyTheBytesGiven) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  CodeObject object = CodeObject::parse(bytes, "object");
  std::uint64_t entry = object.kernels()[0].entry_address;
  std::vector<std::uint8_t> nop = {0x00, 0x00, 0x80, 0xbf};
  object.patch(entry, nop);
  auto written = object.write();
  ASSERT_EQ(written.size(), bytes.size());
  std::size_t differences = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) differences += bytes[i] != written[i];
  EXPECT_LE(differences, 4u);
  EXPECT_GE(differences, 1u);
  CodeObject reread = CodeObject::parse(written, "patched");
  auto read_back = reread.read(entry, 4);
  EXPECT_TRUE(std::equal(nop.begin(), nop.end(), read_back.begin()));
  EXPECT_THROW(object.patch(0x7fffffff, nop), Error);
}

}  // namespace
}  // namespace wavekit::codeobj
