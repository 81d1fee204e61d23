// effective_address arguments for every memory kind (FLAT, GLOBAL, SCRATCH, LDS, SMEM, MUBUF)
// against the emulator's own memory trace (`wavekit launch --trace-memory`, recorded where the
// emulator computes the addresses it accesses): a probe logs, per wave, every memory
// instruction the kernel executes with each executing lane's address, and the log must equal
// the trace of the relocated instructions in the same run, record by record and lane by lane
// (buffers lie elsewhere in another run), on every target. The rewritten run's trace must also
// execute the original run's memory instructions in the same order under the same EXEC.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "corpus_runs.h"
#include "negative_controls.h"  // the rewriter's test-only seam (src/rewrite/src)
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/isa/isa.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite {
namespace {

// block_probes.hip's AddressLog.
constexpr std::uint64_t kAddressLogRecords = 160;
constexpr std::uint64_t kRecordWords = 2 + 64;  // pc, exec, addresses[64]

std::string block_probes(const std::string& processor) {
  return std::string(WAVEKIT_BLOCK_PROBES_DIR) + "/rewrite_block_probes." + processor + ".co";
}

// The kinds the other corpus sources leave out are in addressing.hip; lds.hip has DS, every
// kernel SMEM and GLOBAL, basic at -O0 FLAT into private memory.
std::vector<Case> cases() {
  return corpus_cases([](const corpus::CorpusObject& o) {
    return !o.fat_binary && !o.stripped &&
           (o.source == "addressing" || o.source == "lds" || o.source == "basic");
  });
}

std::uint64_t number(const nlohmann::json& text) {
  return std::stoull(text.get<std::string>(), nullptr, 16);
}

// log_address(slot, &log, original_address, exec, effective_address) before `addresses`.
PointSpec log_point(const std::vector<std::uint64_t>& addresses, bool uniform) {
  ProbeCall call;
  call.probe = "log_address";
  call.uniform = uniform;
  Argument log, pc, exec, address;
  log.kind = ArgumentKind::variable;
  log.name = "log";
  pc.kind = ArgumentKind::original_address;
  exec.kind = ArgumentKind::exec;
  address.kind = ArgumentKind::effective_address;
  call.args = {log, pc, exec, address};
  PointSpec point;
  point.where = PointKind::before_instruction;
  point.addresses = addresses;
  point.call = call;
  return point;
}

// Rewrites `c` with a log_address call before every memory instruction the kernel executes,
// runs it, checks what must hold whatever the addresses (outputs bit-identical, the same
// instructions under the same EXEC), and lists in `mismatches` each logged address that differs
// from the trace's.
void compare_with_trace(const Case& c, const NegativeControls& options,
                        std::vector<std::string>* mismatches) {
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  const std::vector<KernelView> views = analyse_kernels(input);
  const auto view = std::find_if(views.begin(), views.end(),
                                 [&](const KernelView& v) { return v.name == c.kernel; });
  ASSERT_NE(view, views.end());
  const std::uint64_t begin = view->entry, end = view->blocks.back().end;

  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(7);
  hsa::LaunchRequest original = request_for(k, inputs, c.path);
  original.record_memory_accesses = true;
  const hsa::LaunchOutcome truth = hsa::launch(original);
  ASSERT_TRUE(truth.ok) << truth.error;

  // The memory instructions the kernel's own code executed (its callees stay unrelocated).
  const isa::Decoder decoder(c.processor);
  std::map<std::uint64_t, isa::Instruction> executed;
  for (const nlohmann::json& wave : truth.memory_trace.at("waves"))
    for (const nlohmann::json& access : wave.at("accesses")) {
      const std::uint64_t pc = number(access.at("pc"));
      if (pc < begin || pc >= end || executed.count(pc)) continue;
      const std::optional<isa::Instruction> inst = decoder.decode(input.read(pc, 8), pc);
      ASSERT_TRUE(inst) << std::hex << pc;
      ASSERT_NE(inst->memory, isa::MemoryKind::none) << inst->text;
      EXPECT_EQ(access.at("kind").get<std::string>(), isa::to_string(inst->memory)) << inst->text;
      executed.emplace(pc, *inst);
    }
  ASSERT_FALSE(executed.empty());
  std::vector<std::uint64_t> scalar_points, vector_points;
  std::set<std::uint64_t> logged;
  for (const auto& [pc, inst] : executed) {
    // A scalar access happens whatever EXEC is: its probe call is uniform, and every lane holds
    // the one address.
    (inst.memory == isa::MemoryKind::scalar ? scalar_points : vector_points).push_back(pc);
    logged.insert(pc);
  }

  Plan plan;
  plan.kernels = {c.kernel};
  plan.probe_library = block_probes(c.processor);
  PerWaveVariable log;
  log.name = "log";
  log.count = static_cast<std::uint32_t>(1 + kAddressLogRecords * kRecordWords);
  plan.variables.push_back(log);
  if (!scalar_points.empty()) plan.points.push_back(log_point(scalar_points, true));
  if (!vector_points.empty()) plan.points.push_back(log_point(vector_points, false));
  RewriteResult result;
  try {
    result = rewrite(input, plan, options);
  } catch (const Error& error) {
    const std::string message = error.what();
    // -O0 kernels whose SGPRs reach too high for the call envelope's reserved block.
    if (message.find("SGPRs the instrumentation needs below") != std::string::npos)
      GTEST_SKIP() << message;
    FAIL() << message;
  }
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (c.object + "." + c.kernel + ".addresses.co")).string();
  write_file(out, result.bytes);
  hsa::LaunchRequest request = request_for(k, inputs, out);
  request.record_memory_accesses = true;
  const ToolLaunchOutcome tool = launch_instrumented(request);
  ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
  EXPECT_TRUE(same_buffers(truth, tool.launch));

  // Per wave, the trace's records of the logged instructions, in order. In the rewritten run
  // they are the relocated copies (mapped back to original addresses); the envelope's own
  // accesses lie outside the address map, the probe's in the library. A vector access under
  // EXEC = 0 touches nothing and its probe call stores nothing.
  struct Access {
    std::uint64_t pc = 0, exec = 0;
    std::string kind;
    std::vector<std::uint64_t> addresses;
  };
  const auto accesses_of = [&](const nlohmann::json& trace, const std::string& object,
                               const RewriteNote* note) {
    std::map<std::uint64_t, std::vector<Access>> waves;
    for (const nlohmann::json& wave : trace.at("waves")) {
      std::vector<Access>& kept = waves[wave.at("id").get<std::uint64_t>()];
      for (const nlohmann::json& access : wave.at("accesses")) {
        if (access.at("object") != object) continue;
        std::optional<std::uint64_t> pc = number(access.at("pc"));
        if (note) pc = note->original_address(*pc);
        if (!pc || !logged.count(*pc)) continue;
        Access a{*pc, number(access.at("exec")), access.at("kind").get<std::string>(), {}};
        if (a.kind != "scalar" && a.exec == 0) continue;
        for (const nlohmann::json& address : access.at("addresses"))
          a.addresses.push_back(number(address));
        kept.push_back(std::move(a));
      }
    }
    return waves;
  };
  const auto original_accesses = accesses_of(truth.memory_trace, c.path, nullptr);
  const auto rewritten_accesses = accesses_of(tool.launch.memory_trace, out, &result.note);
  ASSERT_EQ(rewritten_accesses.size(), original_accesses.size());
  // The rewritten kernel executes the same memory instructions under the same EXEC; LDS and
  // private addresses do not depend on where the launch put its buffers.
  for (const auto& [wave, accesses] : original_accesses) {
    const std::vector<Access>& rewritten = rewritten_accesses.at(wave);
    ASSERT_EQ(rewritten.size(), accesses.size()) << "wave " << wave;
    for (std::size_t r = 0; r < accesses.size(); ++r) {
      ASSERT_EQ(rewritten[r].pc, accesses[r].pc) << "wave " << wave << " record " << r;
      ASSERT_EQ(rewritten[r].exec, accesses[r].exec) << "wave " << wave << " record " << r;
      if (accesses[r].kind == "lds" || accesses[r].kind == "scratch")
        EXPECT_EQ(rewritten[r].addresses, accesses[r].addresses)
            << "wave " << wave << " record " << r;
    }
  }

  const InstrumentedKernel* instrumented = result.note.find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  const PlacedVariable* placed = instrumented->layout.find("log");
  ASSERT_NE(placed, nullptr);
  std::uint64_t compared = 0;
  for (const WaveSlot& slot : read_arena(tool.arena, *instrumented)) {
    const auto word = [&](std::uint64_t index) { return read_element(slot, *placed, index); };
    ASSERT_TRUE(rewritten_accesses.count(slot.wave_id)) << "wave " << slot.wave_id;
    const std::vector<Access>& expected = rewritten_accesses.at(slot.wave_id);
    ASSERT_EQ(word(0), expected.size()) << "wave " << slot.wave_id << ": calls";
    for (std::size_t r = 0; r < expected.size() && r < kAddressLogRecords; ++r) {
      const Access& access = expected[r];
      const std::uint64_t at = 1 + r * kRecordWords;
      const std::string where = "wave " + std::to_string(slot.wave_id) + " record " +
                                std::to_string(r) + " '" + executed.at(access.pc).text + "'";
      ASSERT_EQ(word(at), access.pc) << where;
      const auto compare = [&](std::uint64_t logged_address, std::uint64_t traced, unsigned lane) {
        if (logged_address != traced)
          mismatches->push_back(where + " lane " + std::to_string(lane) + ": logged " +
                                hex(logged_address) + ", traced " + hex(traced));
      };
      if (access.kind == "scalar") {
        ASSERT_EQ(access.addresses.size(), 1u) << where;
        compare(word(at + 2), access.addresses[0], 0);
        ++compared;
        continue;
      }
      ASSERT_EQ(word(at + 1), access.exec) << where;
      std::size_t next = 0;
      for (unsigned lane = 0; lane < 64; ++lane)
        if ((access.exec >> lane) & 1)
          compare(word(at + 2 + lane), access.addresses.at(next++), lane);
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u);
}

class EffectiveAddressTrace : public testing::TestWithParam<Case> {};

TEST_P(EffectiveAddressTrace, EqualsTheEmulatorsMemoryTrace) {
  std::vector<std::string> mismatches;
  compare_with_trace(GetParam(), {}, &mismatches);
  for (std::size_t i = 0; i < mismatches.size() && i < 20; ++i) ADD_FAILURE() << mismatches[i];
  EXPECT_TRUE(mismatches.empty()) << mismatches.size() << " addresses differ";
}

INSTANTIATE_TEST_SUITE_P(Corpus, EffectiveAddressTrace, testing::ValuesIn(cases()), case_name);

// Negative control: the stack and spill accesses of gfx908/gfx90a code go through the private
// segment buffer, a swizzled V# (element size 4, index stride 64, ADD_TID); decoding its
// element size and index stride fields wrongly must make the logged addresses differ from the
// trace (and nothing else: outputs and the executed instructions stay the same).
TEST(EffectiveAddressNegativeControl, MisdecodedSwizzleFieldsAreDetected) {
  std::size_t checked = 0;
  for (const Case& c : cases()) {
    if (c.kernel != "address_kinds" || c.processor == "gfx942") continue;
    NegativeControls broken;
    broken.test_misdecode_swizzle = true;
    std::vector<std::string> mismatches;
    compare_with_trace(c, broken, &mismatches);
    if (HasFatalFailure()) return;
    EXPECT_FALSE(mismatches.empty()) << c.object << ": the misdecoded V# went unnoticed";
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

}  // namespace
}  // namespace wavekit::rewrite
