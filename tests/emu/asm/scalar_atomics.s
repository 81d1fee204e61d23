// Scalar (SMEM) atomics, gfx90a. emu_scalar_atomics_test.cpp computes every expected value on
// the CPU from the ISA's definition of the operation.
//
// scalar_atomics(mem, ops, ret, misc), one wave. For each case k, SDATA = s[20:23] is loaded
// from ops + 16k, the atomic acts on mem + 8k, and s[20:23] as it stands after the wait is
// stored to ret + 16k: the returned value (glc) or the untouched operand (no glc), and the
// registers after the returned ones, unchanged.

.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.macro CASE insn, sdata, k, glc=glc
  s_load_dwordx4 s[20:23], s[6:7], 16*\k
  s_waitcnt lgkmcnt(0)
  \insn \sdata, s[4:5], 8*\k \glc
  s_waitcnt lgkmcnt(0)
  s_store_dwordx4 s[20:23], s[8:9], 16*\k
.endm

.globl scalar_atomics
.p2align 8
.type scalar_atomics,@function
scalar_atomics:
  s_load_dwordx8 s[4:11], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  // 0..25: every operation, 32 and 64 bits, returning the value before it.
  CASE s_atomic_swap, s20, 0
  CASE s_atomic_swap_x2, s[20:21], 1
  CASE s_atomic_cmpswap, s[20:21], 2
  CASE s_atomic_cmpswap_x2, s[20:23], 3
  CASE s_atomic_add, s20, 4
  CASE s_atomic_add_x2, s[20:21], 5
  CASE s_atomic_sub, s20, 6
  CASE s_atomic_sub_x2, s[20:21], 7
  CASE s_atomic_smin, s20, 8
  CASE s_atomic_smin_x2, s[20:21], 9
  CASE s_atomic_umin, s20, 10
  CASE s_atomic_umin_x2, s[20:21], 11
  CASE s_atomic_smax, s20, 12
  CASE s_atomic_smax_x2, s[20:21], 13
  CASE s_atomic_umax, s20, 14
  CASE s_atomic_umax_x2, s[20:21], 15
  CASE s_atomic_and, s20, 16
  CASE s_atomic_and_x2, s[20:21], 17
  CASE s_atomic_or, s20, 18
  CASE s_atomic_or_x2, s[20:21], 19
  CASE s_atomic_xor, s20, 20
  CASE s_atomic_xor_x2, s[20:21], 21
  CASE s_atomic_inc, s20, 22
  CASE s_atomic_inc_x2, s[20:21], 23
  CASE s_atomic_dec, s20, 24
  CASE s_atomic_dec_x2, s[20:21], 25
  // 26..28: without glc memory changes and SDATA keeps the operand.
  CASE s_atomic_add_x2, s[20:21], 26, " "
  CASE s_atomic_cmpswap_x2, s[20:23], 27, " "
  CASE s_atomic_umax, s20, 28, " "
  // 29: the offset in an SGPR (soffset form).
  s_load_dwordx4 s[20:23], s[6:7], 16*29
  s_mov_b32 s24, 8*29
  s_waitcnt lgkmcnt(0)
  s_atomic_add_x2 s[20:21], s[4:5], s24 glc
  s_waitcnt lgkmcnt(0)
  s_store_dwordx4 s[20:23], s[8:9], 16*29
  // misc[0], misc[1]: SCC after an atomic, set and clear before it; both add to mem + 8*30.
  s_mov_b64 s[20:21], 3
  s_cmp_eq_u32 0, 0
  s_atomic_add_x2 s[20:21], s[4:5], 8*30 glc
  s_cselect_b32 s24, 1, 0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s22, 4
  s_cmp_eq_u32 0, 1
  s_atomic_add s22, s[4:5], 8*30
  s_cselect_b32 s25, 1, 0
  s_waitcnt lgkmcnt(0)
  // misc[2..3]: s_buffer_atomic_add on a resource over mem's first 256 bytes, at 0xf8 (in
  // range, returns) and 0x100 (out of range: no effect, returns 0).
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_movk_i32 s14, 0x100
  s_mov_b32 s15, 0
  s_mov_b32 s26, 5
  s_mov_b32 s27, 7
  s_buffer_atomic_add s26, s[12:15], 0xf8 glc
  s_buffer_atomic_add s27, s[12:15], 0x100 glc
  s_waitcnt lgkmcnt(0)
  s_store_dwordx4 s[24:27], s[10:11], 0x0
  s_dcache_wb
  s_waitcnt lgkmcnt(0)
  s_endpgm

// contended(counter, tickets): every wave adds 1 to a 64-bit counter, and takes a ticket with
// a returning 32-bit add; tickets[workgroup] = the ticket.
.globl contended
.p2align 8
.type contended,@function
contended:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_mov_b64 s[8:9], 1
  s_mov_b32 s10, 1
  s_lshl_b32 s11, s2, 2
  s_waitcnt lgkmcnt(0)
  s_atomic_add_x2 s[8:9], s[4:5], 0x0
  s_atomic_add s10, s[4:5], 0x8 glc
  s_waitcnt lgkmcnt(0)
  s_store_dword s10, s[6:7], s11
  s_dcache_wb
  s_waitcnt lgkmcnt(0)
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel scalar_atomics
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 1
  .amdhsa_next_free_sgpr 32
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel contended
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_next_free_vgpr 1
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 4
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: scalar_atomics
    .symbol: scalar_atomics.kd
    .kernarg_segment_size: 32
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 32
    .vgpr_count: 1
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 24, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: contended
    .symbol: contended.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 1
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
...
.end_amdgpu_metadata
