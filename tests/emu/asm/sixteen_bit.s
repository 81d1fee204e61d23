// 16-bit integer VALU instructions (gfx90a). Kernarg: a, b, c (u32), out.
// v10 = lane * 4; v1 = a[lane], v2 = b[lane], v3 = c[lane]. The high halves of the inputs are
// noise the instructions must ignore. Before each arithmetic op v4 holds 0xdeadbeef, so that a
// high half left as it was (instead of zeroed) shows. Each RESULT stores v4 at
// out + 256 * k + lane * 4, k counting up; emu_sixteen_bit_test.cpp computes the expected value
// of each k on the CPU from the ISA's definition, in the same order.

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

.globl sixteen_bit
.p2align 8
.type sixteen_bit,@function
sixteen_bit:
  s_load_dwordx4 s[4:7], s[0:1], 0x0        // a, b
  s_load_dwordx4 s[8:11], s[0:1], 0x10      // c, out
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[12:13], s[10:11]
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v3, v10, s[8:9]
  s_waitcnt vmcnt(0)
  // 0..: arithmetic, VOP2 (e32) and VOP3 (e64) forms
  OP16 v_add_u16 v4, v1, v2
  OP16 v_add_u16_e64 v4, v1, v2 clamp
  OP16 v_sub_u16 v4, v1, v2
  OP16 v_sub_u16_e64 v4, v1, v2 clamp
  OP16 v_subrev_u16 v4, v1, v2
  OP16 v_subrev_u16_e64 v4, v1, v2 clamp
  OP16 v_mul_lo_u16 v4, v1, v2
  OP16 v_mul_lo_u16_e64 v4, v2, v1
  OP16 v_lshlrev_b16 v4, v2, v1
  OP16 v_lshrrev_b16 v4, v2, v1
  OP16 v_ashrrev_i16 v4, v2, v1
  OP16 v_ashrrev_i16_e64 v4, v2, v1
  OP16 v_max_u16 v4, v1, v2
  OP16 v_min_u16 v4, v1, v2
  OP16 v_max_i16 v4, v1, v2
  OP16 v_min_i16_e64 v4, v1, v2
  OP16 v_add_i16 v4, v1, v2
  OP16 v_add_i16 v4, v1, v2 clamp
  OP16 v_sub_i16 v4, v1, v2 clamp
  OP16 v_mad_legacy_u16 v4, v1, v2, v3
  OP16 v_mad_legacy_i16 v4, v1, v2, v3 clamp
  OP16 v_mad_u16 v4, v1, v2, v3 clamp
  OP16 v_mad_i16 v4, v1, v2, v3
  // SDWA: a's high half + b's low half into v4's high half, v4's low half preserved
  OP16 v_add_u16_sdwa v4, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
  // Inline constants: -1 is 0xffff in 16 bits; a shift by a constant
  OP16 v_add_u16 v4, -1, v1
  OP16 v_lshlrev_b16 v4, 3, v1
  // Compares, every condition, each as VOPC (vcc) and as VOP3 (an SGPR pair, sources swapped)
  v_cmp_f_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_f_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_lt_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_lt_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_eq_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_eq_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_le_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_le_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_gt_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_gt_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_ne_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_ne_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_ge_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_ge_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_t_u16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_t_u16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_f_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_f_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_lt_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_lt_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_eq_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_eq_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_le_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_le_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_gt_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_gt_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_ne_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_ne_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_ge_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_ge_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  v_cmp_t_i16 vcc, v1, v2
  v_cndmask_b32 v4, 0, 1, vcc
  RESULT
  v_cmp_t_i16_e64 s[20:21], v2, v1
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  // SDWA compare: a's high half == b's low half
  v_cmp_eq_u16_sdwa s[20:21], v1, v2 src0_sel:WORD_1 src1_sel:WORD_0
  v_cndmask_b32_e64 v4, 0, 1, s[20:21]
  RESULT
  // cmpx: only the lanes with a > b (signed 16-bit) write 1
  v_mov_b32 v4, 0
  s_mov_b64 s[18:19], exec
  v_cmpx_gt_i16 vcc, v1, v2
  v_mov_b32 v4, 1
  s_mov_b64 exec, s[18:19]
  RESULT
  s_endpgm

// A VOP3 op_sel writing the destination's high half, which the emulator refuses (not executed;
// op_sel of a source it implements: CompilerOps checks it).
.globl sixteen_bit_op_sel
.p2align 8
.type sixteen_bit_op_sel,@function
sixteen_bit_op_sel:
  v_add_i16 v4, v1, v2 op_sel:[0,0,1]
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel sixteen_bit
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 16
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel sixteen_bit_op_sel
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 16
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: sixteen_bit
    .symbol: sixteen_bit.kd
    .kernarg_segment_size: 32
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
  - .name: sixteen_bit_op_sel
    .symbol: sixteen_bit_op_sel.kd
    .kernarg_segment_size: 0
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 16
    .max_flat_workgroup_size: 64
...
.end_amdgpu_metadata
