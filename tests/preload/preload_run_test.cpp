// End to end: unmodified HSA programs (examples/hsa, linked against Debian's libhsa-runtime64
// and never rebuilt for wavekit) under `wavekit run` on the emulator. Their output must not
// change, and bbcount's per-wave counts must equal the emulator's own ground truth for the
// original object (`wavekit launch --trace-blocks`).
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
#include "wavekit/support/file.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

fs::path scratch(const std::string& name) {
  fs::path path =
      fs::temp_directory_path() / ("wavekit-run-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(path);
  fs::create_directories(path);
  return path;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a shell command line; stdout and stderr are kept apart.
Outcome shell(const std::string& command) {
  fs::path err = fs::temp_directory_path() / ("wavekit-stderr-" + std::to_string(getpid()));
  Outcome outcome;
  FILE* pipe = popen((command + " 2>" + err.string()).c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  while (std::size_t got = fread(buffer, 1, sizeof buffer, pipe)) outcome.out.append(buffer, got);
  int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = slurp(err);
  fs::remove(err);
  return outcome;
}

std::string example(const std::string& name) {
  return std::string(WAVEKIT_HSA_EXAMPLES) + "/" + name;
}
std::string runtime_dir() { return fs::path(WAVEKIT_EMULATOR_RUNTIME_DIR_FOR_TESTS).string(); }

Outcome plain(const std::string& program_and_args) {
  return shell("LD_LIBRARY_PATH=" + runtime_dir() + " " + program_and_args);
}

Outcome instrumented(const std::string& options, const std::string& program_and_args) {
  return shell(std::string(WAVEKIT_CLI) + " run " + options + " -- " + program_and_args);
}

// Lines the shim itself printed ("wavekit: ...") that mention `what`; `wavekit run`'s summary
// repeats them as notes, which do not count.
std::size_t shim_messages(const std::string& err, const std::string& what) {
  std::size_t count = 0;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    count += line.rfind("wavekit: ", 0) == 0 && line.find(what) != std::string::npos;
  return count;
}

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

TEST(Run, AnUnknownToolIsRefusedBeforeTheApplicationStarts) {
  Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool nosuch -- echo APPLICATION-RAN");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("unknown tool 'nosuch'"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("APPLICATION-RAN"), std::string::npos) << run.out;
}

TEST(Run, TwoObjectsManyDispatchesAndStrippedObjects) {
  fs::path dir = scratch("programs");
  struct Case {
    std::string program;
    std::size_t dispatch_reports;
  };
  for (const Case& c : {Case{example("two_objects"), 2}, Case{example("many_dispatches"), 0},
                        Case{example("vector_add") + " " + example("vector_add_stripped.co"), 1}}) {
    SCOPED_TRACE(c.program);
    Outcome reference = plain(c.program);
    ASSERT_EQ(reference.status, 0) << reference.err;
    fs::path out = dir / std::to_string(std::hash<std::string>{}(c.program));
    Outcome run = instrumented("--tool bbcount --tool-out " + out.string(), c.program);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, reference.out);
    std::size_t reports = 0;
    for (const auto& entry : fs::directory_iterator(out))
      reports += entry.path().extension() == ".json";
    if (c.dispatch_reports)
      EXPECT_EQ(reports, c.dispatch_reports) << run.err;
    else
      EXPECT_GT(reports, 1u) << run.err;
  }
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
