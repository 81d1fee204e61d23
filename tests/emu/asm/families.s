// Directed instruction-family tests (gfx90a). Kernarg: a, b (u32), fa, fb (f32), out.
// v10 = lane * 4; v1 = a[lane], v2 = b[lane], v5 = fa[lane], v6 = fb[lane]. Each RESULT
// stores v4 at out + 256 * k + lane * 4, k counting up: the C++ side (emu_families_test.cpp)
// computes the expected value of each k on the CPU from the ISA's definition of the op.

.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

.macro RESULT
  global_store_dword v10, v4, s[12:13]
  s_add_u32 s12, s12, 256
  s_addc_u32 s13, s13, 0
.endm

.globl families
.p2align 8
.type families,@function
families:
  s_load_dwordx8 s[4:11], s[0:1], 0x0       // a, b, fa, fb
  s_load_dwordx2 s[12:13], s[0:1], 0x20     // out
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v10, s[4:5]
  global_load_dword v2, v10, s[6:7]
  global_load_dword v5, v10, s[8:9]
  global_load_dword v6, v10, s[10:11]
  s_waitcnt vmcnt(0)
  // 0..7: integer VOP2/VOP3
  v_add_u32 v4, v1, v2
  RESULT
  v_sub_u32 v4, v1, v2
  RESULT
  v_mul_lo_u32 v4, v1, v2
  RESULT
  v_mul_hi_u32 v4, v1, v2
  RESULT
  v_lshlrev_b32 v4, v2, v1
  RESULT
  v_ashrrev_i32 v4, v2, v1
  RESULT
  v_bfe_u32 v4, v1, 5, 7
  RESULT
  v_alignbit_b32 v4, v1, v2, 7
  RESULT
  // 8..12: f32 VOP2/VOP3 with modifiers, conversions
  v_add_f32 v4, v5, v6
  RESULT
  v_fma_f32 v4, v5, v6, -v5
  RESULT
  v_max_f32 v4, |v5|, v6
  RESULT
  v_cvt_f32_i32 v4, v1
  RESULT
  v_cvt_i32_f32 v4, v5
  RESULT
  // 13: VOPC + v_cndmask
  v_cmp_gt_u32 vcc, v1, v2
  v_cndmask_b32 v4, 3, 7, vcc
  RESULT
  // 14: DPP row_shr:1 writing 0 where the source lane is out of its row
  v_mov_b32 v4, 0xdead
  v_mov_b32_dpp v4, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  RESULT
  // 15: SDWA: (a.byte0 + b.word0) into the high word, low word zero
  v_add_u32_sdwa v4, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_0
  RESULT
  // 16: v_readlane + SALU on the scalar, broadcast back
  v_readlane_b32 s14, v1, 5
  v_readlane_b32 s15, v2, 9
  s_mul_i32 s16, s14, s15
  s_lshr_b32 s16, s16, 3
  s_xor_b32 s16, s16, s15
  v_mov_b32 v4, s16
  RESULT
  // 17: DS write, then read the next lane's word (lane 63 reads the zeroed word after them)
  ds_write_b32 v10, v1
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v4, v10 offset:4
  s_waitcnt lgkmcnt(0)
  RESULT
  // 18: DS atomic add from every lane to one word, then read it back
  v_mov_b32 v7, 0x200
  v_mov_b32 v8, 3
  ds_add_u32 v7, v8
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v4, v7
  s_waitcnt lgkmcnt(0)
  RESULT
  // 19..20: v_mad_u64_u32 low and high halves
  v_mad_u64_u32 v[8:9], s[16:17], v1, v2, 0
  v_mov_b32 v4, v8
  RESULT
  v_mov_b32 v4, v9
  RESULT
  // 21: EXEC masking: only even lanes add; odd lanes keep a
  v_mov_b32 v4, v1
  s_mov_b64 s[18:19], exec
  s_mov_b32 exec_lo, 0x55555555
  s_mov_b32 exec_hi, 0x55555555
  v_add_u32 v4, v4, v2
  s_mov_b64 exec, s[18:19]
  RESULT
  // 22: s_and_saveexec + s_cbranch_execz skip: lanes with a < b get 1, others 2
  v_mov_b32 v4, 2
  v_cmp_lt_u32 vcc, v1, v2
  s_and_saveexec_b64 s[18:19], vcc
  s_cbranch_execz .Lskip
  v_mov_b32 v4, 1
.Lskip:
  s_or_b64 exec, exec, s[18:19]
  RESULT
  // 23: global atomic add with return: every lane adds b to its own out word k=23 (zeroed)
  v_mov_b32 v4, 0
  global_atomic_add v4, v10, v2, s[12:13] glc
  s_waitcnt vmcnt(0)
  global_atomic_add v4, v10, v2, s[12:13] glc
  s_waitcnt vmcnt(0)
  // out[23] = 2b; v4 = b (the value before the second add) goes to k = 24
  s_add_u32 s12, s12, 256
  s_addc_u32 s13, s13, 0
  RESULT
  // 25..29: VOP3 output modifiers (omod) and clamp, f32 and f64
  v_add_f32_e64 v4, v5, v6 mul:2
  RESULT
  v_mul_f32_e64 v4, v5, v6 div:2
  RESULT
  v_add_f32_e64 v4, v5, v6 clamp
  RESULT
  v_cvt_f64_f32 v[12:13], v5
  v_add_f64 v[14:15], v[12:13], v[12:13] mul:4
  v_cvt_f32_f64 v4, v[14:15]
  RESULT
  v_mul_f64 v[14:15], v[12:13], v[12:13] clamp
  v_cvt_f32_f64 v4, v[14:15]
  RESULT
  // 30..32: v_cndmask_b32_e64 with source modifiers (the compiler's sign-select idiom): the
  // selected source's neg/abs apply, as for any VOP3 source with FP input modifiers.
  v_cmp_gt_f32 s[20:21], v5, v6
  v_cndmask_b32_e64 v4, v5, -v6, s[20:21]
  RESULT
  v_cndmask_b32_e64 v4, |v5|, v6, s[20:21]
  RESULT
  v_cndmask_b32_e64 v4, -|v5|, -|v6|, s[20:21]
  RESULT
  // Cache maintenance around a release (what the hostcall client emits): no effect here.
  buffer_wbl2
  s_waitcnt vmcnt(0)
  buffer_invl2
  buffer_wbinvl1_vol
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel families
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_group_segment_fixed_size 1024
  .amdhsa_next_free_vgpr 16
  .amdhsa_next_free_sgpr 24
  .amdhsa_accum_offset 16
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: families
    .symbol: families.kd
    .kernarg_segment_size: 40
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 1024
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
...
.end_amdgpu_metadata
