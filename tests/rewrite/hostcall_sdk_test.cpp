// The probe SDK's hostcall client (wavekit/probe/hostcall.h) on the emulator: probe libraries
// built the real way (cmake/ProbeLibrary.cmake, `wavekit probe-lib`) define the ring variable;
// hsa::launch (under `wavekit launch` and rewrite::launch_instrumented) must find it, run the
// service and store the ring's address there. The oracle is the text the probes must produce,
// spelled out here from the probes' definition (tests/rewrite/probes/hostcall_probes.hip).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "wavekit/hsa/launch.h"
#include "wavekit/support/error.h"

namespace hsa = wavekit::hsa;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string library(const std::string& target) {
  return std::string(WAVEKIT_HOSTCALL_PROBES_DIR) + "/rewrite_hostcall_probes_" + target + ".co";
}

// The arena the kernels' stand-in prologue uses: a 64-byte header, then 128 bytes per wave.
hsa::ArgumentSpec arena(uint64_t waves) {
  return hsa::parse_argument("zeros:" + std::to_string(64 + 128 * waves));
}

hsa::LaunchRequest request_for(const std::string& target, const std::string& kernel,
                               uint32_t waves) {
  hsa::LaunchRequest request;
  request.code_object = library(target);
  request.kernel = kernel;
  request.grid = hsa::parse_dimensions("--grid", std::to_string(waves * 64));
  request.block = hsa::parse_dimensions("--block", "256");
  request.arguments.push_back(arena(waves));
  return request;
}

// trace_value(i) for i < lines, every lane active: "v<i>:" then "00,01,...,63,".
std::string expected_trace(uint32_t lines) {
  std::string line;
  for (uint32_t lane = 0; lane < 64; ++lane) {
    line += static_cast<char>('0' + lane / 10);
    line += static_cast<char>('0' + lane % 10);
    line += ',';
  }
  std::string all;
  for (uint32_t i = 0; i < lines; ++i) all += "v" + std::to_string(i % 10) + ":" + line;
  return all;
}

class HostcallSdk : public testing::TestWithParam<const char*> {};

}  // namespace

// 2,048 waves, 128 resident, each opening its own file through the probe's ring, writing 3
// lines of all 64 lanes' bytes and closing it (10,240 calls).
TEST_P(HostcallSdk, EveryWaveStreamsItsOwnFile) {
  constexpr uint32_t kWaves = 2048, kLines = 3;
  const auto root =
      std::filesystem::path(testing::TempDir()) / (std::string("hostcall_sdk_files_") + GetParam());
  std::filesystem::remove_all(root);
  hsa::LaunchRequest request = request_for(GetParam(), "drive_wave_files", kWaves);
  request.arguments.push_back(hsa::parse_argument("u32:" + std::to_string(kLines)));
  request.hostcall_file_root = root.string();
  request.max_resident_waves = 128;
  const hsa::LaunchOutcome outcome = hsa::launch(request);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  ASSERT_TRUE(outcome.hostcall.has_value());
  EXPECT_EQ(outcome.hostcall->calls, uint64_t{kWaves} * (kLines + 2));
  EXPECT_EQ(outcome.hostcall->failed, 0u);
  uint64_t wrong = 0;
  for (uint32_t wave = 0; wave < kWaves; ++wave) {
    const std::string text = slurp(root / "trace" / ("wave-" + std::to_string(wave) + ".txt"));
    if (text != expected_trace(kLines) && ++wrong <= 3)
      ADD_FAILURE() << "wave " << wave << ": '" << text.substr(0, 80) << "...'";
  }
  EXPECT_EQ(wrong, 0u);
  std::filesystem::remove_all(root);
}

// Diverged waves print: one request per wave, each active lane's line, in lane order, waves
// never interleaved.
TEST_P(HostcallSdk, PrintFromDivergedWaves) {
  constexpr uint32_t kWaves = 8;
  testing::internal::CaptureStdout();
  const hsa::LaunchOutcome outcome = hsa::launch(request_for(GetParam(), "drive_print", kWaves));
  const std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(outcome.ok) << outcome.error;
  ASSERT_TRUE(outcome.hostcall.has_value());
  EXPECT_EQ(outcome.hostcall->calls, kWaves);
  // Waves reach the host in any order; each wave's block of lines is whole and in lane order.
  std::istringstream lines(printed);
  std::string line;
  uint32_t count = 0;
  std::vector<int> seen(kWaves, 0);
  while (std::getline(lines, line)) {
    unsigned wave = 0, lane = 0, value = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "wave %u lane %u value %u", &wave, &lane, &value), 3)
        << line;
    ASSERT_LT(wave, kWaves);
    const uint32_t item = (wave % 4) * 64 + lane;  // the work-item id in its 256-wide group
    const uint32_t index_in_wave = seen[wave]++;
    EXPECT_EQ(lane, (index_in_wave / 2) * 4 + 2 + index_in_wave % 2) << line;
    EXPECT_TRUE(item & 2) << line;
    EXPECT_EQ(value, 7u);
    ++count;
  }
  EXPECT_EQ(count, kWaves * 32);
}

// How launchers find the ring: an 8-byte STT_OBJECT named wavekit_hostcall_ring among the
// library's dynamic symbols, as llvm-readelf-22 lists them.
TEST_P(HostcallSdk, TheRingIsAVariableOfTheProbeLibrary) {
  const std::string command =
      std::string(WAVEKIT_LLVM_READELF) + " --dyn-syms --wide " + library(GetParam());
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string listing;
  char buffer[4096];
  while (std::size_t got = fread(buffer, 1, sizeof buffer, pipe)) listing.append(buffer, got);
  ASSERT_EQ(pclose(pipe), 0) << command;
  std::istringstream lines(listing);
  std::string line, found;
  while (std::getline(lines, line))
    if (line.ends_with(" wavekit_hostcall_ring")) found = line;
  ASSERT_FALSE(found.empty()) << listing;
  std::istringstream fields(found);
  std::string number, value, size, type, binding;
  fields >> number >> value >> size >> type >> binding;
  EXPECT_EQ(size, "8") << found;
  EXPECT_EQ(type, "OBJECT") << found;
  EXPECT_EQ(binding, "WEAK") << found;
}

INSTANTIATE_TEST_SUITE_P(Targets, HostcallSdk, testing::Values("gfx908", "gfx90a", "gfx942"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// A launch that must run the service (a rewritten object whose note says needs_hostcall) but
// whose loaded objects neither define nor reference the ring is refused by name.
TEST(HostcallLaunch, RequiredServiceWithoutRingIsRefused) {
  hsa::LaunchRequest request;
  request.code_object = WAVEKIT_SAMPLE_PROBES;
  request.kernel = "none";
  request.grid = hsa::parse_dimensions("--grid", "64");
  request.block = hsa::parse_dimensions("--block", "64");
  request.require_hostcall = true;
  try {
    hsa::launch(request);
    FAIL() << "launch did not refuse";
  } catch (const wavekit::Error& error) {
    EXPECT_NE(std::string(error.what()).find("wavekit_hostcall_ring"), std::string::npos)
        << error.what();
  }
}
