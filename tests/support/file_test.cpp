// Every file reader goes through read_file and every result through write_file: what they do
// with inputs that are not files, with streams that never end, and with a write that fails.
#include "wavekit/support/file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <functional>

#include "wavekit/support/error.h"

namespace wavekit {
namespace {

std::string error_of(const std::function<void()>& function) {
  try {
    function();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

std::filesystem::path fresh_directory(const std::string& name) {
  const std::filesystem::path directory = std::filesystem::path(::testing::TempDir()) /
                                          ("support_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

TEST(ReadFile, NamesThePathAndTheReason) {
  const std::filesystem::path directory = fresh_directory("read");
  EXPECT_EQ(error_of([&] { read_file(directory.string()); }),
            directory.string() + ": is a directory, not a file");
  const std::string missing = (directory / "missing.co").string();
  EXPECT_EQ(error_of([&] { read_file(missing); }), missing + ": No such file or directory");
}

TEST(ReadFile, StreamsAndLargeFilesStopAtTheLimit) {
  EXPECT_EQ(error_of([] { read_file("/dev/zero", 1 << 20); }),
            "/dev/zero: gives more than the 1 MiB wavekit reads (not a regular file: a device or "
            "a pipe?)");
  const std::filesystem::path file = fresh_directory("limit") / "data";
  write_file(file.string(), std::string(100, 'x'));
  EXPECT_EQ(read_file(file.string(), 100).size(), 100u) << "exactly the limit is fine";
  EXPECT_EQ(error_of([&] { read_file(file.string(), 99); }),
            file.string() + ": is 100 bytes, more than the 99 bytes wavekit reads");
  EXPECT_EQ(read_file("/dev/null").size(), 0u);
}

TEST(WriteFile, ReplacesAtomically) {
  const std::filesystem::path directory = fresh_directory("replace");
  const std::string path = (directory / "result.json").string();
  write_file(path, "old\n");
  write_file(path, "new\n");
  const std::vector<std::uint8_t> bytes = read_file(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "new\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory), {}), 1)
      << "no temporary file is left behind";
}

// A full disk, simulated by a file-size limit (write() then fails with EFBIG): the error names
// the path and the reason, the earlier file stays whole, and no truncated file is left.
TEST(WriteFile, AFailedWriteLeavesTheEarlierFileAndNoPartialOne) {
  const std::filesystem::path directory = fresh_directory("full");
  const std::string path = (directory / "heatmap.svg").string();
  write_file(path, "<svg>earlier</svg>\n");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    const std::string message = error_of([&] { write_file(path, std::string(100000, 'x')); });
    const bool named = message.rfind(path + ": cannot be written: File too large", 0) == 0;
    _exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the error did not name the path and the reason";
  const std::vector<std::uint8_t> bytes = read_file(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "<svg>earlier</svg>\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory), {}), 1);
}

}  // namespace
}  // namespace wavekit
