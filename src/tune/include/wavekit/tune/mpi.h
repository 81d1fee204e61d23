// Evaluations on MPI ranks (built when CMake finds MPI): rank 0 runs the manager (tuner,
// history, progress), every other rank is a worker evaluating one configuration at a time —
// what libEnsemble's manager and workers do for the ANL study, in C++.
#pragma once

#include <iosfwd>
#include <vector>

#include "wavekit/tune/loop.h"

namespace wavekit::tune {

// True when this build has MPI.
bool mpi_built();

// Call on every rank (after MPI_Init). On rank 0: runs the loop with the other ranks as
// workers (rank 0 evaluates itself when it is alone) and returns the records; on the other
// ranks: evaluates what rank 0 sends until it says stop, and returns nothing. The `tuner` is
// used on rank 0 only. Throws wavekit::Error when built without MPI.
std::vector<Record> run_loop_mpi(const Space& space, Tuner& tuner, Objective& objective,
                                 const LoopOptions& options, std::ostream* progress);

// MPI_Init / MPI_Finalize and this process's rank and size (0 and 1 without MPI).
void mpi_init(int* argc, char*** argv);
void mpi_finalize();
int mpi_rank();
int mpi_size();

}  // namespace wavekit::tune
