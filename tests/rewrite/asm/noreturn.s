// noreturn_call: a kernel whose last instruction is a call to a function that never returns, as
// clang emits a failing `assert` (a call to `__assert_fail`, which ends in `s_trap 2`). Nothing
// follows the call in the kernel; its fall-through is the next function's entry, and the
// function after that returns with `s_setpc_b64 s[30:31]`. The rewriter must take the symbols'
// ends as the code's ends (as the analysis does) rather than walk on into that code. The
// function that never returns writes s8..s101 first, as __assert_fail's printf writes most
// SGPRs: the rewriter must leave it out of the SGPRs it keeps clear, or find no room.
//
// Kernarg: out (u32 per lane), fail (u32). With fail == 0 every lane stores 7 and the kernel
// ends; otherwise every wave calls never_returns and traps.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.globl noreturn_call
.p2align 8
.type noreturn_call,@function
noreturn_call:
  s_load_dwordx2 s[2:3], s[0:1], 0x0    // out
  s_load_dword s4, s[0:1], 0x8          // fail
  s_waitcnt lgkmcnt(0)
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 1f
  v_mov_b32 v1, 7
  v_lshlrev_b32 v2, 2, v0
  global_store_dword v2, v1, s[2:3]
  s_endpgm
1:
  s_getpc_b64 s[6:7]
  s_add_u32 s6, s6, never_returns@rel32@lo+4
  s_addc_u32 s7, s7, never_returns@rel32@hi+12
  s_swappc_b64 s[30:31], s[6:7]
.size noreturn_call, .-noreturn_call

.p2align 2
.type never_returns,@function
never_returns:
  .irp n, 8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94,96,98,100
    s_mov_b64 s[\n:\n+1], 0
  .endr
  s_trap 2
.size never_returns, .-never_returns

.p2align 2
.type returns,@function
returns:
  s_setpc_b64 s[30:31]
.size returns, .-returns

.rodata
.p2align 6
.amdhsa_kernel noreturn_call
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 40
  .amdhsa_accum_offset 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: noreturn_call
    .symbol: noreturn_call.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 46
    .vgpr_count: 8
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
...
.end_amdgpu_metadata
