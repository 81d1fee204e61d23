// The whole-program path: an unmodified application (a HIP program built with hipcc, or an
// HSA program) runs on wavekit's emulated HSA runtime, whose dispatch observer
// (libwavekit-model-observer.so) counts each kernel dispatch as the kernel path counts a
// launch. The application's own host code chooses the sizes, the arguments and the data, so
// data-dependent control flow sees the program's data, not generated inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wavekit/model/counts.h"
#include "wavekit/model/machine.h"
#include "wavekit/model/predict.h"
#include "wavekit/support/process.h"

namespace wavekit::model {

struct ProgramSpec {
  std::vector<std::string> command;  // the program and its arguments
  std::string emulator_runtime_dir;  // the emulator's libhsa-runtime64.so.1
  std::string observer_module;       // libwavekit-model-observer.so
  std::string emulated_target;       // WAVEKIT_EMU_TARGET ("" = the runtime's default)
  // The machine (name or file) whose L2 model gives DRAM bytes; "" = no cache model.
  std::string cache_machine = "h200";
  std::string kernels;         // ECMAScript regex over the demangled names ("" = every kernel)
  std::uint64_t launches = 0;  // the first N dispatches of each kernel are counted (0 = all)
  std::string stdout_file;     // the program's stdout there ("" = this process's)
  double timeout_seconds = 0;  // 0: none
};

// One kernel of the program: every dispatch of it, and the models of those counted.
struct ProgramKernel {
  std::string name;    // demangled
  std::string symbol;  // as in the code object
  std::uint64_t launches = 0;
  std::vector<KernelModel> counted;  // in launch order
  // Each counted model's launch: its place (0-based) among the program's launches of kernels of
  // its base name (kernel_base_name: `k<float>` and `k<double>` are one), the index by which
  // `model compare` meets it with a profiler's launches of that name.
  std::vector<std::uint64_t> counted_launch;
  std::vector<std::string> errors;  // dispatches the observer could not count, and why
};

struct ProgramOutcome {
  ProgramExit exit;
  std::vector<ProgramKernel> kernels;  // in the order of their first dispatch
};

// A kernel of the program on the machines: each counted launch's prediction, and its totals
// over every launch, the uncounted ones at the counted ones' mean (launches / counted times the
// counted sums; zero when none was counted).
struct KernelTotals {
  const ProgramKernel* kernel = nullptr;
  std::vector<std::vector<Prediction>> predictions;  // per counted launch, per machine
  double fp32_flops = 0, fp64_flops = 0;
  double global_load_bytes = 0, global_store_bytes = 0, dram_bytes = 0;
  std::vector<double> seconds;  // per machine
};
std::vector<KernelTotals> total_program(const ProgramOutcome& outcome,
                                        const std::vector<Machine>& machines,
                                        const PredictOptions& options = {});

// Runs the program to completion under the observer. Throws wavekit::Error when it cannot
// start or the observer's output cannot be read; the program's own failure is in `exit`.
ProgramOutcome model_program(const ProgramSpec& spec);

}  // namespace wavekit::model
