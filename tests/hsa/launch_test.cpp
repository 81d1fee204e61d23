// The launch state `wavekit launch` builds: argument specs, grid parsing, argument checking
// against the metadata, and hidden arguments at the offsets llvm-readelf-22 reads from the note.
#include "wavekit/hsa/launch.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <regex>

#include "wavekit/support/file.h"

namespace {

using wavekit::hsa::ArgumentSpec;
using wavekit::hsa::Dimensions;
using wavekit::hsa::Executable;
using wavekit::hsa::parse_argument;
using wavekit::hsa::parse_dimensions;

std::string device(const std::string& name) {
  return std::string(WAVEKIT_HSA_DEVICE_DIR) + "/" + name;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const wavekit::Error& error) {
    return error.what();
  }
  return "(no error)";
}

// value_kind -> offset, as llvm-readelf-22 prints the note (single-kernel objects).
std::map<std::string, std::uint32_t> note_offsets(const std::string& object) {
  std::string command = std::string(WAVEKIT_LLVM_READELF) + " --notes " + device(object);
  FILE* pipe = popen(command.c_str(), "r");
  std::string notes;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) notes.append(buffer, n);
  pclose(pipe);
  std::map<std::string, std::uint32_t> offsets;
  std::regex entry(R"(\.offset:\s+(\d+)\s+\.size:\s+\d+\s+\.value_kind:\s+(\w+))");
  for (std::sregex_iterator it(notes.begin(), notes.end(), entry), end; it != end; ++it)
    offsets[(*it)[2]] = std::stoul((*it)[1]);
  return offsets;
}

template <typename T>
T read_at(const std::vector<std::uint8_t>& bytes, std::uint32_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

TEST(LaunchArguments, ScalarsAreLittleEndianBytesOfTheirType) {
  EXPECT_EQ(parse_argument("i32:-2").bytes, (std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(parse_argument("u32:0x01020304").bytes, (std::vector<std::uint8_t>{4, 3, 2, 1}));
  EXPECT_EQ(parse_argument("u64:1").bytes.size(), 8u);
  float f;
  std::memcpy(&f, parse_argument("f32:1.5").bytes.data(), 4);
  EXPECT_EQ(f, 1.5f);
  double d;
  std::memcpy(&d, parse_argument("f64:-0.25").bytes.data(), 8);
  EXPECT_EQ(d, -0.25);
  EXPECT_EQ(parse_argument("zeros:12").bytes, std::vector<std::uint8_t>(12, 0));
  EXPECT_TRUE(parse_argument("zeros:12").is_buffer());
}

TEST(LaunchArguments, FileArgumentHoldsTheFileBytes) {
  std::string path = ::testing::TempDir() + "/hsa_launch_arg.bin";
  wavekit::write_file(path, std::string("\x01\x02\x03", 3));
  EXPECT_EQ(parse_argument("file:" + path).bytes, (std::vector<std::uint8_t>{1, 2, 3}));
}

TEST(LaunchArguments, BadSpecsNameTheProblem) {
  EXPECT_NE(error_of([] {
              parse_argument("i32:4000000000");
            }).find("'4000000000' is not a 32-bit integer"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_argument("u32:-1"); }).find("non-negative"), std::string::npos);
  EXPECT_NE(
      error_of([] { parse_argument("f32:abc"); }).find("'abc' is not a floating-point number"),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_argument("i16:3"); }).find("unknown kind 'i16'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_argument("42"); }).find("expected KIND:VALUE"), std::string::npos);
  EXPECT_NE(
      error_of([] { parse_argument("file:/nonexistent/wavekit"); }).find("/nonexistent/wavekit"),
      std::string::npos);
}

TEST(LaunchDimensions, ParsesOneToThreeComponents) {
  Dimensions one = parse_dimensions("--grid", "1024");
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.size, (std::array<std::uint32_t, 3>{1024, 1, 1}));
  Dimensions three = parse_dimensions("--block", "8,4,2");
  EXPECT_EQ(three.count, 3u);
  EXPECT_EQ(three.size, (std::array<std::uint32_t, 3>{8, 4, 2}));
  EXPECT_NE(error_of([] { parse_dimensions("--grid", "1,2,3,4"); }).find("more than 3"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_dimensions("--block", "0"); }).find("--block: '0'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_dimensions("--grid", "16,x"); }).find("'x'"), std::string::npos);
}

TEST(LaunchArguments, CheckedAgainstTheMetadataInOrder) {
  Executable executable;
  executable.load(wavekit::read_file(device("probe_provider.co")), "provider");
  const auto& kernel = *executable.find_kernel("provider_kernel");  // (int* out, int scale)
  EXPECT_NO_THROW(wavekit::hsa::check_arguments(
      kernel, {parse_argument("zeros:256"), parse_argument("i32:3")}));
  std::string count =
      error_of([&] { wavekit::hsa::check_arguments(kernel, {parse_argument("zeros:256")}); });
  EXPECT_NE(count.find("takes 2 arguments"), std::string::npos) << count;
  EXPECT_NE(count.find("but 1 --arg was given"), std::string::npos) << count;
  std::string size = error_of([&] {
    wavekit::hsa::check_arguments(kernel, {parse_argument("zeros:256"), parse_argument("i64:3")});
  });
  EXPECT_NE(size.find("argument 1"), std::string::npos) << size;
  EXPECT_NE(size.find("by_value, 4 bytes"), std::string::npos) << size;
  EXPECT_NE(size.find("i64:3"), std::string::npos) << size;
  std::string buffer_for_scalar = error_of([&] {
    wavekit::hsa::check_arguments(kernel, {parse_argument("zeros:256"), parse_argument("zeros:4")});
  });
  EXPECT_NE(buffer_for_scalar.find("passed by value"), std::string::npos) << buffer_for_scalar;
  std::string scalar_for_buffer = error_of([&] {
    wavekit::hsa::check_arguments(kernel, {parse_argument("u64:0"), parse_argument("i32:1")});
  });
  EXPECT_NE(scalar_for_buffer.find("argument 0"), std::string::npos) << scalar_for_buffer;
  EXPECT_NE(scalar_for_buffer.find("takes a buffer"), std::string::npos) << scalar_for_buffer;
}

TEST(LaunchHiddenArguments, Cov5ValuesAtTheNoteOffsets) {
  Executable executable;
  executable.load(wavekit::read_file(device("hidden_args_cov5.co")), "cov5");
  const auto& kernel = *executable.find_kernel("report_launch");
  auto offsets = note_offsets("hidden_args_cov5.co");
  ASSERT_TRUE(offsets.count("hidden_block_count_x"));
  ASSERT_TRUE(offsets.count("hidden_grid_dims"));
  std::vector<std::uint8_t> kernarg(kernel.kernarg_segment_size, 0xcc);
  wavekit::hsa::fill_hidden_arguments(kernel, parse_dimensions("--grid", "1000,3"),
                                      parse_dimensions("--block", "256,2"), {}, kernarg.data());
  EXPECT_EQ(read_at<std::uint32_t>(kernarg, offsets["hidden_block_count_x"]),
            4u);  // ceil(1000 / 256)
  EXPECT_EQ(read_at<std::uint32_t>(kernarg, offsets["hidden_block_count_y"]), 2u);  // ceil(3 / 2)
  EXPECT_EQ(read_at<std::uint32_t>(kernarg, offsets["hidden_block_count_z"]), 1u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_group_size_x"]), 256u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_group_size_y"]), 2u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_group_size_z"]), 1u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_remainder_x"]), 1000u % 256u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_remainder_y"]), 1u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_remainder_z"]), 0u);
  EXPECT_EQ(read_at<std::uint64_t>(kernarg, offsets["hidden_global_offset_x"]), 0u);
  EXPECT_EQ(read_at<std::uint16_t>(kernarg, offsets["hidden_grid_dims"]), 2u);
  // The explicit argument's bytes are left to the caller.
  EXPECT_EQ(read_at<std::uint64_t>(kernarg, 0), 0xccccccccccccccccull);
}

TEST(LaunchHiddenArguments, Cov4GlobalOffsetsAtTheNoteOffsets) {
  Executable executable;
  executable.load(wavekit::read_file(device("hidden_args_cov4.co")), "cov4");
  const auto& kernel = *executable.find_kernel("report_launch");
  auto offsets = note_offsets("hidden_args_cov4.co");
  ASSERT_TRUE(offsets.count("hidden_global_offset_x"));
  EXPECT_FALSE(offsets.count("hidden_block_count_x"));  // COV4 reads the dispatch packet instead
  std::vector<std::uint8_t> kernarg(kernel.kernarg_segment_size, 0xcc);
  wavekit::hsa::fill_hidden_arguments(kernel, parse_dimensions("--grid", "64"),
                                      parse_dimensions("--block", "64"), {}, kernarg.data());
  for (const char* axis : {"x", "y", "z"})
    EXPECT_EQ(read_at<std::uint64_t>(kernarg, offsets[std::string("hidden_global_offset_") + axis]),
              0u)
        << axis;
}

}  // namespace
