// The shim's run-time switches: whether instrumentation is on and which dispatches it selects.
// Three hands reach them while the application runs -- the C API (wavekit/instrumentation.h,
// and the Python module on top), a control file another process writes, and a signal that
// toggles -- so they live apart from the Shim: a selection made before the program first
// touches HSA (or in a process that never does) must neither construct the shim nor be lost.
// The proxy queue reads them at each dispatch, lock-free unless something changed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "wavekit/preload/selection.h"

namespace wavekit::preload {

// What says that a file changed (its identity, size and modification time).
struct FileStamp {
  bool exists = false;
  std::int64_t modified_ns = 0;
  std::int64_t size = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

struct InstalledSelection {
  std::shared_ptr<const DispatchSelection> selection;
  std::string source;  // "environment", "api", "control file PATH"
};

class Control {
 public:
  // The process's one instance, set up from the environment (ShimConfig's selection,
  // start_enabled, control_file and control_signal) on first use; the control file is watched
  // from then on.
  static Control& get();

  int signal() const { return signal_; }  // the signal that toggles, 0 for none

  bool enabled() const { return enabled_.load(std::memory_order_relaxed) != 0; }
  // Returns the previous state.
  bool set_enabled(bool enabled) {
    return enabled_.exchange(enabled ? 1 : 0, std::memory_order_relaxed) != 0;
  }
  // Async-signal-safe.
  void toggle() { enabled_.fetch_xor(1, std::memory_order_relaxed); }

  // Counts the selections installed; a reader that saw another count calls installed().
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  InstalledSelection installed() const;
  void install(DispatchSelection selection, std::string source);

  // A child of fork() has no watcher thread: it starts its own.
  void restart_watcher_after_fork();

 private:
  Control();
  void start_watcher();
  // Applies the control file if it changed since `seen`; returns what it saw now.
  FileStamp look_at_control_file(const FileStamp& seen);
  void apply_control_text(const std::string& text);

  std::atomic<int> enabled_{1};
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mutex_;
  InstalledSelection installed_;
  std::string control_file_;
  int signal_ = 0;
};

}  // namespace wavekit::preload
