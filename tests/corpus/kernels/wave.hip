// Wave intrinsics: ballot, readfirstlane, readlane, ds_bpermute, DPP.
#include "wavekit_corpus/hip_dialect.h"

// Workgroups of 128 (two full waves). Per work-item i with lane l of its wave:
//   ballots[wave]   = mask of lanes whose input is positive
//   first[i]        = the input of the wave's lane 0 (readfirstlane)
//   lane17[i]       = the input of lane 17 (readlane)
//   reversed[i]     = the input of lane 63 - l (ds_bpermute)
//   shifted[i]      = the input of lane l - 1 within the row of 16, 0 at a row start (DPP row_shr:1)
extern "C" __global__ void wave_ops(const int* in, unsigned long long* ballots, int* first,
                                    int* lane17, int* reversed, int* shifted) {
  unsigned i = wk_global_id_x();
  unsigned lane = wk_lane_id();
  int v = in[i];
  unsigned long long mask = __builtin_amdgcn_ballot_w64(v > 0);
  if (lane == 0) ballots[i / 64] = mask;
  first[i] = __builtin_amdgcn_readfirstlane(v);
  lane17[i] = __builtin_amdgcn_readlane(v, 17);
  reversed[i] = __builtin_amdgcn_ds_bpermute(static_cast<int>((63 - lane) * 4), v);
  shifted[i] = __builtin_amdgcn_update_dpp(0, v, 0x111 /* row_shr:1 */, 0xf, 0xf, true);
}
