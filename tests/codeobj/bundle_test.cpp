// Offload bundles and HIP fat binaries, against clang-offload-bundler.
#include "wavekit/codeobj/bundle.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "test_support.h"
#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {
namespace {

using testing::load;

TEST(Bundle, HipFatBinaryHoldsOneCodeObjectPerTarget) {
  auto host = load(WAVEKIT_CODEOBJ_FATBIN);
  auto entries = find_code_objects(host, "fatbin.o");
  ASSERT_EQ(entries.size(), 2u);
  std::vector<std::string> processors;
  for (const auto& entry : entries) {
    CodeObject object = CodeObject::parse(entry.bytes, entry.triple);
    EXPECT_EQ(object.target().processor,
              entry.processor().substr(0, object.target().processor.size()));
    ASSERT_EQ(object.kernels().size(), 1u);
    EXPECT_EQ(object.kernels()[0].name, "fat_kernel");
    EXPECT_EQ(object.write(), entry.bytes);
    processors.push_back(object.target().processor);
  }
  std::sort(processors.begin(), processors.end());
  EXPECT_EQ(processors, (std::vector<std::string>{"gfx90a", "gfx942"}));
}

TEST(Bundle, ListAndExtractAgreeWithClangOffloadBundler) {
  if (std::string(WAVEKIT_CLANG_OFFLOAD_BUNDLER).empty() ||
      std::string(WAVEKIT_CLANG_OFFLOAD_BUNDLER).find("NOTFOUND") != std::string::npos) {
    GTEST_SKIP() << "clang-offload-bundler-22 is not installed";
  }
  auto bundle = extract_hip_fatbin(load(WAVEKIT_CODEOBJ_FATBIN), "fatbin.o");
  std::string bundle_path = testing::scratch_path("fatbin.bundle");
  testing::save(bundle_path, bundle);
  std::string listed = testing::run(std::string(WAVEKIT_CLANG_OFFLOAD_BUNDLER) +
                                    " -list -type=o -input=" + bundle_path);
  auto entries = parse_bundle(bundle, "bundle");
  // The bundler lists the host entry last; compare the sets.
  std::vector<std::string> ours, theirs;
  for (const auto& entry : entries) ours.push_back(entry.triple);
  std::istringstream lines(listed);
  for (std::string line; std::getline(lines, line);) theirs.push_back(line);
  std::sort(ours.begin(), ours.end());
  std::sort(theirs.begin(), theirs.end());
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours.size(), 3u);
  for (const auto& entry : entries) {
    if (!entry.is_amdgpu()) continue;
    std::string out = testing::scratch_path(entry.processor() + ".co");
    testing::run(std::string(WAVEKIT_CLANG_OFFLOAD_BUNDLER) + " -unbundle -type=o -input=" +
                 bundle_path + " -targets=" + entry.triple + " -output=" + out);
    EXPECT_EQ(load(out), entry.bytes) << entry.triple;
  }
  // Our repacked bundle is one the bundler reads back to the same objects.
  std::string repacked_path = testing::scratch_path("repacked.bundle");
  testing::save(repacked_path, write_bundle(entries));
  for (const auto& entry : entries) {
    if (!entry.is_amdgpu()) continue;
    std::string out = testing::scratch_path("repacked-" + entry.processor() + ".co");
    testing::run(std::string(WAVEKIT_CLANG_OFFLOAD_BUNDLER) + " -unbundle -type=o -input=" +
                 repacked_path + " -targets=" + entry.triple + " -output=" + out);
    EXPECT_EQ(load(out), entry.bytes) << entry.triple;
  }
}

TEST(Bundle, RepackParsesBackToTheSameEntries) {
  auto bundle = extract_hip_fatbin(load(WAVEKIT_CODEOBJ_FATBIN), "fatbin.o");
  auto entries = parse_bundle(bundle, "bundle");
  auto again = parse_bundle(write_bundle(entries), "repacked");
  ASSERT_EQ(again.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(again[i].triple, entries[i].triple);
    EXPECT_EQ(again[i].bytes, entries[i].bytes);
  }
}

TEST(Bundle, BadBundlesAreErrors) {
  std::vector<std::uint8_t> compressed = {'C', 'C', 'O', 'B', 1, 0, 0, 0};
  try {
    parse_bundle(compressed, "x.hipfb");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("compressed offload bundles are not supported"),
              std::string::npos);
  }
  EXPECT_THROW(find_code_objects(compressed, "x.hipfb"), Error);
  auto bundle = extract_hip_fatbin(load(WAVEKIT_CODEOBJ_FATBIN), "fatbin.o");
  for (std::size_t size = 0; size < 200 && size < bundle.size(); ++size) {
    std::vector<std::uint8_t> prefix(bundle.begin(),
                                     bundle.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_THROW(parse_bundle(prefix, "truncated"), Error) << size;
  }
  auto huge = bundle;
  std::uint64_t count = ~0ull;
  std::memcpy(&huge[24], &count, 8);
  EXPECT_THROW(parse_bundle(huge, "huge"), Error);
  EXPECT_THROW(extract_hip_fatbin(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "plain.co"), Error);
}

// A triple that is not text is corruption; it must not reach messages or JSON (which must be
// UTF-8, and nlohmann refuses anything else with a type_error).
TEST(Bundle, TripleThatIsNotTextIsAnError) {
  BundleEntry entry;
  entry.triple = "hipv4-amdgcn-amd-amdhsa--gfx90a\xff";
  entry.bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  try {
    parse_bundle(write_bundle({entry}), "odd.hipfb");
    FAIL() << "parsed";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("odd.hipfb: offload bundle entry 0 has a target "
                        "triple that is not printable ASCII"),
              std::string::npos)
        << error.what();
  }
}

// Every fat binary's code objects parse, describe, and write back byte for byte.
TEST(Bundle, EveryFatBinaryRoundTrips) {
  auto paths = testing::fat_binaries();
  ASSERT_FALSE(paths.empty());
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    auto entries = find_code_objects(load(path), path);
    EXPECT_GE(entries.size(), 1u);
    for (const auto& entry : entries) {
      CodeObject object = CodeObject::parse(entry.bytes, entry.triple);
      EXPECT_FALSE(object.kernels().empty());
      EXPECT_EQ(object.write(), entry.bytes);
      EXPECT_EQ(describe_json(object).at("target"), object.target().processor);
    }
  }
}

TEST(Bundle, PlainCodeObjectIsItsOwnEntry) {
  auto bytes = load(WAVEKIT_CODEOBJ_UNSTRIPPED);
  auto entries = find_code_objects(bytes, "plain.co");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].bytes, bytes);
  EXPECT_EQ(entries[0].processor().substr(0, 6), "gfx942");
}

}  // namespace
}  // namespace wavekit::codeobj
