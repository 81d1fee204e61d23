// End to end: a HIP program built by clang-22 (host_program.hip, gfx90a and gfx908) runs under
// LD_PRELOAD=libwavekit-preload.so against a stand-in libamdhip64.so that records the bundle
// __hipRegisterFatBinary receives. The original bundle is read back from the program's own
// .hip_fatbin section; the oracle for a substituted entry is the rewriter on that entry. The
// program can also hand a file to hipModuleLoadData, which the stand-in records likewise.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {
namespace {

struct ProgramRun {
  int exit_code = -1;
  std::string output;                    // stdout and stderr
  std::vector<std::uint8_t> registered;  // the bundle __hipRegisterFatBinary received
  std::vector<std::uint8_t> module;      // the image hipModuleLoadData received
};

std::vector<std::uint8_t> take_file(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  std::vector<std::uint8_t> bytes = read_file(path);
  std::filesystem::remove(path);
  return bytes;
}

// Runs the program with `environment` (and `module_path` as its argument, if given).
ProgramRun run_program(const std::string& environment, const std::string& module_path = "") {
  const std::string stem =
      (std::filesystem::temp_directory_path() / ("wavekit-hip-" + std::to_string(::getpid())))
          .string();
  const std::string record = stem + ".bundle", module_record = stem + ".module";
  std::filesystem::remove(record);
  std::filesystem::remove(module_record);
  const std::string command =
      "env WAVEKIT_TEST_HIP_RECORD=" + record + " WAVEKIT_TEST_HIP_MODULE_RECORD=" + module_record +
      " " + environment + " " + WAVEKIT_HIP_HOST_PROGRAM + " " + module_path + " 2>&1";
  ProgramRun run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw Error("cannot run " + command);
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    run.output.append(buffer, got);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.registered = take_file(record);
  run.module = take_file(module_record);
  return run;
}

const std::string kPreload = std::string("LD_PRELOAD=") + WAVEKIT_PRELOAD_LIBRARY;
// The registration path substitutes whole objects only when they are rewritten at load (by
// default a kernel is rewritten at its first dispatch, behind HSA, and the runtime gets the
// program's bytes: HipRegister.RewritingAtDispatchPassesTheBundleThrough).
const std::string kAtLoad = kPreload + " WAVEKIT_REWRITE_AT=load";
const std::string kCodeObject = std::string(WAVEKIT_CORPUS_DIR) + "/basic_gfx90a_O2_cov5.co";
const std::string kProgramOutput = "hip host program: registered its kernels\n";

std::vector<std::uint8_t> original_bundle() {
  return codeobj::extract_hip_fatbin(read_file(WAVEKIT_HIP_HOST_PROGRAM), WAVEKIT_HIP_HOST_PROGRAM);
}

const codeobj::BundleEntry& entry_for(const std::vector<codeobj::BundleEntry>& entries,
                                      const std::string& processor) {
  for (const auto& entry : entries)
    if (processor.empty() ? !entry.is_amdgpu() : entry.processor() == processor) return entry;
  throw Error("no bundle entry for '" + processor + "'");
}

std::vector<std::uint8_t> offline_rewrite(const std::vector<std::uint8_t>& code_object) {
  codeobj::CodeObject object = codeobj::CodeObject::parse(code_object, "original entry");
  return rewrite::rewrite(object, rewrite::tool_plan("bbcount")).bytes;
}

TEST(HipRegister, WithoutAToolTheRuntimeGetsTheProgramsBundle) {
  ProgramRun run = run_program(kPreload);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, kProgramOutput);
  EXPECT_EQ(run.registered, original_bundle());
}

TEST(HipRegister, BbcountSubstitutesTheChosenTargetsEntry) {
  ProgramRun run = run_program(kAtLoad + " WAVEKIT_TOOL=bbcount WAVEKIT_HIP_TARGET=gfx90a");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, kProgramOutput);

  const std::vector<std::uint8_t> original_bytes = original_bundle();
  const auto original = codeobj::parse_bundle(original_bytes, "program bundle");
  const auto registered = codeobj::parse_bundle(run.registered, "registered bundle");
  ASSERT_EQ(registered.size(), original.size());
  EXPECT_EQ(entry_for(registered, "").bytes, entry_for(original, "").bytes);
  EXPECT_EQ(entry_for(registered, "gfx908").bytes, entry_for(original, "gfx908").bytes);

  const std::vector<std::uint8_t>& rewritten = entry_for(registered, "gfx90a").bytes;
  std::optional<rewrite::RewriteNote> note =
      rewrite::find_note(codeobj::CodeObject::parse(rewritten, "registered gfx90a entry"));
  ASSERT_TRUE(note.has_value()) << "the registered gfx90a entry is not wavekit's";
  ASSERT_EQ(note->kernels.size(), 1u);
  EXPECT_NE(note->kernels[0].name.find("classify"), std::string::npos) << note->kernels[0].name;
  EXPECT_EQ(rewritten, offline_rewrite(entry_for(original, "gfx90a").bytes));
}

TEST(HipRegister, WithoutATargetEveryAmdgpuEntryIsSubstituted) {
  ProgramRun run = run_program(kAtLoad + " WAVEKIT_TOOL=bbcount");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto original = codeobj::parse_bundle(original_bundle(), "program bundle");
  const auto registered = codeobj::parse_bundle(run.registered, "registered bundle");
  EXPECT_EQ(entry_for(registered, "").bytes, entry_for(original, "").bytes);
  for (const char* processor : {"gfx90a", "gfx908"})
    EXPECT_EQ(entry_for(registered, processor).bytes,
              offline_rewrite(entry_for(original, processor).bytes))
        << processor;
}

TEST(HipRegister, RewritingAtDispatchPassesTheBundleThrough) {
  ProgramRun run = run_program(kPreload + " WAVEKIT_TOOL=bbcount");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, kProgramOutput);
  EXPECT_EQ(run.registered, original_bundle());
  ProgramRun module = run_program(kPreload + " WAVEKIT_TOOL=bbcount", kCodeObject);
  ASSERT_EQ(module.exit_code, 0) << module.output;
  EXPECT_EQ(module.module, read_file(kCodeObject));
}

TEST(HipRegister, AMalformedTargetTurnsInstrumentationOffWithOneMessage) {
  ProgramRun run = run_program(kPreload + " WAVEKIT_TOOL=bbcount WAVEKIT_HIP_TARGET=sm_80");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output,
            "wavekit: HIP instrumentation is off: WAVEKIT_HIP_TARGET: 'sm_80' is not a target id "
            "like gfx90a or gfx90a:xnack-\n" +
                kProgramOutput);
  EXPECT_EQ(run.registered, original_bundle());
}

TEST(HipModuleLoadData, APlainCodeObjectIsSubstituted) {
  ProgramRun run = run_program(kAtLoad + " WAVEKIT_TOOL=bbcount", kCodeObject);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.module, offline_rewrite(read_file(kCodeObject)));
}

TEST(HipModuleLoadData, TheExtendedEntryIsSubstitutedToo) {
  ProgramRun run = run_program(kAtLoad + " WAVEKIT_TOOL=bbcount", kCodeObject + " ex");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.module, offline_rewrite(read_file(kCodeObject)));
}

TEST(HipModuleLoadData, AnInstrumentedImageIsNotInstrumentedAgain) {
  const std::string rewritten_path =
      (std::filesystem::temp_directory_path() /
       ("wavekit-hip-" + std::to_string(::getpid()) + ".rewritten.co"))
          .string();
  const std::vector<std::uint8_t> rewritten = offline_rewrite(read_file(kCodeObject));
  write_file(rewritten_path, rewritten);
  ProgramRun run = run_program(kPreload + " WAVEKIT_TOOL=bbcount", rewritten_path);
  std::filesystem::remove(rewritten_path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.module, rewritten);
}

TEST(HipModuleLoadData, WithoutAToolTheRuntimeGetsTheProgramsImage) {
  ProgramRun run = run_program(kPreload, kCodeObject);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.module, read_file(kCodeObject));
}

TEST(HipModuleLoadData, ABundleIsSubstitutedLikeARegisteredOne) {
  const std::string bundle_path = std::string(WAVEKIT_CORPUS_DIR) + "/basic_fatbin_host.o";
  const std::string bundle_file = (std::filesystem::temp_directory_path() /
                                   ("wavekit-hip-" + std::to_string(::getpid()) + ".input-bundle"))
                                      .string();
  const std::vector<std::uint8_t> bundle =
      codeobj::extract_hip_fatbin(read_file(bundle_path), bundle_path);
  write_file(bundle_file, bundle);
  ProgramRun run =
      run_program(kAtLoad + " WAVEKIT_TOOL=bbcount WAVEKIT_HIP_TARGET=gfx908", bundle_file);
  std::filesystem::remove(bundle_file);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto original = codeobj::parse_bundle(bundle, "corpus bundle");
  const auto loaded = codeobj::parse_bundle(run.module, "loaded bundle");
  EXPECT_EQ(entry_for(loaded, "gfx908").bytes,
            offline_rewrite(entry_for(original, "gfx908").bytes));
  EXPECT_EQ(entry_for(loaded, "gfx942").bytes, entry_for(original, "gfx942").bytes);
  EXPECT_EQ(entry_for(loaded, "").bytes, entry_for(original, "").bytes);
}

}  // namespace
}  // namespace wavekit::preload
