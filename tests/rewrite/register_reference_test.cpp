// Probes that change ISA state: a register passed by reference (register_reference) takes the
// probe's return value. The oracle is the CPU: the corpus's vector_add (c[i] = a[i] + b[i] for
// i < n) is run with a probe that flips one bit of one lane's sum, or of one lane's loaded
// operand, lowers the bound n in its SGPR, or drops a lane from EXEC or VCC; the output must be
// the CPU's result with exactly that change, and nothing else may differ. Identity probes at
// every block of every corpus kernel show the write-back is transparent where it changes
// nothing; a call that replaces the instruction computes in its place; and what cannot be made
// safe is refused with its reason.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <functional>

#include "corpus_runs.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

std::string probes(const std::string& processor) {
  return std::string(WAVEKIT_BLOCK_PROBES_DIR) + "/rewrite_block_probes." + processor + ".co";
}

std::string basic_object(const std::string& processor) {
  const std::string name = "basic_" + processor + "_O2_cov5";
  for (const corpus::CorpusObject& object : corpus::objects())
    if (object.name == name) return object.path;
  throw Error("the corpus has no object " + name);
}

Argument constant(std::uint64_t value) {
  Argument argument;
  argument.kind = ArgumentKind::constant;
  argument.value = value;
  return argument;
}

Argument reference(const std::string& name) {
  Argument argument;
  argument.kind = ArgumentKind::register_reference;
  argument.name = name;
  return argument;
}

Plan one_call(const std::string& processor, PointKind where, std::uint64_t address,
              const std::string& probe, std::vector<Argument> args) {
  Plan plan;
  plan.kernels = {"vector_add"};
  plan.probe_library = probes(processor);
  PointSpec point;
  point.where = where;
  point.addresses = {address};
  point.call = ProbeCall{probe, std::move(args), false};
  plan.points.push_back(point);
  return plan;
}

// The first instruction of vector_add whose mnemonic starts with `prefix`, and its operands
// as LLVM prints them.
struct Found {
  std::uint64_t address = 0;
  std::vector<std::string> operands;
};
std::optional<Found> find(const std::string& processor, const std::string& prefix) {
  const std::string path = basic_object(processor);
  Mutator mutator = Mutator::open(read_file(path), path);
  for (const BlockView& block : mutator.kernel("vector_add")->blocks)
    for (const InstructionView& inst : block.instructions) {
      if (inst.mnemonic.rfind(prefix, 0) != 0) continue;
      Found found{inst.address, {}};
      std::string rest = inst.text.substr(inst.text.find(' ') + 1);
      for (std::size_t at; (at = rest.find(", ")) != std::string::npos; rest.erase(0, at + 2))
        found.operands.push_back(rest.substr(0, at));
      found.operands.push_back(rest);
      return found;
    }
  return std::nullopt;
}

struct VectorAdd {
  std::vector<float> a, b, c;
  std::uint32_t n = 0;
  RewriteNote note;                 // the rewritten object's
  std::vector<std::uint8_t> arena;  // as the dispatch left it
};

// Rewrites vector_add with `plan`, runs it on the corpus inputs, and returns its inputs, its
// output c and the per-wave arena.
VectorAdd run(const std::string& processor, const Plan& plan, const std::string& name) {
  const std::string path = basic_object(processor);
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  const RewriteResult rewritten = rewrite(input, plan);
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  const std::string out = (dir / ("vector_add." + processor + "." + name + ".co")).string();
  write_file(out, rewritten.bytes);
  const corpus::CorpusKernel& kernel = corpus::kernel("vector_add");
  const std::vector<corpus::Argument> inputs = kernel.make_inputs(3);
  const ToolLaunchOutcome outcome = launch_instrumented(request_for(kernel, inputs, out));
  EXPECT_TRUE(outcome.launch.ok) << outcome.launch.error;
  VectorAdd result;
  const auto floats = [](const std::vector<std::uint8_t>& bytes) {
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), values.size() * 4);
    return values;
  };
  result.a = floats(inputs[0].bytes);
  result.b = floats(inputs[1].bytes);
  std::memcpy(&result.n, inputs[3].bytes.data(), 4);
  for (const auto& [index, bytes] : outcome.launch.buffers)
    if (index == 2) result.c = floats(bytes);
  EXPECT_EQ(result.c.size(), result.a.size());
  result.note = rewritten.note;
  result.arena = outcome.arena;
  return result;
}

float flipped(float value, unsigned bit) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(value) ^ (1u << bit));
}

// Every element equals what `expected` says (bitwise), the differing ones named.
void expect_elements(const VectorAdd& got, const std::function<float(std::uint32_t)>& expected) {
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < got.c.size(); ++i)
    if (std::bit_cast<std::uint32_t>(got.c[i]) != std::bit_cast<std::uint32_t>(expected(i)) &&
        wrong++ < 5)
      ADD_FAILURE() << "c[" << i << "] = " << got.c[i] << ", expected " << expected(i);
  EXPECT_EQ(wrong, 0u);
}

class RegisterReference : public testing::TestWithParam<std::string> {};

// The sum's register after v_add_f32, bit 31 of lane 5: those elements change sign, no other.
TEST_P(RegisterReference, AFlippedVgprBitChangesExactlyThatLanesResult) {
  const std::string& processor = GetParam();
  const auto add = find(processor, "v_add_f32");
  ASSERT_TRUE(add) << "no v_add_f32 in vector_add";
  const VectorAdd got =
      run(processor,
          one_call(processor, PointKind::after_instruction, add->address, "flip_lane_bit",
                   {reference(add->operands[0]), constant(5), constant(31)}),
          "flip_sum");
  expect_elements(got, [&](std::uint32_t i) {
    if (i >= got.n) return 0.0f;
    const float sum = got.a[i] + got.b[i];
    return i % 64 == 5 ? flipped(sum, 31) : sum;
  });
}

// After a load, the flip applies to the value that arrived (the envelope waits for it), so the
// lane's sum uses the flipped operand.
TEST_P(RegisterReference, AFlipAfterALoadChangesTheLoadedValue) {
  const std::string& processor = GetParam();
  const auto load = find(processor, "global_load_dword");
  ASSERT_TRUE(load) << "no global_load_dword in vector_add";
  // Which input the first load reads is the compiler's choice: the CPU side tries both.
  const VectorAdd got =
      run(processor,
          one_call(processor, PointKind::after_instruction, load->address, "flip_lane_bit",
                   {reference(load->operands[0]), constant(7), constant(22)}),
          "flip_load");
  bool flips_a = true, flips_b = true;
  for (std::uint32_t i = 7; i < got.n; i += 64) {
    flips_a = flips_a && got.c[i] == flipped(got.a[i], 22) + got.b[i];
    flips_b = flips_b && got.c[i] == got.a[i] + flipped(got.b[i], 22);
  }
  ASSERT_TRUE(flips_a || flips_b) << "lane 7's results are not a sum with one operand flipped";
  expect_elements(got, [&](std::uint32_t i) {
    if (i >= got.n) return 0.0f;
    if (i % 64 != 7) return got.a[i] + got.b[i];
    return flips_a ? flipped(got.a[i], 22) + got.b[i] : got.a[i] + flipped(got.b[i], 22);
  });
}

// The bound n in its SGPR, lowered by 1,000 before the comparison that uses it: only the first
// 1,000 elements are written.
TEST_P(RegisterReference, ALoweredSgprBoundStopsTheKernelEarly) {
  const std::string& processor = GetParam();
  const auto compare = find(processor, "v_cmp_gt_u32");
  ASSERT_TRUE(compare) << "no v_cmp_gt_u32 in vector_add";
  const std::string bound = compare->operands[1];
  ASSERT_EQ(bound[0], 's') << "the bound is not in an SGPR: " << bound;
  const VectorAdd got = run(processor,
                            one_call(processor, PointKind::before_instruction, compare->address,
                                     "add_to_dword", {reference(bound), constant(0xfffffc18)}),
                            "lower_bound");
  expect_elements(got, [&](std::uint32_t i) { return i < got.n - 1000 ? got.a[i] + got.b[i] : 0; });
}

// EXEC without lane 3 at the store, VCC without lane 9 after the comparison: those lanes write
// nothing.
TEST_P(RegisterReference, ADroppedExecOrVccLaneWritesNothing) {
  const std::string& processor = GetParam();
  const auto store = find(processor, "global_store_dword");
  const auto compare = find(processor, "v_cmp_gt_u32");
  ASSERT_TRUE(store && compare);
  ASSERT_EQ(compare->operands[0], "vcc");
  for (const auto& [name, where, address, lane] :
       {std::tuple{"exec", PointKind::before_instruction, store->address, 3u},
        std::tuple{"vcc", PointKind::after_instruction, compare->address, 9u}}) {
    SCOPED_TRACE(name);
    const VectorAdd got =
        run(processor,
            one_call(processor, where, address, "drop_lane", {reference(name), constant(lane)}),
            std::string("drop_") + name);
    expect_elements(got, [&](std::uint32_t i) {
      return i < got.n && i % 64 != lane ? got.a[i] + got.b[i] : 0;
    });
  }
}

// A call that replaces v_add_f32 and returns the product through its destination: the kernel
// computes a[i] * b[i] instead; the add itself does not run.
TEST_P(RegisterReference, AReplacingCallComputesInsteadOfTheInstruction) {
  const std::string& processor = GetParam();
  const auto add = find(processor, "v_add_f32");
  ASSERT_TRUE(add) << "no v_add_f32 in vector_add";
  ASSERT_EQ(add->operands.size(), 3u);
  Argument x, y;
  x.kind = y.kind = ArgumentKind::register_value;
  x.name = add->operands[1];
  y.name = add->operands[2];
  Plan plan = one_call(processor, PointKind::before_instruction, add->address, "multiply_floats",
                       {reference(add->operands[0]), x, y});
  plan.points[0].replace = true;
  const VectorAdd got = run(processor, plan, "replace");
  expect_elements(got, [&](std::uint32_t i) { return i < got.n ? got.a[i] * got.b[i] : 0; });
}

// A store's data flipped before the store and flipped back after it (wavekit fi's store
// faults): memory gets the flipped value, the register keeps its own, as a third point that
// records the register after the store sees.
TEST_P(RegisterReference, AFlipAroundAStoreCorruptsOnlyTheStoredValue) {
  const std::string& processor = GetParam();
  const auto store = find(processor, "global_store_dword");
  ASSERT_TRUE(store && store->operands.size() >= 2);
  const std::string data = store->operands[1];
  Plan plan = one_call(processor, PointKind::before_instruction, store->address, "flip_lane_bit",
                       {reference(data), constant(5), constant(31)});
  PointSpec restore = plan.points[0];
  restore.where = PointKind::after_instruction;
  plan.points.push_back(restore);
  PerWaveVariable lanes;
  lanes.name = "lanes";
  lanes.element_size = 4;
  lanes.count = 64;
  plan.variables.push_back(lanes);
  Argument out;
  out.kind = ArgumentKind::variable;
  out.name = "lanes";
  Argument value;
  value.kind = ArgumentKind::register_value;
  value.name = data;
  PointSpec record = restore;
  record.call = ProbeCall{"store_lane_value", {out, value}, false};
  plan.points.push_back(record);

  const VectorAdd got = run(processor, plan, "store_flip");
  expect_elements(got, [&](std::uint32_t i) {
    if (i >= got.n) return 0.0f;
    const float sum = got.a[i] + got.b[i];
    return i % 64 == 5 ? flipped(sum, 31) : sum;
  });
  // After the store the register holds the unflipped sum in every lane that stored.
  const InstrumentedKernel* instrumented = got.note.find_kernel("vector_add");
  ASSERT_NE(instrumented, nullptr);
  const PlacedVariable* recorded = instrumented->layout.find("lanes");
  std::size_t checked = 0;
  for (const WaveSlot& slot : read_arena(got.arena, *instrumented)) {
    const std::uint64_t first = slot.wave_id * 64;
    if (first + 5 >= got.n) continue;
    std::uint32_t seen = 0;
    std::memcpy(&seen, slot.bytes.data() + recorded->offset + 5 * 4, 4);
    EXPECT_EQ(seen, std::bit_cast<std::uint32_t>(got.a[first + 5] + got.b[first + 5]))
        << "wave " << slot.wave_id;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

INSTANTIATE_TEST_SUITE_P(Targets, RegisterReference, testing::Values("gfx908", "gfx90a", "gfx942"));

// Identity probes by reference at every block entry of every corpus kernel (and of the device
// functions it calls), on every target:
// VCC, a VGPR pair and an SGPR go through the write-back and come out as they were, so every
// output is bit-identical to the original's.
class TransparentReference : public testing::TestWithParam<Case> {};

TEST_P(TransparentReference, KeepsEveryOutput) {
  const Case& c = GetParam();
  for (const auto& [probe, name] : {std::pair{"keep_pair", "vcc"}, std::pair{"keep_pair", "v[0:1]"},
                                    std::pair{"keep_dword", "s4"}}) {
    SCOPED_TRACE(name);
    Plan plan;
    plan.kernels = {c.kernel};
    plan.probe_library = probes(c.processor);
    PointSpec point;
    point.where = PointKind::block_entry;
    point.call = ProbeCall{probe, {reference(name)}, false};
    plan.points.push_back(point);
    const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
    RewriteResult rewritten;
    try {
      rewritten = rewrite(input, plan);
    } catch (const Error& error) {
      // A refusal this build knows about: -O0 wave_ops's SGPRs (probe_call_test.cpp).
      const std::string message = error.what();
      if (message.find("SGPRs the instrumentation needs below") != std::string::npos)
        GTEST_SKIP() << message;
      ADD_FAILURE() << message;
      continue;
    }
    const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
    std::filesystem::create_directories(dir);
    const std::string out = (dir / (c.object + "." + c.kernel + ".keep.co")).string();
    write_file(out, rewritten.bytes);
    const corpus::CorpusKernel& kernel = corpus::kernel(c.kernel);
    const std::vector<corpus::Argument> inputs = kernel.make_inputs(3);
    const hsa::LaunchOutcome truth = hsa::launch(request_for(kernel, inputs, c.path));
    const ToolLaunchOutcome tool = launch_instrumented(request_for(kernel, inputs, out));
    ASSERT_TRUE(truth.ok) << truth.error;
    ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
    EXPECT_TRUE(same_buffers(truth, tool.launch));
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, TransparentReference,
                         testing::ValuesIn(corpus_cases([](const corpus::CorpusObject& o) {
                           return !o.fat_binary && !o.stripped;
                         })),
                         case_name);

// What the rewriter cannot make safe is refused, naming the reason.
TEST(RegisterReferenceRefusals, WhatCannotBeMadeSafeIsNamed) {
  const std::string processor = "gfx90a";
  const auto add = find(processor, "v_add_f32");
  ASSERT_TRUE(add);
  const std::string path = basic_object(processor);
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  try {
    rewrite(input, one_call(processor, PointKind::after_instruction, add->address, "keep_dword",
                            {reference("s100")}));
    ADD_FAILURE() << "s100 by reference was accepted";
  } catch (const Error& error) {
    EXPECT_NE(
        std::string(error.what()).find("register_reference s100: not one of the code's SGPRs"),
        std::string::npos)
        << error.what();
  }
  // A replaced branch would leave its block without its successors.
  const auto branch = find(processor, "s_cbranch_execz");
  ASSERT_TRUE(branch);
  Plan replace_branch = one_call(processor, PointKind::before_instruction, branch->address,
                                 "keep_dword", {reference("v1")});
  replace_branch.points[0].replace = true;
  try {
    rewrite(input, replace_branch);
    ADD_FAILURE() << "replacing a branch was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot replace the instruction at"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("it changes control flow"), std::string::npos)
        << error.what();
  }
  const auto refused = [](const char* json, const char* why) {
    try {
      parse_plan(nlohmann::json::parse(json), "plan.json");
      ADD_FAILURE() << json << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
    }
  };
  refused(R"({"points": [{"where": "block_entry", "call": {"probe": "p", "args": [
             {"kind": "register_reference", "name": "v1"},
             {"kind": "register_reference", "name": "v2"}]}}]})",
          "args[1]: a call passes at most one register_reference");
  refused(R"({"variables": [{"name": "x"}], "points": [{"where": "block_entry", "snippet":
             {"op": "store", "variable": "x", "value": {"kind": "register_reference",
              "name": "s0"}}}]})",
          "a snippet cannot change a register");
  refused(R"({"points": [{"where": "block_entry", "call": {"probe": "p", "args": [
             {"kind": "register_reference"}]}}]})",
          "missing 'name'");
  refused(R"({"points": [{"where": "after_instruction", "addresses": [16], "replace": true,
             "call": {"probe": "p"}}]})",
          "only a before_instruction probe call can replace its instruction");
}

}  // namespace
}  // namespace wavekit::rewrite
