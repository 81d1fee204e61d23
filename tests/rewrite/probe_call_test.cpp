// Probe calls at every block of every corpus kernel: a block counter made of uniform calls to a
// separately compiled probe (probes/block_probes.hip) must keep every output bit-identical and
// count what the emulator's ground truth counts, on every target. The envelope runs wherever a
// block starts, with whatever registers are live there, so this is its widest check.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "corpus_runs.h"
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

std::string block_probes(const std::string& processor) {
  return std::string(WAVEKIT_BLOCK_PROBES_DIR) + "/rewrite_block_probes." + processor + ".co";
}

// count_block(slot, &counts[0], point_id) at each block entry, called uniformly: with only these
// points in a one-kernel plan, the point ids are the block indices.
Plan block_call_plan(const std::string& kernel, std::size_t blocks, const std::string& processor) {
  Plan plan;
  plan.kernels = {kernel};
  plan.probe_library = block_probes(processor);
  PerWaveVariable counts;
  counts.name = "counts";
  counts.count = static_cast<std::uint32_t>(blocks);
  plan.variables.push_back(counts);
  ProbeCall call;
  call.probe = "count_block";
  call.uniform = true;
  Argument base;
  base.kind = ArgumentKind::variable;
  base.name = "counts";
  Argument block;
  block.kind = ArgumentKind::point_id;
  call.args = {base, block};
  PointSpec point;
  point.where = PointKind::block_entry;
  point.call = call;
  plan.points.push_back(point);
  return plan;
}

// The counts block_call_plan's probes left in the arena, in the --trace-blocks form.
nlohmann::json counts_report(const RewriteResult& result, const ToolLaunchOutcome& tool,
                             const std::string& kernel, const std::vector<ReachedBlock>& blocks) {
  const InstrumentedKernel* instrumented = result.note.find_kernel(kernel);
  if (!instrumented) return nullptr;
  const PlacedVariable* counts = instrumented->layout.find("counts");
  nlohmann::json waves = nlohmann::json::array();
  for (const WaveSlot& slot : read_arena(tool.arena, *instrumented)) {
    nlohmann::json counted = nlohmann::json::object();
    for (std::size_t b = 0; b < blocks.size(); ++b)
      if (const std::uint64_t count = read_element(slot, *counts, b))
        counted[block_key(blocks[b].block.start)] = count;
    waves.push_back(
        {{"id", slot.wave_id},
         {"workgroup", {slot.workgroup_id[0], slot.workgroup_id[1], slot.workgroup_id[2]}},
         {"wave_in_workgroup", slot.wave_in_workgroup},
         {"blocks", counted}});
  }
  return {{"kernel", kernel}, {"waves", waves}};
}

class BlockCalls : public testing::TestWithParam<Case> {};

TEST_P(BlockCalls, CountLikeTheGroundTruthAndKeepOutputs) {
  const Case& c = GetParam();
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  const std::vector<KernelView> views = analyse_kernels(input);
  const auto view = std::find_if(views.begin(), views.end(),
                                 [&](const KernelView& v) { return v.name == c.kernel; });
  ASSERT_NE(view, views.end());
  // The kernel's blocks and its callees' (relocated and instrumented with it), in point order.
  const std::vector<ReachedBlock> blocks = reached_blocks(input, *view);
  RewriteResult result;
  try {
    result = rewrite(input, block_call_plan(c.kernel, blocks.size(), c.processor));
  } catch (const Error& error) {
    // Refusals this build knows about: AGPRs where the envelope needs VGPRs, and SGPRs that
    // leave the envelope too few dead at a point (none in the corpus now).
    const std::string message = error.what();
    if (message.find("keeps AGPRs") != std::string::npos ||
        message.find("SGPRs the instrumentation needs below") != std::string::npos)
      GTEST_SKIP() << message;
    FAIL() << message;
  }
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (c.object + "." + c.kernel + ".block_calls.co")).string();
  write_file(out, result.bytes);
  const Command objdump = run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=" + c.processor +
                              " -j .wavekit.text " + out);
  ASSERT_EQ(objdump.status, 0) << objdump.output;
  EXPECT_EQ(objdump.output.find("<unknown>"), std::string::npos) << objdump.output;

  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(5);
  hsa::LaunchRequest original = request_for(k, inputs, c.path);
  original.record_block_counts = true;
  const hsa::LaunchOutcome truth = hsa::launch(original);
  ASSERT_TRUE(truth.ok) << truth.error;
  const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
  ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
  EXPECT_TRUE(same_buffers(truth, tool.launch));

  const nlohmann::json report = counts_report(result, tool, c.kernel, blocks);
  // Retry loops of compare-and-swap depend on how waves interleave (see bbcount_test.cpp).
  if (c.kernel != "global_atomics")
    EXPECT_EQ(report, truth.block_trace) << "calls:\n"
                                         << report.dump(1) << "\nground truth:\n"
                                         << truth.block_trace.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BlockCalls, testing::ValuesIn(cases()), case_name);

// tests/rewrite/asm/sgpr_pressure.s's kernels leave no block of SGPRs above their own, and too
// few unused ones for the envelope to keep its SGPRs for good: the reserved SGPRs come from those
// they never touch, and each call's exec, vcc, m0, spill-offset and target registers from SGPRs
// dead at its point; sgpr_pressure_tight's scratch resource too, loaded from the wave's slot;
// sgpr_pressure_live's loop has too few dead, and its envelopes borrow live SGPRs, kept in the
// lanes of a VGPR above the kernel's; sgpr_pressure_probe_reads leaves unused only SGPRs the
// probe reads but does not write, where the reserved SGPRs go. The counts are the ground
// truth's, the outputs the CPU arithmetic of the source's comment.
TEST(BlockCallsSgprPressure, EnvelopesTakeSgprsDeadAtTheirPoints) {
  const std::string path = WAVEKIT_SGPR_PRESSURE_OBJECT;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(path), path);
  const std::vector<KernelView> views = analyse_kernels(input);
  for (const auto& [kernel, low, high] :
       {std::tuple{"sgpr_pressure", 12400u, 11400u},
        {"sgpr_pressure_tight", 14500u, 13500u},
        {"sgpr_pressure_live", 13609u, 12609u},
        {"sgpr_pressure_probe_reads", 15070u, 14070u}}) {
    SCOPED_TRACE(kernel);
    const auto view = std::find_if(views.begin(), views.end(),
                                   [&](const KernelView& v) { return v.name == kernel; });
    ASSERT_NE(view, views.end());
    const std::vector<ReachedBlock> blocks = reached_blocks(input, *view);
    const RewriteResult result = rewrite(input, block_call_plan(kernel, blocks.size(), "gfx90a"));
    const std::string out = (std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) /
                             (std::string(kernel) + ".block_calls.co"))
                                .string();
    std::filesystem::create_directories(WAVEKIT_REWRITE_TEST_DIR);
    write_file(out, result.bytes);
    // The tight kernel's envelopes load the scratch resource; the other keeps it.
    const Command objdump =
        run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=gfx90a -j .wavekit.text " + out);
    ASSERT_EQ(objdump.status, 0) << objdump.output;
    EXPECT_EQ(objdump.output.find("s_load_dwordx4") != std::string::npos,
              std::string(kernel) == "sgpr_pressure_tight");
    // Only the kernels whose loop keeps everything live borrow (v_writelane into the lane VGPR,
    // v8: above their 8 VGPRs and the probe's; the envelope's own SGPR spills go to v0 and v1).
    EXPECT_EQ(objdump.output.find("v_writelane_b32 v8,") != std::string::npos,
              std::string(kernel) == "sgpr_pressure_live" ||
                  std::string(kernel) == "sgpr_pressure_probe_reads");

    hsa::LaunchRequest request;
    request.kernel = kernel;
    request.grid.size = {128, 1, 1};
    request.block.size = {128, 1, 1};
    request.arguments = {hsa::parse_argument("zeros:512"), hsa::parse_argument("u32:3")};
    const DirectedRuns runs = run_directed(request, path, out);
    ASSERT_TRUE(runs.truth.ok && runs.tool.launch.ok);
    expect_words(runs, 128, [&](unsigned item) { return item < 32 ? low : high; });
    EXPECT_EQ(counts_report(result, runs.tool, kernel, blocks), runs.truth.block_trace);
  }
}

// record_arguments' record (block_probes.hip's Seen).
struct Seen {
  std::uint64_t calls = 0, exec = 0, address = 0;
  std::uint32_t constant = 0, value = 0;
};
constexpr std::uint32_t kSeenSize = 32;

Seen seen_in(const WaveSlot& slot, const PlacedVariable& variable) {
  Seen seen;
  std::memcpy(&seen.calls, slot.bytes.data() + variable.offset, 8);
  std::memcpy(&seen.exec, slot.bytes.data() + variable.offset + 8, 8);
  std::memcpy(&seen.address, slot.bytes.data() + variable.offset + 16, 8);
  std::memcpy(&seen.constant, slot.bytes.data() + variable.offset + 24, 4);
  std::memcpy(&seen.value, slot.bytes.data() + variable.offset + 28, 4);
  return seen;
}

// record_arguments(slot, &seen, constant, original_address, exec, <register>) at `where`.
Plan recording_plan(const std::string& kernel, const std::string& processor,
                    std::vector<PointKind> where, bool uniform, std::uint32_t constant,
                    const std::string& register_name) {
  Plan plan;
  plan.kernels = {kernel};
  plan.probe_library = block_probes(processor);
  PerWaveVariable seen;
  seen.name = "seen";
  seen.element_size = kSeenSize;
  plan.variables.push_back(seen);
  ProbeCall call;
  call.probe = "record_arguments";
  call.uniform = uniform;
  Argument record, value, address, exec, reg;
  record.kind = ArgumentKind::variable;
  record.name = "seen";
  value.kind = ArgumentKind::constant;
  value.value = constant;
  address.kind = ArgumentKind::original_address;
  exec.kind = ArgumentKind::exec;
  reg.kind = ArgumentKind::register_value;
  reg.name = register_name;
  call.args = {record, value, address, exec, reg};
  for (PointKind kind : where) {
    PointSpec point;
    point.where = kind;
    point.call = call;
    plan.points.push_back(point);
  }
  return plan;
}

struct BothRuns {
  RewriteResult result;
  hsa::LaunchOutcome truth;
  ToolLaunchOutcome tool;
};

// Rewrites with `plan`, runs original (with block counts) and rewritten, and checks that the
// outputs are bit-identical. `outcome` stays empty when the test skipped (a refusal this build
// knows about) or failed.
void run_both(const Case& c, const Plan& plan, const std::string& suffix,
              std::optional<BothRuns>* outcome) {
  BothRuns run_result;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  try {
    run_result.result = rewrite(input, plan);
  } catch (const Error& error) {
    // A refusal this build knows about: -O0 wave_ops's SGPRs (see above).
    const std::string message = error.what();
    if (message.find("SGPRs the instrumentation needs below") != std::string::npos)
      GTEST_SKIP() << message;
    ADD_FAILURE() << message;
    return;
  }
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (c.object + "." + c.kernel + suffix)).string();
  write_file(out, run_result.result.bytes);
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(3);
  hsa::LaunchRequest original = request_for(k, inputs, c.path);
  original.record_block_counts = true;
  run_result.truth = hsa::launch(original);
  run_result.tool = launch_instrumented(request_for(k, inputs, out));
  EXPECT_TRUE(run_result.truth.ok) << run_result.truth.error;
  EXPECT_TRUE(run_result.tool.launch.ok) << run_result.tool.launch.error;
  if (!run_result.truth.ok || !run_result.tool.launch.ok) return;
  EXPECT_TRUE(same_buffers(run_result.truth, run_result.tool.launch));
  *outcome = std::move(run_result);
}

class EntryArguments : public testing::TestWithParam<Case> {};

// At kernel entry, per wave: one call, with the launch's EXEC (the lanes the workgroup fills),
// the kernel's entry address, the constant, and v0 = the first lane's work-item id x.
TEST_P(EntryArguments, AreTheValuesAtTheEntry) {
  const Case& c = GetParam();
  std::optional<BothRuns> run_result;
  run_both(c,
           recording_plan(c.kernel, c.processor, {PointKind::kernel_entry}, false, 0xc0ffee, "v0"),
           ".entry_args.co", &run_result);
  if (!run_result) return;
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  const InstrumentedKernel* instrumented = run_result->result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  const std::uint64_t size = k.block.count();
  std::size_t waves = 0;
  for (const WaveSlot& slot : read_arena(run_result->tool.arena, *instrumented)) {
    ++waves;
    const Seen seen = seen_in(slot, *instrumented->layout.find("seen"));
    const std::uint64_t first = std::uint64_t{slot.wave_in_workgroup} * 64;
    const std::uint64_t lanes = std::min<std::uint64_t>(64, size - first);
    EXPECT_EQ(seen.calls, 1u) << "wave " << slot.wave_id;
    EXPECT_EQ(seen.exec, lanes == 64 ? ~0ull : (1ull << lanes) - 1) << "wave " << slot.wave_id;
    EXPECT_EQ(seen.address, input.find_kernel(c.kernel)->entry_address);
    EXPECT_EQ(seen.constant, 0xc0ffeeu);
    // v0 as the original code sees it: x, or on gfx90a/gfx942 the packed x | y << 10 | z << 20
    // of the ids the original descriptor asks for.
    const std::uint64_t x = first % k.block.x, y = first / k.block.x % k.block.y,
                        z = first / (std::uint64_t{k.block.x} * k.block.y);
    const codeobj::KernelDescriptor& kd = input.find_kernel(c.kernel)->descriptor;
    std::uint64_t v0 = x;
    if (input.target().has_packed_work_item_ids()) {
      if (kd.enable_vgpr_workitem_id() >= 1) v0 |= y << 10;
      if (kd.enable_vgpr_workitem_id() >= 2) v0 |= z << 20;
    }
    EXPECT_EQ(seen.value, v0) << "wave " << slot.wave_id;
  }
  EXPECT_EQ(waves, run_result->truth.waves);
  // A custom plan's report lists the variables' bytes: `calls` (1) leads, little-endian.
  const nlohmann::json& report = run_result->tool.report;
  ASSERT_EQ(report["waves"].size(), waves);
  for (const nlohmann::json& wave : report["waves"])
    EXPECT_EQ(wave["variables"]["seen"][0].get<std::string>().substr(0, 16), "0100000000000000");
}

std::vector<Case> basic_cases() {
  std::vector<Case> basic;
  for (const Case& c : cases())
    if (c.object.rfind("basic_", 0) == 0 || c.object.rfind("grid_", 0) == 0) basic.push_back(c);
  return basic;
}
INSTANTIATE_TEST_SUITE_P(Corpus, EntryArguments, testing::ValuesIn(basic_cases()), case_name);

class MemoryCallExitPoints : public testing::TestWithParam<Case> {};

// Uniform calls before every memory instruction, every call and every s_endpgm: per wave, as
// many calls as the ground truth's block counts say those instructions ran, the last at one of
// them, with the constant.
TEST_P(MemoryCallExitPoints, RunAsOftenAsTheInstructions) {
  const Case& c = GetParam();
  std::optional<BothRuns> run_result;
  run_both(c,
           recording_plan(c.kernel, c.processor,
                          {PointKind::memory, PointKind::call_site, PointKind::kernel_exit}, true,
                          0x5eed, "s0"),
           ".memory_points.co", &run_result);
  if (!run_result) return;
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  const std::vector<KernelView> views = analyse_kernels(input);
  const auto view = std::find_if(views.begin(), views.end(),
                                 [&](const KernelView& v) { return v.name == c.kernel; });
  ASSERT_NE(view, views.end());
  // Memory and call_site points lie in the callees too (relocated with the kernel), so the
  // recursive calls inside fibonacci count.
  std::map<std::string, std::uint64_t> per_block;  // "0x<start>" -> points in the block
  std::set<std::uint64_t> point_addresses;
  for (const ReachedBlock& reached : reached_blocks(input, *view))
    for (const InstructionView& inst : reached.block.instructions)
      if (inst.memory || inst.is_call || (reached.in_kernel && inst.is_end)) {
        ++per_block[block_key(reached.block.start)];
        point_addresses.insert(inst.address);
      }
  const InstrumentedKernel* instrumented = run_result->result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  const std::vector<WaveSlot> slots = read_arena(run_result->tool.arena, *instrumented);
  const nlohmann::json& truth = run_result->truth.block_trace["waves"];
  ASSERT_EQ(slots.size(), truth.size());
  for (std::size_t w = 0; w < slots.size(); ++w) {
    std::uint64_t expected = 0;
    for (const auto& [key, count] : truth[w]["blocks"].items())
      if (per_block.count(key)) expected += per_block[key] * count.get<std::uint64_t>();
    const Seen seen = seen_in(slots[w], *instrumented->layout.find("seen"));
    if (c.kernel != "global_atomics") EXPECT_EQ(seen.calls, expected) << "wave " << w;
    EXPECT_EQ(seen.constant, 0x5eedu);
    EXPECT_TRUE(point_addresses.count(seen.address)) << std::hex << seen.address;
  }
}
INSTANTIATE_TEST_SUITE_P(Corpus, MemoryCallExitPoints, testing::ValuesIn(cases()), case_name);

class EffectiveAddresses : public testing::TestWithParam<Case> {};

// sum_loaded(slot, &sum, effective_address) before every GLOBAL / FLAT instruction: the probe
// dereferences each active lane's address, so a wrong one faults; outputs stay bit-identical.
// For vector_add (c[i] = a[i] + b[i], c zeroed) the sum over every wave is exactly the inputs'
// bits summed: the two loads read a[i] and b[i], the store's address still holds 0.
TEST_P(EffectiveAddresses, AreWhereTheInstructionsAccess) {
  const Case& c = GetParam();
  Plan plan;
  plan.kernels = {c.kernel};
  plan.probe_library = block_probes(c.processor);
  PerWaveVariable sum;
  sum.name = "sum";
  plan.variables.push_back(sum);
  ProbeCall call;
  call.probe = "sum_loaded";
  Argument target, address;
  target.kind = ArgumentKind::variable;
  target.name = "sum";
  address.kind = ArgumentKind::effective_address;
  call.args = {target, address};
  PointSpec point;
  point.where = PointKind::memory;
  point.memory_kinds = {MemoryKind::global, MemoryKind::flat};
  point.call = call;
  plan.points.push_back(point);
  std::optional<BothRuns> run_result;
  run_both(c, plan, ".addresses.co", &run_result);
  // At -O0 the kernel also reaches its locals through FLAT: only optimised code's accesses are
  // exactly a[i], b[i] and c[i].
  if (!run_result || c.kernel != "vector_add" || c.object.find("_O0_") != std::string::npos) return;
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(3);
  const std::uint32_t n = *inputs[3].data<std::uint32_t>();
  std::uint64_t expected = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    expected +=
        std::uint64_t{inputs[0].data<std::uint32_t>()[i]} + inputs[1].data<std::uint32_t>()[i];
  const InstrumentedKernel* instrumented = run_result->result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  std::uint64_t total = 0;
  for (const WaveSlot& slot : read_arena(run_result->tool.arena, *instrumented))
    total += read_element(slot, *instrumented->layout.find("sum"), 0);
  EXPECT_EQ(total, expected);
}
INSTANTIATE_TEST_SUITE_P(Corpus, EffectiveAddresses, testing::ValuesIn(cases()), case_name);

class StoreSnippets : public testing::TestWithParam<Case> {};

// Inline stores (no call): EXEC at kernel entry into an 8-byte variable, a constant at each
// s_endpgm into a 4-byte one; per wave the launch's EXEC and the constant.
TEST_P(StoreSnippets, StoreTheUniformValues) {
  const Case& c = GetParam();
  Plan plan;
  plan.kernels = {c.kernel};
  PerWaveVariable entry_exec, marker;
  entry_exec.name = "entry_exec";
  marker.name = "marker";
  marker.element_size = 4;
  plan.variables = {entry_exec, marker};
  Snippet store_exec, store_marker;
  store_exec.op = store_marker.op = SnippetOp::store;
  store_exec.variable = "entry_exec";
  store_exec.value = Argument{ArgumentKind::exec, 0, "", false};
  store_marker.variable = "marker";
  store_marker.value = Argument{ArgumentKind::constant, 0x600d, "", false};
  PointSpec at_entry, at_exit;
  at_entry.where = PointKind::kernel_entry;
  at_entry.snippet = store_exec;
  at_exit.where = PointKind::kernel_exit;
  at_exit.snippet = store_marker;
  plan.points = {at_entry, at_exit};
  std::optional<BothRuns> run_result;
  run_both(c, parse_plan(plan_to_json(plan), "store plan"), ".stores.co", &run_result);
  if (!run_result) return;
  const std::uint64_t size = corpus::kernel(c.kernel).block.count();
  const InstrumentedKernel* instrumented = run_result->result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  for (const WaveSlot& slot : read_arena(run_result->tool.arena, *instrumented)) {
    const std::uint64_t lanes =
        std::min<std::uint64_t>(64, size - std::uint64_t{slot.wave_in_workgroup} * 64);
    EXPECT_EQ(read_element(slot, *instrumented->layout.find("entry_exec"), 0),
              lanes == 64 ? ~0ull : (1ull << lanes) - 1)
        << "wave " << slot.wave_id;
    EXPECT_EQ(read_element(slot, *instrumented->layout.find("marker"), 0), 0x600du);
  }
}
INSTANTIATE_TEST_SUITE_P(Corpus, StoreSnippets, testing::ValuesIn(basic_cases()), case_name);

// block_probes.hip's chain, on the CPU.
std::uint32_t chain(std::uint32_t seed, std::uint32_t pick) {
  auto mix2 = [](std::uint32_t a, std::uint32_t b) { return (a * 31u) ^ (b + 17u); };
  const std::uint32_t first = mix2(seed, pick);
  return mix2(first, seed) + first;
}

class DeepBlockCalls : public testing::TestWithParam<Case> {};

// count_block_deep at every block: a probe whose callee keeps its frame in scratch, above the
// envelope's spill area. Counts as the ground truth, the callee's result as the CPU's,
// outputs unchanged.
TEST_P(DeepBlockCalls, UseTheirStackAndKeepTheKernels) {
  const Case& c = GetParam();
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  const std::vector<KernelView> views = analyse_kernels(input);
  const auto view = std::find_if(views.begin(), views.end(),
                                 [&](const KernelView& v) { return v.name == c.kernel; });
  ASSERT_NE(view, views.end());
  const std::vector<ReachedBlock> blocks = reached_blocks(input, *view);
  Plan plan = block_call_plan(c.kernel, 2 * blocks.size(), c.processor);
  plan.points[0].call->probe = "count_block_deep";
  std::optional<BothRuns> run_result;
  run_both(c, plan, ".deep_calls.co", &run_result);
  if (!run_result) return;
  const InstrumentedKernel* instrumented = run_result->result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  const PlacedVariable* counts = instrumented->layout.find("counts");
  const nlohmann::json& expected = run_result->truth.block_trace;
  const std::vector<WaveSlot> slots = read_arena(run_result->tool.arena, *instrumented);
  ASSERT_EQ(slots.size(), expected["waves"].size());
  for (std::size_t w = 0; w < slots.size(); ++w)
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::string key = block_key(blocks[b].block.start);
      const nlohmann::json& counted = expected["waves"][w]["blocks"];
      const std::uint64_t truth = counted.contains(key) ? counted[key].get<std::uint64_t>() : 0;
      EXPECT_EQ(read_element(slots[w], *counts, 2 * b), truth) << "wave " << w << " " << key;
      EXPECT_EQ(read_element(slots[w], *counts, 2 * b + 1),
                truth ? chain(static_cast<std::uint32_t>(b), 0) : 0)
          << "wave " << w << " " << key;
    }
}

std::vector<Case> deep_cases() {
  std::vector<Case> some;
  for (const Case& c : cases())
    if (c.object.rfind("calls_", 0) == 0 || c.object.rfind("basic_", 0) == 0) some.push_back(c);
  return some;
}
INSTANTIATE_TEST_SUITE_P(Corpus, DeepBlockCalls, testing::ValuesIn(deep_cases()), case_name);

}  // namespace
}  // namespace wavekit::rewrite
