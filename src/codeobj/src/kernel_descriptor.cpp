// Kernel descriptor fields, with offsets and masks from LLVM's AMDHSAKernelDescriptor.h.
#include "wavekit/codeobj/kernel_descriptor.h"

#include <llvm/Support/AMDHSAKernelDescriptor.h>
#include <llvm/Support/Endian.h>

#include <cstring>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"

namespace wavekit::codeobj {

namespace kd = llvm::amdhsa;

namespace {

template <typename T>
T load(std::span<const std::uint8_t> bytes, std::size_t offset) {
  return llvm::support::endian::read<T, llvm::endianness::little>(bytes.data() + offset);
}

template <typename T>
void store(std::uint8_t* bytes, std::size_t offset, T value) {
  llvm::support::endian::write<T, llvm::endianness::little>(bytes + offset, value);
}

// A bit field given by LLVM's (mask, shift) pair.
unsigned field(std::uint32_t word, std::uint32_t mask, unsigned shift) {
  return (word & mask) >> shift;
}

template <typename Word>
void set_field(Word& word, std::uint32_t mask, unsigned shift, unsigned value) {
  word = static_cast<Word>((word & ~mask) | ((value << shift) & mask));
}

}  // namespace

#define WAVEKIT_KD_FIELD(word, NAME) field(word, kd::NAME, kd::NAME##_SHIFT)
#define WAVEKIT_KD_SET(word, NAME, value) set_field(word, kd::NAME, kd::NAME##_SHIFT, value)

KernelDescriptor KernelDescriptor::decode(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kSize) {
    throw Error("a kernel descriptor is 64 bytes, got " + std::to_string(bytes.size()));
  }
  KernelDescriptor result;
  result.group_segment_fixed_size = load<std::uint32_t>(bytes, kd::GROUP_SEGMENT_FIXED_SIZE_OFFSET);
  result.private_segment_fixed_size =
      load<std::uint32_t>(bytes, kd::PRIVATE_SEGMENT_FIXED_SIZE_OFFSET);
  result.kernarg_size = load<std::uint32_t>(bytes, kd::KERNARG_SIZE_OFFSET);
  std::memcpy(result.reserved0.data(), bytes.data() + kd::RESERVED0_OFFSET,
              result.reserved0.size());
  result.kernel_code_entry_byte_offset =
      load<std::int64_t>(bytes, kd::KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET);
  std::memcpy(result.reserved1.data(), bytes.data() + kd::RESERVED1_OFFSET,
              result.reserved1.size());
  result.compute_pgm_rsrc3 = load<std::uint32_t>(bytes, kd::COMPUTE_PGM_RSRC3_OFFSET);
  result.compute_pgm_rsrc1 = load<std::uint32_t>(bytes, kd::COMPUTE_PGM_RSRC1_OFFSET);
  result.compute_pgm_rsrc2 = load<std::uint32_t>(bytes, kd::COMPUTE_PGM_RSRC2_OFFSET);
  result.kernel_code_properties = load<std::uint16_t>(bytes, kd::KERNEL_CODE_PROPERTIES_OFFSET);
  result.kernarg_preload = load<std::uint16_t>(bytes, kd::KERNARG_PRELOAD_OFFSET);
  std::memcpy(result.reserved3.data(), bytes.data() + kd::RESERVED3_OFFSET,
              result.reserved3.size());
  return result;
}

std::array<std::uint8_t, KernelDescriptor::kSize> KernelDescriptor::encode() const {
  std::array<std::uint8_t, kSize> bytes{};
  store(bytes.data(), kd::GROUP_SEGMENT_FIXED_SIZE_OFFSET, group_segment_fixed_size);
  store(bytes.data(), kd::PRIVATE_SEGMENT_FIXED_SIZE_OFFSET, private_segment_fixed_size);
  store(bytes.data(), kd::KERNARG_SIZE_OFFSET, kernarg_size);
  std::memcpy(bytes.data() + kd::RESERVED0_OFFSET, reserved0.data(), reserved0.size());
  store(bytes.data(), kd::KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET, kernel_code_entry_byte_offset);
  std::memcpy(bytes.data() + kd::RESERVED1_OFFSET, reserved1.data(), reserved1.size());
  store(bytes.data(), kd::COMPUTE_PGM_RSRC3_OFFSET, compute_pgm_rsrc3);
  store(bytes.data(), kd::COMPUTE_PGM_RSRC1_OFFSET, compute_pgm_rsrc1);
  store(bytes.data(), kd::COMPUTE_PGM_RSRC2_OFFSET, compute_pgm_rsrc2);
  store(bytes.data(), kd::KERNEL_CODE_PROPERTIES_OFFSET, kernel_code_properties);
  store(bytes.data(), kd::KERNARG_PRELOAD_OFFSET, kernarg_preload);
  std::memcpy(bytes.data() + kd::RESERVED3_OFFSET, reserved3.data(), reserved3.size());
  return bytes;
}

// COMPUTE_PGM_RSRC1
unsigned KernelDescriptor::granulated_workitem_vgpr_count() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT);
}
unsigned KernelDescriptor::granulated_wavefront_sgpr_count() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT);
}
unsigned KernelDescriptor::priority() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_PRIORITY);
}
unsigned KernelDescriptor::float_round_mode_32() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32);
}
unsigned KernelDescriptor::float_round_mode_16_64() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64);
}
unsigned KernelDescriptor::float_denorm_mode_32() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32);
}
unsigned KernelDescriptor::float_denorm_mode_16_64() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64);
}
bool KernelDescriptor::priv() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_PRIV);
}
bool KernelDescriptor::enable_dx10_clamp() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_DX10_CLAMP);
}
bool KernelDescriptor::debug_mode() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_DEBUG_MODE);
}
bool KernelDescriptor::enable_ieee_mode() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_IEEE_MODE);
}
bool KernelDescriptor::bulky() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_BULKY);
}
bool KernelDescriptor::cdbg_user() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_CDBG_USER);
}
bool KernelDescriptor::fp16_overflow() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GFX9_PLUS_FP16_OVFL);
}

// COMPUTE_PGM_RSRC2
bool KernelDescriptor::enable_private_segment() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT);
}
unsigned KernelDescriptor::user_sgpr_count() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_GFX6_GFX120_USER_SGPR_COUNT);
}
bool KernelDescriptor::enable_trap_handler() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_GFX6_GFX11_ENABLE_TRAP_HANDLER);
}
bool KernelDescriptor::enable_sgpr_workgroup_id_x() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X);
}
bool KernelDescriptor::enable_sgpr_workgroup_id_y() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y);
}
bool KernelDescriptor::enable_sgpr_workgroup_id_z() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z);
}
bool KernelDescriptor::enable_sgpr_workgroup_info() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO);
}
unsigned KernelDescriptor::enable_vgpr_workitem_id() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID);
}
unsigned KernelDescriptor::granulated_lds_size() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE);
}
bool KernelDescriptor::enable_exception_address_watch() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_ADDRESS_WATCH);
}
bool KernelDescriptor::enable_exception_memory() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_MEMORY);
}
unsigned KernelDescriptor::exception_fp_bits() const {
  return (compute_pgm_rsrc2 >>
          kd::COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION_SHIFT) &
         0x7f;
}

// COMPUTE_PGM_RSRC3
unsigned KernelDescriptor::accum_offset_field() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc3, COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET);
}
unsigned KernelDescriptor::accum_offset() const { return (accum_offset_field() + 1) * 4; }
bool KernelDescriptor::tg_split() const {
  return WAVEKIT_KD_FIELD(compute_pgm_rsrc3, COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT);
}

// KERNEL_CODE_PROPERTIES
#define WAVEKIT_KD_PROPERTY(getter, setter, NAME)                                       \
  bool KernelDescriptor::getter() const {                                               \
    return WAVEKIT_KD_FIELD(kernel_code_properties, KERNEL_CODE_PROPERTY_##NAME);       \
  }                                                                                     \
  void KernelDescriptor::setter(bool value) {                                           \
    WAVEKIT_KD_SET(kernel_code_properties, KERNEL_CODE_PROPERTY_##NAME, value ? 1 : 0); \
  }
WAVEKIT_KD_PROPERTY(enable_sgpr_private_segment_buffer, set_enable_sgpr_private_segment_buffer,
                    ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER)
WAVEKIT_KD_PROPERTY(enable_sgpr_dispatch_ptr, set_enable_sgpr_dispatch_ptr,
                    ENABLE_SGPR_DISPATCH_PTR)
WAVEKIT_KD_PROPERTY(enable_sgpr_queue_ptr, set_enable_sgpr_queue_ptr, ENABLE_SGPR_QUEUE_PTR)
WAVEKIT_KD_PROPERTY(enable_sgpr_kernarg_segment_ptr, set_enable_sgpr_kernarg_segment_ptr,
                    ENABLE_SGPR_KERNARG_SEGMENT_PTR)
WAVEKIT_KD_PROPERTY(enable_sgpr_dispatch_id, set_enable_sgpr_dispatch_id, ENABLE_SGPR_DISPATCH_ID)
WAVEKIT_KD_PROPERTY(enable_sgpr_flat_scratch_init, set_enable_sgpr_flat_scratch_init,
                    ENABLE_SGPR_FLAT_SCRATCH_INIT)
WAVEKIT_KD_PROPERTY(enable_sgpr_private_segment_size, set_enable_sgpr_private_segment_size,
                    ENABLE_SGPR_PRIVATE_SEGMENT_SIZE)
WAVEKIT_KD_PROPERTY(uses_dynamic_stack, set_uses_dynamic_stack, USES_DYNAMIC_STACK)
#undef WAVEKIT_KD_PROPERTY

bool KernelDescriptor::wave32() const {
  return WAVEKIT_KD_FIELD(kernel_code_properties, KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32);
}

unsigned KernelDescriptor::kernarg_preload_length() const {
  return WAVEKIT_KD_FIELD(kernarg_preload, KERNARG_PRELOAD_SPEC_LENGTH);
}
unsigned KernelDescriptor::kernarg_preload_offset() const {
  return WAVEKIT_KD_FIELD(kernarg_preload, KERNARG_PRELOAD_SPEC_OFFSET);
}

// The VGPR encoding granule (AMDGPU::IsaInfo::getVGPREncodingGranule for wave64): 8 on the
// targets with the unified VGPR/AGPR file, 4 before.
static unsigned vgpr_encoding_granule(const Target& target) {
  return target.has_unified_vgpr_file() ? 8 : 4;
}
// The SGPR encoding granule on gfx9 (AMDGPU::IsaInfo::getSGPREncodingGranule).
constexpr unsigned kSgprEncodingGranule = 8;

unsigned KernelDescriptor::vgpr_grant(const Target& target) const {
  return (granulated_workitem_vgpr_count() + 1) * vgpr_encoding_granule(target);
}
unsigned KernelDescriptor::sgpr_grant() const {
  return (granulated_wavefront_sgpr_count() + 1) * kSgprEncodingGranule;
}

void KernelDescriptor::set_granulated_workitem_vgpr_count(unsigned value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT, value);
}
void KernelDescriptor::set_granulated_wavefront_sgpr_count(unsigned value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc1, COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT, value);
}
void KernelDescriptor::set_user_sgpr_count(unsigned value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_GFX6_GFX120_USER_SGPR_COUNT, value);
}
void KernelDescriptor::set_enable_private_segment(bool value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT, value ? 1 : 0);
}
void KernelDescriptor::set_enable_sgpr_workgroup_id_x(bool value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X, value ? 1 : 0);
}
void KernelDescriptor::set_enable_sgpr_workgroup_id_y(bool value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y, value ? 1 : 0);
}
void KernelDescriptor::set_enable_sgpr_workgroup_id_z(bool value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z, value ? 1 : 0);
}
void KernelDescriptor::set_enable_vgpr_workitem_id(unsigned value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc2, COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID, value);
}
void KernelDescriptor::set_accum_offset_field(unsigned value) {
  WAVEKIT_KD_SET(compute_pgm_rsrc3, COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET, value);
}

std::vector<std::pair<std::string, std::int64_t>> amdhsa_directives(const KernelDescriptor& d,
                                                                    const Target& target) {
  // The order and the conditions follow AMDGPUDisassembler::decodeKernelDescriptorDirective,
  // which prints the descriptor field by field in offset order.
  std::vector<std::pair<std::string, std::int64_t>> out;
  auto add = [&out](const char* name, std::int64_t value) { out.emplace_back(name, value); };
  const bool architected_scratch = target.has_architected_flat_scratch();
  add("group_segment_fixed_size", d.group_segment_fixed_size);
  add("private_segment_fixed_size", d.private_segment_fixed_size);
  add("kernarg_size", d.kernarg_size);
  if (target.has_unified_vgpr_file()) {  // rsrc3 on gfx90a-class targets
    add("accum_offset", d.accum_offset());
    add("tg_split", d.tg_split());
  }
  add("next_free_vgpr", d.vgpr_grant(target));
  // The reserve_* directives cannot be recovered from the granulated count; the disassembler
  // prints 0 and folds everything into next_free_sgpr.
  add("reserve_vcc", 0);
  if (!architected_scratch) add("reserve_flat_scratch", 0);
  add("reserve_xnack_mask", 0);
  add("next_free_sgpr", d.sgpr_grant());
  add("float_round_mode_32", d.float_round_mode_32());
  add("float_round_mode_16_64", d.float_round_mode_16_64());
  add("float_denorm_mode_32", d.float_denorm_mode_32());
  add("float_denorm_mode_16_64", d.float_denorm_mode_16_64());
  add("dx10_clamp", d.enable_dx10_clamp());
  add("ieee_mode", d.enable_ieee_mode());
  add("fp16_overflow", d.fp16_overflow());
  add(architected_scratch ? "enable_private_segment"
                          : "system_sgpr_private_segment_wavefront_offset",
      d.enable_private_segment());
  add("system_sgpr_workgroup_id_x", d.enable_sgpr_workgroup_id_x());
  add("system_sgpr_workgroup_id_y", d.enable_sgpr_workgroup_id_y());
  add("system_sgpr_workgroup_id_z", d.enable_sgpr_workgroup_id_z());
  add("system_sgpr_workgroup_info", d.enable_sgpr_workgroup_info());
  add("system_vgpr_workitem_id", d.enable_vgpr_workitem_id());
  static const char* const kExceptions[] = {
      "exception_fp_ieee_invalid_op", "exception_fp_denorm_src",     "exception_fp_ieee_div_zero",
      "exception_fp_ieee_overflow",   "exception_fp_ieee_underflow", "exception_fp_ieee_inexact",
      "exception_int_div_zero"};
  for (unsigned bit = 0; bit < 7; ++bit) add(kExceptions[bit], (d.exception_fp_bits() >> bit) & 1);
  if (!architected_scratch) {
    add("user_sgpr_private_segment_buffer", d.enable_sgpr_private_segment_buffer());
  }
  add("user_sgpr_dispatch_ptr", d.enable_sgpr_dispatch_ptr());
  add("user_sgpr_queue_ptr", d.enable_sgpr_queue_ptr());
  add("user_sgpr_kernarg_segment_ptr", d.enable_sgpr_kernarg_segment_ptr());
  add("user_sgpr_dispatch_id", d.enable_sgpr_dispatch_id());
  if (!architected_scratch) add("user_sgpr_flat_scratch_init", d.enable_sgpr_flat_scratch_init());
  add("user_sgpr_private_segment_size", d.enable_sgpr_private_segment_size());
  if (target.code_object_version >= 5) add("uses_dynamic_stack", d.uses_dynamic_stack());
  if (d.kernarg_preload_length() != 0) {
    add("user_sgpr_kernarg_preload_length", d.kernarg_preload_length());
  }
  if (d.kernarg_preload_offset() != 0) {
    add("user_sgpr_kernarg_preload_offset", d.kernarg_preload_offset());
  }
  return out;
}

}  // namespace wavekit::codeobj
