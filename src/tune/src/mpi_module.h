// libwavekit-tune-mpi.so: tune's MPI evaluator (mpi_loop.cpp) as a module the CLI loads only
// for `tune --mpi` (mpi_on_demand.cpp), so that the CLI's other processes (svm-train and
// svm-predict, two per tuning evaluation) start without loading OpenMPI's libraries.
#pragma once

#include <iosfwd>
#include <vector>

#include "wavekit/tune/loop.h"

namespace wavekit::tune {

// The functions of wavekit/tune/mpi.h, as the module's entry point returns them.
struct MpiModule {
  void (*init)(int* argc, char*** argv);
  void (*finalize)();
  int (*rank)();
  int (*size)();
  std::vector<Record> (*run_loop)(const Space& space, Tuner& tuner, Objective& objective,
                                  const LoopOptions& options, std::ostream* progress);
};

using MpiModuleEntry = const MpiModule* (*)();
inline constexpr const char* mpi_module_symbol = "wavekit_tune_mpi_module";

}  // namespace wavekit::tune
