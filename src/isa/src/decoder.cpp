#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "target.h"
#include "wavekit/isa/isa.h"
#include "wavekit/support/error.h"

namespace wavekit::isa {

struct Decoder::Impl {
  std::string processor;
  Toolchain tools;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  // Indexed by MC register number: the 32-bit hardware registers each one covers.
  std::shared_ptr<const std::vector<RegisterSet>> register_sets;
};

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The hardware 32-bit register an LLVM register name ("SGPR5", "VGPR12_HI16", "VCC_LO",
// "M0_gfxpre11", "FLAT_SCR_LO_vi", "TTMP3_gfx9plus") denotes, if it is one. Names, not
// encodings, because LLVM's encoding values fold in flags that differ between releases.
void add_named_register(std::string name, RegisterSet& set) {
  // A 16-bit half counts as its 32-bit register (liveness tracks whole registers).
  for (std::string_view half : {"_LO16", "_HI16"}) {
    if (name.size() > half.size() && name.ends_with(half)) name.resize(name.size() - half.size());
  }
  auto numbered = [&](std::string_view prefix, unsigned limit) -> std::optional<unsigned> {
    if (!starts_with(name, prefix)) return std::nullopt;
    std::size_t end = name.find_first_not_of("0123456789", prefix.size());
    if (end == prefix.size()) return std::nullopt;
    if (end != std::string::npos && name[end] != '_') return std::nullopt;  // a tuple
    unsigned index = static_cast<unsigned>(std::stoul(name.substr(prefix.size())));
    if (index >= limit) return std::nullopt;
    return index;
  };
  if (auto n = numbered("SGPR", sgpr_id::flat_scratch_lo)) {
    set.sgpr.set(*n);
  } else if (auto n = numbered("VGPR", 256)) {
    set.vgpr.set(*n);
  } else if (auto n = numbered("AGPR", 256)) {
    set.agpr.set(*n);
  } else if (auto n = numbered("TTMP", 16)) {
    set.sgpr.set(sgpr_id::ttmp0 + *n);
  } else if (name == "SCC") {
    set.scc = true;
  } else {
    static const std::pair<std::string_view, unsigned> specials[] = {
        {"FLAT_SCR_LO", sgpr_id::flat_scratch_lo},
        {"FLAT_SCR_HI", sgpr_id::flat_scratch_hi},
        {"XNACK_MASK_LO", sgpr_id::xnack_mask_lo},
        {"XNACK_MASK_HI", sgpr_id::xnack_mask_hi},
        {"VCC_LO", sgpr_id::vcc_lo},
        {"VCC_HI", sgpr_id::vcc_hi},
        {"EXEC_LO", sgpr_id::exec_lo},
        {"EXEC_HI", sgpr_id::exec_hi},
        {"M0_gfxpre11", sgpr_id::m0}};
    for (const auto& [special, id] : specials) {
      // Exact, or with a subtarget suffix ("FLAT_SCR_LO_vi").
      if (name == special || (starts_with(name, special) && name[special.size()] == '_')) {
        set.sgpr.set(id);
      }
    }
    if (name == "M0") set.sgpr.set(sgpr_id::m0);
  }
}

MemoryKind classify_memory(std::string_view mnemonic, const llvm::MCInstrDesc& desc) {
  if (!desc.mayLoad() && !desc.mayStore()) return MemoryKind::none;
  if (starts_with(mnemonic, "global_")) return MemoryKind::global;
  if (starts_with(mnemonic, "flat_")) return MemoryKind::flat;
  if (starts_with(mnemonic, "scratch_")) return MemoryKind::scratch;
  if (starts_with(mnemonic, "buffer_") || starts_with(mnemonic, "tbuffer_")) {
    return MemoryKind::buffer;
  }
  // ds_bpermute/ds_permute/ds_swizzle use the LDS crossbar but touch no LDS memory; LLVM
  // marks them neither load nor store, so they never get here.
  if (starts_with(mnemonic, "ds_")) return MemoryKind::lds;
  if (starts_with(mnemonic, "s_")) return MemoryKind::scalar;
  return MemoryKind::none;
}

MemoryAccess classify_access(MemoryKind kind, const llvm::MCInstrDesc& desc) {
  if (kind == MemoryKind::none) return MemoryAccess::none;
  if (desc.mayLoad() && desc.mayStore()) return MemoryAccess::atomic;
  return desc.mayStore() ? MemoryAccess::store : MemoryAccess::load;
}

ControlFlow classify_flow(std::string_view mnemonic) {
  if (mnemonic == "s_branch") return ControlFlow::branch;
  if (starts_with(mnemonic, "s_cbranch_")) return ControlFlow::conditional_branch;
  if (mnemonic == "s_swappc_b64" || mnemonic == "s_call_b64") return ControlFlow::call;
  if (mnemonic == "s_setpc_b64") return ControlFlow::indirect;
  if (starts_with(mnemonic, "s_endpgm")) return ControlFlow::end_program;
  if (mnemonic == "s_trap") return ControlFlow::trap;
  return ControlFlow::none;
}

// LLVM 22's AMDGPU disassembler crashes (a dangling Twine in its literal-operand diagnostics)
// on 64-bit encodings whose operand field asks for a literal, which GFX9 does not allow there:
// a VOP3/VOP3P source of 255 (e.g. d0 b6 a0 d3 62 fe 31 07) or a MUBUF/MTBUF SOFFSET of 255
// (e.g. a2 53 48 e0 46 14 49 ff); llvm-mc-22 -disassemble crashes alike. Found by the emulator's
// random-code test; such words are refused before they reach LLVM.
bool crashes_llvm_disassembler(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 8) return false;
  auto word = [&](std::size_t at) {
    return std::uint32_t{bytes[at]} | std::uint32_t{bytes[at + 1]} << 8 |
           std::uint32_t{bytes[at + 2]} << 16 | std::uint32_t{bytes[at + 3]} << 24;
  };
  std::uint32_t w0 = word(0), w1 = word(4);
  unsigned format = w0 >> 26;
  constexpr unsigned kVop3 = 0x34, kMubuf = 0x38, kMtbuf = 0x3a;
  constexpr unsigned kLiteral = 0xff;
  if (format == kMubuf || format == kMtbuf) return (w1 >> 24) == kLiteral;
  if (format == kVop3) {
    for (unsigned source = 0; source < 3; ++source) {
      if (((w1 >> (9 * source)) & 0x1ff) == kLiteral) return true;
    }
  }
  return false;
}

std::string hex_bytes(std::span<const std::uint8_t> bytes) {
  std::string text;
  char buffer[4];
  for (std::uint8_t byte : bytes) {
    std::snprintf(buffer, sizeof buffer, "%s%02x", text.empty() ? "" : " ", byte);
    text += buffer;
  }
  return text;
}

std::string hex_address(std::uint64_t address) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(address));
  return buffer;
}

// The register table of a processor, built once per process: each 32-bit register by its LLVM
// name, then every register as the union of its sub-registers (a tuple such as s[0:3] covers
// s0..s3; vcc covers vcc_lo and vcc_hi). Building it walks ~20000 registers, which would
// otherwise dominate decoding a small object.
std::shared_ptr<const std::vector<RegisterSet>> register_table(
    const std::string& cpu, const llvm::MCRegisterInfo& registers) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::vector<RegisterSet>>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  auto& table = tables[cpu];
  if (table) return table;
  std::vector<RegisterSet> leaf(registers.getNumRegs());
  for (unsigned reg = 1; reg < registers.getNumRegs(); ++reg) {
    add_named_register(registers.getName(reg), leaf[reg]);
  }
  auto sets = std::make_shared<std::vector<RegisterSet>>(registers.getNumRegs());
  for (unsigned reg = 1; reg < registers.getNumRegs(); ++reg) {
    for (llvm::MCPhysReg sub : registers.subregs_inclusive(llvm::MCRegister(reg))) {
      (*sets)[reg] |= leaf[sub];
    }
  }
  table = std::move(sets);
  return table;
}

}  // namespace

Decoder::Decoder(std::string_view processor) : impl_(std::make_unique<Impl>()) {
  impl_->processor = std::string(processor);
  impl_->tools = make_toolchain(processor);
  Toolchain& t = impl_->tools;
  impl_->context = std::make_unique<llvm::MCContext>(t.triple, t.asm_info.get(),
                                                     t.register_info.get(), t.subtarget.get());
  impl_->disassembler.reset(t.target->createMCDisassembler(*t.subtarget, *impl_->context));
  impl_->printer.reset(
      t.target->createMCInstPrinter(t.triple, 0, *t.asm_info, *t.instr_info, *t.register_info));
  if (!impl_->disassembler || !impl_->printer) {
    fail(std::string(processor), "LLVM's AMDGPU disassembler is not available");
  }
  impl_->register_sets =
      register_table(std::string(processor.substr(0, processor.find(':'))), *t.register_info);
}

Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

const std::string& Decoder::processor() const { return impl_->processor; }
const llvm::MCInstrInfo& Decoder::instr_info() const { return *impl_->tools.instr_info; }
const llvm::MCRegisterInfo& Decoder::register_info() const { return *impl_->tools.register_info; }
const llvm::MCSubtargetInfo& Decoder::subtarget() const { return *impl_->tools.subtarget; }

RegisterSet Decoder::register_set(unsigned mc_register) const {
  if (mc_register >= impl_->register_sets->size()) return {};
  return (*impl_->register_sets)[mc_register];
}

std::string Decoder::register_name(unsigned mc_register) const {
  std::string name = register_set(mc_register).to_string();
  if (name.empty() && mc_register < impl_->tools.register_info->getNumRegs()) {
    name = impl_->tools.register_info->getName(mc_register);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

std::string Decoder::print(const llvm::MCInst& inst) const {
  std::string text;
  llvm::raw_string_ostream stream(text);
  impl_->printer->printInst(&inst, 0, "", *impl_->tools.subtarget, stream);
  stream.flush();
  // The printer indents with a tab, as in assembly output; objdump's column shows it trimmed.
  std::size_t begin = text.find_first_not_of(" \t");
  std::size_t end = text.find_last_not_of(" \t\n");
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

void Decoder::registers(const llvm::MCInst& inst, RegisterSet& reads, RegisterSet& writes) const {
  const llvm::MCInstrDesc& desc = impl_->tools.instr_info->get(inst.getOpcode());
  for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
    const llvm::MCOperand& operand = inst.getOperand(i);
    if (!operand.isReg() || !operand.getReg()) continue;
    (i < desc.getNumDefs() ? writes : reads) |= register_set(operand.getReg().id());
  }
  for (llvm::MCPhysReg reg : desc.implicit_uses()) reads |= register_set(reg);
  for (llvm::MCPhysReg reg : desc.implicit_defs()) writes |= register_set(reg);
}

std::optional<Instruction> Decoder::decode(std::span<const std::uint8_t> bytes,
                                           std::uint64_t address, DecodeError* error) const {
  if (crashes_llvm_disassembler(bytes)) {
    if (error) {
      *error = {address, "cannot decode instruction at " + hex_address(address) + " (bytes " +
                             hex_bytes(bytes.first(8)) +
                             "): a literal operand where the 64-bit GFX9 encoding allows none"};
    }
    return std::nullopt;
  }
  llvm::MCInst inst;
  std::uint64_t size = 0;
  auto status = impl_->disassembler->getInstruction(
      inst, size, llvm::ArrayRef<std::uint8_t>(bytes.data(), bytes.size()), address, llvm::nulls());
  if (status != llvm::MCDisassembler::Success || size == 0 || size > bytes.size() || size > 16) {
    if (error) {
      *error = {address, "cannot decode instruction at " + hex_address(address) + " (bytes " +
                             hex_bytes(bytes.first(std::min<std::size_t>(bytes.size(), 8))) + ")"};
    }
    return std::nullopt;
  }
  Instruction out;
  out.address = address;
  out.size = static_cast<std::uint8_t>(size);
  std::copy_n(bytes.begin(), size, out.encoding.begin());
  out.opcode = inst.getOpcode();
  out.text = print(inst);
  out.mnemonic = out.text.substr(0, out.text.find(' '));
  const llvm::MCInstrDesc& desc = impl_->tools.instr_info->get(inst.getOpcode());
  registers(inst, out.reads, out.writes);
  out.memory = classify_memory(out.mnemonic, desc);
  out.access = classify_access(out.memory, desc);
  out.flow = classify_flow(out.mnemonic);
  if ((out.flow == ControlFlow::branch || out.flow == ControlFlow::conditional_branch) &&
      inst.getNumOperands() > 0 && inst.getOperand(0).isImm()) {
    // SOPP simm16: a signed dword offset from the next instruction.
    auto offset = static_cast<std::int16_t>(inst.getOperand(0).getImm() & 0xffff);
    out.branch_target = address + 4 + static_cast<std::int64_t>(offset) * 4;
  }
  out.mc = std::move(inst);
  return out;
}

DecodedRange Decoder::decode_range(std::span<const std::uint8_t> bytes,
                                   std::uint64_t address) const {
  DecodedRange range;
  range.instructions.reserve(bytes.size() / 6);
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    DecodeError error;
    if (auto inst = decode(bytes.subspan(offset), address + offset, &error)) {
      offset += inst->size;
      range.instructions.push_back(std::move(*inst));
    } else {
      range.errors.push_back(std::move(error));
      offset += 4;  // instructions are dword-aligned: resynchronise on the next dword
    }
  }
  return range;
}

std::vector<Instruction> Decoder::decode_all(std::span<const std::uint8_t> bytes,
                                             std::uint64_t address) const {
  std::vector<Instruction> instructions;
  instructions.reserve(bytes.size() / 6);
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    DecodeError error;
    auto inst = decode(bytes.subspan(offset), address + offset, &error);
    if (!inst) fail(impl_->processor, error.message);
    offset += inst->size;
    instructions.push_back(std::move(*inst));
  }
  return instructions;
}

bool Instruction::ends_flow() const {
  return flow == ControlFlow::branch || flow == ControlFlow::indirect ||
         flow == ControlFlow::end_program;
}

bool Instruction::is_return() const {
  return mnemonic == "s_setpc_b64" && reads.sgpr[30] && reads.sgpr[31];
}

bool Instruction::is_jump() const { return mnemonic == "s_setpc_b64" && !is_return(); }

}  // namespace wavekit::isa
