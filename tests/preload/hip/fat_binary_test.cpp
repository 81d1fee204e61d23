// The shim's HIP library piece on the corpus fat binary (basic.hip for gfx908 and gfx942, built
// by clang-22 in HIP mode). Oracle for a substituted entry: the rewriter run on the code object
// that Mutator::open takes out of the same fat binary (what `wavekit rewrite --processor` does):
// the same object and plan must give the same bytes.
#include "wavekit/preload/fat_binary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {
namespace {

const std::string kFatBinaryPath = std::string(WAVEKIT_CORPUS_DIR) + "/basic_fatbin_host.o";

std::vector<std::uint8_t> corpus_bundle() {
  return codeobj::extract_hip_fatbin(read_file(kFatBinaryPath), kFatBinaryPath);
}

// Rewriting whole objects at load, as the HIP registration path does for objects whose kernels
// cannot be rewritten one at a time.
Substituter bbcount_substituter(std::vector<std::string> kernels = {}) {
  ShimConfig config;
  config.tool = "bbcount";
  config.kernels = std::move(kernels);
  config.rewrite_at_dispatch = false;
  return Substituter(config);
}

const codeobj::BundleEntry& entry_for(const std::vector<codeobj::BundleEntry>& entries,
                                      const std::string& processor) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const codeobj::BundleEntry& entry) {
    return processor.empty() ? !entry.is_amdgpu() : entry.processor() == processor;
  });
  if (it == entries.end()) throw Error("no bundle entry for '" + processor + "'");
  return *it;
}

std::vector<std::uint8_t> offline_rewrite(const std::vector<std::uint8_t>& fat_binary,
                                          const std::string& processor) {
  auto mutator = rewrite::Mutator::open(fat_binary, kFatBinaryPath, processor);
  return rewrite::rewrite(mutator.object(), rewrite::tool_plan("bbcount")).bytes;
}

TEST(FatBinary, SubstitutesOnlyTheChosenTargetAndMatchesOfflineRewrite) {
  const std::vector<std::uint8_t> original_bytes = corpus_bundle();
  const auto original = codeobj::parse_bundle(original_bytes, "corpus bundle");
  ASSERT_EQ(original.size(), 3u) << "host, gfx908 and gfx942 entries expected";

  FatBinarySubstitution result =
      substitute_fat_binary(original_bytes, {"gfx942"}, bbcount_substituter());
  ASSERT_EQ(result.outcomes.size(), 1u);
  EXPECT_TRUE(result.outcomes[0].substituted) << result.outcomes[0].detail;
  EXPECT_EQ(result.outcomes[0].detail, "load-time rewrite");
  EXPECT_NE(result.outcomes[0].triple.find("gfx942"), std::string::npos);

  const auto repacked = codeobj::parse_bundle(result.bundle, "repacked bundle");
  ASSERT_EQ(repacked.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i)
    EXPECT_EQ(repacked[i].triple, original[i].triple);
  EXPECT_EQ(entry_for(repacked, "").bytes, entry_for(original, "").bytes);
  EXPECT_EQ(entry_for(repacked, "gfx908").bytes, entry_for(original, "gfx908").bytes);

  const std::vector<std::uint8_t>& rewritten = entry_for(repacked, "gfx942").bytes;
  EXPECT_NE(rewritten, entry_for(original, "gfx942").bytes);
  codeobj::CodeObject object = codeobj::CodeObject::parse(rewritten, "substituted gfx942 entry");
  std::optional<rewrite::RewriteNote> note = rewrite::find_note(object);
  ASSERT_TRUE(note.has_value()) << "the substituted entry carries no WAVEKIT note";
  EXPECT_EQ(note->kernels.size(), 4u);  // vector_add, saxpy_fma, collatz_steps, branchy
  EXPECT_EQ(rewritten, offline_rewrite(read_file(kFatBinaryPath), "gfx942"));
}

TEST(FatBinary, WithoutTargetsEveryAmdgpuEntryIsSubstituted) {
  const std::vector<std::uint8_t> original_bytes = corpus_bundle();
  FatBinarySubstitution result = substitute_fat_binary(original_bytes, {}, bbcount_substituter());
  ASSERT_EQ(result.outcomes.size(), 2u);
  const auto repacked = codeobj::parse_bundle(result.bundle, "repacked bundle");
  const std::vector<std::uint8_t> fat_binary = read_file(kFatBinaryPath);
  for (const char* processor : {"gfx908", "gfx942"})
    EXPECT_EQ(entry_for(repacked, processor).bytes, offline_rewrite(fat_binary, processor))
        << processor;
}

TEST(FatBinary, TargetsThatMatchNoEntryOrDeclinedEntriesLeaveTheBundleByteIdentical) {
  const std::vector<std::uint8_t> original_bytes = corpus_bundle();
  FatBinarySubstitution other_target =
      substitute_fat_binary(original_bytes, {"gfx90a"}, bbcount_substituter());
  EXPECT_TRUE(other_target.outcomes.empty());
  EXPECT_EQ(other_target.bundle, original_bytes);

  FatBinarySubstitution declined =
      substitute_fat_binary(original_bytes, {}, bbcount_substituter({"no_such_kernel"}));
  ASSERT_EQ(declined.outcomes.size(), 2u);
  for (const EntryOutcome& outcome : declined.outcomes) {
    EXPECT_FALSE(outcome.substituted);
    EXPECT_TRUE(outcome.quiet) << outcome.detail;
  }
  EXPECT_FALSE(declined.changed());
  EXPECT_EQ(declined.bundle, original_bytes);
}

TEST(FatBinary, AnAlreadyInstrumentedBundlePassesThroughUnchanged) {
  const std::vector<std::uint8_t> once =
      substitute_fat_binary(corpus_bundle(), {}, bbcount_substituter()).bundle;
  FatBinarySubstitution twice = substitute_fat_binary(once, {}, bbcount_substituter());
  ASSERT_EQ(twice.outcomes.size(), 2u);
  for (const EntryOutcome& outcome : twice.outcomes) {
    EXPECT_FALSE(outcome.substituted);
    EXPECT_EQ(outcome.detail, "already instrumented");
  }
  EXPECT_EQ(twice.bundle, once);
  EXPECT_FALSE(already_instrumented(corpus_bundle()));  // a bundle is not a code object
}

TEST(FatBinary, ExtentComesFromTheHeader) {
  const std::vector<std::uint8_t> bytes = corpus_bundle();
  std::uint64_t furthest_end = 0;
  for (const auto& entry : codeobj::parse_bundle(bytes, "corpus bundle"))
    furthest_end = std::max<std::uint64_t>(furthest_end, entry.offset + entry.bytes.size());
  EXPECT_EQ(offload_bundle_extent(bytes.data()), furthest_end);
  // A plain code object: LLVM writes the section headers last, so the extent is the file.
  const auto gfx908 = entry_for(codeobj::parse_bundle(bytes, "corpus bundle"), "gfx908").bytes;
  EXPECT_EQ(elf_extent(gfx908.data()), gfx908.size());
}

std::string error_of(auto&& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(FatBinary, CorruptHeadersGiveErrorsNamingTheProblem) {
  std::vector<std::uint8_t> bytes = corpus_bundle();
  bytes.resize(bytes.size() + 64, 0);
  std::vector<std::uint8_t> huge_count = bytes;
  const std::uint64_t count = 1'000'000;
  std::memcpy(huge_count.data() + 24, &count, 8);
  EXPECT_NE(error_of([&] { offload_bundle_extent(huge_count.data()); }).find("entry count 1000000"),
            std::string::npos);

  std::vector<std::uint8_t> far_entry = bytes;
  const std::uint64_t offset = std::uint64_t{1} << 40;
  std::memcpy(far_entry.data() + 32, &offset, 8);
  EXPECT_NE(error_of([&] { offload_bundle_extent(far_entry.data()); }).find("lies beyond"),
            std::string::npos);

  std::vector<std::uint8_t> overlapping = bytes;
  const std::uint64_t inside_header = 8;
  const std::uint64_t size = 16;
  std::memcpy(overlapping.data() + 32, &inside_header, 8);
  std::memcpy(overlapping.data() + 40, &size, 8);
  EXPECT_NE(error_of([&] { offload_bundle_extent(overlapping.data()); }).find("overlaps"),
            std::string::npos);

  std::vector<std::uint8_t> not_a_bundle(64, 0x41);
  EXPECT_NE(error_of([&] { offload_bundle_extent(not_a_bundle.data()); }).find("magic"),
            std::string::npos);
  EXPECT_NE(error_of([&] { elf_extent(not_a_bundle.data()); }).find("not an ELF"),
            std::string::npos);

  std::vector<std::uint8_t> compressed = {'C', 'C', 'O', 'B', 0, 0, 0, 0};
  EXPECT_TRUE(is_compressed_bundle(compressed.data()));
  EXPECT_FALSE(is_compressed_bundle(bytes.data()));
  EXPECT_NE(error_of([&] {
              substitute_fat_binary(compressed, {}, bbcount_substituter());
            }).find("compressed"),
            std::string::npos);
}

TEST(FatBinary, TargetIdsMatchLikeTheRuntime) {
  EXPECT_TRUE(target_runs_on("gfx90a", "gfx90a"));
  EXPECT_TRUE(target_runs_on("gfx90a:xnack-", "gfx90a"));
  EXPECT_TRUE(target_runs_on("gfx90a", "gfx90a:xnack+"));
  EXPECT_TRUE(target_runs_on("gfx90a:xnack-", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(target_runs_on("gfx90a:xnack-", "gfx90a:xnack+"));
  EXPECT_FALSE(target_runs_on("gfx908", "gfx90a"));
  EXPECT_FALSE(target_runs_on("gfx90a", "gfx9"));

  EXPECT_EQ(parse_hip_targets(""), std::vector<std::string>{});
  EXPECT_EQ(parse_hip_targets("gfx90a:xnack-,gfx942"),
            (std::vector<std::string>{"gfx90a:xnack-", "gfx942"}));
  EXPECT_NE(error_of([] { parse_hip_targets("gfx90a,sm_80"); }).find("'sm_80'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_hip_targets("gfx90a:xnack"); }).find("'gfx90a:xnack'"),
            std::string::npos);
}

}  // namespace
}  // namespace wavekit::preload
