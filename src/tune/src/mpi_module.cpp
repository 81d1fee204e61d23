// The entry point of libwavekit-tune-mpi.so (mpi_module.h).
#include "mpi_module.h"

#include "wavekit/tune/mpi.h"

extern "C" __attribute__((visibility("default"))) const wavekit::tune::MpiModule*
wavekit_tune_mpi_module() {
  namespace tune = wavekit::tune;
  static const tune::MpiModule functions{&tune::mpi_init, &tune::mpi_finalize, &tune::mpi_rank,
                                         &tune::mpi_size, &tune::run_loop_mpi};
  return &functions;
}

// mpi_on_demand.cpp casts the looked-up symbol to MpiModuleEntry: the definition must match it.
[[maybe_unused]] static constexpr wavekit::tune::MpiModuleEntry entry_point_type_check =
    &wavekit_tune_mpi_module;
