// emu::FaultInjection against the CPU: the corpus's vector_add (c[i] = a[i] + b[i]) with one
// bit of one lane flipped in the sum after v_add_f32, or in the value its store reads, must
// give the CPU's result with exactly that element changed; the instructions and their
// registers come from llvm-objdump, not from wavekit's decoder.
#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>

#include "corpus_launch.h"

namespace {

using wavekit::emu::FaultInjection;

struct Disassembled {
  std::uint64_t address = 0;
  unsigned reg = 0;  // the VGPR the pattern's group 1 names
};

// The first instruction of vector_add in `object` matching `pattern` (its group 1 a VGPR
// number), from llvm-objdump's text.
std::optional<Disassembled> find(const std::string& object, const std::string& pattern) {
  const std::string command =
      std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=gfx90a " + object + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  char line[512];
  bool inside = false;
  const std::regex wanted(pattern + R"(.*// ([0-9A-F]+):)");
  while (pipe && fgets(line, sizeof line, pipe.get())) {
    const std::string text = line;
    if (text.find("<vector_add>:") != std::string::npos) inside = true;
    if (!inside) continue;
    std::smatch match;
    if (std::regex_search(text, match, wanted))
      return Disassembled{std::stoull(match[2].str(), nullptr, 16),
                          static_cast<unsigned>(std::stoul(match[1].str()))};
    if (text.find("s_endpgm") != std::string::npos) break;
  }
  return std::nullopt;
}

std::string basic_gfx90a() {
  for (const auto& object : wavekit::corpus::objects())
    if (object.name == "basic_gfx90a_O2_cov5") return object.path;
  return {};
}

// Runs vector_add with `fault` and checks c against the CPU with element `changed` flipped.
void expect_one_element_flipped(const FaultInjection& fault, std::uint64_t changed) {
  const wavekit::corpus::CorpusKernel& kernel = wavekit::corpus::kernel("vector_add");
  std::vector<wavekit::corpus::Argument> args = kernel.make_inputs(3);
  const std::vector<wavekit::corpus::Argument> inputs = args;
  const wavekit::hsa::LaunchOutcome outcome =
      wavekit::emu::test::launch_corpus_kernel(basic_gfx90a(), kernel, args, false, fault);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  ASSERT_TRUE(outcome.injected.reached);
  ASSERT_TRUE(outcome.injected.flipped);
  EXPECT_EQ(outcome.injected.before ^ outcome.injected.after, 1u << fault.bit);
  EXPECT_EQ(changed, fault.wave * 64 + outcome.injected.lane);
  const auto floats = [](const wavekit::corpus::Argument& argument) {
    std::vector<float> values(argument.bytes.size() / 4);
    std::memcpy(values.data(), argument.bytes.data(), values.size() * 4);
    return values;
  };
  const std::vector<float> a = floats(inputs[0]), b = floats(inputs[1]), c = floats(args[2]);
  std::uint32_t n = 0;
  std::memcpy(&n, inputs[3].bytes.data(), 4);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t expected = std::bit_cast<std::uint32_t>(a[i] + b[i]);
    if (i == changed) expected ^= 1u << fault.bit;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(c[i]), expected) << "c[" << i << "]";
  }
}

TEST(FaultInjection, AfterAnInstructionFlipsItsResultInOneLane) {
  const auto add = find(basic_gfx90a(), R"(v_add_f32_e32 v(\d+), v\d+, v\d+)");
  ASSERT_TRUE(add);
  // Wave 5, the 3rd of its 64 active lanes (lane_pick 67 mod 64): element 5 * 64 + 3.
  FaultInjection fault;
  fault.pc = add->address;
  fault.wave = 5;
  fault.reg = add->reg;
  fault.bit = 30;
  fault.lane_pick = 67;
  expect_one_element_flipped(fault, 5 * 64 + 3);
}

// The read mode flips what the store reads: the same element changes.
TEST(FaultInjection, TheReadModeFlipsWhatAStoreWrites) {
  const auto store = find(basic_gfx90a(), R"(global_store_dword v\[\d+:\d+\], v(\d+), off)");
  ASSERT_TRUE(store);
  FaultInjection fault;
  fault.pc = store->address;
  fault.wave = 2;
  fault.reg = store->reg;
  fault.bit = 7;
  fault.lane_pick = 9;
  fault.read = true;
  expect_one_element_flipped(fault, 2 * 64 + 9);
}

// An instance that never runs changes nothing and says so; the last wave has 16 active lanes
// (n = 2,000), and a lane pick past them wraps among those 16.
TEST(FaultInjection, UnreachedInstancesAndPartialWaves) {
  const auto add = find(basic_gfx90a(), R"(v_add_f32_e32 v(\d+), v\d+, v\d+)");
  ASSERT_TRUE(add);
  FaultInjection fault;
  fault.pc = add->address;
  fault.wave = 31;  // elements 1984..1999 active
  fault.reg = add->reg;
  fault.bit = 1;
  fault.lane_pick = 20;  // 20 mod 16 = 4
  expect_one_element_flipped(fault, 1984 + 4);

  const wavekit::corpus::CorpusKernel& kernel = wavekit::corpus::kernel("vector_add");
  std::vector<wavekit::corpus::Argument> args = kernel.make_inputs(3);
  fault.execution = 1;  // the kernel runs it once per wave
  const wavekit::hsa::LaunchOutcome outcome =
      wavekit::emu::test::launch_corpus_kernel(basic_gfx90a(), kernel, args, false, fault);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_FALSE(outcome.injected.reached);
  EXPECT_FALSE(outcome.injected.flipped);
}

}  // namespace
