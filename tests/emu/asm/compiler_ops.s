// VALU instructions compilers emit for half-precision and integer math and byte packing that the
// emulator had no semantics for (gfx90a): v_pack_b32_f16, v_cvt_pkrtz_f16_f32, the 16-bit
// min3 / max3 / med3, v_mad_{u32_u16,i32_i16}, the packed i16 operations, v_mac_f16,
// v_pk_fmac_f16, v_frexp_{mant,exp_i16}_f16, v_cvt_{flr,rpi}_i32_f32, v_cmpx_class_*, the dot
// products and the sums of absolute differences, with their op_sel, abs / neg and clamp forms;
// v_swap_b32.
//
// compiler_ops: kernarg A, B, C (integers), H0, H1, H2 (two binary16 each), F0, F1 (f32), out.
// v1 = A, v2 = B, v3 = C, v5 = H0, v6 = H1, v7 = H2, v8 = F0, v9 = F1 (per lane); v10 = lane * 4.
// Before each op v4 holds 0xdeadbeef (OP) or an accumulator (ACC), and each RESULT stores v4 at
// out + 256 * k + lane * 4, k counting up; emu_real_programs_test.cpp computes each k's
// expected value on the CPU from the ISA's definition, in the same order.

.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.macro RESULT
  global_store_dword v10, v4, s[22:23]
  s_add_u32 s22, s22, 256
  s_addc_u32 s23, s23, 0
.endm

.macro OP text:vararg
  v_mov_b32 v4, 0xdeadbeef
  \text
  RESULT
.endm

.macro ACC accumulator, text:vararg
  v_mov_b32 v4, \accumulator
  \text
  RESULT
.endm

// A 64-bit result in v[12:13]: its low, then its high dword.
.macro OP64 text:vararg
  \text
  v_mov_b32 v4, v12
  RESULT
  v_mov_b32 v4, v13
  RESULT
.endm

// A v_cmpx: the lane mask it wrote to `mask`, then EXEC after it (EXEC restored in between).
.macro CMPX mask, text:vararg
  s_mov_b64 s[26:27], exec
  \text
  s_mov_b64 s[28:29], exec
  s_mov_b64 exec, s[26:27]
  v_cndmask_b32_e64 v4, 0, 1, \mask
  RESULT
  v_cndmask_b32_e64 v4, 0, 1, s[28:29]
  RESULT
.endm

.globl compiler_ops
.p2align 8
.type compiler_ops,@function
compiler_ops:
  s_load_dwordx8 s[4:11], s[0:1], 0x0       // A, B, C, H0
  s_load_dwordx8 s[12:19], s[0:1], 0x20     // H1, H2, F0, F1
  s_load_dwordx2 s[20:21], s[0:1], 0x40     // out
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[22:23], s[20:21]
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v3, v10, s[8:9]
  global_load_dword v5, v10, s[10:11]
  global_load_dword v6, v10, s[12:13]
  global_load_dword v7, v10, s[14:15]
  global_load_dword v8, v10, s[16:17]
  global_load_dword v9, v10, s[18:19]
  s_waitcnt vmcnt(0)
  OP v_pack_b32_f16 v4, v5, v6
  OP v_pack_b32_f16 v4, -v5, |v6| op_sel:[1,1,0]
  OP v_pack_b32_f16 v4, v6, -v5 op_sel:[0,1,0]
  OP v_cvt_pkrtz_f16_f32 v4, v8, v9
  OP v_cvt_pkrtz_f16_f32 v4, -v9, |v8|
  OP v_med3_f16 v4, v5, v6, v7
  OP v_med3_f16 v4, v5, -v6, v7 op_sel:[1,0,1,0] clamp
  OP v_min3_f16 v4, v5, v6, v7
  OP v_max3_f16 v4, v5, |v6|, v7 op_sel:[0,1,0,0]
  OP v_med3_i16 v4, v1, v2, v3
  OP v_med3_u16 v4, v1, v2, v3 op_sel:[1,0,0,0]
  OP v_min3_i16 v4, v1, v2, v3
  OP v_max3_i16 v4, v1, v2, v3 op_sel:[0,0,1,0]
  OP v_min3_u16 v4, v1, v2, v3 op_sel:[0,1,0,0]
  OP v_max3_u16 v4, v1, v2, v3
  OP v_mad_u32_u16 v4, v1, v2, v3
  OP v_mad_u32_u16 v4, v1, v2, v3 op_sel:[1,1,0,0] clamp
  OP v_mad_i32_i16 v4, v1, v2, v3
  OP v_mad_i32_i16 v4, v1, v2, v3 op_sel:[0,1,0,0] clamp
  OP v_pk_add_i16 v4, v1, v2
  OP v_pk_add_i16 v4, v1, v2 clamp
  OP v_pk_sub_i16 v4, v1, v2
  OP v_pk_sub_i16 v4, v1, v2 op_sel:[1,0] op_sel_hi:[0,1] clamp
  OP v_pk_min_i16 v4, v1, v2
  OP v_pk_max_i16 v4, v1, v2 op_sel_hi:[1,0]
  OP v_pk_ashrrev_i16 v4, v1, v2
  OP v_pk_mad_i16 v4, v1, v2, v3
  OP v_pk_mad_i16 v4, v1, v2, v3 clamp
  OP v_pk_mad_u16 v4, v1, v2, v3 op_sel:[0,0,1] op_sel_hi:[1,1,0]
  OP v_pk_mad_u16 v4, v1, v2, v3 clamp
  OP v_pk_add_u16 v4, v1, v2 clamp
  OP v_pk_sub_u16 v4, v1, v2 clamp
  ACC v7, v_mac_f16 v4, v5, v6
  ACC v7, v_mac_f16_e64 v4, -v5, |v6| clamp
  ACC v7, v_pk_fmac_f16 v4, v5, v6
  OP v_frexp_mant_f16 v4, v5
  OP v_frexp_exp_i16_f16 v4, v5
  OP v_cvt_flr_i32_f32 v4, v8
  OP v_cvt_rpi_i32_f32 v4, v8
  OP v_cvt_rpi_i32_f32_e64 v4, -v8
  CMPX s[24:25], v_cmpx_class_f32_e64 s[24:25], v8, v1
  CMPX vcc, v_cmpx_class_f32 vcc, v8, v1
  CMPX s[24:25], v_cmpx_class_f16_e64 s[24:25], v5, v1
  CMPX s[24:25], v_cmpx_class_f64_e64 s[24:25], v[8:9], v1
  OP v_dot2_f32_f16 v4, v5, v6, v9
  OP v_dot2_f32_f16 v4, v5, v6, v9 op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,1,0] clamp
  ACC v9, v_dot2c_f32_f16 v4, v5, v6
  OP v_dot2_i32_i16 v4, v1, v2, v3
  OP v_dot2_i32_i16 v4, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[1,0,1] clamp
  OP v_dot2_u32_u16 v4, v1, v2, v3
  OP v_dot2_u32_u16 v4, v1, v2, v3 clamp
  OP v_dot4_i32_i8 v4, v1, v2, v3
  OP v_dot4_i32_i8 v4, v1, v2, v3 clamp
  OP v_dot4_u32_u8 v4, v1, v2, v3
  OP v_dot4_u32_u8 v4, v1, v2, v3 clamp
  OP v_dot8_i32_i4 v4, v1, v2, v3
  OP v_dot8_i32_i4 v4, v1, v2, v3 clamp
  OP v_dot8_u32_u4 v4, v1, v2, v3
  OP v_dot8_u32_u4 v4, v1, v2, v3 clamp
  ACC v3, v_dot2c_i32_i16 v4, v1, v2
  ACC v3, v_dot4c_i32_i8 v4, v1, v2
  ACC v3, v_dot8c_i32_i4 v4, v1, v2
  ACC v3, v_dot4c_i32_i8_e64 v4, v1, v2 clamp
  OP v_sad_u8 v4, v1, v2, v3
  OP v_sad_u8 v4, v1, v2, v3 clamp
  OP v_sad_hi_u8 v4, v1, v2, v3
  OP v_sad_u16 v4, v1, v2, v3
  OP v_sad_u16 v4, v1, v2, v3 clamp
  OP v_msad_u8 v4, v1, v2, v3
  OP v_cvt_pknorm_i16_f32 v4, v8, v9
  OP v_cvt_pknorm_u16_f32 v4, -v9, |v8|
  OP v_cvt_pknorm_i16_f16 v4, v5, -v6 op_sel:[1,0,0]
  OP v_cvt_pknorm_u16_f16 v4, |v5|, v6 op_sel:[0,1,0]
  OP v_cvt_norm_i16_f16 v4, v5
  OP v_cvt_norm_u16_f16_e64 v4, -v5
  v_lshrrev_b32 v11, 3, v0                  // the byte: (lane >> 3) & 3, noise above
  v_or_b32 v11, 0xabcd00, v11
  ACC v3, v_cvt_pk_u8_f32 v4, v8, v11, v4
  ACC v3, v_cvt_pk_u8_f32 v4, -v8, v11, v4
  OP v_cubeid_f32 v4, v8, v9, v1
  OP v_cubema_f32 v4, v8, v9, v1
  OP v_cubesc_f32 v4, v8, v9, v1
  OP v_cubetc_f32 v4, v8, v9, v1
  OP v_cubeid_f32 v4, v9, v1, v8
  OP v_cubesc_f32 v4, -v9, v1, v8
  OP v_cubetc_f32 v4, v1, |v8|, v9
  OP v_cubema_f32 v4, v1, v9, v8
  OP v_cvt_off_f32_i4 v4, v1
  OP v_cvt_off_f32_i4_e64 v4, v2 mul:2
  OP v_mad_legacy_f32 v4, v8, v9, v1
  OP64 v_trig_preop_f64 v[12:13], v[8:9], v1
  OP64 v_trig_preop_f64 v[12:13], v[8:9], 0
  OP64 v_trig_preop_f64 v[12:13], -v[8:9], 1
  OP64 v_trig_preop_f64 v[12:13], v[8:9], 2
  OP v_add_i16 v4, v1, v2 op_sel:[1,0,0] clamp
  OP v_sub_i16 v4, v1, v2 op_sel:[0,1,0]
  OP v_mad_u16 v4, v1, v2, v3 op_sel:[1,0,1,0] clamp
  OP v_mad_i16 v4, v1, v2, v3 op_sel:[0,1,1,0]
  OP v_fma_f16 v4, v5, -v6, v7 op_sel:[1,1,0,0]
  OP v_mad_f16 v4, v5, v6, |v7| op_sel:[0,0,1,0]
  ACC v3, v_cvt_pkaccum_u8_f32 v4, v8, v11
  OP v_add_f16_sdwa v4, v5, v6 clamp dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
  OP v_frexp_mant_f16_sdwa v4, v5 mul:2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_0
  OP v_add_f32_sdwa v4, v8, v9 mul:2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD src1_sel:DWORD
  OP v_mul_f32_sdwa v4, v8, v9 mul:4 dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:DWORD src1_sel:DWORD
  // v_swap_b32 (clang's register shuffles, e.g. doh at -fno-inline-functions on gfx942): both
  // registers, then in the even lanes only.
  v_mov_b32 v4, v1
  v_mov_b32 v14, v2
  v_swap_b32 v4, v14
  RESULT
  v_mov_b32 v4, v14
  RESULT
  v_mov_b32 v4, v1
  v_mov_b32 v14, v2
  s_mov_b64 s[26:27], exec
  s_mov_b32 exec_lo, 0x55555555
  s_mov_b32 exec_hi, 0x55555555
  v_swap_b32 v4, v14
  s_mov_b64 exec, s[26:27]
  RESULT
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel compiler_ops
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 32
  .amdhsa_accum_offset 16
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: compiler_ops
    .symbol: compiler_ops.kd
    .kernarg_segment_size: 72
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 32
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
      - { .offset: 56, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 64, .size: 8, .value_kind: global_buffer, .address_space: global }
...
.end_amdgpu_metadata
