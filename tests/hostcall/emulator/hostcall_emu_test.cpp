// The AMDGPU build of protocol.h on the emulator: 16,384 waves, far more than may be resident
// at once, each streaming lines to its own file through the ring and the file-egress service.
// Every file must be complete and in order. (Needs the emu and hsa parts, which come after
// hostcall; tests/hostcall/CMakeLists.txt defines this test once they are configured.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "emu_test_support.h"
#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"
#include "wavekit/hostcall/services.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;
namespace emu = wavekit::emu;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the kernel's wave `wave` writes: `calls` times "line:" and, per lane in lane order,
// 'a', the last digit of the lane's work-item id in its 256-wide group, ' '.
std::string expected_file(uint64_t wave, uint32_t calls) {
  std::string chunk = "line:";
  for (uint32_t lane = 0; lane < 64; ++lane) {
    const uint32_t item = static_cast<uint32_t>(wave % 4) * 64 + lane;
    chunk += 'a';
    chunk += static_cast<char>('0' + item % 10);
    chunk += ' ';
  }
  std::string all;
  for (uint32_t i = 0; i < calls; ++i) all += chunk;
  return all;
}

}  // namespace

TEST(hostcall, EmulatorSixteenThousandWavesStreamTheirOwnFiles) {
  emu::test::LoadedObject object(WAVEKIT_HOSTCALL_KERNELS);
  constexpr uint32_t kWaves = 16384, kCalls = 3, kResident = 512;
  const hc::RingConfig config{
      .slots = kResident, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64};
  hc::RingBuffer ring(config);
  // The emulated GPU may touch the ring (ticket line and slots) and the descriptor.
  const protocol::Ring& view = ring.descriptor();
  object.memory().add(view.ticket, 64 + hc::RingBuffer::bytes_for(config),
                      emu::MemoryMap::kReadWrite, "hostcall ring");
  emu::test::Buffer descriptor(object.memory(), sizeof(protocol::Ring), "hostcall descriptor");
  *descriptor.as<protocol::Ring>() = view;

  const auto root = std::filesystem::path(testing::TempDir()) / "hostcall_emu_files";
  std::filesystem::remove_all(root);
  hc::Runtime runtime(ring, {.service_threads = 2});
  hc::FileEgress egress(root);
  egress.register_services(runtime);
  runtime.start();
  const uint32_t grid[3] = {kWaves * 64, 1, 1};
  const uint32_t block[3] = {256, 1, 1};
  emu::DispatchOptions options;
  options.max_resident_waves = kResident;
  const emu::DispatchResult result =
      object.run("hostcall_wave_files", {descriptor.address(), kCalls}, grid, block, options);
  runtime.stop();
  ASSERT_TRUE(result.ok()) << emu::error_kind_name(result.error) << ": " << result.message;
  EXPECT_EQ(result.total_waves, kWaves);

  const hc::Statistics stats = runtime.statistics();
  EXPECT_EQ(stats.calls, uint64_t{kWaves} * (kCalls + 2));
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_EQ(egress.files_opened(), kWaves);
  EXPECT_EQ(egress.open_files(), 0u);
  uint64_t wrong = 0;
  for (uint64_t wave = 0; wave < kWaves; ++wave) {
    const std::string content = slurp(root / "waves" / ("wave-" + std::to_string(wave) + ".txt"));
    if (content != expected_file(wave, kCalls) && ++wrong <= 3)
      ADD_FAILURE() << "wave " << wave << " wrote '" << content.substr(0, 80) << "...'";
  }
  EXPECT_EQ(wrong, 0u);
  std::filesystem::remove_all(root);
}
