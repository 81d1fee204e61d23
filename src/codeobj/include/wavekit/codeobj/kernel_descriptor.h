// The 64-byte AMDHSA kernel descriptor (AMDGPUUsage "Kernel Descriptor"), decoded field by field
// for the wave64 targets wavekit supports (gfx908, gfx90a, gfx942). Offsets and bit fields come
// from LLVM's llvm/Support/AMDHSAKernelDescriptor.h, so they cannot drift from the toolchain.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wavekit::codeobj {

struct Target;

struct KernelDescriptor {
  static constexpr std::size_t kSize = 64;
  // Descriptors must be 64-byte aligned in the code object (AMDGPUUsage).
  static constexpr std::size_t kAlignment = 64;

  std::uint32_t group_segment_fixed_size = 0;    // LDS bytes
  std::uint32_t private_segment_fixed_size = 0;  // scratch bytes per work-item
  std::uint32_t kernarg_size = 0;
  std::int64_t kernel_code_entry_byte_offset = 0;  // entry = descriptor address + this
  std::uint32_t compute_pgm_rsrc3 = 0;             // gfx90a+: ACCUM_OFFSET, TG_SPLIT
  std::uint32_t compute_pgm_rsrc1 = 0;
  std::uint32_t compute_pgm_rsrc2 = 0;
  std::uint16_t kernel_code_properties = 0;
  std::uint16_t kernarg_preload = 0;
  // The reserved bytes are kept so that decode/encode round-trips whatever the file holds.
  std::array<std::uint8_t, 4> reserved0{};
  std::array<std::uint8_t, 20> reserved1{};
  std::array<std::uint8_t, 4> reserved3{};

  // Throws wavekit::Error if bytes.size() != 64.
  static KernelDescriptor decode(std::span<const std::uint8_t> bytes);
  std::array<std::uint8_t, kSize> encode() const;

  // COMPUTE_PGM_RSRC1
  unsigned granulated_workitem_vgpr_count() const;
  unsigned granulated_wavefront_sgpr_count() const;
  unsigned priority() const;
  unsigned float_round_mode_32() const;
  unsigned float_round_mode_16_64() const;
  unsigned float_denorm_mode_32() const;
  unsigned float_denorm_mode_16_64() const;
  bool priv() const;
  bool enable_dx10_clamp() const;
  bool debug_mode() const;
  bool enable_ieee_mode() const;
  bool bulky() const;
  bool cdbg_user() const;
  bool fp16_overflow() const;

  // COMPUTE_PGM_RSRC2
  bool enable_private_segment() const;  // the scratch wave offset system SGPR
  unsigned user_sgpr_count() const;
  bool enable_trap_handler() const;
  bool enable_sgpr_workgroup_id_x() const;
  bool enable_sgpr_workgroup_id_y() const;
  bool enable_sgpr_workgroup_id_z() const;
  bool enable_sgpr_workgroup_info() const;
  unsigned enable_vgpr_workitem_id() const;  // 0: x, 1: x y, 2: x y z
  unsigned granulated_lds_size() const;
  bool enable_exception_address_watch() const;
  bool enable_exception_memory() const;
  // bits 24..30 of rsrc2, in order: fp invalid, denormal source, divide by zero, overflow,
  // underflow, inexact, integer divide by zero.
  unsigned exception_fp_bits() const;

  // COMPUTE_PGM_RSRC3 (gfx90a and later)
  unsigned accum_offset_field() const;  // raw ACCUM_OFFSET field
  unsigned accum_offset() const;        // first AGPR as VGPR index: (field + 1) * 4
  bool tg_split() const;

  // KERNEL_CODE_PROPERTIES: the user SGPRs the hardware initialises, packed from s0.
  bool enable_sgpr_private_segment_buffer() const;
  bool enable_sgpr_dispatch_ptr() const;
  bool enable_sgpr_queue_ptr() const;
  bool enable_sgpr_kernarg_segment_ptr() const;
  bool enable_sgpr_dispatch_id() const;
  bool enable_sgpr_flat_scratch_init() const;
  bool enable_sgpr_private_segment_size() const;
  bool wave32() const;  // ENABLE_WAVEFRONT_SIZE32 (never set on the wave64 targets)
  bool uses_dynamic_stack() const;

  // KERNARG_PRELOAD
  unsigned kernarg_preload_length() const;  // in dwords
  unsigned kernarg_preload_offset() const;  // in dwords

  // Register grants implied by the granulated counts for `target` (wave64): VGPRs
  // (gfx90a/gfx942: the unified VGPR+AGPR file, granule 8; gfx908: granule 4) and SGPRs
  // ((gran + 1) * 8, the encoding LLVM's assembler uses on gfx9).
  unsigned vgpr_grant(const Target& target) const;
  unsigned sgpr_grant() const;

  // Setters for the rewriter: each writes one bit field and leaves the others alone.
  void set_granulated_workitem_vgpr_count(unsigned value);
  void set_granulated_wavefront_sgpr_count(unsigned value);
  void set_user_sgpr_count(unsigned value);
  void set_enable_private_segment(bool value);
  void set_enable_sgpr_workgroup_id_x(bool value);
  void set_enable_sgpr_workgroup_id_y(bool value);
  void set_enable_sgpr_workgroup_id_z(bool value);
  void set_enable_vgpr_workitem_id(unsigned value);
  void set_accum_offset_field(unsigned value);
  void set_enable_sgpr_private_segment_buffer(bool value);
  void set_enable_sgpr_dispatch_ptr(bool value);
  void set_enable_sgpr_queue_ptr(bool value);
  void set_enable_sgpr_kernarg_segment_ptr(bool value);
  void set_enable_sgpr_dispatch_id(bool value);
  void set_enable_sgpr_flat_scratch_init(bool value);
  void set_enable_sgpr_private_segment_size(bool value);
  void set_uses_dynamic_stack(bool value);

  bool operator==(const KernelDescriptor&) const = default;
};

// The `.amdhsa_*` directives, in order and with the values, that
// `llvm-objdump-22 -d -j .rodata --mcpu=<processor>` prints for this descriptor, without the
// `.amdhsa_` prefix (e.g. {"next_free_vgpr", 32}). This is the "descriptor" object of the
// `wavekit inspect --json` contract.
std::vector<std::pair<std::string, std::int64_t>> amdhsa_directives(const KernelDescriptor& kd,
                                                                    const Target& target);

}  // namespace wavekit::codeobj
