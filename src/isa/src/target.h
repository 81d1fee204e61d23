// The LLVM MC objects for one AMDGPU processor, shared by the decoder and the assembler.
#pragma once

#include <memory>
#include <string_view>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Triple.h"

namespace wavekit::isa {

struct Toolchain {
  llvm::Triple triple;
  const llvm::Target* target = nullptr;
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> register_info;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCInstrInfo> instr_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
};

// amdgcn-amd-amdhsa for `processor` ("gfx90a", or a target id "gfx90a:sramecc+:xnack-").
// Throws wavekit::Error for an unknown processor and for wave32-only RDNA processors.
Toolchain make_toolchain(std::string_view processor);

}  // namespace wavekit::isa
