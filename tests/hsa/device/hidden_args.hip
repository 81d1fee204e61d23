// Reads the launch state a runtime provides through hidden arguments (COV5: block counts,
// group sizes, remainders, grid dims in the implicit kernarg block; COV4: the dispatch
// packet), so that tests can check what `wavekit launch` fills in.
#include "wavekit_corpus/hip_dialect.h"

extern "C" __global__ void report_launch(unsigned* out) {
  if (wk_global_id_x() == 0 && WK_BLOCK_Y == 0 && WK_THREAD_Y == 0) {
    out[0] = WK_BLOCK_DIM_X;
    out[1] = WK_BLOCK_DIM_Y;
    out[2] = __builtin_amdgcn_grid_size_x();
    out[3] = __builtin_amdgcn_grid_size_y();
    // The first implicit dword: hidden_block_count_x (COV5) or hidden_global_offset_x (COV4).
    // Reading the implicit block makes the COV4 note list its hidden arguments too.
    out[4] = *static_cast<const unsigned*>(__builtin_amdgcn_implicitarg_ptr());
  }
}
