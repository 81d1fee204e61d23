// Starting a program under a tool (`wavekit run`, `wavekit profile`): the environment the tool
// gives it, fork, exec and wait, and how the program ended. It lives in support because the two
// tools belong to parts (preload, profile) neither of which may depend on the other.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace wavekit {

struct ChildProgram {
  std::vector<std::string> command;  // the program (looked up in PATH) and its arguments
  // Set in the program's environment, over the one this process has.
  std::map<std::string, std::string> environment;
  // When not empty, set in the program's environment to its own process id, so that it and
  // the processes it starts can tell which one the tool started.
  std::string own_pid_variable;
  std::string tool;  // names the tool in messages ("wavekit run")
  // When not empty, the program's stdout / stderr go to these files (created or truncated).
  std::string stdout_file, stderr_file;
  // When above 0, the program (in a process group of its own, with everything it started) is
  // killed after this many seconds.
  double timeout_seconds = 0;
};

struct ProgramExit {
  int pid = 0;
  int status = 0;          // its exit status, or 128 + the signal that killed it (as a shell says)
  int signal = 0;          // the signal that killed it; 0 when it exited
  bool timed_out = false;  // killed at ChildProgram::timeout_seconds
};

// `first` ahead of the path list that `variable` holds in this process's environment
// ("first:a:b"), for variables such as LD_PRELOAD and LD_LIBRARY_PATH; `first` alone when the
// variable is unset or empty.
std::string prepend_path(const std::string& variable, const std::string& first);

// Starts the program and waits until it ends. Throws wavekit::Error when no process can be
// started; a program that cannot be executed exits with 127 after "<tool>: cannot run
// '<program>': <reason>" on stderr, as a shell's would.
ProgramExit run_program(const ChildProgram& program);

// "signal 11 (SEGV: Segmentation fault)".
std::string describe_signal(int signal);

}  // namespace wavekit
