// The launcher `wavekit run` and `wavekit profile` share: what the program gets in its
// environment, and how its end is reported (exit status, signal, a program that cannot run).
#include "wavekit/support/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit {
namespace {

ChildProgram shell(const std::string& script) {
  ChildProgram program;
  program.command = {"sh", "-c", script};
  program.tool = "support-test";
  return program;
}

TEST(Process, PrependPathPutsTheToolFirst) {
  ::setenv("WAVEKIT_TEST_PATH_LIST", "b.so:c.so", 1);
  EXPECT_EQ(prepend_path("WAVEKIT_TEST_PATH_LIST", "a.so"), "a.so:b.so:c.so");
  ::setenv("WAVEKIT_TEST_PATH_LIST", "", 1);
  EXPECT_EQ(prepend_path("WAVEKIT_TEST_PATH_LIST", "a.so"), "a.so");
  ::unsetenv("WAVEKIT_TEST_PATH_LIST");
  EXPECT_EQ(prepend_path("WAVEKIT_TEST_PATH_LIST", "a.so"), "a.so");
}

TEST(Process, PassesTheExitStatusThrough) {
  const ProgramExit ended = run_program(shell("exit 3"));
  EXPECT_EQ(ended.status, 3);
  EXPECT_EQ(ended.signal, 0);
  EXPECT_GT(ended.pid, 0);
}

TEST(Process, ReportsTheSignalThatKilledIt) {
  const ProgramExit ended = run_program(shell("kill -SEGV $$"));
  EXPECT_EQ(ended.signal, SIGSEGV);
  EXPECT_EQ(ended.status, 128 + SIGSEGV);
  EXPECT_EQ(describe_signal(SIGSEGV), "signal 11 (SEGV: Segmentation fault)");
}

TEST(Process, SetsTheEnvironmentOverTheInheritedOne) {
  ::setenv("WAVEKIT_TEST_INHERITED", "kept", 1);
  ::setenv("WAVEKIT_TEST_REPLACED", "old", 1);
  ChildProgram program = shell(
      "test \"$WAVEKIT_TEST_INHERITED\" = kept && test \"$WAVEKIT_TEST_REPLACED\" = new && "
      "test \"$WAVEKIT_TEST_ADDED\" = 'a b' && test \"$WAVEKIT_TEST_OWN_PID\" = $$ && "
      "test $(env | grep -c '^WAVEKIT_TEST_REPLACED=') = 1");
  program.environment = {{"WAVEKIT_TEST_REPLACED", "new"}, {"WAVEKIT_TEST_ADDED", "a b"}};
  program.own_pid_variable = "WAVEKIT_TEST_OWN_PID";
  EXPECT_EQ(run_program(program).status, 0);
  EXPECT_STREQ(std::getenv("WAVEKIT_TEST_REPLACED"), "old") << "this process is left alone";
  ::unsetenv("WAVEKIT_TEST_INHERITED");
  ::unsetenv("WAVEKIT_TEST_REPLACED");
}

TEST(Process, NamesAProgramItCannotRun) {
  const std::filesystem::path log = std::filesystem::path(::testing::TempDir()) /
                                    ("support_process_" + std::to_string(::getpid()) + ".log");
  ChildProgram program;
  program.command = {"/no/such/program", "argument"};
  program.tool = "support-test";
  // The child's message goes to the stderr it inherits: this process's, sent to a file here.
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(file, 0);
  ::dup2(file, STDERR_FILENO);
  const ProgramExit ended = run_program(program);
  ::dup2(saved, STDERR_FILENO);
  ::close(file);
  ::close(saved);
  EXPECT_EQ(ended.status, 127);
  const std::vector<std::uint8_t> message = read_file(log.string());
  EXPECT_EQ(std::string(message.begin(), message.end()),
            "support-test: cannot run '/no/such/program': No such file or directory\n");
  std::filesystem::remove(log);
}

TEST(Process, RefusesAnEmptyCommand) {
  ChildProgram program;
  program.tool = "support-test";
  EXPECT_THROW(run_program(program), Error);
}

}  // namespace
}  // namespace wavekit
