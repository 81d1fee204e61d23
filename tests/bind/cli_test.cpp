// `wavekit bind` and `wavekit bind-machine` as a user runs them: formats, exit codes and
// messages, and --exec really binding the process (read back from /proc/self/status).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace wavekit::bind {
namespace {

using testing::run_command;

std::string wavekit(const std::string& arguments) {
  return std::string(WAVEKIT_BINARY) + " " + arguments;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    xml_ = ::testing::TempDir() + "bind_cli_" + std::to_string(getpid()) + ".xml";
    auto made = run_command(
        wavekit("bind-machine packages=2,numa=2,cores=4,smt=2,gpus=1 --output " + xml_));
    ASSERT_EQ(made.status, 0) << made.output;
  }
  void TearDown() override { std::remove(xml_.c_str()); }
  std::string xml_;
};

TEST_F(Cli, MpibindFormat) {
  auto result = run_command(wavekit("bind --topology " + xml_ + " --ntasks 4 --format mpibind"));
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_EQ(result.output,
            "mpibind: task   0 nths  4 gpus 0 cpus 0-3\n"
            "mpibind: task   1 nths  4 gpus 1 cpus 4-7\n"
            "mpibind: task   2 nths  4 gpus 2 cpus 8-11\n"
            "mpibind: task   3 nths  4 gpus 3 cpus 12-15\n");
}

TEST_F(Cli, JsonFormat) {
  auto result = run_command(
      wavekit("bind --topology " + xml_ + " --ntasks 2 --greedy 0 --smt 2 --format json"));
  ASSERT_EQ(result.status, 0) << result.output;
  auto json = nlohmann::json::parse(result.output);
  EXPECT_EQ(json["mode"], "default");
  ASSERT_EQ(json["tasks"].size(), 2u);
  EXPECT_EQ(json["tasks"][1]["cpus"], "4-7,20-23");
  EXPECT_EQ(json["tasks"][1]["nthreads"], 8);
  EXPECT_EQ(json["tasks"][1]["gpus"], nlohmann::json::array({1}));
  EXPECT_EQ(json["tasks"][1]["env"]["ROCR_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(json["devices"].size(), 4u);
}

TEST_F(Cli, EnvAndTextFormats) {
  auto env =
      run_command(wavekit("bind --topology " + xml_ + " --ntasks 2 --greedy 0 --format env --hip"));
  ASSERT_EQ(env.status, 0) << env.output;
  EXPECT_NE(
      env.output.find("# task 1\nOMP_NUM_THREADS=4\nOMP_PLACES=threads\nOMP_PROC_BIND=spread\n"
                      "ROCR_VISIBLE_DEVICES=1\nHIP_VISIBLE_DEVICES=1\n"),
      std::string::npos)
      << env.output;
  auto text = run_command(wavekit("bind --topology " + xml_ + " --ntasks 4"));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("task 3: 4 threads, cpus 12-15, gpus 3, memory 3"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("[NUMA 2] [GPU 2]  <- task 2"), std::string::npos) << text.output;
}

TEST_F(Cli, BadOptionsAreUsageErrors) {
  struct Case {
    std::string arguments;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"bind --topology " + xml_, 2, "--ntasks is required"},
      {"bind --topology " + xml_ + " --ntasks 0", 2, "--ntasks"},
      {"bind --topology " + xml_ + " --ntasks two", 2, "'two'"},
      {"bind --topology " + xml_ + " --ntasks 2 --format yaml", 2, "'yaml'"},
      {"bind --topology " + xml_ + " --ntasks 2 --greedy yes", 2, "--greedy"},
      {"bind --topology " + xml_ + " --ntasks 2 --compat mpibind-0.22", 2, "mpibind-0.22"},
      {"bind --topology " + xml_ + " --ntasks 2 --restrict-type gpu --restrict 0", 2, "'gpu'"},
      {"bind --topology " + xml_ + " --ntasks 2 --bogus", 2, "unknown option '--bogus'"},
      {"bind --topology " + xml_ + " --ntasks 2 --exec 0", 2, "needs a command"},
      {"bind --topology " + xml_ + " --ntasks 2 --exec 2 -- true", 2, "not below --ntasks"},
      {"bind --topology " + xml_ + " --ntasks 2 --smt 3", 1, "smt must be between 0"},
      {"bind --topology " + xml_ + " --ntasks 2 --restrict 0-x", 1, "--restrict"},
      {"bind --topology " + xml_ + " --ntasks 2 --restrict 200-300", 1, "leaves no CPUs"},
      {"bind --topology /nonexistent/node.xml --ntasks 2", 1,
       "/nonexistent/node.xml: No such file or directory"},
      {"bind-machine sockets=2", 1, "unknown key 'sockets'"},
  };
  for (const auto& c : cases) {
    auto result = run_command(wavekit(c.arguments) + " 2>&1");
    EXPECT_EQ(result.status, c.status) << c.arguments << "\n" << result.output;
    EXPECT_NE(result.output.find(c.message), std::string::npos) << c.arguments << "\n"
                                                                << result.output;
  }
}

TEST(CliLive, ExecBindsTheProcessAndSetsItsEnvironment) {
  // The live machine: the mapping's CPU set for the last task must be what the kernel reports
  // for the exec'd command.
  auto json = run_command(wavekit("bind --ntasks 2 --format json"));
  ASSERT_EQ(json.status, 0) << json.output;
  auto mapping = nlohmann::json::parse(json.output);
  std::string expected_cpus = mapping["tasks"][1]["cpus"];
  auto result = run_command(
      wavekit("bind --ntasks 2 --exec 1 -- sh -c 'grep Cpus_allowed_list /proc/self/status; "
              "echo OMP=$OMP_NUM_THREADS $OMP_PLACES $OMP_PROC_BIND'"));
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("Cpus_allowed_list:\t" + expected_cpus + "\n"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("OMP=" + std::to_string(mapping["tasks"][1]["nthreads"].get<int>()) +
                               " threads spread"),
            std::string::npos)
      << result.output;
  // --membind sets a memory policy on the task's nodes: the kernel's numa_maps shows a policy
  // other than "default" for the exec'd program's mappings.
  auto policy = [](const std::string& flags) {
    return run_command(
        wavekit("bind --ntasks 1 " + flags + " --exec 0 -- sh -c 'head -1 /proc/self/numa_maps'"));
  };
  if (access("/proc/self/numa_maps", R_OK) != 0) GTEST_SKIP() << "the kernel has no numa_maps";
  auto plain = policy("");
  auto bound = policy("--membind");
  ASSERT_EQ(plain.status, 0) << plain.output;
  ASSERT_EQ(bound.status, 0) << bound.output;
  EXPECT_NE(plain.output.find(" default "), std::string::npos) << plain.output;
  EXPECT_EQ(bound.output.find(" default "), std::string::npos) << bound.output;
  auto missing = run_command(wavekit("bind --ntasks 1 --exec 0 -- /nonexistent/program 2>&1"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("cannot run '/nonexistent/program'"), std::string::npos);
}

}  // namespace
}  // namespace wavekit::bind
