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

namespace wavekit::codeobj {
namespace {

// The rewriter's recipe for calling into another object: an UND dynamic symbol, a GOT slot in
// a new writable section, an R_AMDGPU_ABS64 against the symbol; plus a defined alias (hashed).
TEST(Mutation, DynamicSymbolsAndRelocationsAreWhatReadelfSees) {
  CodeObject object = CodeObject::parse(testing::load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  NewSection got;
  got.name = ".wavekit.got";
  got.flags = llvm::ELF::SHF_ALLOC | llvm::ELF::SHF_WRITE;
  got.alignment = 8;
  got.data.assign(8, 0);
  std::size_t got_index = object.add_loaded_section(got);
  const std::uint64_t slot = object.sections()[got_index].address;

  Symbol external;
  external.name = "wavekit_probe_entry";
  external.type = llvm::ELF::STT_NOTYPE;
  external.binding = llvm::ELF::STB_GLOBAL;
  std::uint32_t external_index = object.add_dynamic_symbol(external);
  object.add_dynamic_relocation(slot, llvm::ELF::R_AMDGPU_ABS64, external_index, 0);

  const Kernel& kernel = object.kernels()[0];
  Symbol alias;
  alias.name = ".wavekit." + kernel.name;
  alias.type = llvm::ELF::STT_OBJECT;
  alias.binding = llvm::ELF::STB_GLOBAL;
  alias.value = kernel.entry_address;
  alias.section_index = static_cast<std::uint16_t>(*object.section_index(".text"));
  object.add_dynamic_symbol(alias);
  object.add_symbol(alias);
  Symbol local = alias;
  local.name = "wavekit_local_marker";
  local.binding = llvm::ELF::STB_LOCAL;
  std::uint32_t local_index = object.add_symbol(local);
  EXPECT_LT(local_index, object.symbols().size() - 2);

  std::string path = testing::scratch_path("dynamic_symbols.co");
  auto written = object.write();
  testing::save(path, written);
  // readelf's output is JSON only if it printed no warnings (run() merges stderr into it).
  auto oracle = testing::readelf_json(path, "-r --dyn-syms --symbols -d");
  ASSERT_EQ(oracle.at("Relocations").size(), 1u);
  const auto& relocation = oracle.at("Relocations")[0].at("Relocs")[0].at("Relocation");
  EXPECT_EQ(relocation.at("Offset").get<std::uint64_t>(), slot);
  EXPECT_EQ(relocation.at("Type").at("Name"), "R_AMDGPU_ABS64");
  EXPECT_EQ(relocation.at("Symbol").at("Name"), external.name);
  std::map<std::string, nlohmann::json> dynamic_symbols;
  for (const auto& symbol : oracle.at("DynamicSymbols")) {
    dynamic_symbols[symbol.at("Symbol").at("Name").at("Name").get<std::string>()] =
        symbol.at("Symbol");
  }
  ASSERT_TRUE(dynamic_symbols.count(external.name));
  EXPECT_EQ(dynamic_symbols[external.name].at("Section").at("Value"), 0);
  ASSERT_TRUE(dynamic_symbols.count(alias.name));
  EXPECT_EQ(dynamic_symbols[alias.name].at("Value").get<std::uint64_t>(), kernel.entry_address);
  for (const auto& k : object.kernels()) EXPECT_TRUE(dynamic_symbols.count(k.descriptor_symbol));
  bool local_seen = false;
  for (const auto& symbol : oracle.at("Symbols")) {
    if (symbol.at("Symbol").at("Name").at("Name") == local.name) local_seen = true;
  }
  EXPECT_TRUE(local_seen);
  // The hash tables agree with .dynsym: readelf resolves every defined name through them.
  std::string hashed = testing::run(std::string(WAVEKIT_LLVM_READELF) + " --hash-symbols " + path);
  EXPECT_EQ(hashed.find("warning"), std::string::npos) << hashed;
  EXPECT_NE(hashed.find(alias.name), std::string::npos) << hashed;
  for (const auto& k : object.kernels())
    EXPECT_NE(hashed.find(k.descriptor_symbol), std::string::npos);
  // And the result is a code object we read back the same way.
  CodeObject reread = CodeObject::parse(written, path);
  EXPECT_EQ(reread.write(), written);
  ASSERT_EQ(reread.relocations().size(), 1u);
  EXPECT_EQ(reread.relocations()[0].symbol_name, external.name);
  EXPECT_EQ(reread.kernels().size(), object.kernels().size());
}

TEST(Mutation, CloneIsEditedAloneAndWritesTheSameBytes) {
  const std::vector<std::uint8_t> bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  const CodeObject object = CodeObject::parse(bytes, "object");
  CodeObject copy = object.clone();
  EXPECT_EQ(copy.write(), bytes);
  // Edits of the copy (a descriptor, the metadata note, a new section) leave the original alone.
  KernelDescriptor kd = copy.kernels().front().descriptor;
  kd.kernarg_size += 8;
  copy.set_descriptor(0, kd);
  copy.metadata().kernel(0).set_sgpr_count(99);
  NewSection added;
  added.name = ".wavekit.text";
  added.data = {0x00, 0x00, 0x80, 0xbf};
  copy.add_loaded_section(added);
  EXPECT_EQ(copy.kernels().front().descriptor.kernarg_size,
            object.kernels().front().descriptor.kernarg_size + 8);
  EXPECT_EQ(object.write(), bytes);
  EXPECT_FALSE(object.metadata().modified());
  EXPECT_EQ(object.metadata().kernel_count(), copy.metadata().kernel_count());
  CodeObject reread = CodeObject::parse(copy.write(), "copy");
  EXPECT_EQ(reread.metadata().kernel(0).sgpr_count(), 99u);
  // A modified model's clone keeps the modification.
  EXPECT_EQ(CodeObject::parse(copy.clone().write(), "clone").metadata().kernel(0).sgpr_count(),
            99u);
}

TEST(Mutation, AddedNoteIsWhatReadelfSeesAndSurvivesTheMetadataNote) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  Note note;
  note.name = "WAVEKIT";
  note.type = 7;
  note.desc = {1, 2, 3, 4, 5};
  const std::size_t index = object.add_note(".note.wavekit.test", note);
  EXPECT_EQ(object.sections()[index].type, static_cast<std::uint32_t>(llvm::ELF::SHT_NOTE));
  EXPECT_EQ(object.notes().back().section_index, index);
  // Re-encoding the metadata note re-serialises every note section from notes(): the added
  // note must be among them.
  object.metadata().kernel(0).set_sgpr_count(99);
  const std::string path = testing::scratch_path("added_note.co");
  testing::save(path, object.write());
  const CodeObject reread = CodeObject::parse(load(path), "reread");
  bool found = false;
  for (const Note& n : reread.notes())
    if (n.name == "WAVEKIT" && n.type == 7) {
      found = true;
      EXPECT_EQ(n.desc, note.desc);
      EXPECT_EQ(reread.sections()[n.section_index].name, ".note.wavekit.test");
    }
  EXPECT_TRUE(found);
  // readelf lists the notes of a loaded object by PT_NOTE segment, which an added section is
  // not in: its section header is what says it is a note.
  bool seen = false;
  const nlohmann::json headers = testing::readelf_json(path, "-S");
  for (const auto& section : headers.at("Sections"))
    if (section.at("Section").at("Name").at("Name") == ".note.wavekit.test") {
      seen = true;
      EXPECT_EQ(section.at("Section").at("Type").at("Value").get<std::uint32_t>(),
                static_cast<std::uint32_t>(llvm::ELF::SHT_NOTE));
      // 12-byte header, "WAVEKIT\0", 5 bytes of descriptor padded to 8.
      EXPECT_EQ(section.at("Section").at("Size").get<std::uint64_t>(), 12u + 8u + 8u);
    }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace wavekit::codeobj
