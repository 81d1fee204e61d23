// The table that binds an instruction's mnemonic to its semantics, and the pieces of the
// decoder the code cache needs from it.
#pragma once

#include <string_view>

#include "internal.h"

namespace wavekit::emu::detail {

enum class Family : std::uint8_t {
  salu,   // SOP1 / SOP2 / SOPK / SOPC (scalar ALU)
  sopp,   // program control
  smem,   // scalar memory
  valu,   // VOP1 / VOP2 / VOPC / VOP3 / VOP3P (incl. SDWA, DPP, MFMA)
  ds,     // LDS
  flat,   // FLAT / GLOBAL / SCRATCH
  mubuf,  // buffer (scratch through the private segment resource)
};

enum SemanticFlags : std::uint32_t {
  kSemDstScalar = 1u << 0,   // VALU writing an SGPR (readlane, readfirstlane)
  kSemVop3b = 1u << 1,       // VOP3 with an SGPR carry/flag destination in dw0[14:8]
  kSemCarryIn = 1u << 2,     // VOP2 form reads VCC as src2 (addc, subb, cndmask)
  kSemAccumulate = 1u << 3,  // mac/fmac: the destination is also src2
  kSemCompare = 1u << 4,     // VOPC: result is a lane mask
  kSemLiteralK = 1u << 6,    // madmk/madak/fmamk/fmaak: a literal K among the sources
  kSemMfma = 1u << 7,
  kSemBranch = 1u << 8,  // ends a block
  kSemCondBranch = 1u << 9,
  kSemCall = 1u << 10,  // s_swappc: the next instruction is a return point
  // 16-bit VALU op whose handler reads the sources' low halves and writes the low half: a VOP3
  // op_sel that selects a high half is refused at decode rather than executed wrongly.
  kSemLowHalves = 1u << 11,
  // The handler applies the clamp bit (a float result limited to [0, 1], an integer add, sub or
  // mad saturated) / the VOP3 output modifier omod (a float result scaled by 2, 4 or 0.5).
  // Decode refuses either bit on an operation whose handler would ignore it.
  kSemClamp = 1u << 12,
  kSemOmod = 1u << 13,
  kSemOutputModifiers = kSemClamp | kSemOmod,
  // VOP3P whose handler applies neg_lo / neg_hi: floating-point elements (an integer element
  // has no negation in the ISA); decode refuses them elsewhere.
  kSemPackedNeg = 1u << 14,
  // VOP3 whose handler reads a source's high 16-bit half when its op_sel bit is set: Semantics::op
  // holds the mask of the sources that take one (bit i for source i). Decode refuses op_sel on
  // any other source, on the destination (bit 3) and on a constant, and moves an f16 source's
  // abs / neg to the high half's sign bit.
  kSemOpSel = 1u << 15,
  // Sources read whole, as packed elements (v_pk_fmac_f16, v_dot*c): a VOP3 or DPP abs / neg
  // (which would act on one 16-bit sign) and SDWA are refused at decode.
  kSemWholeSources = 1u << 16,
  // VOP3P dot product: the accumulator (src2) takes no op_sel, op_sel_hi = 0 or negation, and
  // with kSemWholeSources (the 4- and 8-element forms) no source takes op_sel or op_sel_hi = 0.
  kSemDot = 1u << 17,
};

struct Semantics {
  Handler handler = nullptr;
  Family family = Family::valu;
  DataType src_type[3] = {DataType::b32, DataType::b32, DataType::b32};
  std::uint8_t width = 1;  // result / data width in dwords
  std::uint16_t op = 0;    // family-specific selector (memory data size, atomic op, ...)
  std::uint32_t flags = 0;
};

// nullptr when the emulator has no semantics for `mnemonic` (given without the encoding
// suffix _e32/_e64/_sdwa/_dpp).
const Semantics* find_semantics(std::string_view mnemonic);

}  // namespace wavekit::emu::detail
