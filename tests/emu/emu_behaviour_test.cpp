// Memory ordering, faults and forward progress, on directed assembly kernels
// (asm/behaviour.s, assembled by clang-22 and linked by ld.lld-22 at build time).
#include <gtest/gtest.h>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

const std::string kBehaviour = WAVEKIT_EMU_TEST_OBJECTS "/behaviour_gfx90a.co";
const std::uint32_t kOneWave[3] = {64, 1, 1};

class Behaviour : public testing::Test {
 protected:
  LoadedObject object{kBehaviour};
  Buffer in{object.memory(), 64 * 4, "in"};
  Buffer out{object.memory(), 64 * 4, "out"};
  void SetUp() override {
    for (int i = 0; i < 64; ++i) in.as<std::uint32_t>()[i] = 1000 + 7 * i;
  }
};

TEST_F(Behaviour, LoadCompletesAtTheCoveringWaitcnt) {
  auto result = object.run("load_add_with_wait", {in.address(), out.address()}, kOneWave, kOneWave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out.as<std::uint32_t>()[i], 1000u + 7 * i + 1) << i;
}

TEST_F(Behaviour, MissingWaitcntReadsTheStaleRegister) {
  auto result =
      object.run("load_add_missing_wait", {in.address(), out.address()}, kOneWave, kOneWave);
  ASSERT_TRUE(result.ok()) << result.message;
  // The add ran before the load completed: it saw v2's launch value (0), not in[i].
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out.as<std::uint32_t>()[i], 1u) << i;
}

TEST_F(Behaviour, OutOfBoundsStoreIsAMemoryFault) {
  auto result =
      object.run("store_out_of_bounds", {in.address(), out.address()}, kOneWave, kOneWave);
  ASSERT_EQ(result.error, ErrorKind::memory_fault) << result.message;
  ASSERT_EQ(result.faults.size(), 1u);
  EXPECT_EQ(result.faults[0].address, out.address() + 0x40000000);
  EXPECT_EQ(result.faults[0].linear_wave_id, 0u);
  EXPECT_EQ(result.faults[0].instruction.rfind("global_store_dword", 0), 0u)
      << result.faults[0].instruction;
  EXPECT_NE(result.message.find("outside every allocation"), std::string::npos) << result.message;
}

// A wave's private segment is memory at a global address: what a lane stored through the
// private segment buffer, a GLOBAL load at the swizzled address reads back.
TEST_F(Behaviour, OwnPrivateSegmentIsReachableAtItsGlobalAddress) {
  auto result =
      object.run("private_at_global_address", {in.address(), out.address()}, kOneWave, kOneWave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out.as<std::uint32_t>()[i], 0x100u + i) << i;
}

TEST_F(Behaviour, GlobalLoadPastTheOwnPrivateSegmentIsAMemoryFault) {
  auto result =
      object.run("private_past_own_segment", {in.address(), out.address()}, kOneWave, kOneWave);
  ASSERT_EQ(result.error, ErrorKind::memory_fault) << result.message;
  EXPECT_NE(result.message.find("outside every allocation"), std::string::npos) << result.message;
}

TEST_F(Behaviour, TrapIsReportedWithItsPc) {
  auto result = object.run("trap_kernel", {}, kOneWave, kOneWave);
  ASSERT_EQ(result.error, ErrorKind::trap) << result.message;
  ASSERT_EQ(result.faults.size(), 1u);
  EXPECT_EQ(result.faults[0].pc, object.entry_vaddr("trap_kernel") + 4);
  EXPECT_EQ(result.faults[0].instruction, "s_trap 2");
}

TEST_F(Behaviour, IllegalInstructionIsReportedWithItsPc) {
  auto result = object.run("illegal_kernel", {}, kOneWave, kOneWave);
  ASSERT_EQ(result.error, ErrorKind::illegal_instruction) << result.message;
  ASSERT_EQ(result.faults.size(), 1u);
  EXPECT_EQ(result.faults[0].pc, object.entry_vaddr("illegal_kernel") + 4);
}

TEST_F(Behaviour, CrossWorkgroupSpinCompletesWhenBothAreResident) {
  const std::uint32_t grid[3] = {128, 1, 1};
  DispatchOptions options;
  options.max_resident_waves = 2;
  options.host_threads = 1;  // both workgroups interleave on one thread
  auto result =
      object.run("spin_on_other_workgroup", {in.address(), out.address()}, grid, kOneWave, options);
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(in.as<std::uint32_t>()[0], 1u);
}

TEST_F(Behaviour, ResidencyLimitTurnsCrossWorkgroupSpinIntoNoProgress) {
  in.as<std::uint32_t>()[0] = 0;
  const std::uint32_t grid[3] = {128, 1, 1};
  DispatchOptions options;
  options.max_resident_waves = 1;
  options.no_progress_instructions = 100000;
  options.no_progress_seconds = 0;
  auto result =
      object.run("spin_on_other_workgroup", {in.address(), out.address()}, grid, kOneWave, options);
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  ASSERT_EQ(result.faults.size(), 1u) << result.message;
  EXPECT_EQ(result.faults[0].linear_wave_id, 0u);
  // The waiting wave is inside its spin loop (after the entry's first five instructions).
  std::uint64_t entry = object.entry_vaddr("spin_on_other_workgroup");
  EXPECT_GT(result.faults[0].pc, entry);
  EXPECT_LT(result.faults[0].pc, entry + 0x40);
  EXPECT_EQ(result.faults[0].state, "spinning");
  // Workgroup 1, which would set the flag, is held back by the residency limit.
  EXPECT_EQ(result.workgroups_not_started, 1u);
  EXPECT_NE(result.message.find("1 workgroup(s) resident, 1 not started"), std::string::npos)
      << result.message;
}

// Three workgroups resident on three host threads (each worker holds one while it runs it), a
// fourth held back: the report lists every wave of every resident workgroup, in order, with
// where it stands: wave 0 spinning in its loop, wave 1 at the s_barrier it waits at.
TEST_F(Behaviour, NoProgressReportsEveryResidentWorkgroupAndWhereItsWavesWait) {
  in.as<std::uint32_t>()[0] = 0;
  const std::uint32_t grid[3] = {512, 1, 1};
  const std::uint32_t block[3] = {128, 1, 1};
  DispatchOptions options;
  options.max_resident_waves = 6;
  options.host_threads = 3;
  options.no_progress_instructions = 100000;
  options.no_progress_seconds = 0;
  auto result = object.run("spin_and_barrier", {in.address(), out.address()}, grid, block, options);
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  EXPECT_EQ(result.workgroups_not_started, 1u);
  ASSERT_EQ(result.faults.size(), 6u) << result.message;
  const std::uint64_t entry = object.entry_vaddr("spin_and_barrier");
  for (std::uint32_t group = 0; group < 3; ++group) {
    const WaveLocation& spinning = result.faults[2 * group];
    const WaveLocation& waiting = result.faults[2 * group + 1];
    EXPECT_EQ(spinning.workgroup[0], group);
    EXPECT_EQ(spinning.wave_in_workgroup, 0u);
    EXPECT_EQ(spinning.linear_wave_id, 2u * group);
    EXPECT_EQ(spinning.state, "spinning");
    // The spin loop is entry + 0x18 .. + 0x30, the s_barrier at + 0x30 (asm/behaviour.s).
    EXPECT_GE(spinning.pc, entry + 0x18);
    EXPECT_LT(spinning.pc, entry + 0x30);
    EXPECT_EQ(waiting.workgroup[0], group);
    EXPECT_EQ(waiting.wave_in_workgroup, 1u);
    EXPECT_EQ(waiting.state, "at s_barrier");
    EXPECT_EQ(waiting.pc, entry + 0x30);
    EXPECT_EQ(waiting.instruction, "s_barrier");
  }
  EXPECT_NE(result.message.find("3 workgroup(s) resident, 1 not started"), std::string::npos)
      << result.message;
}

// A stuck loop that writes memory on every pass makes progress as far as the emulator can tell,
// unless the memory is the instrumentation's own (MemoryMap::kToolMemory): then it is reported.
TEST_F(Behaviour, WritesIntoToolMemoryAreNotProgress) {
  in.as<std::uint32_t>()[0] = 0;
  DispatchOptions options;
  options.no_progress_instructions = 100000;
  options.no_progress_seconds = 0;
  ASSERT_TRUE(object.memory().mark_tool_memory(out.as<void>()));
  auto result =
      object.run("spin_writing", {in.address(), out.address()}, kOneWave, kOneWave, options);
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  EXPECT_EQ(out.as<std::uint32_t>()[5], 2u);  // the writes happened: store 1, then add 1
}

TEST_F(Behaviour, WritesIntoProgramMemoryAreProgress) {
  in.as<std::uint32_t>()[0] = 0;
  DispatchOptions options;
  options.no_progress_instructions = 100000;
  options.no_progress_seconds = 0;
  auto result =
      object.run("spin_writing", {in.address(), out.address()}, kOneWave, kOneWave, options);
  ASSERT_TRUE(result.ok()) << result.message;  // the loop ran out its 200,000 passes
  EXPECT_EQ(out.as<std::uint32_t>()[5], 2u);
}

// No-progress detection with the state check (DispatchOptions::no_progress_work_per_wave, the
// HSA runtime's default): loops whose state changes run on past no_progress_instructions, a wave
// that comes back to the same place in the same state is still reported there.
DispatchOptions long_loops_allowed(std::uint64_t per_wave = 1ull << 40) {
  DispatchOptions options;
  options.no_progress_instructions = 20000;
  options.no_progress_seconds = 0;
  options.no_progress_work_per_wave = per_wave;
  return options;
}

TEST_F(Behaviour, ALongLoopThatStoresOnlyAtItsEndIsNotAHang) {
  const std::uint32_t passes = 100000;
  in.as<std::uint32_t>()[0] = passes;
  const std::uint32_t grid[3] = {256, 1, 1};  // four workgroups of one wave, all resident
  auto result =
      object.run("long_loop", {in.address(), out.address()}, grid, kOneWave, long_loops_allowed());
  ASSERT_TRUE(result.ok()) << result.message;
  for (std::uint32_t lane = 0; lane < 64; ++lane) {
    std::uint32_t x = 0;
    for (std::uint32_t pass = 0; pass < passes; ++pass) x = 3 * x + lane;
    EXPECT_EQ(out.as<std::uint32_t>()[lane], x) << lane;
  }
  // Without the state check the same dispatch is taken for a hang.
  auto classic =
      object.run("long_loop", {in.address(), out.address()}, grid, kOneWave, long_loops_allowed(0));
  EXPECT_EQ(classic.error, ErrorKind::no_progress) << classic.message;
}

TEST_F(Behaviour, ASpinIsStillReportedWhenLongLoopsAreAllowed) {
  in.as<std::uint32_t>()[0] = 0;
  const std::uint32_t grid[3] = {128, 1, 1};
  DispatchOptions options = long_loops_allowed();
  options.max_resident_waves = 1;
  auto result =
      object.run("spin_on_other_workgroup", {in.address(), out.address()}, grid, kOneWave, options);
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  EXPECT_NE(result.message.find("in the same state: a spin"), std::string::npos) << result.message;
  ASSERT_EQ(result.faults.size(), 1u) << result.message;
  EXPECT_EQ(result.faults[0].state, "spinning");
  EXPECT_EQ(result.workgroups_not_started, 1u);
}

TEST_F(Behaviour, SpinningAndBarrierWavesAreStillReportedWhenLongLoopsAreAllowed) {
  in.as<std::uint32_t>()[0] = 0;
  const std::uint32_t grid[3] = {512, 1, 1};
  const std::uint32_t block[3] = {128, 1, 1};
  DispatchOptions options = long_loops_allowed();
  options.max_resident_waves = 6;
  options.host_threads = 3;
  auto result = object.run("spin_and_barrier", {in.address(), out.address()}, grid, block, options);
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  EXPECT_NE(result.message.find("a spin"), std::string::npos) << result.message;
  ASSERT_EQ(result.faults.size(), 6u) << result.message;
  for (std::uint32_t group = 0; group < 3; ++group) {
    EXPECT_EQ(result.faults[2 * group].state, "spinning");
    EXPECT_EQ(result.faults[2 * group + 1].state, "at s_barrier");
  }
}

// A wave that waits counting its tries never repeats its state: the work limit ends it, not
// before the resident waves ran that many instructions each.
TEST_F(Behaviour, ALoopCountingItsTriesIsReportedAtTheWorkLimit) {
  in.as<std::uint32_t>()[0] = 0;
  const std::uint64_t per_wave = 1u << 18;
  auto result = object.run("count_forever", {in.address(), out.address()}, kOneWave, kOneWave,
                           long_loops_allowed(per_wave));
  ASSERT_EQ(result.error, ErrorKind::no_progress) << result.message;
  EXPECT_EQ(result.message.find("a spin"), std::string::npos) << result.message;
  const std::string prefix = "the resident waves executed ";
  const std::size_t at = result.message.find(prefix);
  ASSERT_NE(at, std::string::npos) << result.message;
  EXPECT_GE(std::stoull(result.message.substr(at + prefix.size())), per_wave) << result.message;
}

// A wave waiting for time to pass reads the clock: that is progress (the clock moves).
TEST_F(Behaviour, ClockReadsAreProgress) {
  in.as<std::uint32_t>()[0] = 300000;
  DispatchOptions options = long_loops_allowed(0);  // no state check: the reads alone
  auto result =
      object.run("clock_wait", {in.address(), out.address()}, kOneWave, kOneWave, options);
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(out.as<std::uint32_t>()[0], 1u);
}

TEST_F(Behaviour, MarkingToolMemoryNeedsTheStartOfARange) {
  EXPECT_FALSE(object.memory().mark_tool_memory(out.as<std::uint8_t>() + 4));
}

TEST_F(Behaviour, ResidencyBelowOneWorkgroupIsAnInvalidDispatch) {
  const std::uint32_t block[3] = {256, 1, 1};
  DispatchOptions options;
  options.max_resident_waves = 2;
  auto result =
      object.run("load_add_with_wait", {in.address(), out.address()}, block, block, options);
  EXPECT_EQ(result.error, ErrorKind::invalid_dispatch);
  EXPECT_NE(result.message.find("max_resident_waves"), std::string::npos) << result.message;
}

}  // namespace
}  // namespace wavekit::emu::test
