#include "wavekit/support/process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "wavekit/support/error.h"

extern char** environ;

namespace wavekit {

namespace {

// Between fork and exec the child may call only async-signal-safe functions (the parent may
// have other threads, whose locks the child inherits held): so the environment and the
// message are built before fork, and the child only fills in its pid, executes, and writes
// why it could not (strerror is a table lookup in glibc).
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

// `digits` has room for any pid and its terminator.
void write_decimal(char* digits, long value) {
  char reversed[24];
  int length = 0;
  do {
    reversed[length++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  for (int i = 0; i < length; ++i) digits[i] = reversed[length - 1 - i];
  digits[length] = '\0';
}

}  // namespace

std::string prepend_path(const std::string& variable, const std::string& first) {
  const char* old = std::getenv(variable.c_str());
  return old && *old ? first + ":" + old : first;
}

ProgramExit run_program(const ChildProgram& program) {
  if (program.command.empty()) fail(program.tool, "no program to run");
  const auto overridden = [&](std::string_view name) {
    return program.environment.count(std::string(name)) != 0 || name == program.own_pid_variable;
  };
  std::vector<std::string> entries;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    if (!overridden(text.substr(0, text.find('=')))) entries.emplace_back(text);
  }
  for (const auto& [name, value] : program.environment) entries.push_back(name + "=" + value);
  if (!program.own_pid_variable.empty())
    entries.push_back(program.own_pid_variable + "=" + std::string(23, '0'));
  std::vector<char*> environment;
  for (std::string& entry : entries) environment.push_back(entry.data());
  environment.push_back(nullptr);
  char* pid_digits = program.own_pid_variable.empty()
                         ? nullptr
                         : entries.back().data() + program.own_pid_variable.size() + 1;
  std::vector<char*> argv;
  for (const std::string& argument : program.command)
    argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  const std::string cannot_run = program.tool + ": cannot run '" + program.command[0] + "': ";
  const std::string cannot_open_stdout = cannot_run + "cannot open " + program.stdout_file + "\n";
  const std::string cannot_open_stderr = cannot_run + "cannot open " + program.stderr_file + "\n";

  const pid_t child = ::fork();
  if (child < 0)
    fail(program.tool, "cannot start '" + program.command[0] + "': fork: " + std::strerror(errno));
  if (child == 0) {
    if (pid_digits) write_decimal(pid_digits, static_cast<long>(::getpid()));
    if (program.timeout_seconds > 0) ::setpgid(0, 0);
    const auto redirect = [&](const std::string& path, int stream, const std::string& failure) {
      if (path.empty()) return;
      const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (file < 0 || ::dup2(file, stream) < 0) {
        write_all(STDERR_FILENO, failure);
        ::_exit(127);
      }
      ::close(file);
    };
    redirect(program.stdout_file, STDOUT_FILENO, cannot_open_stdout);
    redirect(program.stderr_file, STDERR_FILENO, cannot_open_stderr);
    ::execvpe(argv[0], argv.data(), environment.data());
    const int error = errno;
    write_all(STDERR_FILENO, cannot_run);
    write_all(STDERR_FILENO, std::strerror(error));
    write_all(STDERR_FILENO, "\n");
    ::_exit(127);
  }
  int status = 0;
  ProgramExit ended;
  if (program.timeout_seconds > 0) {
    // Polled: a 5 ms step is nothing beside a program's run, and needs no signal handler.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(program.timeout_seconds));
    for (;;) {
      const pid_t done = ::waitpid(child, &status, WNOHANG);
      if (done == child) break;
      if (done < 0 && errno != EINTR)
        fail(program.tool, std::string("waitpid: ") + std::strerror(errno));
      if (!ended.timed_out && std::chrono::steady_clock::now() >= deadline) {
        ended.timed_out = true;
        ::kill(-child, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } else {
    while (::waitpid(child, &status, 0) < 0)
      if (errno != EINTR) fail(program.tool, std::string("waitpid: ") + std::strerror(errno));
  }
  ended.pid = child;
  ended.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  ended.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + ended.signal;
  return ended;
}

std::string describe_signal(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  const char* description = strsignal(signal);
  return "signal " + std::to_string(signal) + " (" + (abbreviation ? abbreviation : "?") + ": " +
         (description ? description : "unknown") + ")";
}

}  // namespace wavekit
