// `wavekit run` with applications of more than one process, and with the ways a run ends
// badly: a fork after HSA was used (the child gets a working copy of the emulated GPU, as its
// memory is a copy), two processes at once (no result file written by both), an application
// killed by a signal, a selected kernel that no loaded object has, and a heatmap that cannot be
// written. Every result is checked against the emulator's ground truth or the program's own
// check; none of these may hang, lose a result silently, or change the application's status.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "wavekit/support/file.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

fs::path scratch(const std::string& name) {
  fs::path path =
      fs::temp_directory_path() / ("wavekit-processes-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(path);
  fs::create_directories(path);
  return path;
}

std::string text_of(const fs::path& path) {
  const std::vector<std::uint8_t> bytes = wavekit::read_file(path.string());
  return std::string(bytes.begin(), bytes.end());
}

// Runs a command line under `timeout` (a hang fails the test instead of stalling the suite).
Outcome shell(const std::string& command) {
  const fs::path err =
      fs::temp_directory_path() / ("wavekit-processes-err-" + std::to_string(getpid()));
  Outcome outcome;
  FILE* pipe = popen(("timeout 120 " + command + " 2>" + err.string()).c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  while (std::size_t got = fread(buffer, 1, sizeof buffer, pipe)) outcome.out.append(buffer, got);
  const int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = text_of(err);
  fs::remove(err);
  return outcome;
}

std::string runtime() {
  return std::string("env LD_LIBRARY_PATH=") + WAVEKIT_EMULATOR_RUNTIME_DIR_FOR_TESTS;
}
std::string vector_add() { return std::string(WAVEKIT_HSA_EXAMPLES) + "/vector_add"; }

std::size_t waves_in(const fs::path& result) {
  return nlohmann::json::parse(text_of(result))["waves"].size();
}

// fork() after the runtime started used to deadlock the child in the emulator's runtime (7 of
// 8 tries). The child now runs kernels on its own copy; repeated, because the deadlock was a
// race with the parent's packet-processor threads.
TEST(Processes, AChildForkedAfterHsaWasUsedRunsKernels) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    const Outcome run = shell(runtime() + " " + WAVEKIT_FORKS_PROGRAM);
    ASSERT_EQ(run.status, 0) << "attempt " << attempt << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("forks: child 0 wrong"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("forks: parent 0 wrong, child ok"), std::string::npos) << run.out;
  }
}

// Under `wavekit run` both processes report: the parent's results keep their names, the
// child's carry its pid, and each has the kernel's 16 waves (1000 items in 4 workgroups of 256,
// 4 waves each).
TEST(Processes, ForkedProcessesReportSeparately) {
  const fs::path out = scratch("fork");
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " +
                            out.string() + " -- " + WAVEKIT_FORKS_PROGRAM);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("wavekit run: bbcount (2 processes reported)"), std::string::npos)
      << run.err;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".json") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 3u) << run.err;
  EXPECT_EQ(names[0], "vector_add.0.json");
  EXPECT_EQ(names[1], "vector_add.1.json");
  EXPECT_TRUE(std::regex_match(names[2], std::regex(R"(vector_add\.pid[0-9]+\.1\.json)")))
      << names[2];
  for (const std::string& name : names) EXPECT_EQ(waves_in(out / name), 16u) << name;
}

// Two processes of the application at once (a shell starts them): neither is the process
// `wavekit run` started, so both name their results by pid, and both are counted.
TEST(Processes, TwoProcessesAtOnceDoNotOverwriteEachOther) {
  const fs::path out = scratch("two");
  const Outcome run =
      shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " + out.string() +
            " -- sh -c '" + vector_add() + " & " + vector_add() + "; wait'");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("(2 processes reported)"), std::string::npos) << run.err;
  std::size_t results = 0;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".json") {
      ++results;
      EXPECT_TRUE(std::regex_match(entry.path().filename().string(),
                                   std::regex(R"(vector_add\.pid[0-9]+\.0\.json)")))
          << entry.path();
      EXPECT_EQ(waves_in(entry.path()), 16u);
    }
  EXPECT_EQ(results, 2u) << run.err;
}

TEST(Processes, AnApplicationKilledByASignalIsNamedSo) {
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " +
                            scratch("signal").string() + " -- sh -c 'kill -SEGV $$'");
  EXPECT_EQ(run.status, 128 + SIGSEGV) << run.err;
  EXPECT_NE(run.err.find("wavekit run: the application was killed by signal 11 (SEGV: "
                         "Segmentation fault)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("did it use HSA"), std::string::npos) << run.err;
}

TEST(Processes, ASelectedKernelNoObjectHasIsNamed) {
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --kernel nosuch " +
                            "--tool-out " + scratch("nosuch").string() + " -- " + vector_add());
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("wavekit run: kernel nosuch was selected but no code object the "
                         "application loaded has it (it loaded: vector_add)"),
            std::string::npos)
      << run.err;
}

// A picture that cannot be written (here: its path is a directory; a full disk fails the same
// way) is reported, leaves no partial file, and does not change the application's status.
TEST(Processes, AHeatmapThatCannotBeWrittenIsReportedNotFatal) {
  const fs::path out = scratch("svg");
  fs::create_directories(out / "vector_add.0.svg");
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " +
                            out.string() + " -- " + vector_add());
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("wavekit run: no heatmap for " + (out / "vector_add.0.json").string() +
                         ": " + (out / "vector_add.0.svg").string() + ": cannot be written"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(waves_in(out / "vector_add.0.json"), 16u);
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}

}  // namespace
