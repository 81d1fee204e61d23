// Instructions and registers real HIP programs (HeCBench, docs/hecbench.md) use that the directed
// tests had missed (gfx90a).
//
// half_float: binary16 VALU instructions. Kernarg: a, b, c (u32, binary16 in the
// low halves, noise in the high halves), f (f32), out. v10 = lane * 4; v1 = a[lane], v2 = b[lane],
// v3 = c[lane], v5 = f[lane]. Before each op v4 holds 0xdeadbeef, so that a high half left as it
// was (instead of zeroed) shows. Each RESULT stores v4 at out + 256 * k + lane * 4, k counting up;
// emu_half_float_test.cpp computes each k's expected value on the CPU, in the same order.

.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.macro RESULT
  global_store_dword v10, v4, s[12:13]
  s_add_u32 s12, s12, 256
  s_addc_u32 s13, s13, 0
.endm

.macro OP16 text:vararg
  v_mov_b32 v4, 0xdeadbeef
  \text
  RESULT
.endm

.macro CMP16 text:vararg
  \text
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
.endm

.globl half_float
.p2align 8
.type half_float,@function
half_float:
  s_load_dwordx4 s[4:7], s[0:1], 0x0        // a, b
  s_load_dwordx4 s[8:11], s[0:1], 0x10      // c, f
  s_load_dwordx2 s[14:15], s[0:1], 0x20     // out
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[12:13], s[14:15]
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v3, v10, s[8:9]
  global_load_dword v5, v10, s[10:11]
  s_waitcnt vmcnt(0)
  OP16 v_cvt_f16_f32 v4, v5
  OP16 v_cvt_f16_f32_e64 v4, -v5 clamp
  OP16 v_cvt_f16_f32_e64 v4, v5 clamp
  OP16 v_add_f16 v4, v1, v2
  OP16 v_sub_f16 v4, v1, v2
  OP16 v_subrev_f16 v4, v1, v2
  OP16 v_mul_f16 v4, v1, v2
  OP16 v_mul_f16_e64 v4, v1, -v2
  OP16 v_max_f16 v4, v1, v2
  OP16 v_min_f16 v4, v1, v2
  OP16 v_fma_f16 v4, v1, v2, v3
  OP16 v_add_f16_e64 v4, |v1|, v2 clamp
  OP16 v_cvt_f16_u16 v4, v1
  OP16 v_cvt_f16_i16 v4, v1
  OP16 v_cvt_u16_f16 v4, v1
  OP16 v_cvt_i16_f16 v4, v1
  OP16 v_floor_f16 v4, v1
  OP16 v_ceil_f16 v4, v1
  OP16 v_trunc_f16 v4, v1
  OP16 v_rndne_f16 v4, v1
  OP16 v_sqrt_f16 v4, v1
  // The exponent is an i16 in the low half: (lane & 31) - 16, noise above it.
  v_and_b32 v7, 31, v0
  v_add_u32 v7, 0xabccfff0, v7
  OP16 v_ldexp_f16 v4, v1, v7
  OP16 v_add_f16 v4, 0.5, v1
  OP16 v_add_f16 v4, 0x4200, v1
  CMP16 v_cmp_lt_f16_e64 s[20:21], v1, v2
  CMP16 v_cmp_eq_f16_e64 s[20:21], v1, v2
  CMP16 v_cmp_gt_f16_e64 s[20:21], v2, v1
  CMP16 v_cmp_u_f16_e64 s[20:21], v1, v2
  CMP16 v_cmp_nge_f16_e64 s[20:21], v1, v2
  CMP16 v_cmp_neq_f16_e64 s[20:21], v1, v2
  // v_cmp_class: quiet NaN, -inf, -subnormal, +zero, +normal (bits 1, 2, 4, 6, 8)
  v_mov_b32 v6, 0x156
  CMP16 v_cmp_class_f16_e64 s[20:21], v1, v6
  // VOPC (vcc) form
  v_cmp_le_f16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  s_endpgm

// Every lane adds lane + 0.5 to one LDS double (ds_add_rtn_f64), which starts at 0.25; the lane
// stores what its add returned (out[lane]) and, after all adds, the final value (out[64 + lane]).
.globl lds_add_f64
.p2align 8
.type lds_add_f64,@function
lds_add_f64:
  s_load_dwordx2 s[4:5], s[0:1], 0x0        // out: 128 doubles
  v_mov_b32 v8, 0
  v_mov_b32 v6, 0
  v_mov_b32 v7, 0x3fd00000                  // 0.25
  ds_write_b64 v8, v[6:7]
  s_waitcnt lgkmcnt(0)
  v_cvt_f64_u32 v[2:3], v0
  v_add_f64 v[2:3], v[2:3], 0.5
  ds_add_rtn_f64 v[4:5], v8, v[2:3]
  s_waitcnt lgkmcnt(0)
  ds_read_b64 v[6:7], v8
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v10, 3, v0
  s_waitcnt lgkmcnt(0)
  global_store_dwordx2 v10, v[4:5], s[4:5]
  v_add_u32 v10, 0x200, v10
  global_store_dwordx2 v10, v[6:7], s[4:5]
  s_endpgm

// merge's kernels form a generic LDS address as clang does for gfx9 without a queue pointer:
// the shared aperture's bits 63:48 from HW_REG_SH_MEM_BASES[31:16] as the address's high half.
// Lane l stores l + 100 through that flat address at LDS offset 4 * l, reads it back with
// ds_read_b32 (the LDS path, not the flat one) and stores it at out[l]; out[64] and out[65]
// are the raw shared and private fields, out[66] whether the flat address lies in LDS
// (nonzero: a flat_load through it gave the same value).
.globl apertures
.p2align 8
.type apertures,@function
apertures:
  s_load_dwordx2 s[4:5], s[0:1], 0x0        // out
  s_getreg_b32 s6, hwreg(HW_REG_SH_MEM_BASES, 16, 16)
  s_getreg_b32 s7, hwreg(HW_REG_SH_MEM_BASES, 0, 16)
  s_lshl_b32 s8, s6, 16                     // the aperture's high 32 bits
  v_lshlrev_b32 v1, 2, v0                   // LDS offset = 4 * lane
  v_mov_b32 v12, v1
  v_mov_b32 v13, s8
  v_add_u32 v3, 100, v0
  flat_store_dword v[12:13], v3
  s_waitcnt vmcnt(0) lgkmcnt(0)
  ds_read_b32 v4, v1
  flat_load_dword v5, v[12:13]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v1, v4, s[4:5]
  v_mov_b32 v6, 0
  v_mov_b32 v7, s6
  v_mov_b32 v8, s7
  v_cmp_eq_u32 vcc, v4, v5
  v_cndmask_b32 v9, 0, 1, vcc
  v_cmp_eq_u32 vcc, 0, v0
  s_and_saveexec_b64 s[10:11], vcc
  global_store_dword v6, v7, s[4:5] offset:256
  global_store_dword v6, v8, s[4:5] offset:260
  global_store_dword v6, v9, s[4:5] offset:264
  s_endpgm

// merge's ds_read_b32 over a negative base: lane l writes l + 7 with ds_write_b32 at VGPR
// 4 * l - 4 and offset:8 (LDS byte 4 * l + 4 when the 32-bit sum wraps), reads it back at
// 4 * l + 4 with no offset, and stores it at out[l].
.globl lds_wrap
.p2align 8
.type lds_wrap,@function
lds_wrap:
  s_load_dwordx2 s[4:5], s[0:1], 0x0        // out
  v_lshlrev_b32 v1, 2, v0
  v_subrev_u32 v2, 4, v1                    // 4 * l - 4: 0xfffffffc for lane 0
  v_add_u32 v3, 7, v0
  ds_write_b32 v2, v3 offset:8
  s_waitcnt lgkmcnt(0)
  v_add_u32 v5, 4, v1
  ds_read_b32 v4, v5
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v4, s[4:5]
  s_endpgm

// fma_mix: the VOP3P mixed-precision FMAs (crossEntropy: v_fma_mix_f32 of f16 sources; gru:
// v_fma_mixlo_f16 of f32 sources). Kernarg: a, b, c (u32, two binary16 halves each), fa, fb, fc
// (f32), out. v1 = a, v2 = b, v3 = c, v5 = fa, v6 = fb, v7 = fc; v4 holds 0xdeadbeef before each
// op (mixlo keeps the high half, mixhi the low half). Each RESULT stores v4 at out + 256 * k +
// 4 * lane; emu_real_programs_test.cpp computes each k's expected value, in the same order.
.globl fma_mix
.p2align 8
.type fma_mix,@function
fma_mix:
  s_load_dwordx4 s[4:7], s[0:1], 0x0        // a, b
  s_load_dwordx4 s[8:11], s[0:1], 0x10      // c, fa
  s_load_dwordx4 s[16:19], s[0:1], 0x20     // fb, fc
  s_load_dwordx2 s[14:15], s[0:1], 0x30     // out
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[12:13], s[14:15]
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v3, v10, s[8:9]
  global_load_dword v5, v10, s[10:11]
  global_load_dword v6, v10, s[16:17]
  global_load_dword v7, v10, s[18:19]
  s_waitcnt vmcnt(0)
  OP16 v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[1,1,1]
  OP16 v_fma_mix_f32 v4, v1, v2, v3 op_sel:[1,0,1] op_sel_hi:[1,1,1]
  OP16 v_fma_mix_f32 v4, v5, v2, v6 op_sel:[0,1,0] op_sel_hi:[0,1,0]
  OP16 v_fma_mix_f32 v4, -v5, |v2|, -|v7| op_sel_hi:[0,1,0]
  OP16 v_fma_mix_f32 v4, v5, v6, v7
  OP16 v_fma_mix_f32 v4, |v1|, v2, -v3 op_sel:[0,1,0] op_sel_hi:[1,1,1] clamp
  OP16 v_fma_mix_f32 v4, v1, 1.0, v5 op_sel_hi:[1,0,0]
  OP16 v_fma_mixlo_f16 v4, v5, v6, v7
  OP16 v_fma_mixlo_f16 v4, v1, v2, v3 op_sel_hi:[1,1,1]
  OP16 v_fma_mixlo_f16 v4, v1, -v5, |v3| op_sel:[1,0,0] op_sel_hi:[1,0,1] clamp
  OP16 v_fma_mixhi_f16 v4, v1, v2, v3 op_sel:[0,1,1] op_sel_hi:[1,1,1]
  OP16 v_fma_mixhi_f16 v4, -v2, v1, v7 op_sel:[1,1,0] op_sel_hi:[1,1,0] clamp
  s_mov_b32 s20, 0x3e000000                 // 0.125
  OP16 v_fma_mixlo_f16 v4, s20, v6, v7
  // The even lanes only: the odd ones keep 0xdeadbeef whole.
  v_mov_b32 v4, 0xdeadbeef
  v_and_b32 v8, 1, v0
  v_cmp_eq_u32 vcc, 0, v8
  s_and_saveexec_b64 s[22:23], vcc
  v_fma_mixhi_f16 v4, v1, v2, v3 op_sel_hi:[1,1,1]
  s_mov_b64 exec, s[22:23]
  RESULT
  s_endpgm

// pk_f32_constants: packed f32 with inline float constants, as spm's coordinates are computed
// (v_pk_add_f32 v[4:5], v[4:5], 1.0 op_sel_hi:[1,0]): the constant is the f32 value in the low
// dword, which op_sel_hi = 0 selects for the high half too. Kernarg: x, y (two f32 per lane),
// out. v[2:3] = x[lane], v[6:7] = y[lane]; each result v[4:5] goes to out + 512 * k + 8 * lane.
.macro RESULT64
  global_store_dwordx2 v10, v[4:5], s[12:13]
  s_add_u32 s12, s12, 512
  s_addc_u32 s13, s13, 0
.endm

.globl pk_f32_constants
.p2align 8
.type pk_f32_constants,@function
pk_f32_constants:
  s_load_dwordx4 s[4:7], s[0:1], 0x0        // x, y
  s_load_dwordx2 s[12:13], s[0:1], 0x10     // out
  v_lshlrev_b32 v10, 3, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx2 v[2:3], v10, s[4:5]
  global_load_dwordx2 v[6:7], v10, s[6:7]
  s_waitcnt vmcnt(0)
  v_pk_add_f32 v[4:5], v[2:3], 1.0 op_sel_hi:[1,0]
  RESULT64
  v_pk_mul_f32 v[4:5], v[2:3], 0.5 op_sel_hi:[1,0]
  RESULT64
  v_pk_fma_f32 v[4:5], v[2:3], v[6:7], -2.0 op_sel_hi:[1,1,0]
  RESULT64
  v_pk_mul_f32 v[4:5], v[2:3], 0.15915494 op_sel_hi:[1,0]
  RESULT64
  v_pk_add_f32 v[4:5], 4.0, v[2:3] op_sel_hi:[0,1]
  RESULT64
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel lds_wrap
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_group_segment_fixed_size 512
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel apertures
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_group_segment_fixed_size 256
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel half_float
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel lds_add_f64
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_group_segment_fixed_size 64
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel fma_mix
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel pk_f32_constants
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 16
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: lds_wrap
    .symbol: lds_wrap.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 512
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: apertures
    .symbol: apertures.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 256
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: half_float
    .symbol: half_float.kd
    .kernarg_segment_size: 40
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 24
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 24, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 32, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: lds_add_f64
    .symbol: lds_add_f64.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 64
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: fma_mix
    .symbol: fma_mix.kd
    .kernarg_segment_size: 56
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 24
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 24, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 32, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 40, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 48, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: pk_f32_constants
    .symbol: pk_f32_constants.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }
...
.end_amdgpu_metadata
