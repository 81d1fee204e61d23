#include "run_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace wavekit::preload_tests {

namespace fs = std::filesystem;

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

std::size_t shim_messages(const std::string& err, const std::string& what) {
  std::size_t count = 0;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    count += line.rfind("wavekit: ", 0) == 0 && line.find(what) != std::string::npos;
  return count;
}

GroundTruth ground_truth(const std::string& program_and_args, const fs::path& dir) {
  GroundTruth truth{{}, dir / "truth-blocks", dir / "truth-sequences"};
  truth.run = shell("WAVEKIT_EMU_TRACE_BLOCKS=" + truth.blocks.string() +
                    " WAVEKIT_EMU_TRACE_SEQUENCE=" + truth.sequences.string() +
                    " LD_LIBRARY_PATH=" + runtime_dir() + " " + program_and_args);
  return truth;
}

std::set<std::string> entry_names(const fs::path& dir, const std::string& extension) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (extension.empty() ? entry.is_directory() : entry.path().extension() == extension)
      names.insert(entry.path().filename().string());
  return names;
}

void expect_counts_equal(const fs::path& truth, const fs::path& tool) {
  const std::set<std::string> dispatches = entry_names(truth, ".json");
  ASSERT_EQ(entry_names(tool, ".json"), dispatches);
  for (const std::string& name : dispatches) {
    const auto expected = nlohmann::json::parse(slurp(truth / name));
    const auto actual = nlohmann::json::parse(slurp(tool / name));
    ASSERT_EQ(actual["kernel"], expected["kernel"]) << name;
    ASSERT_EQ(actual["waves"].size(), expected["waves"].size()) << name;
    for (std::size_t i = 0; i < expected["waves"].size(); ++i)
      ASSERT_EQ(actual["waves"][i], expected["waves"][i]) << name << ", wave " << i;
  }
}

void expect_sequences_equal(const fs::path& truth, const fs::path& tool) {
  const std::set<std::string> dispatches = entry_names(truth, "");
  ASSERT_EQ(entry_names(tool, ""), dispatches);
  for (const std::string& dispatch : dispatches) {
    const std::set<std::string> waves = entry_names(truth / dispatch, ".txt");
    ASSERT_EQ(entry_names(tool / dispatch, ".txt"), waves) << dispatch;
    for (const std::string& wave : waves)
      ASSERT_EQ(slurp(tool / dispatch / wave), slurp(truth / dispatch / wave))
          << dispatch << "/" << wave;
  }
}

}  // namespace wavekit::preload_tests
