// Every kernel of every corpus code object, run on the emulator through `wavekit launch`'s
// library entry (the shared loader, kernarg and hidden-argument set-up), compared with the
// corpus's CPU reference. The reference is independent of the emulator: it is plain C++ over
// the same inputs.
#include <gtest/gtest.h>

#include "corpus_launch.h"

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
    if (object.fat_binary) continue;  // a host ELF; the loader takes device code objects
    for (const auto& kernel : object.kernels) all.push_back({object.path, object.name, kernel});
  }
  return all;
}

class Corpus : public testing::TestWithParam<Case> {};

TEST_P(Corpus, MatchesCpuReference) {
  const Case& c = GetParam();
  const auto& kernel = wavekit::corpus::kernel(c.kernel);
  std::vector<wavekit::corpus::Argument> args = kernel.make_inputs(7);
  std::vector<wavekit::corpus::Argument> expected = args;
  kernel.reference(expected);
  wavekit::hsa::LaunchOutcome outcome = launch_corpus_kernel(c.object_path, kernel, args);
  ASSERT_TRUE(outcome.ok) << c.object_name << " " << c.kernel << ": " << outcome.error;
  EXPECT_GT(outcome.instructions, 0u);
  auto mismatch = wavekit::corpus::compare_outputs(kernel, expected, args);
  EXPECT_FALSE(mismatch) << c.object_name << ": " << *mismatch;
}

INSTANTIATE_TEST_SUITE_P(Objects, Corpus, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.object_name + "_" + info.param.kernel;
                         });

}  // namespace
}  // namespace wavekit::emu::test
