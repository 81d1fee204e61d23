// `wavekit run`: start an unmodified application with the preload shim, on the emulator's HSA
// runtime (no AMD GPU needed), on ROCm's, or on ROCm's over the emulated KFD (src/kfd: ROCm's own
// runtime and driver interface, the emulator as the GPU), and turn what the shim reports into a
// summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wavekit/preload/config.h"

namespace wavekit::preload {

enum class Device { emulator, hsa, kfd };

struct RunOptions {
  ShimConfig
      shim;  // tool, plan, probe library, tool_out, cache, kernels (report_directory is set by run)
  Device device = Device::emulator;
  // The emulated GPU (WAVEKIT_EMU_TARGET, or WAVEKIT_KFD_TARGET under Device::kfd; "" = its
  // default).
  std::string emulated_target;
  std::vector<std::string> command;
  // The application's stdout / stderr into these files, and a limit on its run (0: none);
  // ChildProgram's (wavekit/support/process.h).
  std::string stdout_file, stderr_file;
  double timeout_seconds = 0;
};

struct Installation {
  std::string preload_library;       // libwavekit-preload.so
  std::string emulator_runtime_dir;  // directory with the emulator's libhsa-runtime64.so.1
  std::string kfd_library = {};      // libwavekit-kfd.so, the emulated KFD ("" when not built)
};

struct RunResult {
  int exit_status = 0;     // the application's (128 + signal when it was killed)
  int signal = 0;          // the signal that killed it, 0 when it exited
  bool timed_out = false;  // killed at RunOptions::timeout_seconds
  // The shim's reports merged over every process of the application that used HSA: objects,
  // dispatches (each with the "pid" that ran it), messages, "processes" (how many reported);
  // null when none reported.
  nlohmann::json summary;
};

// Device::hsa when this machine has an AMD GPU (/dev/kfd), else Device::emulator.
Device default_device();

// Runs the application to completion with the shim; throws wavekit::Error when it cannot start.
RunResult run_application(const RunOptions& options, const Installation& installation);

}  // namespace wavekit::preload
