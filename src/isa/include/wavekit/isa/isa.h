// AMDGPU instructions through LLVM 22 MC, for the wave64 targets wavekit supports (gfx908,
// gfx90a, gfx942): decode bytes into instructions that know their text (exactly as
// llvm-objdump-22 prints it), the registers they read and write (implicit ones included), their
// memory and control-flow kind; and assemble text back into bytes for the rewriter.
//
// The interface takes plain bytes, an address and a processor name, so that it serves code
// objects (codeobj), emitted snippets (rewrite) and the emulator alike.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llvm/MC/MCInst.h"

namespace llvm {
class MCInstrInfo;
class MCRegisterInfo;
class MCSubtargetInfo;
}  // namespace llvm

namespace wavekit::isa {

// Hardware scalar operand ids (the SSRC/SDST encoding), so that a RegisterSet bit is the number
// the ISA manual and the encoder use.
namespace sgpr_id {
inline constexpr unsigned flat_scratch_lo = 102, flat_scratch_hi = 103;
inline constexpr unsigned xnack_mask_lo = 104, xnack_mask_hi = 105;
inline constexpr unsigned vcc_lo = 106, vcc_hi = 107;
inline constexpr unsigned ttmp0 = 108;  // ttmp0..ttmp15 = 108..123
inline constexpr unsigned m0 = 124;
inline constexpr unsigned exec_lo = 126, exec_hi = 127;
}  // namespace sgpr_id

// A set of 32-bit registers: a compact value type meant for dataflow (union, difference,
// intersection are a few word operations). SGPRs are indexed by hardware operand id 0..127
// (s0..s101, FLAT_SCRATCH, XNACK_MASK, VCC, TTMP, M0, EXEC: see sgpr_id); SCC is a flag.
struct RegisterSet {
  std::bitset<128> sgpr;
  std::bitset<256> vgpr;
  std::bitset<256> agpr;
  bool scc = false;

  bool vcc() const { return sgpr[sgpr_id::vcc_lo] || sgpr[sgpr_id::vcc_hi]; }
  bool exec() const { return sgpr[sgpr_id::exec_lo] || sgpr[sgpr_id::exec_hi]; }
  bool m0() const { return sgpr[sgpr_id::m0]; }
  bool flat_scratch() const {
    return sgpr[sgpr_id::flat_scratch_lo] || sgpr[sgpr_id::flat_scratch_hi];
  }
  bool empty() const { return sgpr.none() && vgpr.none() && agpr.none() && !scc; }
  bool contains(const RegisterSet& other) const;  // other is a subset of this

  RegisterSet& operator|=(const RegisterSet& other);
  RegisterSet& operator&=(const RegisterSet& other);
  RegisterSet& operator-=(const RegisterSet& other);  // set difference
  friend RegisterSet operator|(RegisterSet a, const RegisterSet& b) { return a |= b; }
  friend RegisterSet operator&(RegisterSet a, const RegisterSet& b) { return a &= b; }
  friend RegisterSet operator-(RegisterSet a, const RegisterSet& b) { return a -= b; }
  bool operator==(const RegisterSet& other) const = default;

  // "s[0:3] s6 vcc exec v[0:1] a5 scc": runs of consecutive registers are folded.
  std::string to_string() const;
};

enum class MemoryKind { none, scalar, global, flat, scratch, lds, buffer };
enum class MemoryAccess { none, load, store, atomic };
enum class ControlFlow {
  none,
  branch,              // s_branch
  conditional_branch,  // s_cbranch_*
  call,                // s_swappc_b64 (or s_call_b64): continues after the callee returns
  indirect,            // s_setpc_b64: a return (s[30:31]) or a computed jump
  end_program,         // s_endpgm (and its variants)
  trap,                // s_trap: enters the trap handler, which may resume after it
};
std::string_view to_string(MemoryKind kind);
std::string_view to_string(MemoryAccess access);
std::string_view to_string(ControlFlow flow);

struct Instruction {
  std::uint64_t address = 0;
  std::uint8_t size = 0;                    // bytes: 4, 8 or 12 (with a literal)
  std::array<std::uint8_t, 16> encoding{};  // the first `size` bytes are the instruction
  unsigned opcode = 0;                      // LLVM MC opcode (MCInstrInfo::getName)
  std::string mnemonic;                     // "s_cbranch_execz"
  std::string text;  // mnemonic and operands exactly as llvm-objdump-22 prints them
  llvm::MCInst mc;
  RegisterSet reads;   // explicit and implicit uses
  RegisterSet writes;  // explicit and implicit definitions
  MemoryKind memory = MemoryKind::none;
  MemoryAccess access = MemoryAccess::none;
  ControlFlow flow = ControlFlow::none;
  // Target of a branch / conditional_branch: address + 4 + simm16 * 4. Empty for calls, whose
  // target is in a register (analysis resolves the s_getpc_b64 pattern into the call graph).
  std::optional<std::uint64_t> branch_target;

  std::span<const std::uint8_t> bytes() const { return {encoding.data(), size}; }
  // Control does not fall through to the next instruction (branch, indirect, end_program).
  bool ends_flow() const;
  // s_setpc_b64 through the link pair s[30:31] that s_swappc_b64 wrote: a device function's
  // return.
  bool is_return() const;
  // s_setpc_b64 through any other pair: a computed jump, which is a tail call when its target
  // is a function's entry (clang -O2 emits one for `return f(...)`).
  bool is_jump() const;
};

// Bytes LLVM could not decode at `address`.
struct DecodeError {
  std::uint64_t address = 0;
  std::string message;  // "cannot decode instruction at 0x1a04 (bytes ff ff ff ff)"
};

// Everything in a range: instructions in address order, and the words that did not decode
// (skipped 4 bytes at a time, as llvm-objdump does).
struct DecodedRange {
  std::vector<Instruction> instructions;
  std::vector<DecodeError> errors;
};

class Decoder {
 public:
  // `processor` is an AMDGPU processor name ("gfx908", "gfx90a", "gfx942"; a target id with
  // features such as "gfx90a:xnack-" is accepted). Throws wavekit::Error for an unknown
  // processor, and for a wave32-only (RDNA) one: "not supported yet".
  explicit Decoder(std::string_view processor);
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  const std::string& processor() const;

  // Decodes the instruction at the start of `bytes`; `address` is its virtual address. Never
  // throws for bad bytes: returns the DecodeError instead.
  std::optional<Instruction> decode(std::span<const std::uint8_t> bytes, std::uint64_t address,
                                    DecodeError* error = nullptr) const;
  // Decodes a whole range (e.g. a function), continuing past undecodable words.
  DecodedRange decode_range(std::span<const std::uint8_t> bytes, std::uint64_t address) const;
  // Same, but the first undecodable word throws wavekit::Error naming its address.
  std::vector<Instruction> decode_all(std::span<const std::uint8_t> bytes,
                                      std::uint64_t address) const;

  // Text of an MCInst (e.g. one the rewriter built), as llvm-objdump would print it.
  std::string print(const llvm::MCInst& inst) const;
  // Registers an MCInst reads and writes (explicit operands plus the MCInstrDesc's implicit ones).
  void registers(const llvm::MCInst& inst, RegisterSet& reads, RegisterSet& writes) const;
  // The hardware view of one MC register (a tuple sets every 32-bit register it covers).
  RegisterSet register_set(unsigned mc_register) const;
  std::string register_name(unsigned mc_register) const;

  const llvm::MCInstrInfo& instr_info() const;
  const llvm::MCRegisterInfo& register_info() const;
  const llvm::MCSubtargetInfo& subtarget() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// AMDGPU assembly text -> bytes, through LLVM's assembler (MCAsmParser, MCCodeEmitter and an
// ELF object streamer, so labels and branches between them resolve as in llvm-mc).
class Assembler {
 public:
  explicit Assembler(std::string_view processor);  // same processors as Decoder
  ~Assembler();
  Assembler(Assembler&&) noexcept;
  Assembler& operator=(Assembler&&) noexcept;

  // Assembles `source` (one instruction per line; labels allowed) placed at no particular
  // address: the result is position-independent unless the text refers to symbols outside it,
  // which is an error. Throws wavekit::Error quoting LLVM's diagnostic (line and message).
  std::vector<std::uint8_t> assemble(std::string_view source) const;
  // assemble() of each source, in one pass of LLVM's assembler: what a rewriter that emits many
  // short sequences uses, since setting LLVM up and writing the object cost far more than
  // parsing a few lines. The sources share one namespace of labels. Diagnostics name the
  // source ("source 3 line 2: ...").
  std::vector<std::vector<std::uint8_t>> assemble_each(std::span<const std::string> sources) const;
  // Encodes one MCInst (no fixups: branch targets must already be immediates).
  std::vector<std::uint8_t> encode(const llvm::MCInst& inst) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wavekit::isa
