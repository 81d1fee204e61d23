// End to end: unmodified HSA programs (examples/hsa, linked against Debian's libhsa-runtime64
// and never rebuilt for wavekit) under `wavekit run` on the emulator. Their output must not
// change, and every tool's results must equal the emulator's own ground truth for the original
// objects: from `wavekit launch --trace-blocks/--trace-sequence` for one kernel, and for every
// dispatch of a whole program from the emulator's runtime running it plainly with
// WAVEKIT_EMU_TRACE_BLOCKS / WAVEKIT_EMU_TRACE_SEQUENCE.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "calls_reference.h"
#include "run_support.h"
#include "wavekit/support/file.h"

namespace {

using namespace wavekit::preload_tests;
namespace fs = std::filesystem;

// The input divergent.c makes (a fixed linear congruential sequence), as a file for launch.
void write_divergent_input(const fs::path& path, unsigned n) {
  std::vector<std::uint8_t> bytes(n * 4);
  unsigned state = 12345;
  for (unsigned i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    unsigned value = state >> 8;
    std::memcpy(&bytes[i * 4], &value, 4);
  }
  wavekit::write_file(path.string(), bytes);
}

// spin_forever's kernel waits on a flag nobody sets. Instrumented, bbcount's probes write the
// arena on every pass of the spin loop; the shim marks that memory as the tool's on the emulated
// runtime, so the emulator still reports the deadlock (every resident wave, where it spins) and
// the program ends instead of hanging. `timeout` is the harness's safety net.
TEST(Run, DeadlockedInstrumentedKernelIsReportedNotHung) {
  fs::path dir = scratch("deadlock");
  Outcome run = shell("WAVEKIT_EMU_NO_PROGRESS_INSTRUCTIONS=200000 timeout 240 " +
                      std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " +
                      (dir / "out").string() + " -- " + example("spin_forever"));
  ASSERT_NE(run.status, 124) << "still running after 240 s\n" << run.err;
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("no_progress in kernel spin_forever"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("2 workgroup(s) resident"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("(workgroup 1,0,0, wave 0 in workgroup)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("spinning"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("finished"), std::string::npos) << run.out;
}

// Whether the object's disassembly (llvm-objdump, not wavekit's decoder) has a call.
bool makes_calls(const std::string& object) {
  const Outcome disassembly =
      shell(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=gfx90a " + object);
  return disassembly.out.find("s_swappc_b64") != std::string::npos ||
         disassembly.out.find("s_call_b64") != std::string::npos;
}

TEST(Run, BbcountLeavesOutputAloneAndEqualsGroundTruth) {
  fs::path dir = scratch("bbcount");
  Outcome reference = plain(example("divergent"));
  ASSERT_EQ(reference.status, 0) << reference.err;
  Outcome run =
      instrumented("--tool bbcount --tool-out " + (dir / "out").string(), example("divergent"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, reference.out);
  EXPECT_NE(run.err.find("distinct per-wave profiles"), std::string::npos) << run.err;
  ASSERT_TRUE(fs::exists(dir / "out" / "divergent.0.json")) << run.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "divergent.0.svg"));

  write_divergent_input(dir / "input.bin", 4096);
  Outcome truth = shell(
      std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") +
      " --kernel divergent --grid 4096 --block 128 --arg file:" + (dir / "input.bin").string() +
      " --arg zeros:16384 --arg u32:4096" + " --trace-blocks " + (dir / "truth.json").string());
  ASSERT_EQ(truth.status, 0) << truth.err;
  auto expected = nlohmann::json::parse(slurp(dir / "truth.json"));
  auto actual = nlohmann::json::parse(slurp(dir / "out" / "divergent.0.json"));
  ASSERT_EQ(actual["waves"].size(), expected["waves"].size());
  for (std::size_t i = 0; i < expected["waves"].size(); ++i)
    ASSERT_EQ(actual["waves"][i], expected["waves"][i]) << "wave " << i;
  // The kernel is divergent: its waves must not all look alike.
  std::set<std::string> profiles;
  for (const auto& wave : actual["waves"]) profiles.insert(wave["blocks"].dump());
  EXPECT_GT(profiles.size(), 1u);
  fs::remove_all(dir);
}

// --tool-out holds one run's results: what an earlier run left there (more dispatches, another
// kernel, a per-wave directory, an interrupted dispatch's subdirectory) is removed, with a
// message; the user's own files stay.
TEST(Run, ToolOutHoldsOnlyThisRunsResults) {
  fs::path dir = scratch("earlier");
  const fs::path out = dir / "out";
  fs::create_directories(out / "divergent.7");
  fs::create_directories(out / "k7f0012345000");
  for (const char* name : {"divergent.1.json", "divergent.1.svg", "scale_add.299.json"})
    wavekit::write_file((out / name).string(), std::string("{}"));
  wavekit::write_file((out / "notes.txt").string(), std::string("the user's own"));
  // Named like a per-wave directory, but a file: the user's, not a run's.
  wavekit::write_file((out / "data.3").string(), std::string("the user's own"));
  Outcome run = instrumented("--tool bbcount --tool-out " + out.string(), example("divergent"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("removed 5 results of an earlier run"), std::string::npos) << run.err;
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(out)) left.insert(entry.path().filename());
  EXPECT_EQ(left,
            (std::set<std::string>{"data.3", "divergent.0.json", "divergent.0.svg", "notes.txt"}));
  fs::remove_all(dir);
}

// blocktrace under the shim: each wave of the unmodified program's dispatch writes its own
// file through the process's hostcall service; the dispatch's directory must be, file by file,
// what `wavekit launch --trace-sequence` writes for the original kernel (it makes no calls, so
// every block is the kernel's own).
TEST(Run, BlocktraceWritesTheGroundTruthSequencePerWave) {
  fs::path dir = scratch("blocktrace");
  Outcome reference = plain(example("divergent"));
  ASSERT_EQ(reference.status, 0) << reference.err;
  Outcome run =
      instrumented("--tool blocktrace --tool-out " + (dir / "out").string(), example("divergent"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, reference.out);
  ASSERT_TRUE(fs::is_directory(dir / "out" / "divergent.0")) << run.err;

  write_divergent_input(dir / "input.bin", 4096);
  Outcome truth = shell(
      std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") +
      " --kernel divergent --grid 4096 --block 128 --arg file:" + (dir / "input.bin").string() +
      " --arg zeros:16384 --arg u32:4096" + " --trace-sequence " + (dir / "truth").string());
  ASSERT_EQ(truth.status, 0) << truth.err;
  std::size_t files = 0;
  std::set<std::string> sequences;
  for (const auto& entry : fs::directory_iterator(dir / "truth")) {
    const fs::path mine = dir / "out" / "divergent.0" / entry.path().filename();
    ASSERT_TRUE(fs::exists(mine)) << mine;
    EXPECT_EQ(slurp(mine), slurp(entry.path())) << entry.path().filename();
    sequences.insert(slurp(entry.path()));
    ++files;
  }
  EXPECT_EQ(files, 64u);  // 4096 work-items in waves of 64
  EXPECT_EQ(static_cast<std::size_t>(std::distance(
                fs::directory_iterator(dir / "out" / "divergent.0"), fs::directory_iterator())),
            files);
  EXPECT_GT(sequences.size(), 1u);  // divergent: the waves do not all take the same path
  fs::remove_all(dir);
}

// The offline path to the same answer: `wavekit rewrite`, then `wavekit launch --tool-out`.
TEST(Run, OfflineRewriteAndLaunchGiveTheSameCountsAndOutputs) {
  fs::path dir = scratch("offline");
  write_divergent_input(dir / "input.bin", 4096);
  std::string args =
      " --kernel divergent --grid 4096 --block 128 --arg file:" + (dir / "input.bin").string() +
      " --arg zeros:16384 --arg u32:4096";
  Outcome truth =
      shell(std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") + args + " --out " +
            (dir / "original").string() + " --trace-blocks " + (dir / "truth.json").string());
  ASSERT_EQ(truth.status, 0) << truth.err;
  Outcome rewrite = shell(std::string(WAVEKIT_CLI) + " rewrite " + example("divergent.co") +
                          " -o " + (dir / "rewritten.co").string() + " --tool bbcount");
  ASSERT_EQ(rewrite.status, 0) << rewrite.err;
  Outcome launch = shell(std::string(WAVEKIT_CLI) + " launch " + (dir / "rewritten.co").string() +
                         args + " --out " + (dir / "rewritten").string() + " --tool-out " +
                         (dir / "bbcount.json").string());
  ASSERT_EQ(launch.status, 0) << launch.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "bbcount.json")),
            nlohmann::json::parse(slurp(dir / "truth.json")));
  EXPECT_EQ(slurp(dir / "rewritten" / "arg1.bin"), slurp(dir / "original" / "arg1.bin"));

  Outcome not_rewritten = shell(std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") +
                                args + " --tool-out " + (dir / "none.json").string());
  EXPECT_EQ(not_rewritten.status, 2);
  EXPECT_NE(not_rewritten.err.find("no WAVEKIT note"), std::string::npos) << not_rewritten.err;
  fs::remove_all(dir);
}

// `wavekit launch --trace-sequence DIR` and `--tool-out DIR` of a blocktrace-rewritten object
// write one file per wave into DIR. What an earlier run left there (a wave this run does not
// have, the dispatch subdirectory of an interrupted run, which would be merged into this run's
// files) is removed, with a message, so that DIR holds this run's waves alone; other files stay.
TEST(Run, LaunchReplacesTheWaveFilesOfAnEarlierRun) {
  fs::path dir = scratch("stale");
  write_divergent_input(dir / "input.bin", 4096);
  const std::string args =
      " --kernel divergent --grid 4096 --block 128 --arg file:" + (dir / "input.bin").string() +
      " --arg zeros:16384 --arg u32:4096";
  Outcome rewrite = shell(std::string(WAVEKIT_CLI) + " rewrite " + example("divergent.co") +
                          " -o " + (dir / "rewritten.co").string() + " --tool blocktrace");
  ASSERT_EQ(rewrite.status, 0) << rewrite.err;
  Outcome truth = shell(std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") + args +
                        " --trace-sequence " + (dir / "truth").string());
  ASSERT_EQ(truth.status, 0) << truth.err;
  const std::set<std::string> waves = entry_names(dir / "truth", ".txt");
  ASSERT_EQ(waves.size(), 64u);

  for (const auto& [option, object] : {std::pair{"--trace-sequence", example("divergent.co")},
                                       std::pair{"--tool-out", (dir / "rewritten.co").string()}}) {
    SCOPED_TRACE(option);
    const fs::path out = dir / (std::string(option).substr(2));
    fs::create_directories(out / "k7f0012345000");
    wavekit::write_file((out / "wave_999.txt").string(), std::string("0x0\n"));
    wavekit::write_file((out / "k7f0012345000" / "wave_0.txt").string(), std::string("0x0\n"));
    wavekit::write_file((out / "notes.txt").string(), std::string("the user's own"));
    // Named like a per-wave directory, but a file: the user's, not a run's.
    wavekit::write_file((out / "data.3").string(), std::string("the user's own"));
    Outcome launch = shell(std::string(WAVEKIT_CLI) + " launch " + object + args + " " + option +
                           " " + out.string());
    ASSERT_EQ(launch.status, 0) << launch.err;
    EXPECT_NE(launch.err.find("removed 2 wave files or directories of an earlier run"),
              std::string::npos)
        << launch.err;
    EXPECT_FALSE(fs::exists(out / "wave_999.txt"));
    EXPECT_FALSE(fs::exists(out / "k7f0012345000"));
    EXPECT_EQ(slurp(out / "notes.txt"), "the user's own");
    std::set<std::string> written = entry_names(out, ".txt");
    written.erase("notes.txt");
    ASSERT_EQ(written, waves);
    for (const std::string& wave : waves)
      EXPECT_EQ(slurp(out / wave), slurp(dir / "truth" / wave)) << wave;
  }
  fs::remove_all(dir);
}

TEST(Run, AnUnknownToolIsRefusedBeforeTheApplicationStarts) {
  Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool nosuch -- echo APPLICATION-RAN");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("unknown tool 'nosuch'"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("APPLICATION-RAN"), std::string::npos) << run.out;
}

struct Program {
  std::string name;                  // the test's name
  std::string command;               // program and arguments, under examples/hsa
  std::vector<std::string> objects;  // the code objects it loads
  std::set<std::string> dispatches;  // <kernel>.<n> of every dispatch it makes
  // Its kernels call device functions: bbcount and blocktrace must see the callees' blocks too;
  // callret's values are checked against the CPU (Run.CallretRecordsWhatTheCpuSaysTheCallsReturn).
  bool makes_calls = false;
};

std::set<std::string> numbered(const std::string& kernel, unsigned count) {
  std::set<std::string> names;
  for (unsigned n = 0; n < count; ++n) names.insert(kernel + "." + std::to_string(n));
  return names;
}

void PrintTo(const Program& program, std::ostream* out) { *out << program.name; }

class Programs : public testing::TestWithParam<Program> {};

// An unmodified program under `wavekit run --tool bbcount`, `--tool blocktrace` and
// `--tool callret`: its output is what it prints without wavekit, and every dispatch's results
// are the emulator's ground truth of the plain run, wave by wave. two_objects dispatches a
// kernel from each of the two objects it loads into one executable, many_dispatches one
// kernel 300 times (the ring wraps), vector_add_stripped loads an object without .symtab, and
// calls' kernel calls two device functions, whose blocks the ground truth counts too.
TEST_P(Programs, EveryToolEqualsTheGroundTruthOfEveryDispatch) {
  const Program& program = GetParam();
  fs::path dir = scratch("programs-" + program.name);
  const Outcome reference = plain(example(program.command));
  ASSERT_EQ(reference.status, 0) << reference.err;
  const GroundTruth truth = ground_truth(example(program.command), dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  EXPECT_EQ(truth.run.out, reference.out);  // recording the truth changes nothing either
  ASSERT_EQ(entry_names(truth.blocks, ".json").size(), program.dispatches.size());
  for (const std::string& dispatch : program.dispatches)
    ASSERT_TRUE(fs::exists(truth.blocks / (dispatch + ".json"))) << dispatch;

  {
    SCOPED_TRACE("bbcount");
    const Outcome run = instrumented("--tool bbcount --tool-out " + (dir / "bbcount").string(),
                                     example(program.command));
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, reference.out);
    EXPECT_EQ(shim_messages(run.err, ""), 0u) << run.err;
    expect_counts_equal(truth.blocks, dir / "bbcount");
  }
  {
    SCOPED_TRACE("blocktrace");
    const Outcome run = instrumented(
        "--tool blocktrace --tool-out " + (dir / "blocktrace").string(), example(program.command));
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, reference.out);
    EXPECT_EQ(shim_messages(run.err, ""), 0u) << run.err;
    expect_sequences_equal(truth.sequences, dir / "blocktrace");
  }
  if (!program.makes_calls) {
    // The programs' kernels make no calls: callret must report every wave of every dispatch,
    // with no call recorded.
    SCOPED_TRACE("callret");
    ASSERT_TRUE(makes_calls(example("calls.co")));  // the oracle sees calls where there are
    for (const std::string& object : program.objects) ASSERT_FALSE(makes_calls(example(object)));
    const Outcome run = instrumented("--tool callret --tool-out " + (dir / "callret").string(),
                                     example(program.command));
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, reference.out);
    EXPECT_EQ(shim_messages(run.err, ""), 0u) << run.err;
    ASSERT_EQ(entry_names(dir / "callret", ".json"), entry_names(truth.blocks, ".json"));
    for (const std::string& name : entry_names(truth.blocks, ".json")) {
      const auto expected = nlohmann::json::parse(slurp(truth.blocks / name));
      const auto actual = nlohmann::json::parse(slurp(dir / "callret" / name));
      ASSERT_EQ(actual["waves"].size(), expected["waves"].size()) << name;
      for (std::size_t i = 0; i < expected["waves"].size(); ++i) {
        const auto& wave = actual["waves"][i];
        EXPECT_EQ(wave["id"], expected["waves"][i]["id"]) << name;
        EXPECT_EQ(wave["workgroup"], expected["waves"][i]["workgroup"]) << name;
        EXPECT_EQ(wave["calls"], nlohmann::json::object()) << name << ", wave " << i;
      }
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, Programs,
    testing::Values(
        Program{"two_objects",
                "two_objects",
                {"vector_add.co", "divergent.co"},
                {"vector_add.0", "divergent.0"}},
        Program{"many_dispatches", "many_dispatches", {"scale.co"}, numbered("scale_add", 300)},
        Program{"vector_add_stripped",
                "vector_add " + example("vector_add_stripped.co"),
                {"vector_add_stripped.co"},
                {"vector_add.0"}},
        Program{"calls", "calls", {"calls.co"}, {"calls.0"}, true}),
    [](const testing::TestParamInfo<Program>& info) { return info.param.name; });

// Unmodified HIP programs (Debian's hipcc and libamdhip64, tests/hsa/hip) under every tool:
// the program's own check passes, and every dispatch -- its kernels and the blit kernels CLR
// runs for its copies and fills -- equals the emulator's ground truth of the plain run. The
// arena is a hidden argument, so HIP does not look for one more kernelParams entry.
TEST(Run, HipProgramsUnderEveryToolEqualTheGroundTruth) {
  for (const char* name : {"vector_add", "memcpy", "symbols"}) {
    SCOPED_TRACE(name);
    const fs::path program = fs::path(WAVEKIT_HIP_PROGRAMS) / name;
    if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (no hipcc)";
    const fs::path dir = scratch(std::string("hip-") + name);
    const GroundTruth truth = ground_truth(program.string(), dir);
    ASSERT_EQ(truth.run.status, 0) << truth.run.err;
    ASSERT_FALSE(entry_names(truth.blocks, ".json").empty());
    const Outcome counted =
        instrumented("--tool bbcount --tool-out " + (dir / "bbcount").string(), program.string());
    ASSERT_EQ(counted.status, 0) << counted.err;
    EXPECT_EQ(counted.out, truth.run.out);
    expect_counts_equal(truth.blocks, dir / "bbcount");
    const Outcome traced = instrumented(
        "--tool blocktrace --tool-out " + (dir / "blocktrace").string(), program.string());
    ASSERT_EQ(traced.status, 0) << traced.err;
    expect_sequences_equal(truth.sequences, dir / "blocktrace");
    const Outcome returns =
        instrumented("--tool callret --tool-out " + (dir / "callret").string(), program.string());
    ASSERT_EQ(returns.status, 0) << returns.err;
    EXPECT_EQ(entry_names(dir / "callret", ".json"), entry_names(truth.blocks, ".json"))
        << returns.err;
    fs::remove_all(dir);
  }
}

// A tool with a probe library (blocktrace), every object rewritten at load: the HIP runtime is
// handed the instrumented objects in the repacked bundle (their kernarg segments have room for
// the arena's address) and the shim adopts them at HSA, linking the probe library there. Before,
// the bundle went through as the original with "running the original" while HSA still got the
// instrumented object, and the arena's address was written past HIP's smaller kernarg segment.
TEST(Run, HipProgramsRewrittenAtLoadWithAProbeLibraryRunInstrumented) {
  const fs::path program = fs::path(WAVEKIT_HIP_PROGRAMS) / "vector_add";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (no hipcc)";
  const fs::path dir = scratch("hip-at-load");
  const GroundTruth truth = ground_truth(program.string(), dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  const Outcome traced = instrumented(
      "--rewrite-at-load --tool blocktrace --tool-out " + (dir / "blocktrace").string(),
      program.string());
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, truth.run.out);
  EXPECT_EQ(shim_messages(traced.err, "running the original"), 0u) << traced.err;
  EXPECT_NE(traced.err.find("(already instrumented)"), std::string::npos) << traced.err;
  expect_sequences_equal(truth.sequences, dir / "blocktrace");
  fs::remove_all(dir);
}

// The oracle itself: for the divergent program, what the runtime writes under
// WAVEKIT_EMU_TRACE_BLOCKS / _SEQUENCE is what `wavekit launch` writes for the same kernel and
// input (the input generation copied from divergent.c).
TEST(Run, GroundTruthOfAPlainRunIsWhatLaunchWrites) {
  fs::path dir = scratch("truth");
  const GroundTruth truth = ground_truth(example("divergent"), dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  write_divergent_input(dir / "input.bin", 4096);
  const Outcome launch = shell(
      std::string(WAVEKIT_CLI) + " launch " + example("divergent.co") +
      " --kernel divergent --grid 4096 --block 128 --arg file:" + (dir / "input.bin").string() +
      " --arg zeros:16384 --arg u32:4096 --trace-blocks " + (dir / "launch.json").string() +
      " --trace-sequence " + (dir / "launch").string());
  ASSERT_EQ(launch.status, 0) << launch.err;
  EXPECT_EQ(entry_names(truth.blocks, ".json"), std::set<std::string>{"divergent.0.json"});
  EXPECT_EQ(slurp(truth.blocks / "divergent.0.json"), slurp(dir / "launch.json"));
  const std::set<std::string> waves = entry_names(dir / "launch", ".txt");
  EXPECT_EQ(waves.size(), 64u);
  ASSERT_EQ(entry_names(truth.sequences / "divergent.0", ".txt"), waves);
  for (const std::string& wave : waves)
    EXPECT_EQ(slurp(truth.sequences / "divergent.0" / wave), slurp(dir / "launch" / wave)) << wave;

  // A directory that cannot be made stops the program before it runs anything, naming the
  // variable.
  const Outcome unwritable =
      shell("WAVEKIT_EMU_TRACE_BLOCKS=" + (dir / "input.bin" / "x").string() +
            " LD_LIBRARY_PATH=" + runtime_dir() + " " + example("divergent"));
  EXPECT_NE(unwritable.status, 0);
  EXPECT_NE(unwritable.err.find("WAVEKIT_EMU_TRACE_BLOCKS"), std::string::npos) << unwritable.err;
  fs::remove_all(dir);
}

TEST(Run, CachedAndLoadTimeRewritesRunAlike) {
  fs::path dir = scratch("cache");
  std::string options = "--tool bbcount --cache " + (dir / "cache").string() + " --tool-out ";
  Outcome first = instrumented(options + (dir / "a").string(), example("divergent"));
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.err.find("load-time rewrite"), std::string::npos) << first.err;
  Outcome second = instrumented("--no-load-time-rewrite " + options + (dir / "b").string(),
                                example("divergent"));
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_NE(second.err.find("(cache)"), std::string::npos) << second.err;
  EXPECT_EQ(slurp(dir / "a" / "divergent.0.json"), slurp(dir / "b" / "divergent.0.json"));
  fs::remove_all(dir);
}

// Rewriting only what runs: a kernel is rewritten when its first selected dispatch comes, so a
// run that selects no dispatch rewrites nothing, and a kernel that never runs instrumented is
// never rewritten; --rewrite-at-load rewrites every kernel of an object when it is loaded. The
// results of both equal byte for byte, and the emulator's trace says which code ran.
TEST(Run, OnlyKernelsThatRunInstrumentedAreRewritten) {
  const fs::path dir = scratch("rewrite-what-runs");
  const Outcome reference = plain(example("many_dispatches"));
  ASSERT_EQ(reference.status, 0) << reference.err;
  const Outcome none = instrumented(
      "--first 0 --tool bbcount --tool-out " + (dir / "none").string(), example("many_dispatches"));
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, reference.out);
  EXPECT_EQ(none.err.find("instrumented code object"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("scale_add: 0 of 300 dispatches instrumented (none)"), std::string::npos)
      << none.err;

  // two_objects loads vector_add's object and divergent's; only divergent is selected.
  const GroundTruth truth = ground_truth(example("two_objects"), dir / "truth");
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  const fs::path traced = dir / "traced";
  const Outcome lazy = shell("WAVEKIT_EMU_TRACE_BLOCKS=" + traced.string() + " " + WAVEKIT_CLI +
                             " run --kernel-regex '^div' --tool bbcount --tool-out " +
                             (dir / "lazy").string() + " -- " + example("two_objects"));
  ASSERT_EQ(lazy.status, 0) << lazy.err;
  EXPECT_EQ(lazy.out, truth.run.out);
  EXPECT_EQ(shim_messages(lazy.err, ""), 0u) << lazy.err;
  EXPECT_NE(lazy.err.find("instrumented code object (load-time rewrite): kernels divergent, at its "
                          "first instrumented dispatch ("),
            std::string::npos)
      << lazy.err;
  EXPECT_EQ(lazy.err.find("kernels vector_add"), std::string::npos) << lazy.err;
  const auto recorded = [](const fs::path& in, const std::string& file) {
    return nlohmann::json::parse(slurp(in / file))["waves"];
  };
  EXPECT_EQ(recorded(traced, "vector_add.0.json"), recorded(truth.blocks, "vector_add.0.json"));
  EXPECT_NE(recorded(traced, "divergent.0.json"), recorded(truth.blocks, "divergent.0.json"));
  EXPECT_EQ(recorded(dir / "lazy", "divergent.0.json"), recorded(truth.blocks, "divergent.0.json"));

  const Outcome eager = instrumented(
      "--rewrite-at-load --kernel-regex '^div' --tool bbcount "
      "--tool-out " +
          (dir / "eager").string(),
      example("two_objects"));
  ASSERT_EQ(eager.status, 0) << eager.err;
  EXPECT_EQ(eager.out, truth.run.out);
  EXPECT_NE(eager.err.find("instrumented code object (load-time rewrite): kernels vector_add\n"),
            std::string::npos)
      << eager.err;
  EXPECT_EQ(eager.err.find("first instrumented dispatch"), std::string::npos) << eager.err;
  EXPECT_EQ(slurp(dir / "eager" / "divergent.0.json"), slurp(dir / "lazy" / "divergent.0.json"));
  fs::remove_all(dir);
}

TEST(Run, FailuresFallBackToTheOriginalKernelWithOneMessage) {
  fs::path dir = scratch("faults");
  Outcome reference = plain(example("many_dispatches"));
  ASSERT_EQ(reference.status, 0) << reference.err;

  // Allocation failure at every dispatch: one message, original kernels, same output.
  Outcome allocation = shell("WAVEKIT_INJECT_FAULT=arena_allocation " + std::string(WAVEKIT_CLI) +
                             " run --tool bbcount --tool-out " + (dir / "alloc").string() + " -- " +
                             example("many_dispatches"));
  ASSERT_EQ(allocation.status, 0) << allocation.err;
  EXPECT_EQ(allocation.out, reference.out);
  EXPECT_EQ(shim_messages(allocation.err, "running the original kernel"), 1u) << allocation.err;

  // A corrupt cache entry, with load-time rewriting off: the original object runs.
  fs::path cache = dir / "cache";
  fs::create_directories(cache);
  Outcome fill = instrumented(
      "--tool bbcount --cache " + cache.string() + " --tool-out " + (dir / "fill").string(),
      example("divergent"));
  ASSERT_EQ(fill.status, 0) << fill.err;
  for (const auto& entry : fs::directory_iterator(cache))
    wavekit::write_file(entry.path().string(), std::string("garbage"));
  Outcome corrupt = instrumented("--tool bbcount --no-load-time-rewrite --cache " + cache.string() +
                                     " --tool-out " + (dir / "corrupt").string(),
                                 example("divergent"));
  ASSERT_EQ(corrupt.status, 0) << corrupt.err;
  EXPECT_EQ(corrupt.out, plain(example("divergent")).out);
  EXPECT_EQ(shim_messages(corrupt.err, "running the original code object"), 1u) << corrupt.err;

  // A probe library built for another GPU: refused before anything is loaded.
  fs::path plan = dir / "plan.json";
  wavekit::write_file(
      plan.string(), std::string(R"({"variables": [{"name": "hits", "element_size": 8, "count": 1}],
      "points": [{"where": "kernel_entry", "snippet": {"op": "increment", "variable": "hits"}}]})"));
  Outcome wrong_target =
      instrumented("--plan " + plan.string() + " --probe-lib " + std::string(WAVEKIT_CORPUS_DIR) +
                       "/basic_gfx908_O2_cov5.co --tool-out " + (dir / "wrong").string(),
                   example("divergent"));
  ASSERT_EQ(wrong_target.status, 0) << wrong_target.err;
  EXPECT_EQ(wrong_target.out, plain(example("divergent")).out);
  EXPECT_EQ(shim_messages(wrong_target.err, "is for gfx908"), 1u) << wrong_target.err;

  // The ready-made tools that use a probe library, with the gfx908 build where the gfx90a one
  // belongs (a mislabelled installation; WAVEKIT_PROBE_DIR says where the tools' libraries
  // are): one message, the original kernels, the program's own output, no results.
  fs::path mislabelled = dir / "probes";
  fs::create_directories(mislabelled);
  for (const auto& [tool, program] : {std::pair{"blocktrace", "divergent"}, {"callret", "calls"}}) {
    SCOPED_TRACE(tool);
    fs::copy_file(fs::path(WAVEKIT_TOOL_PROBE_DIR) / (std::string(tool) + ".gfx908.co"),
                  mislabelled / (std::string(tool) + ".gfx90a.co"));
    const fs::path out = dir / (std::string(tool) + "-wrong");
    Outcome run =
        shell("WAVEKIT_PROBE_DIR=" + mislabelled.string() + " " + std::string(WAVEKIT_CLI) +
              " run --tool " + tool + " --tool-out " + out.string() + " -- " + example(program));
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, plain(example(program)).out);
    EXPECT_EQ(shim_messages(run.err, "is for gfx908, the object for gfx90a"), 1u) << run.err;
    EXPECT_EQ(shim_messages(run.err, ""), 1u) << run.err;
    EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out)) << out;
  }
  fs::remove_all(dir);
}

// A probe library that uses the hostcall ring (the probe SDK defines wavekit_hostcall_ring in
// it): the shim loads it into the application's executable, starts the service, stores the
// ring's address in the variable and reports the service at exit. This plan makes no probe
// calls, so the service answers none; the application's output must not change.
TEST(Run, ProbeLibraryWithTheHostcallRingStartsTheService) {
  fs::path dir = scratch("hostcall");
  fs::path plan = dir / "plan.json";
  wavekit::write_file(
      plan.string(), std::string(R"({"variables": [{"name": "hits", "element_size": 8, "count": 1}],
      "points": [{"where": "kernel_entry", "snippet": {"op": "increment", "variable": "hits"}}]})"));
  Outcome run = instrumented("--plan " + plan.string() + " --probe-lib " + WAVEKIT_HOSTCALL_PROBES +
                                 " --tool-out " + (dir / "out").string(),
                             example("divergent"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, plain(example("divergent")).out);
  EXPECT_NE(run.err.find("hostcall: 0 calls (0 failed)"), std::string::npos) << run.err;
  EXPECT_EQ(shim_messages(run.err, "hostcall"), 0u) << run.err;
  fs::remove_all(dir);
}

// One step of splitmix64 from state `z` (add the golden gamma, then mix), as docs/rewrite.md
// specifies callret's per-lane hash.
std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// callret on an unmodified program whose kernel calls two device functions: the program's
// output is unchanged, and every wave's record of each call equals what the CPU computes the
// call returns for that wave's lanes (examples/hsa/calls_reference.h).
TEST(Run, CallretRecordsWhatTheCpuSaysTheCallsReturn) {
  fs::path dir = scratch("callret");
  Outcome reference = plain(example("calls"));
  ASSERT_EQ(reference.status, 0) << reference.err;
  Outcome run =
      instrumented("--tool callret --tool-out " + (dir / "out").string(), example("calls"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, reference.out);
  ASSERT_TRUE(fs::exists(dir / "out" / "calls.0.json")) << run.err;
  const auto report = nlohmann::json::parse(slurp(dir / "out" / "calls.0.json"));

  // calls.c: 1000 work-items of the LCG input in workgroups of 128 (two waves each).
  constexpr unsigned n = 1000, block = 128;
  std::vector<unsigned> input(n);
  unsigned state = 12345;
  for (unsigned& value : input) {
    state = state * 1103515245u + 12345u;
    value = state >> 8;
  }
  ASSERT_EQ(report["waves"].size(), (n + 63) / 64);
  for (const auto& wave : report["waves"]) {
    const unsigned first = wave["workgroup"][0].get<unsigned>() * block +
                           wave["wave_in_workgroup"].get<unsigned>() * 64;
    const unsigned lanes = std::min(64u, n - first);
    ASSERT_EQ(wave["calls"].size(), 2u) << wave.dump();
    // Call sites in address order: mix_round, then capped_max.
    std::vector<std::vector<unsigned>> returned(2);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const unsigned i = first + lane;
      returned[0].push_back(calls_mix_round(input[i], i & 3));
      returned[1].push_back(calls_capped_max(returned[0].back(), input[i]));
      ASSERT_EQ(returned[1].back(), calls_reference(input[i], i));
    }
    std::size_t site = 0;
    for (const auto& [address, record] : wave["calls"].items()) {
      SCOPED_TRACE("wave " + wave["id"].dump() + ", call at " + address);
      const std::vector<unsigned>& values = returned.at(site++);
      std::uint64_t hash = 0;
      for (unsigned lane = 0; lane < lanes; ++lane)
        hash += splitmix64(std::uint64_t{lane} << 32 | values[lane]);
      auto as_signed = [](unsigned v) { return static_cast<std::int32_t>(v); };
      EXPECT_EQ(record["returns"], 1);
      EXPECT_EQ(record["lanes"], lanes);
      EXPECT_EQ(record["first_lane"], 0);
      EXPECT_EQ(record["first_value"].get<std::int64_t>() & 0xffffffff, values[0]);
      std::vector<std::int32_t> signed_values;
      for (unsigned v : values) signed_values.push_back(as_signed(v));
      EXPECT_EQ(record["min"], *std::min_element(signed_values.begin(), signed_values.end()));
      EXPECT_EQ(record["max"], *std::max_element(signed_values.begin(), signed_values.end()));
      EXPECT_EQ(std::stoull(record["hash"].get<std::string>(), nullptr, 16), hash);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
