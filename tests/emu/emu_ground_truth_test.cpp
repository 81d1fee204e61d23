// Ground-truth block counts against the analysis library: every block the emulator reports
// entering is one of analysis's block starts, and the executed instruction total equals the
// sum over waves and blocks of (times entered x the block's instruction count from analysis).
// The second check fails if the emulator miscounts, splits or merges a block, or executes an
// instruction outside a block. The memory trace is checked against what a kernel's source says
// it accesses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
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

// The memory trace against lds_reverse's source: slice[t] = in[base + t]; barrier;
// out[base + t] = slice[size - 1 - t], with slice at LDS offset 0 and 200 work-items per
// workgroup. Per wave, its LDS accesses are exactly the write of 4 * t and the read of
// 4 * (199 - t) for each active lane (t = wave_in_workgroup * 64 + lane), and its GLOBAL ones
// (the load of in[], the store to out[]) are 4 bytes apart from lane to lane.
TEST(MemoryTrace, IsWhereLdsReverseAccesses) {
  unsigned objects = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.source != "lds" || object.fat_binary) continue;
    ++objects;
    const auto& kernel = wavekit::corpus::kernel("lds_reverse");
    std::vector<wavekit::corpus::Argument> args = kernel.make_inputs(3);
    wavekit::hsa::LaunchRequest request;
    request.code_object = object.path;
    request.kernel = kernel.name;
    request.grid.size = {kernel.grid_size().x, 1, 1};
    request.block.size = {kernel.block.x, 1, 1};
    for (const auto& argument : args) request.arguments.push_back(to_spec(argument));
    request.record_memory_accesses = true;
    const wavekit::hsa::LaunchOutcome outcome = wavekit::hsa::launch(request);
    ASSERT_TRUE(outcome.ok) << outcome.error;
    ASSERT_EQ(outcome.memory_trace["waves"].size(), outcome.waves);
    for (const auto& wave : outcome.memory_trace["waves"]) {
      const std::uint64_t first_thread = wave["wave_in_workgroup"].get<std::uint64_t>() * 64;
      std::vector<std::vector<std::uint64_t>> lds, global;
      for (const auto& access : wave["accesses"]) {
        const std::uint64_t exec = std::stoull(access["exec"].get<std::string>(), nullptr, 16);
        const std::uint64_t lanes = std::min<std::uint64_t>(64, 200 - first_thread);
        const std::string kind = access["kind"];
        if (kind == "scalar") continue;
        EXPECT_EQ(exec, lanes == 64 ? ~0ull : (1ull << lanes) - 1) << object.name;
        std::vector<std::uint64_t> addresses;
        for (const auto& address : access["addresses"])
          addresses.push_back(std::stoull(address.get<std::string>(), nullptr, 16));
        EXPECT_EQ(addresses.size(), lanes);
        (kind == "lds" ? lds : global).push_back(addresses);
      }
      ASSERT_EQ(lds.size(), 2u) << object.name;
      ASSERT_EQ(global.size(), 2u) << object.name;
      for (std::size_t lane = 0; lane < lds[0].size(); ++lane) {
        const std::uint64_t t = first_thread + lane;
        EXPECT_EQ(lds[0][lane], 4 * t) << object.name << " write, lane " << lane;
        EXPECT_EQ(lds[1][lane], 4 * (199 - t)) << object.name << " read, lane " << lane;
        for (const auto& addresses : global)
          EXPECT_EQ(addresses[lane], addresses[0] + 4 * lane) << object.name << " lane " << lane;
      }
    }
  }
  EXPECT_GE(objects, 3u);
}

}  // namespace
}  // namespace wavekit::emu::test
