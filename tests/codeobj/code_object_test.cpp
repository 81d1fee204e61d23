// The ELF model against llvm-readelf-22, and write(parse(x)) == x, for every test input.
#include "wavekit/codeobj/code_object.h"

#include <gtest/gtest.h>
#include <llvm/BinaryFormat/ELF.h>

#include "test_support.h"

namespace wavekit::codeobj {
namespace {

using testing::file_name;
using testing::load;
using testing::readelf_json;

class EveryObject : public ::testing::TestWithParam<std::string> {
 protected:
  CodeObject parse() { return CodeObject::parse(load(GetParam()), file_name(GetParam())); }
};

TEST_P(EveryObject, WriteOfParseIsByteIdentical) {
  auto bytes = load(GetParam());
  CodeObject object = CodeObject::parse(bytes, GetParam());
  EXPECT_TRUE(object.write() == bytes);
}

TEST_P(EveryObject, SectionsMatchReadelf) {
  CodeObject object = parse();
  auto expected = readelf_json(GetParam(), "-S").at("Sections");
  ASSERT_EQ(object.sections().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& oracle = expected[i].at("Section");
    const Section& section = object.sections()[i];
    SCOPED_TRACE(section.name);
    EXPECT_EQ(section.name, oracle.at("Name").at("Name").get<std::string>());
    EXPECT_EQ(section.type, oracle.at("Type").at("Value").get<std::uint32_t>());
    EXPECT_EQ(section.flags, oracle.at("Flags").at("Value").get<std::uint64_t>());
    EXPECT_EQ(section.address, oracle.at("Address").get<std::uint64_t>());
    EXPECT_EQ(section.offset, oracle.at("Offset").get<std::uint64_t>());
    EXPECT_EQ(section.size, oracle.at("Size").get<std::uint64_t>());
    EXPECT_EQ(section.alignment, oracle.at("AddressAlignment").get<std::uint64_t>());
    if (section.type != llvm::ELF::SHT_NOBITS && section.type != llvm::ELF::SHT_NULL) {
      EXPECT_EQ(section.data.size(), section.size);
    }
  }
}

TEST_P(EveryObject, SegmentsMatchReadelf) {
  CodeObject object = parse();
  auto expected = readelf_json(GetParam(), "-l").at("ProgramHeaders");
  ASSERT_EQ(object.segments().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& oracle = expected[i].at("ProgramHeader");
    const Segment& segment = object.segments()[i];
    EXPECT_EQ(segment.type, oracle.at("Type").at("Value").get<std::uint32_t>());
    EXPECT_EQ(segment.offset, oracle.at("Offset").get<std::uint64_t>());
    EXPECT_EQ(segment.vaddr, oracle.at("VirtualAddress").get<std::uint64_t>());
    EXPECT_EQ(segment.file_size, oracle.at("FileSize").get<std::uint64_t>());
    EXPECT_EQ(segment.memory_size, oracle.at("MemSize").get<std::uint64_t>());
    EXPECT_EQ(segment.flags, oracle.at("Flags").at("Value").get<std::uint32_t>());
    EXPECT_EQ(segment.alignment, oracle.at("Alignment").get<std::uint64_t>());
  }
}

void expect_symbols_equal(const std::vector<Symbol>& symbols, const nlohmann::json& oracle_list) {
  ASSERT_EQ(symbols.size(), oracle_list.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const auto& oracle = oracle_list[i].at("Symbol");
    const Symbol& symbol = symbols[i];
    SCOPED_TRACE(symbol.name);
    EXPECT_EQ(symbol.name, oracle.at("Name").at("Name").get<std::string>());
    EXPECT_EQ(symbol.value, oracle.at("Value").get<std::uint64_t>());
    EXPECT_EQ(symbol.size, oracle.at("Size").get<std::uint64_t>());
    EXPECT_EQ(symbol.type, oracle.at("Type").at("Value").get<std::uint8_t>());
    EXPECT_EQ(symbol.binding, oracle.at("Binding").at("Value").get<std::uint8_t>());
    EXPECT_EQ(symbol.other, oracle.at("Other").at("Value").get<std::uint8_t>());
    EXPECT_EQ(symbol.section_index, oracle.at("Section").at("Value").get<std::uint16_t>());
  }
}

TEST_P(EveryObject, SymbolsMatchReadelf) {
  CodeObject object = parse();
  auto oracle = readelf_json(GetParam(), "--symbols --dyn-syms");
  expect_symbols_equal(object.symbols(),
                       oracle.contains("Symbols") ? oracle.at("Symbols") : nlohmann::json::array());
  expect_symbols_equal(object.dynamic_symbols(), oracle.contains("DynamicSymbols")
                                                     ? oracle.at("DynamicSymbols")
                                                     : nlohmann::json::array());
}

TEST_P(EveryObject, RelocationsAndDynamicMatchReadelf) {
  CodeObject object = parse();
  auto oracle = readelf_json(GetParam(), "-r -d");
  std::vector<nlohmann::json> expected;
  for (const auto& section : oracle.at("Relocations")) {
    for (const auto& relocation : section.at("Relocs")) {
      auto entry = relocation.at("Relocation");
      entry["SectionIndex"] = section.at("SectionIndex");
      expected.push_back(entry);
    }
  }
  ASSERT_EQ(object.relocations().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Relocation& relocation = object.relocations()[i];
    EXPECT_EQ(relocation.section_index, expected[i].at("SectionIndex").get<std::uint32_t>());
    EXPECT_EQ(relocation.offset, expected[i].at("Offset").get<std::uint64_t>());
    EXPECT_EQ(relocation.type, expected[i].at("Type").at("Value").get<std::uint32_t>());
    EXPECT_EQ(relocation.type_name(), expected[i].at("Type").at("Name").get<std::string>());
    EXPECT_EQ(relocation.symbol_name, expected[i].at("Symbol").at("Name").get<std::string>());
    EXPECT_EQ(relocation.addend, expected[i].at("Addend").get<std::int64_t>());
  }
  auto dynamic =
      oracle.contains("DynamicSection") ? oracle.at("DynamicSection") : nlohmann::json::array();
  // readelf stops at the first DT_NULL; the section may hold padding entries after it.
  ASSERT_GE(object.dynamic_entries().size(), dynamic.size());
  for (std::size_t i = 0; i < dynamic.size(); ++i) {
    EXPECT_EQ(object.dynamic_entries()[i].tag, dynamic[i].at("Tag").get<std::int64_t>());
    EXPECT_EQ(object.dynamic_entries()[i].value, dynamic[i].at("Value").get<std::uint64_t>());
  }
}

TEST_P(EveryObject, TargetMatchesReadelfHeader) {
  CodeObject object = parse();
  auto header = readelf_json(GetParam(), "-h").at("ElfHeader");
  std::string mach_name;
  for (const auto& flag : header.at("Flags").at("Flags")) {
    std::string name = flag.at("Name").get<std::string>();
    if (name.rfind("EF_AMDGPU_MACH_AMDGCN_", 0) == 0) mach_name = name.substr(22);
  }
  std::string expected_processor;
  for (char c : mach_name) expected_processor += static_cast<char>(std::tolower(c));
  EXPECT_EQ(object.target().processor, expected_processor);
  EXPECT_EQ(object.target().code_object_version,
            header.at("Ident").at("ABIVersion").get<unsigned>() + 2);
  EXPECT_EQ(object.elf_flags(), header.at("Flags").at("Value").get<std::uint32_t>());
}

// Each kernel's entry is where its function symbol is (when the object has symbols at all), and
// each descriptor is where its .kd symbol is, both according to readelf.
TEST_P(EveryObject, KernelEntriesAreTheirFunctionSymbols) {
  CodeObject object = parse();
  ASSERT_FALSE(object.kernels().empty());
  auto oracle = readelf_json(GetParam(), "--dyn-syms");
  std::map<std::string, std::uint64_t> values;
  for (const auto& symbol : oracle.at("DynamicSymbols")) {
    values[symbol.at("Symbol").at("Name").at("Name").get<std::string>()] =
        symbol.at("Symbol").at("Value").get<std::uint64_t>();
  }
  for (const auto& kernel : object.kernels()) {
    SCOPED_TRACE(kernel.name);
    ASSERT_TRUE(values.count(kernel.name));
    EXPECT_EQ(kernel.entry_address, values[kernel.name]);
    EXPECT_EQ(kernel.descriptor_address, values[kernel.name + ".kd"]);
    EXPECT_EQ(kernel.descriptor_symbol, kernel.name + ".kd");
    EXPECT_TRUE(kernel.metadata_index.has_value());
  }
}

TEST_P(EveryObject, DescribeJsonFollowsTheInspectContract) {
  CodeObject object = parse();
  nlohmann::json description = describe_json(object);
  EXPECT_EQ(description.at("target"), object.target().processor);
  EXPECT_EQ(description.at("code_object_version"), object.target().code_object_version);
  ASSERT_EQ(description.at("kernels").size(), object.kernels().size());
  for (const auto& kernel : description.at("kernels")) {
    EXPECT_TRUE(kernel.at("name").is_string());
    EXPECT_TRUE(kernel.at("entry").is_number_unsigned());
    EXPECT_EQ(kernel.at("metadata").at(".name"), kernel.at("name"));
    EXPECT_EQ(kernel.at("metadata").at(".symbol"), kernel.at("descriptor_symbol"));
    EXPECT_EQ(kernel.at("descriptor").at("kernarg_size"),
              kernel.at("metadata").at(".kernarg_segment_size"));
  }
  std::string text = describe_text(object);
  for (const auto& kernel : object.kernels()) {
    EXPECT_NE(text.find("kernel " + kernel.name), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(CodeObject, EveryObject, ::testing::ValuesIn(testing::test_inputs()),
                         [](const auto& info) {
                           std::string name = file_name(info.param);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(CodeObject, StrippedObjectFindsKernelsFromDynsymAndNote) {
  CodeObject stripped = CodeObject::parse(load(WAVEKIT_CODEOBJ_STRIPPED), "stripped");
  CodeObject full = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "unstripped");
  EXPECT_EQ(stripped.section(".symtab"), nullptr);
  EXPECT_TRUE(stripped.symbols().empty());
  ASSERT_EQ(stripped.kernels().size(), full.kernels().size());
  ASSERT_EQ(full.kernels().size(), 4u);
  for (std::size_t i = 0; i < full.kernels().size(); ++i) {
    EXPECT_EQ(stripped.kernels()[i].name, full.kernels()[i].name);
    EXPECT_EQ(stripped.kernels()[i].entry_address, full.kernels()[i].entry_address);
    EXPECT_EQ(stripped.kernels()[i].descriptor, full.kernels()[i].descriptor);
  }
}

TEST(CodeObject, ExternalReferencesAreAbs64RelocationsAgainstUndefinedSymbols) {
  std::string path;
  for (const auto& input : testing::test_inputs()) {
    if (input.find("codeobj_external_gfx908") != std::string::npos) path = input;
  }
  CodeObject object = CodeObject::parse(load(path), path);
  std::vector<std::string> names;
  for (const auto& relocation : object.relocations()) {
    EXPECT_EQ(relocation.type_name(), "R_AMDGPU_ABS64");
    names.push_back(relocation.symbol_name);
    // The GOT slot it patches is in a writable allocated section.
    bool in_writable = false;
    for (const auto& section : object.sections()) {
      if (section.contains_address(relocation.offset) && (section.flags & llvm::ELF::SHF_WRITE))
        in_writable = true;
    }
    EXPECT_TRUE(in_writable);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ext_probe", "mailbox"}));
}

TEST(CodeObject, ReadRefusesUnmappedAddresses) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  const Kernel& kernel = object.kernels().front();
  EXPECT_EQ(object.read(kernel.descriptor_address, 64).size(), 64u);
  EXPECT_THROW(object.read(0x7fff0000, 4), Error);
  const Section* text = object.section(".text");
  ASSERT_NE(text, nullptr);
  EXPECT_THROW(object.read(text->address + text->size - 2, 4), Error);
}

}  // namespace
}  // namespace wavekit::codeobj
