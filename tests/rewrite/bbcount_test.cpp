// bbcount over the corpus, end to end on the emulator: rewrite, re-read the object with LLVM's
// tools, run original and rewritten, and compare (a) every output buffer, bit for bit, and
// (b) the tool's per-wave block counts with the emulator's own ground truth for the original,
// every block the waves ran, the callees' included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

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
  return corpus_cases([](const corpus::CorpusObject& o) { return !o.fat_binary && !o.stripped; });
}

// The emulator's block counts of the REWRITTEN run, translated to original addresses through
// the object's address map: a block that starts in inserted code stands for the original
// instruction it precedes, and where two rewritten blocks stand for the same instruction (the
// prologue, then the first block's counter), the later one is the block's own count.
// A block outside `relocated` ran at its original address, uninstrumented (a callee that was
// not relocated): it is kept as it is, so that the comparison with the tool fails.
nlohmann::json translate_trace(const nlohmann::json& trace, const RewriteNote& note,
                               const codeobj::Section& relocated) {
  nlohmann::json waves = nlohmann::json::array();
  for (const nlohmann::json& wave : trace["waves"]) {
    std::map<std::uint64_t, std::uint64_t> by_new_address, by_original;
    for (const auto& [key, count] : wave["blocks"].items()) {
      const std::uint64_t address = std::stoull(key, nullptr, 16);
      (relocated.contains_address(address) ? by_new_address : by_original)[address] =
          count.get<std::uint64_t>();
    }
    for (const auto& [address, count] : by_new_address)
      if (std::optional<std::uint64_t> original = note.original_instruction_at_or_after(address))
        by_original[*original] = count;
    nlohmann::json blocks = nlohmann::json::object();
    for (const auto& [address, count] : by_original) {
      char key[24];
      std::snprintf(key, sizeof key, "0x%llx", static_cast<unsigned long long>(address));
      blocks[key] = count;
    }
    nlohmann::json translated = wave;
    translated["blocks"] = blocks;
    waves.push_back(translated);
  }
  return {{"kernel", trace["kernel"]}, {"waves", waves}};
}

// Kernels whose block counts depend on how waves interleave (retry loops of compare-and-swap):
// the rewritten kernel runs more instructions, so its waves interleave differently and the
// original run's counts are not the ones to expect. Their outputs must still match, and the
// tool must still agree with the ground truth of its own run.
bool schedule_dependent(const std::string& kernel) { return kernel == "global_atomics"; }

class Bbcount : public testing::TestWithParam<Case> {};

TEST_P(Bbcount, MatchesGroundTruthAndKeepsOutputs) {
  const Case& c = GetParam();
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (c.object + "." + c.kernel + ".bbcount.co")).string();

  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  Plan plan = tool_plan("bbcount");
  plan.kernels = {c.kernel};
  RewriteResult result;
  try {
    result = rewrite(input, plan);
  } catch (const Error& error) {
    // Refusals must say why; the ones this build knows about are capabilities not done yet.
    const std::string message = error.what();
    if (message.find("not instrumented yet") != std::string::npos ||
        message.find("not supported yet") != std::string::npos)
      GTEST_SKIP() << message;
    FAIL() << message;
  }
  write_file(out, result.bytes);

  // Structure: LLVM's tools re-read it, and descriptor and notes agree.
  const Command readelf = run(std::string(WAVEKIT_LLVM_READELF) + " -S -l --notes -W " + out);
  ASSERT_EQ(readelf.status, 0) << readelf.output;
  EXPECT_EQ(readelf.output.find("warning"), std::string::npos) << readelf.output;
  EXPECT_NE(readelf.output.find("WAVEKIT"), std::string::npos) << readelf.output;
  const Command objdump = run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=" + c.processor +
                              " -j .wavekit.text " + out);
  ASSERT_EQ(objdump.status, 0) << objdump.output;
  EXPECT_EQ(objdump.output.find("<unknown>"), std::string::npos) << objdump.output;

  codeobj::CodeObject written = codeobj::CodeObject::parse(result.bytes, out);
  const codeobj::Kernel* kernel = written.find_kernel(c.kernel);
  ASSERT_NE(kernel, nullptr);
  const codeobj::Section* text = written.section(".wavekit.text");
  ASSERT_NE(text, nullptr);
  EXPECT_TRUE(text->contains_address(kernel->entry_address));
  std::optional<codeobj::KernelMetadata> meta = written.metadata().find_kernel(c.kernel);
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->kernarg_segment_size(), kernel->descriptor.kernarg_size);
  EXPECT_LE(meta->sgpr_count(), kernel->descriptor.sgpr_grant());
  const std::optional<RewriteNote> note = find_note(written);
  ASSERT_TRUE(note);
  const InstrumentedKernel* instrumented = note->find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  const std::vector<codeobj::KernelArg> args = meta->args();
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args.back().offset, instrumented->arena_arg_offset);
  EXPECT_EQ(args.back().size, 8u);

  // Behaviour: original (ground truth) vs rewritten (the tool's report).
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(7);
  hsa::LaunchRequest original = request_for(k, inputs, c.path);
  original.record_block_counts = true;
  const hsa::LaunchOutcome truth = hsa::launch(original);
  ASSERT_TRUE(truth.ok) << truth.error;
  hsa::LaunchRequest rewritten = request_for(k, inputs, out);
  rewritten.record_block_counts = true;
  const ToolLaunchOutcome tool = launch_instrumented(rewritten);
  ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
  EXPECT_TRUE(same_buffers(truth, tool.launch));
  EXPECT_GT(tool.report["waves"].size(), 0u);
  const nlohmann::json same_run = translate_trace(tool.launch.block_trace, *note, *text);
  EXPECT_EQ(tool.report, same_run) << "tool:\n"
                                   << tool.report.dump(1) << "\nground truth of the same run:\n"
                                   << same_run.dump(1);
  const KernelView* view = nullptr;
  const std::vector<KernelView> views = analyse_kernels(input);
  for (const KernelView& candidate : views)
    if (candidate.name == c.kernel) view = &candidate;
  ASSERT_NE(view, nullptr);
  // The whole ground truth: the blocks of the device functions the kernel calls are counted
  // too (they run as instrumented copies), under their original addresses.
  if (!schedule_dependent(c.kernel))
    EXPECT_EQ(tool.report, truth.block_trace) << "tool:\n"
                                              << tool.report.dump(1) << "\nground truth:\n"
                                              << truth.block_trace.dump(1);
  // Every callee's entry block is in the report (calls.hip: polynomial and mix for call_chain,
  // fibonacci, recursively, for recursive_fib).
  for (std::uint64_t callee : view->callees) {
    bool counted = false;
    for (const nlohmann::json& wave : tool.report["waves"])
      counted = counted || wave["blocks"].contains(block_key(callee));
    EXPECT_TRUE(counted) << "the entry block of the callee at " << block_key(callee)
                         << " is counted in no wave";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, Bbcount, testing::ValuesIn(cases()), case_name);

// Every kernel of an object rewritten at once, where several kernels reach the same device
// function (at -O0 the work-item id is a call): each kernel runs its own instrumented copy, with
// its own reserved SGPRs and block keys, and counts exactly the ground truth, callees included.
TEST(BbcountWholeObject, KernelsSharingACalleeEachCountTheirOwnCopy) {
  const corpus::CorpusObject* object = &corpus::object("basic_gfx90a_O0_cov5");
  const codeobj::CodeObject input =
      codeobj::CodeObject::parse(read_file(object->path), object->path);
  const std::vector<KernelView> views = analyse_kernels(input);
  std::map<std::uint64_t, std::size_t> reached_by;  // callee entry -> kernels reaching it
  for (const KernelView& view : views)
    for (std::uint64_t callee : view.callees) ++reached_by[callee];
  ASSERT_TRUE(std::any_of(reached_by.begin(), reached_by.end(),
                          [](const auto& entry) { return entry.second > 1; }))
      << "no device function of " << object->name << " is reached by two kernels";

  const RewriteResult result = rewrite(input, tool_plan("bbcount"));
  const std::string out =
      (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / (object->name + ".all.bbcount.co"))
          .string();
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  write_file(out, result.bytes);
  for (const KernelView& view : views) {
    const corpus::CorpusKernel& k = corpus::kernel(view.name);
    const std::vector<corpus::Argument> inputs = k.make_inputs(7);
    hsa::LaunchRequest original = request_for(k, inputs, object->path);
    original.record_block_counts = true;
    const hsa::LaunchOutcome truth = hsa::launch(original);
    ASSERT_TRUE(truth.ok) << truth.error;
    const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
    ASSERT_TRUE(tool.launch.ok) << view.name << ": " << tool.launch.error;
    EXPECT_TRUE(same_buffers(truth, tool.launch)) << view.name;
    EXPECT_EQ(tool.report, truth.block_trace) << view.name;
  }
}

// Branch relaxation: tests/rewrite/asm/long_branches.s's branches fit 16 bits in the original
// and not once bbcount's counters are in (a forward and a backward s_cbranch_scc1, an
// s_cbranch_execz, the taken-edge stubs' s_branch back). The instrumented kernel computes what the
// CPU arithmetic of the source's comment says, and counts the emulator's ground truth.
TEST(BbcountLongBranches, BranchesLeftOutOfRangeByInstrumentationBecomeLongJumps) {
  const std::string path = WAVEKIT_LONG_BRANCHES_OBJECT;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  const RewriteResult result = rewrite(input, tool_plan("bbcount"));
  EXPECT_GE(result.branches_relaxed, 3u);
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  const std::string out =
      (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / "long_branches.bbcount.co").string();
  write_file(out, result.bytes);
  const Command objdump =
      run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=gfx90a -j .wavekit.text " + out);
  ASSERT_EQ(objdump.status, 0) << objdump.output;
  EXPECT_EQ(objdump.output.find("<unknown>"), std::string::npos);
  EXPECT_NE(objdump.output.find("s_setpc_b64"), std::string::npos);

  hsa::LaunchRequest request;
  request.kernel = "long_branches";
  request.grid.size = {64, 1, 1};
  request.block.size = {64, 1, 1};
  request.arguments = {hsa::parse_argument("zeros:256"), hsa::parse_argument("u32:5")};
  const DirectedRuns runs = run_directed(request, path, out);
  ASSERT_TRUE(runs.truth.ok && runs.tool.launch.ok);
  expect_words(runs, 64, [](unsigned lane) { return lane < 32 ? 18000u : 17000u; });
  EXPECT_EQ(runs.tool.report, runs.truth.block_trace);
}

// tests/rewrite/asm/noreturn.s: a kernel that ends in a call to a function that never returns,
// the next function's code right after it, that function writing nearly every SGPR. The
// rewriter stops at the kernel's end, as the analysis does, and leaves the function out of the
// SGPRs it keeps clear: the instrumented kernel stores what the CPU says and counts the emulator's
// ground truth, and where it calls the function it traps as the original does.
TEST(BbcountNoReturn, ACallThatNeverReturnsEndsTheKernelsCode) {
  const std::string path = WAVEKIT_NORETURN_OBJECT;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  const RewriteResult result = rewrite(input, tool_plan("bbcount"));
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  const std::string out =
      (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / "noreturn.bbcount.co").string();
  write_file(out, result.bytes);
  for (const unsigned fail : {0u, 1u}) {
    SCOPED_TRACE("fail " + std::to_string(fail));
    hsa::LaunchRequest request;
    request.kernel = "noreturn_call";
    request.grid.size = {64, 1, 1};
    request.block.size = {64, 1, 1};
    request.arguments = {hsa::parse_argument("zeros:256"),
                         hsa::parse_argument("u32:" + std::to_string(fail))};
    if (fail) {
      hsa::LaunchRequest original = request;
      original.code_object = path;
      hsa::LaunchRequest rewritten = request;
      rewritten.code_object = out;
      for (const std::string& error :
           {hsa::launch(original).error, launch_instrumented(rewritten).launch.error})
        EXPECT_NE(error.find("s_trap 2"), std::string::npos) << error;
      continue;
    }
    const DirectedRuns runs = run_directed(request, path, out);
    ASSERT_TRUE(runs.truth.ok && runs.tool.launch.ok);
    expect_words(runs, 64, [](unsigned) { return 7u; });
    EXPECT_EQ(runs.tool.report, runs.truth.block_trace);
  }
}

// tests/rewrite/asm/sgpr_pressure.s's kernels leave no block of SGPRs above their own: the 8
// reserved SGPRs come from the SGPRs they never touch. The instrumented kernels compute what the
// CPU arithmetic of the source's comment says, and count the emulator's ground truth.
TEST(BbcountSgprPressure, AKernelWithoutRoomAboveGetsTheSgprsItNeverUses) {
  const std::string path = WAVEKIT_SGPR_PRESSURE_OBJECT;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  const RewriteResult result = rewrite(input, tool_plan("bbcount"));
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  const std::string out =
      (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / "sgpr_pressure.bbcount.co").string();
  write_file(out, result.bytes);
  for (const auto& [kernel, low, high] :
       {std::tuple{"sgpr_pressure", 12400u, 11400u}, {"sgpr_pressure_tight", 14500u, 13500u}}) {
    SCOPED_TRACE(kernel);
    hsa::LaunchRequest request;
    request.kernel = kernel;
    request.grid.size = {128, 1, 1};
    request.block.size = {128, 1, 1};
    request.arguments = {hsa::parse_argument("zeros:512"), hsa::parse_argument("u32:3")};
    const DirectedRuns runs = run_directed(request, path, out);
    ASSERT_TRUE(runs.truth.ok && runs.tool.launch.ok);
    expect_words(runs, 128, [&](unsigned item) { return item < 32 ? low : high; });
    EXPECT_EQ(runs.tool.report, runs.truth.block_trace);
  }
}

// The mutator API builds the same plan as the ready-made tool, and the engine is deterministic:
// the same input and plan give the same bytes (rewriting.md §1: offline and load-time rewrites
// must agree).
TEST(Mutator, BlockCounterIsBbcountAndDeterministic) {
  const corpus::CorpusObject* object = &corpus::object("basic_gfx90a_O2_cov5");
  Mutator mutator = Mutator::open(read_file(object->path), object->path);
  ASSERT_NE(mutator.kernel("branchy"), nullptr);
  EXPECT_GT(mutator.kernel("branchy")->blocks.size(), 4u);  // a four-way switch
  mutator.set_tool_name("bbcount");
  PerWaveVariable counts;
  counts.name = "block_counts";
  mutator.declare(counts);
  Snippet count;
  count.variable = "block_counts";
  count.indexed_by_block = true;
  PointSpec point;
  point.where = PointKind::block_entry;
  point.snippet = count;
  mutator.at(point);
  const RewriteResult built = mutator.write();
  const RewriteResult tool = rewrite(mutator.object(), tool_plan("bbcount"));
  EXPECT_TRUE(built.bytes == tool.bytes);
  EXPECT_TRUE(rewrite(mutator.object(), tool_plan("bbcount")).bytes == tool.bytes);
  // Its keys are the mutator's blocks.
  const InstrumentedKernel* kernel = tool.note.find_kernel("branchy");
  ASSERT_NE(kernel, nullptr);
  std::vector<std::uint64_t> starts;
  for (const BlockView& block : mutator.kernel("branchy")->blocks) starts.push_back(block.start);
  EXPECT_EQ(kernel->layout.find("block_counts")->variable.keys, starts);
}

// Instrumenting an instrumented object would nest tools (two WAVEKIT notes, two arena
// arguments): it is refused with the reason, naming the tool already in it.
TEST(Mutator, RefusesAnObjectWavekitAlreadyInstrumented) {
  const corpus::CorpusObject* object = &corpus::object("basic_gfx90a_O2_cov5");
  const RewriteResult once = rewrite(
      codeobj::CodeObject::parse(read_file(object->path), object->path), tool_plan("bbcount"));
  try {
    Mutator::open(once.bytes, "once.co");
    FAIL() << "an instrumented object was opened for rewriting";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "once.co: is already instrumented by wavekit (tool bbcount): rewrite the original "
              "object instead, or run this one as it is");
  }
}

// Negative control: without the prologue's moves of the shifted entry SGPRs, the kernel reads
// its kernarg pointer and workgroup id from the wrong registers. The checks above must notice.
TEST(BbcountNegativeControl, DroppingThePrologueSgprMovesIsDetected) {
  const corpus::CorpusObject* object = &corpus::object("basic_gfx90a_O2_cov5");
  const codeobj::CodeObject input =
      codeobj::CodeObject::parse(read_file(object->path), object->path);
  Plan plan = tool_plan("bbcount");
  plan.kernels = {"vector_add"};
  NegativeControls broken;
  broken.test_skip_prologue_sgpr_moves = true;
  const std::string out =
      (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / "vector_add.no_moves.co").string();
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  write_file(out, rewrite(input, plan, broken).bytes);

  const corpus::CorpusKernel& k = corpus::kernel("vector_add");
  const std::vector<corpus::Argument> inputs = k.make_inputs(7);
  hsa::LaunchRequest original = request_for(k, inputs, object->path);
  original.record_block_counts = true;
  const hsa::LaunchOutcome truth = hsa::launch(original);
  ASSERT_TRUE(truth.ok) << truth.error;
  const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
  const bool detected =
      !tool.launch.ok || tool.report != truth.block_trace || !same_buffers(truth, tool.launch);
  EXPECT_TRUE(detected) << "a rewrite without the prologue's SGPR moves went unnoticed";
}

// Negative control: at -O0, fibonacci calls itself through a target reloaded from a VGPR lane.
// Without the run-time translation of that target to the instrumented copy, the recursion runs
// the original fibonacci, whose blocks go uncounted: the outputs stay right, the counts do not.
TEST(BbcountNegativeControl, UntranslatedComputedCallTargetsAreDetected) {
  const corpus::CorpusObject* object = &corpus::object("calls_gfx90a_O0_cov5");
  const codeobj::CodeObject input =
      codeobj::CodeObject::parse(read_file(object->path), object->path);
  Plan plan = tool_plan("bbcount");
  plan.kernels = {"recursive_fib"};
  const corpus::CorpusKernel& k = corpus::kernel("recursive_fib");
  const std::vector<corpus::Argument> inputs = k.make_inputs(7);
  hsa::LaunchRequest original = request_for(k, inputs, object->path);
  original.record_block_counts = true;
  const hsa::LaunchOutcome truth = hsa::launch(original);
  ASSERT_TRUE(truth.ok) << truth.error;
  std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
  for (const bool skip : {false, true}) {
    NegativeControls options;
    options.test_skip_call_translation = skip;
    const std::string out =
        (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) /
         (skip ? "recursive_fib.untranslated.co" : "recursive_fib.translated.co"))
            .string();
    write_file(out, rewrite(input, plan, options).bytes);
    const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
    ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
    EXPECT_TRUE(same_buffers(truth, tool.launch));
    EXPECT_EQ(tool.report == truth.block_trace, !skip)
        << (skip ? "calls left untranslated went unnoticed" : "the translated calls miscount");
  }
}

// Edge counting (src/rewrite/src/flow.h) executes fewer counter updates than one per block,
// and exactly as many as the counters it leaves: counted by the emulator per instruction, each
// counter update found in llvm-objdump-22's disassembly of the rewritten code (an
// s_atomic_add_x2 without glc; the prologue's slot claim returns its value), against the sum of
// every wave's stored counters, and against the ground truth's block entries (the updates one
// counter per block would execute).
TEST(BbcountEdgeCounters, ExecuteOneUpdatePerCounterIncrementAndFewerThanBlocks) {
  struct Kernel {
    const char* object;
    const char* kernel;
  };
  for (const Kernel& c :
       {Kernel{"basic_gfx90a_O2_cov5", "collatz_steps"}, Kernel{"basic_gfx90a_O2_cov5", "branchy"},
        Kernel{"calls_gfx90a_O2_cov5", "recursive_fib"},
        Kernel{"calls_gfx90a_O0_cov5", "call_chain"},
        Kernel{"grid_gfx942_O3_cov5", "stencil_3d"}}) {
    SCOPED_TRACE(std::string(c.object) + " " + c.kernel);
    const corpus::CorpusObject& object = corpus::object(c.object);
    const codeobj::CodeObject input =
        codeobj::CodeObject::parse(read_file(object.path), object.path);
    Plan plan = tool_plan("bbcount");
    plan.kernels = {c.kernel};
    const RewriteResult result = rewrite(input, plan);
    std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
    const std::string out = (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) /
                             (object.name + "." + c.kernel + ".edges.co"))
                                .string();
    write_file(out, result.bytes);

    const Command objdump =
        run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=" + input.target().processor +
            " -j .wavekit.text " + out);
    ASSERT_EQ(objdump.status, 0) << objdump.output;
    std::set<std::uint64_t> updates;  // addresses of the counter updates
    std::istringstream lines(objdump.output);
    for (std::string line; std::getline(lines, line);) {
      const std::size_t comment = line.find("// ");
      if (line.find("s_atomic_add_x2") == std::string::npos ||
          line.find(" glc") != std::string::npos || comment == std::string::npos)
        continue;
      updates.insert(std::stoull(line.substr(comment + 3, line.find(':', comment) - comment - 3),
                                 nullptr, 16));
    }
    ASSERT_FALSE(updates.empty()) << objdump.output;

    const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
    const std::vector<corpus::Argument> inputs = k.make_inputs(7);
    hsa::LaunchRequest original = request_for(k, inputs, object.path);
    original.record_block_counts = true;
    const hsa::LaunchOutcome truth = hsa::launch(original);
    ASSERT_TRUE(truth.ok) << truth.error;
    hsa::LaunchRequest rewritten = request_for(k, inputs, out);
    rewritten.record_instruction_counts = true;
    const ToolLaunchOutcome tool = launch_instrumented(rewritten);
    ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
    EXPECT_EQ(tool.report, truth.block_trace);

    std::uint64_t executed = 0;
    for (const emu::InstructionCount& count : tool.launch.instruction_counts)
      if (updates.count(count.pc)) executed += count.executions;
    const InstrumentedKernel& kernel = *result.note.find_kernel(c.kernel);
    const PlacedVariable& counters = *kernel.layout.find("block_counts");
    ASSERT_TRUE(counters.variable.derived());
    std::uint64_t stored = 0;
    for (const WaveSlot& slot : read_arena(tool.arena, kernel))
      for (std::uint32_t i = 0; i < counters.variable.counters; ++i)
        stored += read_slot_field<std::uint64_t>(slot, counters.offset + 8 * i);
    std::uint64_t entered = 0;
    for (const nlohmann::json& wave : truth.block_trace["waves"])
      for (const auto& [block, count] : wave["blocks"].items())
        entered += count.get<std::uint64_t>();
    EXPECT_EQ(executed, stored);
    EXPECT_LT(executed, entered);
    std::printf("%s %s: %llu counter updates executed, %llu block entries\n", c.object, c.kernel,
                static_cast<unsigned long long>(executed),
                static_cast<unsigned long long>(entered));
  }
}

}  // namespace
}  // namespace wavekit::rewrite
