// sgpr_pressure and sgpr_pressure_tight: kernels that leave the instrumentation no block of SGPRs
// above their own. sgpr_pressure uses s0..s83 and s96..s99, so neither the 8 SGPRs bbcount
// reserves nor the 20 of a kernel with probe calls fit above s99; s84..s95, s100 and s101 are
// the only SGPRs it never touches. sgpr_pressure_tight uses s84..s91 too, which leaves 6: not
// enough for a kept scratch resource beside the reserved SGPRs of a kernel with probe calls.
// Their two loops keep different SGPRs live, so that a probe call's envelope finds dead SGPRs in
// each: loop A adds s6..s60 into v1 (loop B's SGPRs are not written yet), loop B adds s62..s83
// (s62..s91 in the tight one) and s96..s99 (s6..s60 are dead by then). A divergent region adds
// 1,000 in work-items 0-31.
//
// sgpr_pressure_live keeps s6..s87 and s96..s99 live through one loop, which leaves it
// s88..s95, s100 and s101 unused (exactly the reserved SGPRs and a kept scratch resource) and no
// point in the loop with the 8 dead SGPRs an envelope needs: the envelope borrows live ones.
//
// sgpr_pressure_probe_reads keeps s6..s19 and s30..s99 live through one loop, which leaves it
// s20..s29, s100 and s101: SGPRs the block probes read (their footprint reaches s31) but do not
// write, so the reserved SGPRs and a kept scratch resource fit only among SGPRs a probe names.
//
// Kernarg: out (u32 per work-item; one workgroup), iterations (u32, >= 1). Per work-item i:
//   out[i] = iterations * (sum 6..60 + sum of loop B's SGPRs + sum 96..99) + (i < 32 ? 1000 : 0)
//   sgpr_pressure:       iterations * (1,815 + 1,595 + 390) + ...  (3 iterations: 12,400 for
//                                                                  i < 32, else 11,400)
//   sgpr_pressure_tight: iterations * (1,815 + 2,295 + 390) + ...  (3 iterations: 14,500 for
//                                                                  i < 32, else 13,500)
//   sgpr_pressure_live:  iterations * (1,815 + 1,998 + 390) + ...  (3 iterations: 13,609 for
//                        (s61..s87: 1,998)                         i < 32, else 12,609)
//   sgpr_pressure_probe_reads: iterations * (175 + 4,515) + ...     (3 iterations: 15,070 for
//                        (s6..s19: 175, s30..s99: 4,515)           i < 32, else 14,070)
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text

// The divergent region and the store every kernel here ends with.
.macro pressure_tail
  v_cmp_gt_u32 vcc, 32, v0              // work-items 0-31
  s_and_saveexec_b64 s[6:7], vcc
  s_cbranch_execz 3f
  v_add_u32 v1, 0x3e8, v1
3:
  s_or_b64 exec, exec, s[6:7]
  v_lshlrev_b32 v2, 2, v0
  global_store_dword v2, v1, s[2:3]
  s_endpgm
.endm

.macro pressure_body loop_b:vararg
  s_load_dwordx2 s[2:3], s[0:1], 0x0    // out
  s_load_dword s4, s[0:1], 0x8          // iterations
  v_mov_b32 v1, 0
  .irp n, 6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60
    s_mov_b32 s\n, \n
  .endr
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s5, s4                      // loop A's counter
1:
  .irp n, 6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60
    v_add_u32 v1, s\n, v1
  .endr
  s_sub_u32 s5, s5, 1
  s_cmp_lg_u32 s5, 0
  s_cbranch_scc1 1b
  .irp n, \loop_b
    s_mov_b32 s\n, \n
  .endr
  s_mov_b32 s61, s4                     // loop B's counter
2:
  .irp n, \loop_b
    v_add_u32 v1, s\n, v1
  .endr
  s_sub_u32 s61, s61, 1
  s_cmp_lg_u32 s61, 0
  s_cbranch_scc1 2b
  pressure_tail
.endm

// One loop that keeps every SGPR of the list live: the _live and _probe_reads kernels.
.macro live_loop_body regs:vararg
  s_load_dwordx2 s[2:3], s[0:1], 0x0    // out
  s_load_dword s4, s[0:1], 0x8          // iterations
  v_mov_b32 v1, 0
  .irp n, \regs
    s_mov_b32 s\n, \n
  .endr
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s5, s4                      // the loop's counter
1:
  .irp n, \regs
    v_add_u32 v1, s\n, v1
  .endr
  s_sub_u32 s5, s5, 1
  s_cmp_lg_u32 s5, 0
  s_cbranch_scc1 1b
  pressure_tail
.endm

.globl sgpr_pressure
.p2align 8
.type sgpr_pressure,@function
sgpr_pressure:
  pressure_body 62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,96,97,98,99

.globl sgpr_pressure_tight
.p2align 8
.type sgpr_pressure_tight,@function
sgpr_pressure_tight:
  pressure_body 62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,96,97,98,99

.globl sgpr_pressure_live
.p2align 8
.type sgpr_pressure_live,@function
sgpr_pressure_live:
  live_loop_body 6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,96,97,98,99

.globl sgpr_pressure_probe_reads
.p2align 8
.type sgpr_pressure_probe_reads,@function
sgpr_pressure_probe_reads:
  live_loop_body 6,7,8,9,10,11,12,13,14,15,16,17,18,19,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99

.rodata
// The four kernels' descriptors are the same but for the name.
.macro pressure_descriptor name
.p2align 6
.amdhsa_kernel \name
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 100
  .amdhsa_accum_offset 8
.end_amdhsa_kernel
.endm
pressure_descriptor sgpr_pressure
pressure_descriptor sgpr_pressure_tight
pressure_descriptor sgpr_pressure_live
pressure_descriptor sgpr_pressure_probe_reads

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a
amdhsa.kernels:
  - .name: sgpr_pressure
    .symbol: sgpr_pressure.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 106
    .vgpr_count: 8
    .max_flat_workgroup_size: 128
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
  - .name: sgpr_pressure_tight
    .symbol: sgpr_pressure_tight.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 106
    .vgpr_count: 8
    .max_flat_workgroup_size: 128
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
  - .name: sgpr_pressure_live
    .symbol: sgpr_pressure_live.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 106
    .vgpr_count: 8
    .max_flat_workgroup_size: 128
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
  - .name: sgpr_pressure_probe_reads
    .symbol: sgpr_pressure_probe_reads.kd
    .kernarg_segment_size: 12
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 106
    .vgpr_count: 8
    .max_flat_workgroup_size: 128
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
...
.end_amdgpu_metadata
