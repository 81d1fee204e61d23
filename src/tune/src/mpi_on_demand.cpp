// wavekit/tune/mpi.h for the CLI: the MPI evaluator is in libwavekit-tune-mpi.so
// (mpi_module.h), loaded on the first call, so that only `tune --mpi` loads OpenMPI.
#include <dlfcn.h>

#include <string>

#include "mpi_module.h"
#include "wavekit/support/error.h"
#include "wavekit/support/install.h"
#include "wavekit/tune/mpi.h"

namespace wavekit::tune {
namespace {

const MpiModule& mpi_module() {
  static const MpiModule* const functions = [] {
    const std::string path = companion_path("libwavekit-tune-mpi.so", WAVEKIT_TUNE_MPI_MODULE);
    // RTLD_GLOBAL: OpenMPI's components (mca_*.so, which it loads itself) are not linked to
    // libmpi and take its symbols from the global scope.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    const auto entry =
        module ? reinterpret_cast<MpiModuleEntry>(dlsym(module, mpi_module_symbol)) : nullptr;
    if (!entry) fail("tune --mpi", std::string("cannot load the MPI evaluator: ") + dlerror());
    return entry();
  }();
  return *functions;
}

}  // namespace

bool mpi_built() { return true; }
void mpi_init(int* argc, char*** argv) { mpi_module().init(argc, argv); }
void mpi_finalize() { mpi_module().finalize(); }
int mpi_rank() { return mpi_module().rank(); }
int mpi_size() { return mpi_module().size(); }

std::vector<Record> run_loop_mpi(const Space& space, Tuner& tuner, Objective& objective,
                                 const LoopOptions& options, std::ostream* progress) {
  return mpi_module().run_loop(space, tuner, objective, options, progress);
}

}  // namespace wavekit::tune
