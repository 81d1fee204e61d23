// Target decoding from e_flags / EI_ABIVERSION, with the mach values of LLVM's ELF.h.
#include <llvm/BinaryFormat/ELF.h>

#include <cstdio>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::codeobj {
namespace {

struct KnownProcessor {
  const char* name;
  unsigned mach;
};

// RDNA processors (wave32 by default): recognised so that the refusal can name them.
const KnownProcessor kWave32Processors[] = {
    {"gfx1010", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1010},
    {"gfx1011", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1011},
    {"gfx1012", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1012},
    {"gfx1013", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1013},
    {"gfx1030", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1030},
    {"gfx1031", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1031},
    {"gfx1032", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1032},
    {"gfx1033", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1033},
    {"gfx1034", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1034},
    {"gfx1035", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1035},
    {"gfx1036", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1036},
    {"gfx1100", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100},
    {"gfx1101", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1101},
    {"gfx1102", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1102},
    {"gfx1103", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1103},
    {"gfx1150", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1150},
    {"gfx1151", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1151},
    {"gfx1152", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1152},
    {"gfx1153", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1153},
    {"gfx1200", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1200},
    {"gfx1201", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201},
    {"gfx1250", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250},
    {"gfx1251", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1251},
    {"gfx10-1-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_1_GENERIC},
    {"gfx10-3-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_3_GENERIC},
    {"gfx11-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC},
    {"gfx12-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX12_GENERIC},
};

Target::Feature decode_feature(std::uint32_t bits, std::uint32_t any, std::uint32_t off,
                               std::uint32_t on) {
  if (bits == on) return Target::Feature::On;
  if (bits == off) return Target::Feature::Off;
  if (bits == any) return Target::Feature::Any;
  return Target::Feature::Unsupported;
}

// gfx940 and gfx941 were retired from LLVM (their mach values are "reserved" in LLVM 22's
// ELF.h); objects built for them by older toolchains still exist, so recognise them.
constexpr unsigned kMachGfx940 = 0x040;
constexpr unsigned kMachGfx941 = 0x04b;

// The wave64 processors wavekit recognises; the first three are the supported ones.
const KnownProcessor kWave64Processors[] = {
    {"gfx908", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX908},
    {"gfx90a", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A},
    {"gfx942", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942},
    {"gfx940", kMachGfx940},
    {"gfx941", kMachGfx941},
    {"gfx950", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950},
    {"gfx9-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_GENERIC},
    {"gfx9-4-generic", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC},
};

}  // namespace

Target decode_target(std::uint32_t e_flags, std::uint8_t abi_version, const std::string& context) {
  Target target;
  target.mach = e_flags & llvm::ELF::EF_AMDGPU_MACH;
  for (const auto& known : kWave64Processors) {
    if (known.mach == target.mach) target.processor = known.name;
  }
  if (target.processor.empty()) {
    for (const auto& rdna : kWave32Processors) {
      if (rdna.mach == target.mach)
        fail(context, std::string(rdna.name) + " is not supported yet (wave32)");
    }
    fail(context, "unsupported AMDGPU processor (EF_AMDGPU_MACH " + hex(target.mach) +
                      "); wavekit supports gfx908, gfx90a and gfx942");
  }
  switch (abi_version) {
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4:
      target.code_object_version = 4;
      break;
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5:
      target.code_object_version = 5;
      break;
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6:
      target.code_object_version = 6;
      break;
    default:
      fail(context, "unsupported code object version " + std::to_string(abi_version + 2) +
                        " (EI_ABIVERSION " + std::to_string(abi_version) +
                        "); wavekit reads code object versions 4, 5 and 6");
  }
  target.xnack = decode_feature(
      e_flags & llvm::ELF::EF_AMDGPU_FEATURE_XNACK_V4, llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ANY_V4,
      llvm::ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4, llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4);
  target.sramecc = decode_feature(e_flags & llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_V4,
                                  llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ANY_V4,
                                  llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_OFF_V4,
                                  llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ON_V4);
  target.generic_version = (e_flags & llvm::ELF::EF_AMDGPU_GENERIC_VERSION) >>
                           llvm::ELF::EF_AMDGPU_GENERIC_VERSION_OFFSET;
  return target;
}

unsigned mach_of_processor(const std::string& processor) {
  for (const auto& known : kWave64Processors) {
    if (processor == known.name) return known.mach;
  }
  throw Error("unknown or unsupported processor '" + processor + "'");
}

std::string Target::target_id() const {
  std::string id = processor;
  // Features in the order clang prints them in target ids (sramecc before xnack).
  if (sramecc == Feature::On) id += ":sramecc+";
  if (sramecc == Feature::Off) id += ":sramecc-";
  if (xnack == Feature::On) id += ":xnack+";
  if (xnack == Feature::Off) id += ":xnack-";
  return id;
}

bool Target::compatible_with(const Target& other) const {
  const auto agree = [](Feature a, Feature b) {
    return a == b || a == Feature::Any || b == Feature::Any;
  };
  return processor == other.processor && agree(xnack, other.xnack) && agree(sramecc, other.sramecc);
}

bool Target::has_unified_vgpr_file() const {
  return mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A || has_architected_flat_scratch() ||
         mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC;
}

bool Target::has_packed_work_item_ids() const { return has_unified_vgpr_file(); }

bool Target::has_architected_flat_scratch() const {
  return mach == kMachGfx940 || mach == kMachGfx941 ||
         mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942 ||
         mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950 ||
         mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC;
}

}  // namespace wavekit::codeobj
