// The metadata note against llvm-readelf-22 --notes, and modifications that readelf reads back.
#include <gtest/gtest.h>

#include "test_support.h"
#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {
namespace {

using testing::file_name;
using testing::load;

class EveryObjectMetadata : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryObjectMetadata, NoteEqualsReadelf) {
  CodeObject object = CodeObject::parse(load(GetParam()), GetParam());
  nlohmann::json expected = testing::readelf_metadata(GetParam());
  ASSERT_FALSE(expected.is_null());
  EXPECT_EQ(object.metadata().to_json(), expected);
  // The per-kernel maps of describe_json are the note's.
  nlohmann::json description = describe_json(object);
  for (std::size_t i = 0; i < description["kernels"].size(); ++i) {
    const auto& name = description["kernels"][i]["name"];
    bool found = false;
    for (const auto& kernel : expected["amdhsa.kernels"]) {
      if (kernel[".name"] == name) {
        EXPECT_EQ(description["kernels"][i]["metadata"], kernel);
        found = true;
      }
    }
    EXPECT_TRUE(found) << name;
  }
}

TEST_P(EveryObjectMetadata, TypedAccessorsAgreeWithTheNote) {
  CodeObject object = CodeObject::parse(load(GetParam()), GetParam());
  nlohmann::json expected = testing::readelf_metadata(GetParam());
  Metadata& metadata = object.metadata();
  ASSERT_EQ(metadata.kernel_count(), expected["amdhsa.kernels"].size());
  EXPECT_EQ(metadata.target(), expected["amdhsa.target"].get<std::string>());
  EXPECT_EQ(metadata.version().first, expected["amdhsa.version"][0].get<unsigned>());
  EXPECT_EQ(metadata.version().second, expected["amdhsa.version"][1].get<unsigned>());
  for (std::size_t i = 0; i < metadata.kernel_count(); ++i) {
    KernelMetadata kernel = metadata.kernel(i);
    const auto& oracle = expected["amdhsa.kernels"][i];
    EXPECT_EQ(kernel.name(), oracle[".name"].get<std::string>());
    EXPECT_EQ(kernel.symbol(), oracle[".symbol"].get<std::string>());
    EXPECT_EQ(kernel.kernarg_segment_size(), oracle[".kernarg_segment_size"].get<std::uint64_t>());
    EXPECT_EQ(kernel.private_segment_fixed_size(),
              oracle[".private_segment_fixed_size"].get<std::uint64_t>());
    EXPECT_EQ(kernel.sgpr_count(), oracle[".sgpr_count"].get<std::uint64_t>());
    EXPECT_EQ(kernel.vgpr_count(), oracle[".vgpr_count"].get<std::uint64_t>());
    auto args = kernel.args();
    ASSERT_EQ(args.size(), oracle.contains(".args") ? oracle[".args"].size() : 0u);
    for (std::size_t a = 0; a < args.size(); ++a) {
      EXPECT_EQ(args[a].offset, oracle[".args"][a][".offset"].get<std::uint64_t>());
      EXPECT_EQ(args[a].size, oracle[".args"][a][".size"].get<std::uint64_t>());
      EXPECT_EQ(args[a].value_kind, oracle[".args"][a][".value_kind"].get<std::string>());
    }
  }
  EXPECT_FALSE(metadata.modified());
}

INSTANTIATE_TEST_SUITE_P(Metadata, EveryObjectMetadata, ::testing::ValuesIn(testing::test_inputs()),
                         [](const auto& info) {
                           std::string name = file_name(info.param);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(Metadata, ReencodingAnUnchangedDocumentGivesTheSameBytes) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  std::vector<std::uint8_t> original = object.metadata().encode();
  object.metadata().document();  // marks it modified, so encode() really re-encodes
  EXPECT_TRUE(object.metadata().modified());
  EXPECT_EQ(object.metadata().encode(), original);
}

TEST(Metadata, ChangedValuesAreWhatReadelfSees) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  KernelMetadata kernel = object.metadata().kernel(0);
  // Same-width changes: the note keeps its place.
  kernel.set_private_segment_fixed_size(kernel.private_segment_fixed_size() == 0 ? 1 : 0);
  std::uint64_t expected_private = kernel.private_segment_fixed_size();
  std::string path = testing::scratch_path("metadata_same_size.co");
  auto bytes = object.write();
  testing::save(path, bytes);
  auto oracle = testing::readelf_metadata(path);
  EXPECT_EQ(oracle["amdhsa.kernels"][0][".private_segment_fixed_size"].get<std::uint64_t>(),
            expected_private);
  EXPECT_EQ(bytes.size(), load(WAVEKIT_CODEOBJ_UNSTRIPPED).size());
  CodeObject reread = CodeObject::parse(bytes, path);
  EXPECT_EQ(reread.metadata().to_json(), oracle);
}

TEST(Metadata, AGrownNoteMovesAndStaysReadable) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "object");
  KernelMetadata kernel = object.metadata().kernel(1);
  std::uint64_t appended_offset = kernel.kernarg_segment_size();
  KernelArg arg;
  arg.name = "wavekit_instrumentation_buffer_with_a_long_name";
  arg.type_name = "void*";
  arg.offset = appended_offset;
  arg.size = 8;
  arg.value_kind = "global_buffer";
  arg.address_space = "global";
  kernel.add_arg(arg);
  kernel.set_kernarg_segment_size(appended_offset + 8);
  kernel.set_integer(".wavekit_extra_key_to_grow_the_note_past_its_padding", 123456789);
  std::string path = testing::scratch_path("metadata_grown.co");
  testing::save(path, object.write());
  auto oracle = testing::readelf_metadata(path);
  ASSERT_FALSE(oracle.is_null());
  const auto& args = oracle["amdhsa.kernels"][1][".args"];
  EXPECT_EQ(args.back()[".name"], arg.name);
  EXPECT_EQ(args.back()[".offset"].get<std::uint64_t>(), appended_offset);
  EXPECT_EQ(oracle["amdhsa.kernels"][1][".kernarg_segment_size"].get<std::uint64_t>(),
            appended_offset + 8);
  CodeObject reread = CodeObject::parse(load(path), path);
  EXPECT_EQ(reread.metadata().to_json(), oracle);
  EXPECT_EQ(reread.kernels().size(), object.kernels().size());
  // The rest of the object is untouched: objdump still decodes the same descriptors.
  EXPECT_EQ(testing::objdump_directives(path, "gfx942"),
            testing::objdump_directives(WAVEKIT_CODEOBJ_UNSTRIPPED, "gfx942"));
}

}  // namespace
}  // namespace wavekit::codeobj
