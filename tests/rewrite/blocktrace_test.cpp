// blocktrace end to end through the command line, on the corpus for gfx908, gfx90a and gfx942:
// `wavekit launch ORIGINAL --trace-sequence TRUTH` (the emulator's ground truth) and `wavekit
// launch REWRITTEN --tool-out FILES`, where every wave wrote its own file through the hostcall
// ring, must give the same directory: the same file names and, wave by wave, the same lines
// (the ground truth restricted to the kernel's own blocks: callees run uninstrumented).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "corpus_runs.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

// -O2 objects of every processor (the -O0 ones trace the same blocks, more slowly): a few
// hundred waves per kernel, each making a few hostcall requests.
std::vector<Case> cases() {
  return corpus_cases(
      [](const corpus::CorpusObject& o) { return !o.fat_binary && !o.stripped && o.opt == "-O2"; });
}

// Kernels whose block sequences depend on how waves interleave (compare-and-swap retry loops):
// the rewritten kernel's waves interleave differently, so the original run is not the oracle.
bool schedule_dependent(const std::string& kernel) { return kernel == "global_atomics"; }

std::map<std::string, std::string> read_directory(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::vector<std::uint8_t> bytes = read_file(entry.path().string());
    files[entry.path().filename().string()] = std::string(bytes.begin(), bytes.end());
  }
  return files;
}

// The lines of `text` whose address lies in [begin, end).
std::string lines_within(const std::string& text, std::uint64_t begin, std::uint64_t end) {
  std::istringstream in(text);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    const std::uint64_t address = std::stoull(line, nullptr, 16);
    if (address >= begin && address < end) kept += line + "\n";
  }
  return kept;
}

// Rewrites `c` with blocktrace, launches original and rewritten with `inputs` over `grid`
// work-items and `block`, and compares the directories.
void check_against_ground_truth(const Case& c, const std::vector<corpus::Argument>& inputs,
                                const corpus::Dim3& grid, const corpus::Dim3& block,
                                const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "rewritten.co").string();
  const Command rewritten = run(std::string(WAVEKIT_CLI) + " rewrite " + c.path + " -o " + out +
                                " --tool blocktrace --kernel " + c.kernel);
  if (rewritten.status != 0) {
    // The refusals bbcount's test accepts: capabilities not done yet, run-time call targets.
    if (rewritten.output.find("not instrumented yet") != std::string::npos ||
        rewritten.output.find("not supported yet") != std::string::npos ||
        rewritten.output.find("has a target computed at run time") != std::string::npos)
      GTEST_SKIP() << rewritten.output;
    FAIL() << rewritten.output;
  }

  std::string launch_args = " --kernel " + c.kernel + " --threads 2";
  launch_args += " --grid " + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
                 std::to_string(grid.z);
  launch_args += " --block " + std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                 std::to_string(block.z);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const corpus::Argument& arg = inputs[i];
    if (arg.kind == corpus::Argument::Kind::buffer) {
      const std::string file = (dir / ("arg" + std::to_string(i) + ".in")).string();
      write_file(file, arg.bytes);
      launch_args += " --arg file:" + file;
      continue;
    }
    std::uint64_t value = 0;
    std::memcpy(&value, arg.bytes.data(), arg.bytes.size());
    launch_args += (arg.bytes.size() == 8 ? " --arg u64:" : " --arg u32:") + std::to_string(value);
  }
  const Command truth = run(std::string(WAVEKIT_CLI) + " launch " + c.path + launch_args +
                            " --trace-sequence " + (dir / "truth").string());
  ASSERT_EQ(truth.status, 0) << truth.output;
  const Command tool = run(std::string(WAVEKIT_CLI) + " launch " + out + launch_args +
                           " --tool-out " + (dir / "files").string());
  ASSERT_EQ(tool.status, 0) << tool.output;

  const std::vector<KernelView> views =
      analyse_kernels(codeobj::CodeObject::parse(read_file(c.path), c.path));
  const KernelView* view = nullptr;
  for (const KernelView& candidate : views)
    if (candidate.name == c.kernel) view = &candidate;
  ASSERT_NE(view, nullptr);
  std::map<std::string, std::string> expected = read_directory(dir / "truth");
  for (auto& [name, text] : expected)
    text = lines_within(text, view->entry, view->blocks.back().end);
  const std::map<std::string, std::string> actual = read_directory(dir / "files");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual.size(), expected.size());
  std::size_t differing = 0;
  for (const auto& [name, text] : expected) {
    const auto found = actual.find(name);
    if (found == actual.end()) {
      ADD_FAILURE() << name << " is missing from the tool's files";
    } else if (found->second != text && ++differing <= 3) {
      ADD_FAILURE() << name << " differs\ntool:\n" << found->second << "ground truth:\n" << text;
    }
  }
  EXPECT_EQ(differing, 0u);
}

class Blocktrace : public testing::TestWithParam<Case> {};

TEST_P(Blocktrace, EveryWaveFileIsTheGroundTruthSequence) {
  const Case& c = GetParam();
  if (schedule_dependent(c.kernel)) GTEST_SKIP() << "block sequence depends on the schedule";
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  check_against_ground_truth(c, k.make_inputs(5), k.grid_size(), k.block,
                             "blocktrace." + c.object + "." + c.kernel);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Blocktrace, testing::ValuesIn(cases()), case_name);

// 320 waves of collatz_steps, whose loop makes each wave's sequence hundreds of lines: about 27
// requests per wave (the buffer flushed many times), 8,768 through one ring.
class BlocktraceManyWaves : public testing::TestWithParam<std::string> {};

TEST_P(BlocktraceManyWaves, LongSequencesStayInOrder) {
  const std::string object = "basic_" + GetParam() + "_O2_cov5";
  std::string path;
  for (const corpus::CorpusObject& candidate : corpus::objects())
    if (candidate.name == object) path = candidate.path;
  ASSERT_FALSE(path.empty()) << object;
  const corpus::CorpusKernel& k = corpus::kernel("collatz_steps");
  std::vector<corpus::Argument> inputs = k.make_inputs(9);
  const std::uint32_t n = 320 * 64;
  std::uint32_t state = 12345;
  inputs[0].bytes.resize(n * 4);
  for (std::uint32_t i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    const std::uint32_t start = (state >> 8) % (1u << 20) + 1;
    std::memcpy(&inputs[0].bytes[i * 4], &start, 4);
  }
  inputs[1].bytes.assign(n * 4, 0);
  std::memcpy(inputs[2].bytes.data(), &n, 4);
  check_against_ground_truth({object, path, GetParam(), "collatz_steps"}, inputs, {n, 1, 1},
                             {256, 1, 1}, "blocktrace.many." + object);
}

INSTANTIATE_TEST_SUITE_P(Targets, BlocktraceManyWaves,
                         testing::Values("gfx908", "gfx90a", "gfx942"));

}  // namespace
}  // namespace wavekit::rewrite
