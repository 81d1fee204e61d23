// function_entry, function_return and after_instruction points over the whole corpus, on every
// target, stripped objects included: with inline snippets at every instruction and with probe
// calls (through a probe that has a stack of its own) at every block, the rewritten kernel's
// outputs must be bit-identical to the original's, and the counts must be what the emulator's
// ground truth for the original implies:
//   function returns = the calls the wave executed (the blocks that end in an s_swappc_b64, in
//   the kernel and in its functions, recursion included), counted once from the call blocks and
//   once from the blocks that end in a return; function entries = those calls plus the tail
//   calls (blocks that end in an s_setpc_b64 to a function: the callee is entered, and returns
//   for its caller);
//   after_instruction points = the executions of the blocks holding the chosen instructions, and
//   before_instruction points at the same instructions (now also inside functions) as many.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "corpus_runs.h"
#include "negative_controls.h"  // the rewriter's test-only seam (src/rewrite/src)
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

std::vector<Case> cases() {
  return corpus_cases([](const corpus::CorpusObject& o) { return !o.fat_binary; });
}

// The instructions an after_instruction point may follow (not a branch, return, tail call or
// s_endpgm).
bool falls_through(const InstructionView& inst) {
  return !inst.is_branch && !inst.is_return && !inst.is_tail_call && !inst.is_end;
}

// What the ground truth implies, per wave id.
struct Expected {
  std::uint64_t calls = 0;       // from the blocks that end in s_swappc_b64
  std::uint64_t tail_calls = 0;  // from the blocks that end in a tail call
  std::uint64_t returns = 0;     // from the blocks that end in a return
  std::uint64_t afters = 0;      // sum over the chosen instructions of their blocks' executions
};

enum class Where { every_instruction, first_of_block };

class FunctionPoints : public testing::TestWithParam<Case> {
 protected:
  // Rewrites with the points (snippets: `call` empty), runs both, compares outputs and counts.
  void check(Where where, const std::optional<ProbeCall>& call, const std::string& suffix) {
    const Case& c = GetParam();
    Mutator mutator = Mutator::open(read_file(c.path), c.path);
    const KernelView* kernel = mutator.kernel(c.kernel);
    ASSERT_NE(kernel, nullptr);
    // The chosen instructions: the kernel's own and those of the functions it reaches.
    std::vector<const BlockView*> blocks;
    for (const BlockView& block : kernel->blocks) blocks.push_back(&block);
    for (const FunctionView& function : mutator.functions()) {
      EXPECT_EQ(function.named, !c.object.ends_with("_stripped")) << function.name;
      if (std::find(kernel->relocated_callees.begin(), kernel->relocated_callees.end(),
                    function.entry) == kernel->relocated_callees.end())
        continue;
      EXPECT_TRUE(function.refusal.empty()) << function.refusal;
      for (const BlockView& block : function.blocks) blocks.push_back(&block);
    }
    // Optimised, call_chain reaches polynomial and mix, recursive_fib fibonacci, tail_call
    // shifted_scaled_sum and, through its tail call, scaled_sum (from the source; -O0 code also
    // calls helpers of the device library).
    const bool optimised = c.object.find("_O0_") == std::string::npos;
    if ((c.kernel == "call_chain" || c.kernel == "recursive_fib" || c.kernel == "tail_call") &&
        optimised)
      EXPECT_EQ(kernel->callees.size(), c.kernel == "recursive_fib" ? 1u : 2u);
    std::vector<std::uint64_t> addresses;
    std::map<std::uint64_t, std::uint64_t> per_block;  // block start -> chosen instructions
    std::vector<std::uint64_t> call_blocks, tail_call_blocks, return_blocks;
    for (const BlockView* block : blocks) {
      for (const InstructionView& inst : block->instructions) {
        if (!falls_through(inst) ||
            (where == Where::first_of_block && per_block.count(block->start)))
          continue;
        addresses.push_back(inst.address);
        ++per_block[block->start];
      }
      if (block->instructions.back().is_call) call_blocks.push_back(block->start);
      if (block->instructions.back().is_tail_call) tail_call_blocks.push_back(block->start);
      if (block->instructions.back().is_return) return_blocks.push_back(block->start);
    }

    Plan plan;
    plan.kernels = {c.kernel};
    const PointKind kinds[] = {PointKind::function_entry, PointKind::function_return,
                               PointKind::after_instruction, PointKind::before_instruction};
    if (call) {
      plan.probe_library =
          std::string(WAVEKIT_BLOCK_PROBES_DIR) + "/rewrite_block_probes." + c.processor + ".co";
      PerWaveVariable counts;
      counts.name = "counts";
      counts.count = 8;
      plan.variables.push_back(counts);
    }
    for (std::uint32_t k = 0; k < 4; ++k) {
      PointSpec point;
      point.where = kinds[k];
      if (k >= 2) point.addresses = addresses;
      if (call) {
        // count_block_deep(slot, counts, k): counts[2k] counts the point's executions.
        ProbeCall probe = *call;
        Argument counts, index;
        counts.kind = ArgumentKind::variable;
        counts.name = "counts";
        index.kind = ArgumentKind::constant;
        index.value = k;
        probe.args = {counts, index};
        point.call = probe;
      } else {
        PerWaveVariable counter;
        counter.name = "count" + std::to_string(k);
        plan.variables.push_back(counter);
        Snippet increment;
        increment.variable = counter.name;
        point.snippet = increment;
      }
      plan.points.push_back(point);
    }

    RewriteResult result;
    try {
      result = rewrite(mutator.object(), plan);
    } catch (const Error& error) {
      // Refusals this build knows about: kernels whose SGPRs leave no room for the reserved
      // block (-O0 wave_ops with calls), and AGPRs where the envelope needs VGPRs.
      const std::string message = error.what();
      if (message.find("SGPRs the instrumentation needs below") != std::string::npos ||
          message.find("keeps AGPRs") != std::string::npos)
        GTEST_SKIP() << message;
      FAIL() << message;
    }
    const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
    std::filesystem::create_directories(dir);
    const std::string out = (dir / (c.object + "." + c.kernel + suffix)).string();
    write_file(out, result.bytes);
    // Every written object re-read by LLVM's own tools.
    const Command readelf =
        run(std::string(WAVEKIT_LLVM_READELF) + " -h -l -S -n --dyn-syms " + out);
    ASSERT_EQ(readelf.status, 0) << readelf.output;
    const Command objdump = run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=" + c.processor +
                                " -j .wavekit.text " + out);
    ASSERT_EQ(objdump.status, 0) << objdump.output;
    EXPECT_EQ(objdump.output.find("<unknown>"), std::string::npos) << objdump.output;

    const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
    const std::vector<corpus::Argument> inputs = k.make_inputs(11);
    hsa::LaunchRequest original = request_for(k, inputs, c.path);
    original.record_block_counts = true;
    const hsa::LaunchOutcome truth = hsa::launch(original);
    ASSERT_TRUE(truth.ok) << truth.error;
    const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
    ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
    EXPECT_TRUE(same_buffers(truth, tool.launch));
    // Retry loops of compare-and-swap depend on how waves interleave (see bbcount_test.cpp).
    if (c.kernel == "global_atomics") return;

    std::map<std::uint64_t, Expected> expected;
    for (const nlohmann::json& wave : truth.block_trace["waves"]) {
      Expected& e = expected[wave["id"].get<std::uint64_t>()];
      for (const auto& [key, count] : wave["blocks"].items()) {
        const std::uint64_t start = std::stoull(key, nullptr, 16);
        const std::uint64_t n = count.get<std::uint64_t>();
        if (std::find(call_blocks.begin(), call_blocks.end(), start) != call_blocks.end())
          e.calls += n;
        if (std::find(tail_call_blocks.begin(), tail_call_blocks.end(), start) !=
            tail_call_blocks.end())
          e.tail_calls += n;
        if (std::find(return_blocks.begin(), return_blocks.end(), start) != return_blocks.end())
          e.returns += n;
        if (auto chosen = per_block.find(start); chosen != per_block.end())
          e.afters += n * chosen->second;
      }
    }
    const InstrumentedKernel* instrumented = result.note.find_kernel(c.kernel);
    ASSERT_NE(instrumented, nullptr);
    std::uint64_t total_calls = 0, total_tail_calls = 0;
    for (const WaveSlot& slot : read_arena(tool.arena, *instrumented)) {
      std::uint64_t got[4];
      for (std::size_t p = 0; p < 4; ++p)
        got[p] =
            call ? read_element(slot, *instrumented->layout.find("counts"), 2 * p)
                 : read_element(slot, *instrumented->layout.find("count" + std::to_string(p)), 0);
      const Expected& e = expected[slot.wave_id];
      EXPECT_EQ(got[0], e.calls + e.tail_calls) << "function entries, wave " << slot.wave_id;
      EXPECT_EQ(got[1], e.returns) << "function returns, wave " << slot.wave_id;
      EXPECT_EQ(got[2], e.afters) << "after_instruction points, wave " << slot.wave_id;
      EXPECT_EQ(got[3], e.afters) << "before_instruction points, wave " << slot.wave_id;
      total_calls += got[0];
      total_tail_calls += e.tail_calls;
    }
    if (c.kernel == "tail_call" && optimised) EXPECT_GT(total_tail_calls, 0u);
    // The corpus's calling kernels (call_chain, recursive_fib; at -O0 scratch_array too, for
    // the work-item id) make calls: the check above is not vacuous for them.
    if (c.object.starts_with("calls_") &&
        (c.kernel != "scratch_array" || c.object.find("_O0_") != std::string::npos))
      EXPECT_GT(total_calls, 0u);
  }
};

TEST_P(FunctionPoints, SnippetsCountLikeTheGroundTruth) {
  check(Where::every_instruction, std::nullopt, ".function_snippets.co");
}

TEST_P(FunctionPoints, ProbeCallsCountLikeTheGroundTruth) {
  ProbeCall call;
  call.probe = "count_block_deep";
  call.uniform = true;
  check(Where::first_of_block, call, ".function_calls.co");
}

INSTANTIATE_TEST_SUITE_P(Corpus, FunctionPoints, testing::ValuesIn(cases()), case_name);

// Negative control: the probe-call test above would notice an envelope inside a function that
// loses a register. At polynomial's and mix's returns the first VGPR the envelope restores is
// v0, the value the function returns, so dropping that restore must change the outputs.
TEST(FunctionPointControls, ADroppedRestoreInsideAFunctionIsNoticed) {
  for (const Case& c : cases()) {
    if (c.object != "calls_gfx942_O2_cov5" || c.kernel != "call_chain") continue;
    const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
    Plan plan;
    plan.kernels = {c.kernel};
    plan.probe_library =
        std::string(WAVEKIT_BLOCK_PROBES_DIR) + "/rewrite_block_probes." + c.processor + ".co";
    PerWaveVariable counts;
    counts.name = "counts";
    counts.count = 2;
    plan.variables.push_back(counts);
    ProbeCall call;
    call.probe = "count_block_deep";
    call.uniform = true;
    Argument base, index;
    base.kind = ArgumentKind::variable;
    base.name = "counts";
    index.kind = ArgumentKind::constant;
    call.args = {base, index};
    PointSpec point;
    point.where = PointKind::function_return;
    point.call = call;
    plan.points.push_back(point);
    NegativeControls broken;
    broken.test_skip_envelope_restore = true;
    const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
    std::filesystem::create_directories(dir);
    const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
    const std::vector<corpus::Argument> inputs = k.make_inputs(11);
    const hsa::LaunchOutcome truth = hsa::launch(request_for(k, inputs, c.path));
    ASSERT_TRUE(truth.ok) << truth.error;
    for (const bool skip : {false, true}) {
      const std::string out =
          (dir / (c.object + "." + c.kernel + (skip ? ".broken" : ".intact") + ".co")).string();
      write_file(out, rewrite(input, plan, skip ? broken : NegativeControls{}).bytes);
      const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
      const bool same = tool.launch.ok && same_buffers(truth, tool.launch);
      EXPECT_EQ(same, !skip) << (skip ? "the dropped restore went unnoticed" : tool.launch.error);
    }
    return;
  }
  FAIL() << "calls_gfx942_O2_cov5 call_chain is not in the corpus";
}

// An instruction point at an address where no instruction starts is refused, naming it.
TEST(FunctionPointRefusals, AnAddressInsideAnInstruction) {
  for (const Case& c : cases()) {
    if (c.object != "calls_gfx90a_O2_cov5" || c.kernel != "call_chain") continue;
    Mutator mutator = Mutator::open(read_file(c.path), c.path);
    const InstructionView& first = mutator.kernel(c.kernel)->blocks.front().instructions.front();
    Plan plan;
    PerWaveVariable counter;
    counter.name = "n";
    plan.variables.push_back(counter);
    PointSpec point;
    point.where = PointKind::before_instruction;
    point.addresses = {first.address + 2};
    Snippet increment;
    increment.variable = "n";
    point.snippet = increment;
    plan.points.push_back(point);
    try {
      rewrite(mutator.object(), plan);
      ADD_FAILURE() << "a point inside an instruction was accepted";
    } catch (const Error& error) {
      char address[24];
      std::snprintf(address, sizeof address, "0x%llx",
                    static_cast<unsigned long long>(first.address + 2));
      EXPECT_NE(std::string(error.what()).find(address), std::string::npos) << error.what();
    }
    return;
  }
  FAIL() << "calls_gfx90a_O2_cov5 call_chain is not in the corpus";
}

// An after_instruction point at a branch, a return or s_endpgm is refused, naming the place.
TEST(FunctionPointRefusals, AfterABranchOrTheEnd) {
  for (const Case& c : cases()) {
    if (c.object != "calls_gfx90a_O2_cov5" || c.kernel != "recursive_fib") continue;
    Mutator mutator = Mutator::open(read_file(c.path), c.path);
    std::vector<std::pair<std::uint64_t, bool>> control;  // address, in a function
    for (const BlockView& block : mutator.kernel(c.kernel)->blocks)
      if (!falls_through(block.instructions.back()))
        control.push_back({block.instructions.back().address, false});
    const FunctionView* fib = nullptr;
    for (const FunctionView& function : mutator.functions())
      if (function.name.find("fibonacci") != std::string::npos) fib = &function;
    ASSERT_NE(fib, nullptr);
    for (const BlockView& block : fib->blocks)
      if (block.instructions.back().is_return)
        control.push_back({block.instructions.back().address, true});
    ASSERT_GE(control.size(), 2u);
    for (const auto& [address, in_function] : control) {
      Plan plan;
      plan.kernels = {c.kernel};
      PerWaveVariable counter;
      counter.name = "n";
      plan.variables.push_back(counter);
      PointSpec point;
      point.where = PointKind::after_instruction;
      point.addresses = {address};
      Snippet increment;
      increment.variable = "n";
      point.snippet = increment;
      plan.points.push_back(point);
      try {
        rewrite(mutator.object(), plan);
        ADD_FAILURE() << "after_instruction at " << std::hex << address << " was accepted";
      } catch (const Error& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("recursive_fib"), std::string::npos) << message;
        EXPECT_NE(message.find("after_instruction point at"), std::string::npos) << message;
        if (in_function) EXPECT_NE(message.find("fibonacci"), std::string::npos) << message;
      }
    }
  }
}

}  // namespace
}  // namespace wavekit::rewrite
