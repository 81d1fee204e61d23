#include "target.h"

#include <mutex>
#include <string>

#include "llvm/Support/TargetSelect.h"
#include "wavekit/support/error.h"

namespace wavekit::isa {

namespace {

void initialise_llvm_amdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
    LLVMInitializeAMDGPUAsmParser();
  });
}

}  // namespace

Toolchain make_toolchain(std::string_view processor_id) {
  initialise_llvm_amdgpu();
  // "gfx90a:sramecc+:xnack-" -> CPU "gfx90a", features "+sramecc,-xnack".
  std::string id(processor_id);
  std::string cpu = id.substr(0, id.find(':'));
  std::string features;
  for (std::size_t at = id.find(':'); at != std::string::npos;) {
    std::size_t next = id.find(':', at + 1);
    std::string feature = id.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-')) {
      fail(id, "malformed target feature '" + feature + "' (expected e.g. xnack+ or sramecc-)");
    }
    if (!features.empty()) features += ',';
    features += feature.back();
    features += feature.substr(0, feature.size() - 1);
    at = next;
  }
  if (cpu.rfind("gfx1", 0) == 0 && cpu.size() >= 6) {
    fail(id,
         "RDNA processors (wave32) are not supported yet; wavekit supports gfx908, gfx90a "
         "and gfx942");
  }

  Toolchain t;
  t.triple = llvm::Triple("amdgcn-amd-amdhsa");
  std::string error;
  t.target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (!t.target) fail(id, "LLVM has no AMDGPU target: " + error);
  t.register_info.reset(t.target->createMCRegInfo(t.triple));
  t.asm_info.reset(t.target->createMCAsmInfo(*t.register_info, t.triple, t.options));
  t.instr_info.reset(t.target->createMCInstrInfo());
  if (cpu.rfind("gfx", 0) != 0) fail(id, "not an AMDGPU processor name (expected e.g. gfx90a)");
  t.subtarget.reset(t.target->createMCSubtargetInfo(t.triple, cpu, features));
  if (!t.subtarget || !t.subtarget->isCPUStringValid(cpu)) {
    fail(id, "unknown AMDGPU processor '" + cpu + "'");
  }
  return t;
}

}  // namespace wavekit::isa
