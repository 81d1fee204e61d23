// Ground-truth block counts against the analysis library: every block the emulator reports
// entering is one of analysis's block starts, and the executed instruction total equals the
// sum over waves and blocks of (times entered x the block's instruction count from analysis).
// The second check fails if the emulator miscounts, splits or merges a block, or executes an
// instruction outside a block.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "corpus_launch.h"
#include "wavekit/analysis/analysis.h"
#include "wavekit/analysis/report.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/file.h"

namespace wavekit::emu::test {
namespace {

struct Case {
  std::string object_path;
  std::string object_name;
  std::string kernel;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary || object.stripped) continue;
    for (const auto& kernel : object.kernels) all.push_back({object.path, object.name, kernel});
  }
  return all;
}

class GroundTruth : public testing::TestWithParam<Case> {};

TEST_P(GroundTruth, BlockCountsMatchTheAnalysisBlocks) {
  const Case& c = GetParam();
  std::vector<std::uint8_t> bytes = wavekit::read_file(c.object_path);
  auto object = wavekit::codeobj::CodeObject::parse(bytes, c.object_path);
  wavekit::analysis::Program program =
      wavekit::analysis::analyze(wavekit::analysis::make_input(object));

  const auto& kernel = wavekit::corpus::kernel(c.kernel);
  std::vector<wavekit::corpus::Argument> args = kernel.make_inputs(3);
  wavekit::hsa::LaunchOutcome outcome = launch_corpus_kernel(c.object_path, kernel, args, true);
  ASSERT_TRUE(outcome.ok) << outcome.error;

  std::uint64_t accounted = 0;
  for (const auto& wave : outcome.block_trace["waves"]) {
    for (const auto& [address_text, count] : wave["blocks"].items()) {
      std::uint64_t address = std::strtoull(address_text.c_str(), nullptr, 16);
      const wavekit::analysis::Block* block = program.block_containing(address);
      ASSERT_TRUE(block) << address_text << " is in no analysed block";
      ASSERT_EQ(block->start, address) << address_text << " is not a block start";
      accounted += count.get<std::uint64_t>() * block->instruction_count;
    }
  }
  EXPECT_EQ(accounted, outcome.instructions);
}

INSTANTIATE_TEST_SUITE_P(Objects, GroundTruth, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.object_name + "_" + info.param.kernel;
                         });

}  // namespace
}  // namespace wavekit::emu::test
