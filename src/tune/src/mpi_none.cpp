// The build without MPI: the MPI entry points say so.
#include "wavekit/support/error.h"
#include "wavekit/tune/mpi.h"

namespace wavekit::tune {

bool mpi_built() { return false; }
void mpi_init(int*, char***) {}
void mpi_finalize() {}
int mpi_rank() { return 0; }
int mpi_size() { return 1; }

std::vector<Record> run_loop_mpi(const Space&, Tuner&, Objective&, const LoopOptions&,
                                 std::ostream*) {
  fail("tune --mpi",
       "this wavekit was built without MPI (install libopenmpi-dev and reconfigure); use "
       "--workers N for threads on this node");
}

}  // namespace wavekit::tune
