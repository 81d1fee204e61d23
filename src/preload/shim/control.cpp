#include "control.h"

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "wavekit/preload/config.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {

namespace {

// How often the control file is looked at: a switch from outside takes effect within this
// (at the next dispatch after it), at the cost of one stat() per period.
constexpr auto kControlFilePoll = std::chrono::milliseconds(50);

FileStamp stamp_of(const std::string& path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) return {};
  return {true, std::int64_t{status.st_mtim.tv_sec} * 1'000'000'000 + status.st_mtim.tv_nsec,
          static_cast<std::int64_t>(status.st_size), static_cast<std::uint64_t>(status.st_ino)};
}

void toggle_on_signal(int) { Control::get().toggle(); }

// The signal of `wavekit run --control-signal` toggles instrumentation. Installed when the
// library loads, before the program runs, so that the signal never meets its default action
// (for SIGUSR1: the end of the process).
// (Only then: the library loads into every process the application starts, and Control
// would start the control file's watcher in each.)
__attribute__((constructor)) void install_control_signal() {
  if (!std::getenv("WAVEKIT_CONTROL_SIGNAL")) return;
  const int signal = Control::get().signal();
  if (!signal) return;
  struct sigaction action {};
  action.sa_handler = toggle_on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

}  // namespace

Control& Control::get() {
  static Control* control = new Control();  // never destroyed: its watcher outlives exit
  return *control;
}

Control::Control() {
  installed_.selection = std::make_shared<const DispatchSelection>();
  installed_.source = "default";
  ShimConfig config;
  try {
    config = config_from_environment();
  } catch (const std::exception& error) {
    // The shim reports the same error and switches itself off; nothing here is used then.
    return;
  }
  if (!config.selection.empty()) install(DispatchSelection::parse(config.selection), "environment");
  set_enabled(config.start_enabled);
  control_file_ = config.control_file;
  signal_ = config.control_signal;
  start_watcher();
}

InstalledSelection Control::installed() const {
  std::lock_guard lock(mutex_);
  return installed_;
}

void Control::install(DispatchSelection selection, std::string source) {
  std::lock_guard lock(mutex_);
  installed_.selection = std::make_shared<const DispatchSelection>(std::move(selection));
  installed_.source = std::move(source);
  generation_.fetch_add(1, std::memory_order_release);
}

void Control::restart_watcher_after_fork() {
  new (&mutex_) std::mutex();
  start_watcher();
}

void Control::start_watcher() {
  if (control_file_.empty()) return;
  // The file's content when the process starts holds for its first dispatch.
  FileStamp seen = look_at_control_file({});
  std::thread([this, seen]() mutable {
    for (;;) {
      std::this_thread::sleep_for(kControlFilePoll);
      seen = look_at_control_file(seen);
    }
  }).detach();
}

// Each line of the control file: "on", "off", or a selection; applied in order whenever the
// file changes (and once at the start if it exists). A malformed line is reported and skipped.
void Control::apply_control_text(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start, line.find_last_not_of(" \t\r") + 1 - start);
    if (line == "on" || line == "off") {
      set_enabled(line == "on");
      continue;
    }
    try {
      install(DispatchSelection::parse(line), "control file " + control_file_);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "wavekit: control file %s: %s; the selection in force stays\n",
                   control_file_.c_str(), error.what());
    }
  }
}

FileStamp Control::look_at_control_file(const FileStamp& seen) {
  const FileStamp now = stamp_of(control_file_);
  if (now == seen || !now.exists) return now;
  try {
    // A control file is a few lines; a megabyte bounds a wrong path (a device, a log).
    const std::vector<std::uint8_t> bytes = read_file(control_file_, 1 << 20);
    apply_control_text(std::string(bytes.begin(), bytes.end()));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "wavekit: control file: %s\n", error.what());
  }
  return now;
}

}  // namespace wavekit::preload

using wavekit::preload::Control;

extern "C" {

__attribute__((visibility("default"))) int wavekit_instrumentation_set_enabled(int enabled) {
  return Control::get().set_enabled(enabled != 0) ? 1 : 0;
}

__attribute__((visibility("default"))) int wavekit_instrumentation_enabled(void) {
  return Control::get().enabled() ? 1 : 0;
}

namespace {
thread_local std::string last_error;
}

__attribute__((visibility("default"))) int wavekit_instrumentation_select(const char* selection) {
  try {
    Control::get().install(wavekit::preload::DispatchSelection::parse(selection ? selection : ""),
                           "api");
    last_error.clear();
    return 0;
  } catch (const std::exception& error) {
    last_error = error.what();
    return -1;
  }
}

__attribute__((visibility("default"))) const char* wavekit_instrumentation_error(void) {
  return last_error.c_str();
}

}  // extern "C"
