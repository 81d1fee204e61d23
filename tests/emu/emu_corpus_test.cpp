// Every kernel of every corpus code object, run on the emulator through `wavekit launch`'s
// library entry (the shared loader, kernarg and hidden-argument set-up), compared with the
// corpus's CPU reference. The reference is independent of the emulator: it is plain C++ over
// the same inputs.
#include <gtest/gtest.h>

#include <cstring>

#include "wavekit/corpus/corpus.h"
#include "wavekit/hsa/launch.h"

namespace {

using wavekit::corpus::Argument;

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

wavekit::hsa::ArgumentSpec to_spec(const Argument& argument) {
  wavekit::hsa::ArgumentSpec spec;
  spec.bytes = argument.bytes;
  spec.text = argument.name;
  if (argument.kind == Argument::Kind::buffer) {
    spec.kind = wavekit::hsa::ArgumentSpec::Kind::file;
    return spec;
  }
  using wavekit::corpus::ElementType;
  switch (argument.type) {
    case ElementType::i32:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::i32;
      break;
    case ElementType::u32:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::u32;
      break;
    case ElementType::i64:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::i64;
      break;
    case ElementType::u64:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::u64;
      break;
    case ElementType::f32:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::f32;
      break;
    case ElementType::f64:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::f64;
      break;
    case ElementType::f16:
      spec.kind = wavekit::hsa::ArgumentSpec::Kind::u32;
      break;
  }
  return spec;
}

class Corpus : public testing::TestWithParam<Case> {};

TEST_P(Corpus, MatchesCpuReference) {
  const Case& c = GetParam();
  const auto& kernel = wavekit::corpus::kernel(c.kernel);
  std::vector<Argument> args = kernel.make_inputs(7);
  std::vector<Argument> expected = args;
  kernel.reference(expected);

  wavekit::hsa::LaunchRequest request;
  request.code_object = c.object_path;
  request.kernel = c.kernel;
  auto grid = kernel.grid_size();
  request.grid.size = {grid.x, grid.y, grid.z};
  request.grid.count = grid.z > 1 ? 3 : grid.y > 1 ? 2 : 1;
  request.block.size = {kernel.block.x, kernel.block.y, kernel.block.z};
  request.block.count = request.grid.count;
  request.host_threads = 2;
  for (const auto& argument : args) request.arguments.push_back(to_spec(argument));

  wavekit::hsa::LaunchOutcome outcome = wavekit::hsa::launch(request);
  ASSERT_TRUE(outcome.ok) << c.object_name << " " << c.kernel << ": " << outcome.error;
  EXPECT_GT(outcome.instructions, 0u);
  for (const auto& [index, bytes] : outcome.buffers) {
    ASSERT_EQ(bytes.size(), args[index].bytes.size());
    args[index].bytes = bytes;
  }
  auto mismatch = wavekit::corpus::compare_outputs(kernel, expected, args);
  EXPECT_FALSE(mismatch) << c.object_name << ": " << *mismatch;
}

INSTANTIATE_TEST_SUITE_P(Objects, Corpus, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.object_name + "_" + info.param.kernel;
                         });

}  // namespace
