// `wavekit launch` as a user runs it: outputs, the launch state kernels observe (COV5 hidden
// arguments, COV4 dispatch packet), the trace formats of issue 3 item 7, and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <span>

#include "wavekit/support/file.h"

namespace {

std::string device(const std::string& name) {
  return std::string(WAVEKIT_HSA_DEVICE_DIR) + "/" + name;
}

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CliResult wavekit(const std::string& arguments) {
  std::string command = std::string(WAVEKIT_CLI) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  CliResult run;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) run.output.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::vector<std::uint32_t> words(const std::string& path) {
  auto bytes = wavekit::read_file(path);
  std::vector<std::uint32_t> result(bytes.size() / 4);
  std::memcpy(result.data(), bytes.data(), result.size() * 4);
  return result;
}

std::string fresh_directory(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/hsa_launch_cli_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// st_value of `symbol` in `object`, from llvm-readelf-22.
std::uint64_t symbol_value(const std::string& object, const std::string& symbol) {
  std::string command = std::string(WAVEKIT_LLVM_READELF) + " --wide -s " + device(object);
  FILE* pipe = popen(command.c_str(), "r");
  std::string listing;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) listing.append(buffer, n);
  pclose(pipe);
  std::smatch match;
  if (!std::regex_search(listing, match,
                         std::regex(R"(: ([0-9a-f]+) +\d+ FUNC +\w+ +\w+ +\w+ )" + symbol + "\n")))
    throw std::runtime_error(symbol + " not found");
  return std::stoull(match[1], nullptr, 16);
}

TEST(LaunchCli, OutputsMatchTheCpuAndTracesFollowTheSchema) {
  std::string dir = fresh_directory("provider");
  // provider_kernel: out[lane] = (lane + 1000) * scale + provider_table[1] (= 20), indexed by
  // the work-item id in its workgroup; two workgroups, the second partial (100 work-items).
  CliResult run = wavekit(
      "launch " + device("probe_provider.co") +
      " --kernel provider_kernel --grid 100 --block 64 --arg zeros:512 --arg i32:-3 --out " + dir +
      " --trace-blocks " + dir + "/blocks.json --trace-sequence " + dir + "/sequence --threads 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto out = words(dir + "/arg0.bin");
  ASSERT_EQ(out.size(), 128u);
  for (std::uint32_t i = 0; i < 128; ++i) {
    std::int32_t lane = static_cast<std::int32_t>(i % 64);
    std::int32_t expected = i < 64 ? (lane + 1000) * -3 + 20 : 0;
    EXPECT_EQ(static_cast<std::int32_t>(out[i]), expected) << i;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/arg1.bin"));  // scalars are not written

  std::ifstream file(dir + "/blocks.json");
  nlohmann::json trace = nlohmann::json::parse(file);
  EXPECT_EQ(trace["kernel"], "provider_kernel");
  ASSERT_EQ(trace["waves"].size(), 2u);
  char entry[32];
  std::snprintf(
      entry, sizeof entry, "0x%llx",
      static_cast<unsigned long long>(symbol_value("probe_provider.co", "provider_kernel")));
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& wave = trace["waves"][i];
    EXPECT_EQ(wave["id"], i);  // one wave per workgroup: the id is the workgroup's x
    EXPECT_EQ(wave["workgroup"], nlohmann::json::array({i, 0, 0}));
    EXPECT_EQ(wave["wave_in_workgroup"], 0);
    ASSERT_TRUE(wave["blocks"].contains(entry)) << wave.dump();
    EXPECT_EQ(wave["blocks"][entry], 1);
    // The sequence file lists the same blocks, as many times as counted, in execution order.
    std::ifstream sequence(dir + "/sequence/wave_" + std::to_string(i) + ".txt");
    std::map<std::string, int> counted;
    std::string line, first;
    while (std::getline(sequence, line)) {
      EXPECT_TRUE(std::regex_match(line, std::regex("0x[0-9a-f]+"))) << line;
      if (first.empty()) first = line;
      ++counted[line];
    }
    EXPECT_EQ(first, entry);
    std::map<std::string, int> from_json;
    for (const auto& [block, count] : wave["blocks"].items()) from_json[block] = count;
    EXPECT_EQ(counted, from_json);
  }
}

TEST(LaunchCli, Cov5KernelsSeeHiddenArgumentsAndCov4KernelsThePacket) {
  // report_launch writes blockDim.x/y, the grid size x/y and the first implicit dword.
  for (int cov : {5, 4}) {
    SCOPED_TRACE(cov);
    std::string dir = fresh_directory("hidden" + std::to_string(cov));
    CliResult run =
        wavekit("launch " + device("hidden_args_cov" + std::to_string(cov) + ".co") +
                " --kernel report_launch --grid 1000,3 --block 256,2 --arg zeros:20 --out " + dir);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto out = words(dir + "/arg0.bin");
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[0], 256u);
    EXPECT_EQ(out[1], 2u);
    EXPECT_EQ(out[2], 1000u);
    EXPECT_EQ(out[3], 3u);
    // COV5: hidden_block_count_x = ceil(1000 / 256); COV4: hidden_global_offset_x = 0.
    EXPECT_EQ(out[4], cov == 5 ? 4u : 0u);
  }
}

TEST(LaunchCli, LibraryResolvesTheKernelsUndefinedCall) {
  // The instrumented-kernel shape: call_probe calls probe_add, defined by the library.
  std::string dir = fresh_directory("library");
  CliResult run = wavekit("launch " + device("probe_consumer.co") + " --library " +
                          device("probe_provider.co") +
                          " --kernel call_probe --grid 64 --block 64 --arg zeros:256 --out " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto out = words(dir + "/arg0.bin");
  ASSERT_EQ(out.size(), 64u);
  for (std::uint32_t lane = 0; lane < 64; ++lane) EXPECT_EQ(out[lane], lane + 1000) << lane;
}

// The hostcall client's system-scope acquires execute cache invalidations (buffer_invl2 on
// gfx90a, buffer_wbinvl1_vol on gfx908, buffer_inv on gfx942), which the emulator runs as
// no-ops on its coherent host memory.
TEST(LaunchCli, ProbesPrintThroughTheHostcallRingLaunchServes) {
  std::string dir = fresh_directory("hostcall");
  CliResult run = wavekit(
      "launch " + device("hostcall_print.co") +
      " --kernel hostcall_print --grid 128 --block 64 --arg zeros:256 --arg i32:500 --out " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Two workgroups of 64 lanes; every lane's line appears once.
  for (int lane = 0; lane < 64; ++lane) {
    std::string line =
        "lane " + std::to_string(lane) + " says " + std::to_string(500 + lane) + "\n";
    std::size_t first = run.output.find(line);
    ASSERT_NE(first, std::string::npos) << line << run.output;
    EXPECT_NE(run.output.find(line, first + 1), std::string::npos) << "second workgroup: " << line;
    // The blocking call returned the line's character count to the lane.
    EXPECT_EQ(words(dir + "/arg0.bin")[lane], line.size()) << lane;
  }
}

// A kernel that stores on every iteration of an endless loop makes progress as far as the
// no-progress detector can tell; the launch budget (instructions or wall time) ends it with a
// report of where each wave stood.
TEST(LaunchCli, BudgetEndsAKernelThatLoopsForeverWhileStoring) {
  const std::string object =
      device("store_forever.co") + " --kernel store_forever --grid 128 --block 64 --arg zeros:256";
  CliResult counted = wavekit("launch " + object + " --max-instructions 200000");
  EXPECT_EQ(counted.exit_code, 1) << counted.output;
  EXPECT_NE(counted.output.find("budget exceeded: the dispatch was stopped after"),
            std::string::npos)
      << counted.output;
  EXPECT_NE(counted.output.find("limits: 200000 instructions"), std::string::npos)
      << counted.output;
  EXPECT_NE(counted.output.find("wave 0 (workgroup 0,0,0) at 0x"), std::string::npos)
      << counted.output;
  CliResult timed = wavekit("launch " + object + " --timeout 0.5");
  EXPECT_EQ(timed.exit_code, 1) << timed.output;
  EXPECT_NE(timed.output.find("budget exceeded"), std::string::npos) << timed.output;
  EXPECT_NE(timed.output.find("0.500000 s)"), std::string::npos) << timed.output;
  CliResult zero = wavekit("launch " + object + " --max-instructions 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  CliResult negative = wavekit("launch " + object + " --timeout -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
}

// A grid of 2^32 - 1 work-items in workgroups of 256 is 16,777,216 workgroups (the last one
// partial): the count used to wrap to 0 in 32 bits, and the launch "ran" no wave and exited 0.
TEST(LaunchCli, GridNearTwoToTheThirtyTwoIsNotEmpty) {
  CliResult run = wavekit("launch " + device("store_forever.co") +
                          " --kernel store_forever --grid 4294967295 --block 256 --arg "
                          "zeros:1024 --max-instructions 100000");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("budget exceeded"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("not started"), std::string::npos) << run.output;
}

// Dynamic LDS (--lds) and a by-value struct (--arg struct:...), which HIP programs pass and
// the emulator's launch could not: the struct's fields land at C's offsets (i32 at 0, f32 at 4,
// u64 at 8, i16 at 16; 24 bytes), and the workgroup's LDS holds all 256 words.
TEST(LaunchCli, DynamicLdsAndAStructPassedByValue) {
  const std::string dir = fresh_directory("launch_args");
  const std::string launch = "launch " + device("launch_args.co") +
                             " --kernel dynamic_lds --grid 512 --block 256 --arg zeros:2048 "
                             "--arg struct:i32:3,f32:10.5,u64:0x1234,i16:-2 --out " +
                             dir;
  CliResult run = wavekit(launch + " --lds 1024");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto out = words(dir + "/arg0.bin");
  ASSERT_EQ(out.size(), 512u);
  for (std::uint32_t i = 0; i < 512; ++i) {
    const std::uint32_t t = i % 256;
    EXPECT_EQ(out[i], (255 - t) * 3 + 10 + 0x34 - 2) << i;
  }
  // Without the dynamic LDS the kernel's accesses fall outside the workgroup's LDS.
  CliResult without = wavekit(launch);
  EXPECT_EQ(without.exit_code, 1) << without.output;
  EXPECT_NE(without.output.find("memory_fault"), std::string::npos) << without.output;
  CliResult short_struct = wavekit("launch " + device("launch_args.co") +
                                   " --kernel dynamic_lds --grid 256 --block 256 --arg zeros:1024 "
                                   "--arg struct:i32:3,f32:1 --lds 1024");
  EXPECT_EQ(short_struct.exit_code, 1) << short_struct.output;
  EXPECT_NE(short_struct.output.find("does not match --arg struct:i32:3,f32:1 (struct, 8 bytes)"),
            std::string::npos)
      << short_struct.output;
  CliResult bad_field = wavekit(launch + " --lds 1024 --arg struct:q9:1");
  EXPECT_NE(bad_field.output.find("unknown field type 'q9'"), std::string::npos)
      << bad_field.output;
  CliResult too_much = wavekit(launch + " --lds 70000");
  EXPECT_EQ(too_much.exit_code, 2) << too_much.output;
}

// One host thread is a fixed schedule: workgroups run in order, waves round robin with a fixed
// quantum, so a kernel whose float atomics are compare-and-swap loops gives the same sum (bit
// for bit) and the same ground truth (every retry counted) in every run -- what --threads 1 and
// WAVEKIT_EMU_THREADS=1 are for when ground truth must be reproduced exactly.
TEST(LaunchCli, OneHostThreadReproducesTheGroundTruthOfACasLoop) {
  const std::string dir = fresh_directory("deterministic");
  std::vector<float> values(4096);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = (i % 7 == 0 ? 1e7f : 1.0f) / float(1 + i % 13);  // order-sensitive rounding
  wavekit::write_file(dir + "/in.bin",
                      std::span(reinterpret_cast<const std::uint8_t*>(values.data()),
                                values.size() * sizeof(float)));
  std::vector<std::uint8_t> first_sum;
  std::string first_trace;
  for (int run = 0; run < 3; ++run) {
    const std::string out = dir + "/run" + std::to_string(run);
    CliResult result = wavekit("launch " + device("launch_args.co") +
                               " --kernel float_sum --grid 4096 --block 256 --arg file:" + dir +
                               "/in.bin --arg zeros:4 --threads 1 --out " + out +
                               " --trace-blocks " + out + "/blocks.json");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const std::vector<std::uint8_t> sum = wavekit::read_file(out + "/arg1.bin");
    const std::vector<std::uint8_t> trace = wavekit::read_file(out + "/blocks.json");
    if (run == 0) {
      first_sum = sum;
      first_trace.assign(trace.begin(), trace.end());
      float total = 0;
      std::memcpy(&total, sum.data(), sizeof total);
      EXPECT_GT(total, 1e9f) << "the kernel summed its input";
      continue;
    }
    EXPECT_EQ(sum, first_sum) << "run " << run;
    EXPECT_EQ(std::string(trace.begin(), trace.end()), first_trace) << "run " << run;
  }
}

// Memory as a GPU maps it: a buffer is whole pages, so an off-by-one store inside the last page
// runs as on hardware (the output file has the bytes asked for); --check-bounds reports it, with
// the buffer and how far past its end, the way compute-sanitizer would.
TEST(LaunchCli, PagePaddingIsReachableUnlessBoundsAreChecked) {
  const std::string dir = fresh_directory("one_past");
  const std::string launch = "launch " + device("launch_args.co") +
                             " --kernel one_past --grid 512 --block 256 --arg zeros:1024 "
                             "--arg u32:256 --out " +
                             dir;
  CliResult gpu = wavekit(launch);
  ASSERT_EQ(gpu.exit_code, 0) << gpu.output;
  auto out = words(dir + "/arg0.bin");
  ASSERT_EQ(out.size(), 256u);
  for (std::uint32_t i = 0; i < 256; ++i) EXPECT_EQ(out[i], i + 1) << i;
  CliResult checked = wavekit(launch + " --check-bounds");
  EXPECT_EQ(checked.exit_code, 1) << checked.output;
  EXPECT_NE(checked.output.find("write of 4 bytes at 0x"), std::string::npos) << checked.output;
  EXPECT_NE(checked.output.find(": 4 bytes past the end of arg0 (1024 bytes; the allocation's "
                                "padding is reachable on a GPU, exact bounds are checked)"),
            std::string::npos)
      << checked.output;
}

TEST(LaunchCli, MistakesAreReportedWithTheirExitCodes) {
  std::string object = device("probe_provider.co");
  CliResult usage = wavekit("launch " + object + " --kernel provider_kernel --grid 64");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.output.find("--block is required"), std::string::npos) << usage.output;
  CliResult bad_grid =
      wavekit("launch " + object + " --kernel provider_kernel --grid 64,0 --block 64");
  EXPECT_EQ(bad_grid.exit_code, 2);
  EXPECT_NE(bad_grid.output.find("--grid: '0'"), std::string::npos) << bad_grid.output;
  CliResult count = wavekit("launch " + object +
                            " --kernel provider_kernel --grid 64 --block 64 --arg zeros:256");
  EXPECT_EQ(count.exit_code, 1);
  EXPECT_NE(count.output.find("takes 2 arguments"), std::string::npos) << count.output;
  CliResult kernel = wavekit("launch " + object + " --kernel missing --grid 64 --block 64");
  EXPECT_EQ(kernel.exit_code, 1);
  EXPECT_NE(kernel.output.find("no kernel named 'missing' (kernels: provider_kernel)"),
            std::string::npos)
      << kernel.output;
  CliResult not_an_object =
      wavekit("launch " + std::string(WAVEKIT_CLI) + " --kernel k --grid 1 --block 1");
  EXPECT_EQ(not_an_object.exit_code, 1);
  EXPECT_NE(not_an_object.output.find("not an AMDGPU code object"), std::string::npos)
      << not_an_object.output;
  CliResult undefined = wavekit("launch " + device("probe_consumer.co") +
                                " --kernel call_probe --grid 64 --block 64");
  EXPECT_EQ(undefined.exit_code, 1);
  EXPECT_NE(undefined.output.find("undefined symbol 'probe_add'"), std::string::npos)
      << undefined.output;
  // A buffer too small for the kernel (checked exactly: on a GPU the page would absorb it): a
  // memory fault report naming wave, pc and address.
  CliResult fault = wavekit("launch " + object +
                            " --kernel provider_kernel --grid 64 --block 64 --arg zeros:16 "
                            "--arg i32:1 --check-bounds");
  EXPECT_EQ(fault.exit_code, 1);
  EXPECT_NE(fault.output.find("memory_fault"), std::string::npos) << fault.output;
  EXPECT_NE(fault.output.find("pc 0x"), std::string::npos) << fault.output;
  EXPECT_NE(fault.output.find("address 0x"), std::string::npos) << fault.output;
  CliResult help = wavekit("launch --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--trace-sequence"), std::string::npos);
}

}  // namespace
