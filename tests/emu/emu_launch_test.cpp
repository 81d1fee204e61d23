// Launch state (work-item ids packed on gfx90a/gfx942 and separate on gfx908, workgroup ids,
// EXEC of partial workgroups at the grid's edges, the dispatch packet), ground-truth records,
// MFMA block layout, and a 16,384-wave dispatch. References are computed here on the CPU.
#include <gtest/gtest.h>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

std::string launch_object(const std::string& target) {
  return std::string(WAVEKIT_EMU_TEST_OBJECTS) + "/launch_state_" + target + ".co";
}

// Runs launch_ids over `grid` with `block` and checks every work-item's record.
void check_launch_ids(const std::string& target, const std::uint32_t grid[3],
                      const std::uint32_t block[3], unsigned threads) {
  LoadedObject object(launch_object(target));
  std::uint64_t items = std::uint64_t(grid[0]) * grid[1] * grid[2];
  Buffer out(object.memory(), items * 8, "out");
  std::memset(out.as<void>(), 0xee, items * 8);
  DispatchOptions options;
  options.host_threads = threads;
  DispatchResult result = object.run("launch_ids", {out.address()}, grid, block, options);
  ASSERT_TRUE(result.ok()) << result.message;
  const std::uint32_t* records = out.as<std::uint32_t>();
  for (std::uint32_t z = 0; z < grid[2]; ++z) {
    for (std::uint32_t y = 0; y < grid[1]; ++y) {
      for (std::uint32_t x = 0; x < grid[0]; ++x) {
        std::uint64_t linear = (std::uint64_t(z) * grid[1] + y) * grid[0] + x;
        std::uint32_t local = (x % block[0]) | ((y % block[1]) << 10) | ((z % block[2]) << 20);
        std::uint32_t group = (x / block[0]) | ((y / block[1]) << 10) | ((z / block[2]) << 20);
        ASSERT_EQ(records[2 * linear], local) << target << " item " << x << "," << y << "," << z;
        ASSERT_EQ(records[2 * linear + 1], group)
            << target << " item " << x << "," << y << "," << z;
      }
    }
  }
  // Every wave that ran is reported once with the linear id formula of the ground truth.
  std::uint32_t groups[3];
  for (int d = 0; d < 3; ++d) groups[d] = (grid[d] + block[d] - 1) / block[d];
  std::uint32_t per_group = (block[0] * block[1] * block[2] + 63) / 64;
  EXPECT_EQ(result.waves_per_workgroup, per_group);
  std::uint64_t expected_waves = 0;
  for (std::uint32_t gz = 0; gz < groups[2]; ++gz)
    for (std::uint32_t gy = 0; gy < groups[1]; ++gy)
      for (std::uint32_t gx = 0; gx < groups[0]; ++gx) {
        std::uint64_t size = std::uint64_t(std::min(block[0], grid[0] - gx * block[0])) *
                             std::min(block[1], grid[1] - gy * block[1]) *
                             std::min(block[2], grid[2] - gz * block[2]);
        expected_waves += (size + 63) / 64;
      }
  ASSERT_EQ(result.waves.size(), expected_waves);
  for (const WaveRecord& wave : result.waves) {
    std::uint64_t flat = wave.workgroup[0] + std::uint64_t(wave.workgroup[1]) * groups[0] +
                         std::uint64_t(wave.workgroup[2]) * groups[0] * groups[1];
    ASSERT_EQ(wave.linear_wave_id, flat * per_group + wave.wave_in_workgroup);
    ASSERT_GT(wave.instructions, 0u);
  }
}

class LaunchState : public testing::TestWithParam<std::string> {};

TEST_P(LaunchState, PartialWorkgroupsIn3D) {
  const std::uint32_t grid[3] = {37, 11, 5}, block[3] = {8, 4, 3};
  check_launch_ids(GetParam(), grid, block, 2);
}

TEST_P(LaunchState, WorkgroupsOfSeveralWaves) {
  const std::uint32_t grid[3] = {300, 3, 1}, block[3] = {100, 2, 1};
  check_launch_ids(GetParam(), grid, block, 2);
}

// v_mfma_f32_4x4x1f32, 16 blocks: D[b][i][j] = A[b][i] * B[b][j] with A[b][i] in lane 4b + i,
// B[b][j] in lane 4b + j, D[b][i][j] in result register i of lane 4b + j (AMD's matrix
// instruction calculator). The kernel stores register k of lane l at out[l * 4 + k].
TEST_P(LaunchState, Mfma4x4x1Layout) {
  LoadedObject object(launch_object(GetParam()));
  const int waves = 2;
  Buffer a(object.memory(), waves * 64 * 4, "a"), b(object.memory(), waves * 64 * 4, "b"),
      out(object.memory(), waves * 256 * 4, "out");
  for (int i = 0; i < waves * 64; ++i) {
    a.as<float>()[i] = float(i % 13) - 6.0f;
    b.as<float>()[i] = 0.5f * float(i % 7) + 1.0f;
  }
  const std::uint32_t grid[3] = {64 * waves, 1, 1}, block[3] = {64, 1, 1};
  auto result = object.run("mfma_4x4", {a.address(), b.address(), out.address()}, grid, block);
  ASSERT_TRUE(result.ok()) << result.message;
  for (int w = 0; w < waves; ++w)
    for (int lane = 0; lane < 64; ++lane)
      for (int k = 0; k < 4; ++k) {
        int block_base = lane & ~3;
        float expected = a.as<float>()[w * 64 + block_base + k] * b.as<float>()[w * 64 + lane];
        ASSERT_EQ(out.as<float>()[w * 256 + lane * 4 + k], expected)
            << "wave " << w << " lane " << lane << " reg " << k;
      }
}

// The private segment works through scratch on every target, up to the most a gfx9 wave can
// have (COMPUTE_TMPRING_SIZE.WAVESIZE: 8,191 KiB, 131,056 bytes per work-item), reserved but
// backed only where touched; beyond it the dispatch is refused with the limit named, instead
// of allocating every resident wave's segment up front (16.8 GB for 16 MiB per lane).
TEST_P(LaunchState, PrivateSegmentUpToTheHardwareLimit) {
  LoadedObject object(launch_object(GetParam()));
  const std::uint32_t grid[3] = {256, 1, 1}, block[3] = {64, 1, 1};
  Buffer index(object.memory(), 256 * 4, "index"), out(object.memory(), 256 * 4, "out");
  for (std::uint32_t i = 0; i < 256; ++i) index.as<std::uint32_t>()[i] = (i * 37) % 256;
  const auto check = [&](const std::string& what) {
    std::memset(out.as<void>(), 0, 256 * 4);
    DispatchResult result =
        object.run("private_array", {index.address(), out.address()}, grid, block);
    ASSERT_TRUE(result.ok()) << what << ": " << result.message;
    for (std::uint32_t i = 0; i < 256; ++i)
      ASSERT_EQ(out.as<std::uint32_t>()[i], (i * 37) % 256 * 3 + i % 64) << what << " item " << i;
  };
  check("as compiled");
  std::uint8_t* descriptor = object.descriptor("private_array");
  std::uint32_t declared = 0;
  std::memcpy(&declared, descriptor + 4, 4);  // private_segment_fixed_size
  ASSERT_GT(declared, 1024u) << "the array is expected in scratch";
  const std::uint32_t most = 131056;
  std::memcpy(descriptor + 4, &most, 4);
  check("the most a wave can have");
  const std::uint32_t too_much = 16u << 20;
  std::memcpy(descriptor + 4, &too_much, 4);
  DispatchResult refused =
      object.run("private_array", {index.address(), out.address()}, grid, block);
  EXPECT_EQ(refused.error, ErrorKind::invalid_dispatch);
  EXPECT_NE(refused.message.find("needs 16777216 bytes of private (scratch) memory per "
                                 "work-item; a gfx9 wave has at most 8387584 bytes (131056 per "
                                 "work-item)"),
            std::string::npos)
      << refused.message;
}

INSTANTIATE_TEST_SUITE_P(Targets, LaunchState, testing::Values("gfx908", "gfx90a", "gfx942"));

TEST(Dispatch, SixteenThousandWavesComplete) {
  // 1,048,576 work-items in workgroups of 256: 4,096 workgroups of 4 waves.
  const std::uint32_t grid[3] = {1024, 1024, 1}, block[3] = {64, 4, 1};
  LoadedObject object(launch_object("gfx90a"));
  Buffer out(object.memory(), std::uint64_t(1024) * 1024 * 8, "out");
  DispatchOptions options;
  options.host_threads = 2;
  auto result = object.run("launch_ids", {out.address()}, grid, block, options);
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(result.total_waves, 16384u);
  const std::uint32_t* records = out.as<std::uint32_t>();
  for (std::uint32_t y = 0; y < 1024; ++y)
    for (std::uint32_t x = 0; x < 1024; ++x) {
      std::uint64_t linear = std::uint64_t(y) * 1024 + x;
      ASSERT_EQ(records[2 * linear], (x % 64) | ((y % 4) << 10));
      ASSERT_EQ(records[2 * linear + 1], (x / 64) | ((y / 4) << 10));
    }
}

TEST(Dispatch, BlockCountsAccountForEveryInstruction) {
  // Ground truth is self-consistent: the entry block runs once per wave, and the executed
  // instruction count is the sum over blocks of count x block length, with block lengths taken
  // from the code cache's own decode (block starts in increasing order).
  LoadedObject object(launch_object("gfx90a"));
  const std::uint32_t grid[3] = {37, 11, 5}, block[3] = {8, 4, 3};
  Buffer out(object.memory(), 37 * 11 * 5 * 8, "out");
  DispatchOptions options;
  options.record_block_counts = true;
  options.record_block_sequence = true;
  auto result = object.run("launch_ids", {out.address()}, grid, block, options);
  ASSERT_TRUE(result.ok()) << result.message;
  std::uint64_t entry = object.entry_vaddr("launch_ids");
  for (const WaveRecord& wave : result.waves) {
    ASSERT_FALSE(wave.block_counts.empty());
    EXPECT_EQ(wave.block_counts.front().first, entry);
    EXPECT_EQ(wave.block_counts.front().second, 1u);
    ASSERT_FALSE(wave.block_sequence.empty());
    EXPECT_EQ(wave.block_sequence.front(), entry);
    std::uint64_t entered = 0;
    for (const auto& [address, count] : wave.block_counts) entered += count;
    EXPECT_EQ(entered, wave.block_sequence.size());
  }
}

}  // namespace
}  // namespace wavekit::emu::test
