// long_branches: a kernel whose branches fit SOPP's 16-bit range (at most 32,767 words) but
// whose instrumented copy does not: a loop over 8,000 two-block steps (96 KB of code) that bbcount
// grows past 128 KiB, with a forward s_cbranch_scc1 over the whole body, a divergent region
// (s_cbranch_execz over 1,000 more steps) and the backward s_cbranch_scc1 that closes the loop.
// The rewriter must relax them (long jumps); rewrite_bbcount_tests checks the outputs against
// the CPU arithmetic below and the counts against the emulator's ground truth.
//
// Kernarg: out (u32 per lane), iterations (u32). Per lane: out[lane] = s_sum + v_sum where
//   s_sum = 8,000 * (odd iterations; iteration 2 skips the body, as an even one adds nothing)
//   v_sum = 1,000 * (even iterations i in which lane < 16 * i; none runs in iteration 0)
// With 5 iterations: 16,000 + 2,000 for lanes 0-31, 16,000 + 1,000 for lanes 32-63.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.globl long_branches
.p2align 8
.type long_branches,@function
long_branches:
  s_load_dwordx2 s[2:3], s[0:1], 0x0    // out
  s_load_dword s4, s[0:1], 0x8          // iterations
  v_mov_b32 v1, 0                       // v_sum
  s_mov_b32 s5, 0                       // the iteration
  s_mov_b32 s6, 0                       // s_sum
  s_waitcnt lgkmcnt(0)
.Lloop:
  s_cmp_eq_u32 s5, 2
  s_cbranch_scc1 .Lskip                 // forward, over the whole body
  .rept 8000
    s_bitcmp1_b32 s5, 0
    s_cbranch_scc0 1f
    s_add_u32 s6, s6, 1
  1:
  .endr
.Lskip:
  s_lshl_b32 s7, s5, 4
  v_cmp_gt_u32 vcc, s7, v0              // lanes below 16 * iteration
  s_and_saveexec_b64 s[8:9], vcc
  s_cbranch_execz .Ljoin                // taken in iteration 0: no lane
  .rept 1000
    s_bitcmp1_b32 s5, 0
    s_cbranch_scc1 1f
    v_add_u32 v1, 1, v1                 // even iterations (but 0, where no lane runs)
  1:
  .endr
.Ljoin:
  s_or_b64 exec, exec, s[8:9]
  s_add_u32 s5, s5, 1
  s_cmp_lt_u32 s5, s4
  s_cbranch_scc1 .Lloop                 // backward, over everything
  v_add_u32 v1, s6, v1
  v_lshlrev_b32 v2, 2, v0
  global_store_dword v2, v1, s[2:3]
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel long_branches
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: long_branches
    .symbol: long_branches.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
...
.end_amdgpu_metadata
