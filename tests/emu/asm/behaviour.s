// Directed kernels for the emulator's behaviour tests (gfx90a). Every kernel takes one or two
// global buffers in its kernarg segment; s[0:1] holds the kernarg pointer, s2 the workgroup id.

.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

// out[lane] = in[lane] + 1, with the s_waitcnt the load needs.
.globl load_add_with_wait
.p2align 8
.type load_add_with_wait,@function
load_add_with_wait:
  s_load_dwordx4 s[4:7], s[0:1], 0x0        // s[4:5] = in, s[6:7] = out
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_u32 v3, 1, v2
  global_store_dword v1, v3, s[6:7]
  s_endpgm

// The same without the wait before the add: v2 still holds its old value (0) when read.
.globl load_add_missing_wait
.p2align 8
.type load_add_missing_wait,@function
load_add_missing_wait:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  v_add_u32 v3, 1, v2
  s_waitcnt vmcnt(0)
  global_store_dword v1, v3, s[6:7]
  s_endpgm

// Stores 1 GiB past the start of `out`.
.globl store_out_of_bounds
.p2align 8
.type store_out_of_bounds,@function
store_out_of_bounds:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_mov_b32 v1, 0x40000000
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v0, s[6:7]
  s_endpgm

.globl trap_kernel
.p2align 8
.type trap_kernel,@function
trap_kernel:
  s_nop 0
  s_trap 2
  s_endpgm

// An encoding that is no gfx90a instruction.
.globl illegal_kernel
.p2align 8
.type illegal_kernel,@function
illegal_kernel:
  s_nop 0
  .long 0xffffffff
  s_endpgm

// Workgroup 0 spins (with s_sleep) until workgroup 1 sets flag[0]; with only one workgroup
// resident, workgroup 1 never starts: a forward-progress deadlock.
.globl spin_on_other_workgroup
.p2align 8
.type spin_on_other_workgroup,@function
spin_on_other_workgroup:
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lsetter
.Lspin:
  s_sleep 1
  s_load_dword s6, s[4:5], 0x0 glc
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s6, 0
  s_cbranch_scc1 .Lspin
  s_endpgm
.Lsetter:
  v_mov_b32 v1, 1
  v_mov_b32 v2, 0
  global_store_dword v2, v1, s[4:5]
  s_endpgm

// In every workgroup of two waves, wave 0 spins (with s_sleep) until flag[0] is set, which
// nothing does, and wave 1 waits at s_barrier for wave 0: a deadlock with one wave of each kind.
.globl spin_and_barrier
.p2align 8
.type spin_and_barrier,@function
spin_and_barrier:
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_readfirstlane_b32 s6, v0
  s_cmp_lt_u32 s6, 64
  s_cbranch_scc0 .Lwait_at_barrier
.Lspin_on_flag:
  s_sleep 1
  s_load_dword s7, s[4:5], 0x0 glc
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s7, 0
  s_cbranch_scc1 .Lspin_on_flag
.Lwait_at_barrier:
  s_barrier
  s_endpgm

// Spins until flag[0] (first argument) is set, storing to and atomically adding into
// out[lane] (second argument) on every pass, as a probe writing its arena would; gives up after
// 200,000 passes, so that a run where those writes count as progress ends instead of hanging.
.globl spin_writing
.p2align 8
.type spin_writing,@function
spin_writing:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_mov_b32 s8, 200000
  v_lshlrev_b32 v3, 2, v0
  v_mov_b32 v1, 1
  s_waitcnt lgkmcnt(0)
.Lwrite_and_poll:
  global_store_dword v3, v1, s[6:7]
  global_atomic_add v3, v1, s[6:7]
  s_load_dword s9, s[4:5], 0x0 glc
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_cmp_eq_u32 s9, 0
  s_cbranch_scc0 .Lflag_set
  s_sub_u32 s8, s8, 1
  s_cmp_eq_u32 s8, 0
  s_cbranch_scc0 .Lwrite_and_poll
.Lflag_set:
  s_endpgm

// Each lane stores lane + 0x100 through the private segment buffer (swizzled: the lane's dword
// at base + wave offset + lane * 4), then loads it back with a GLOBAL load at that address and
// writes it to out[lane]. private_past_own_segment loads 1 MiB past the wave's own segment.
.globl private_at_global_address
.p2align 8
.type private_at_global_address,@function
private_at_global_address:
  s_load_dwordx4 s[8:11], s[4:5], 0x0
  v_add_u32 v1, 0x100, v0
  buffer_store_dword v1, off, s[0:3], s6
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v5, 2, v0
  s_and_b32 s13, s1, 0xffff
  s_add_u32 s12, s0, s6
  s_addc_u32 s13, s13, 0
  v_mov_b32 v3, s13
  v_add_co_u32 v2, vcc, s12, v5
  v_addc_co_u32 v3, vcc, 0, v3, vcc
  global_load_dword v4, v[2:3], off
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v5, v4, s[10:11]
  s_endpgm

.globl private_past_own_segment
.p2align 8
.type private_past_own_segment,@function
private_past_own_segment:
  s_load_dwordx4 s[8:11], s[4:5], 0x0
  v_lshlrev_b32 v5, 2, v0
  s_and_b32 s13, s1, 0xffff
  s_add_u32 s12, s0, s6
  s_addc_u32 s13, s13, 0
  s_add_u32 s12, s12, 0x100000
  s_addc_u32 s13, s13, 0
  v_mov_b32 v3, s13
  v_add_co_u32 v2, vcc, s12, v5
  v_addc_co_u32 v3, vcc, 0, v3, vcc
  global_load_dword v4, v[2:3], off
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v5, v4, s[10:11]
  s_endpgm

// A long loop that stores nothing before it ends, as an energy sum or a path integral does:
// in[0] passes of x = 3 * x + lane (from x = 0, mod 2^32), then out[lane] = x. Its state (the
// pass counter, x) changes on every pass.
.globl long_loop
.p2align 8
.type long_loop,@function
long_loop:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_mov_b32 v1, 0
  v_lshlrev_b32 v3, 2, v0
  s_waitcnt lgkmcnt(0)
  s_load_dword s8, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
.Llong_loop_pass:
  v_mul_lo_u32 v1, v1, 3
  v_add_u32 v1, v1, v0
  s_sub_u32 s8, s8, 1
  s_cmp_eq_u32 s8, 0
  s_cbranch_scc0 .Llong_loop_pass
  global_store_dword v3, v1, s[6:7]
  s_endpgm

// Waits for flag[0] forever, counting its tries: no store, and a state that never repeats.
.globl count_forever
.p2align 8
.type count_forever,@function
count_forever:
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_mov_b32 s8, 0
  s_waitcnt lgkmcnt(0)
.Lcount_pass:
  s_add_u32 s8, s8, 1
  s_load_dword s6, s[4:5], 0x0 glc
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s6, 0
  s_cbranch_scc1 .Lcount_pass
  s_endpgm

// Spins on the clock (s_memtime, as clock64() compiles) until in[0] cycles passed, storing
// nothing, then out[lane] = 1.
.globl clock_wait
.p2align 8
.type clock_wait,@function
clock_wait:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_load_dword s8, s[4:5], 0x0
  s_memtime s[10:11]
  s_waitcnt lgkmcnt(0)
.Lclock_pass:
  s_memtime s[12:13]
  s_waitcnt lgkmcnt(0)
  s_sub_u32 s12, s12, s10
  s_cmp_lt_u32 s12, s8
  s_cbranch_scc1 .Lclock_pass
  v_lshlrev_b32 v3, 2, v0
  v_mov_b32 v1, 1
  global_store_dword v3, v1, s[6:7]
  s_endpgm

.rodata
.macro KERNEL name
.p2align 6
.amdhsa_kernel \name
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 8
.end_amdhsa_kernel
.endm
KERNEL load_add_with_wait
KERNEL load_add_missing_wait
KERNEL store_out_of_bounds
KERNEL trap_kernel
KERNEL illegal_kernel
KERNEL spin_on_other_workgroup
KERNEL spin_and_barrier
KERNEL spin_writing
KERNEL long_loop
KERNEL count_forever
KERNEL clock_wait
.macro PRIVATE_KERNEL name
.p2align 6
.amdhsa_kernel \name
  .amdhsa_user_sgpr_private_segment_buffer 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 0
  .amdhsa_system_sgpr_private_segment_wavefront_offset 1
  .amdhsa_private_segment_fixed_size 16
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 8
.end_amdhsa_kernel
.endm
PRIVATE_KERNEL private_at_global_address
PRIVATE_KERNEL private_past_own_segment

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: load_add_with_wait
    .symbol: load_add_with_wait.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: load_add_missing_wait
    .symbol: load_add_missing_wait.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: store_out_of_bounds
    .symbol: store_out_of_bounds.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: trap_kernel
    .symbol: trap_kernel.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: illegal_kernel
    .symbol: illegal_kernel.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: spin_on_other_workgroup
    .symbol: spin_on_other_workgroup.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: spin_and_barrier
    .symbol: spin_and_barrier.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: spin_writing
    .symbol: spin_writing.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: private_at_global_address
    .symbol: private_at_global_address.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 16
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: private_past_own_segment
    .symbol: private_past_own_segment.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 16
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: long_loop
    .symbol: long_loop.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: count_forever
    .symbol: count_forever.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: clock_wait
    .symbol: clock_wait.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
...
.end_amdgpu_metadata
