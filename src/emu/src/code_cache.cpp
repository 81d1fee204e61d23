// Decoding: the isa library (LLVM MC) tells whether the bytes are an instruction of the target,
// how long it is, its mnemonic and its text. The operand fields are then read from the
// instruction word with the GFX9 encoding layouts (the same for gfx908/gfx90a/gfx942), which
// gives exactly the hardware's view of inline constants and literals. The result is an Inst
// with a handler pointer, resolved once per instruction and cached.
#include "code_cache.h"

#include <bit>
#include <cstring>
#include <mutex>
#include <sstream>

#include "semantics.h"
#include "wavekit/isa/isa.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::emu {

Processor parse_processor(std::string_view name) {
  std::string_view base = name.substr(0, name.find(':'));
  if (base == "gfx908") return Processor::gfx908;
  if (base == "gfx90a") return Processor::gfx90a;
  if (base == "gfx942") return Processor::gfx942;
  throw Error("emu: unsupported target '" + std::string(name) +
              "' (the emulator runs wave64 gfx908, gfx90a and gfx942)");
}

std::string_view processor_name(Processor processor) {
  switch (processor) {
    case Processor::gfx908:
      return "gfx908";
    case Processor::gfx90a:
      return "gfx90a";
    case Processor::gfx942:
      return "gfx942";
  }
  return "?";
}

namespace {

// One isa::Decoder (LLVM MC underneath) per processor, built once and shared by every cache.
// Decoding happens under the cache's mutex.
const isa::Decoder& decoder_for(Processor processor) {
  static std::mutex mutex;
  static std::unique_ptr<isa::Decoder> all[3];
  std::lock_guard lock(mutex);
  auto& slot = all[static_cast<int>(processor)];
  if (!slot) slot = std::make_unique<isa::Decoder>(processor_name(processor));
  return *slot;
}

using detail::DataType;
using detail::Family;
using detail::Inst;
using detail::Operand;
using detail::OperandKind;
using detail::Semantics;

std::uint32_t bits(std::uint64_t word, unsigned high, unsigned low) {
  return std::uint32_t((word >> low) & ((1ull << (high - low + 1)) - 1));
}

bool is_64(DataType type) {
  return type == DataType::b64 || type == DataType::f64 || type == DataType::pk_f32;
}

// An inline float constant (encodings 240..248) in the operand's type.
std::uint64_t inline_float(unsigned code, DataType type) {
  if (type == DataType::pk_f32) return inline_float(code, DataType::f32);
  static const double values[] = {0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0};
  if (code == 248) {  // 1/(2*pi): the hardware constants
    if (type == DataType::f64 || type == DataType::b64) return 0x3fc45f306dc9c882ull;
    if (type == DataType::f16) return 0x3118;
    return 0x3e22f983;
  }
  double value = values[code - 240];
  if (type == DataType::f64 || type == DataType::b64) return std::bit_cast<std::uint64_t>(value);
  if (type == DataType::f16) {
    // The eight values are exact halves: sign, exponent (bias 15), no mantissa.
    int exponent = 0;
    double magnitude = value < 0 ? -value : value;
    while (magnitude >= 2.0) magnitude /= 2.0, ++exponent;
    while (magnitude < 1.0) magnitude *= 2.0, --exponent;
    return (value < 0 ? 0x8000u : 0u) | std::uint32_t((exponent + 15) << 10);
  }
  return std::bit_cast<std::uint32_t>(float(value));
}

// A 9-bit source operand (8-bit for SALU, where VGPRs cannot appear).
Operand source(unsigned code, DataType type, std::uint32_t literal, bool& uses_literal) {
  Operand op;
  if (code < 128) {
    op.kind = OperandKind::sgpr;
    op.index = std::uint16_t(code);
  } else if (code <= 192) {
    op.kind = OperandKind::constant;
    op.value = code - 128;
  } else if (code <= 208) {
    op.kind = OperandKind::constant;
    op.value = std::uint64_t(-std::int64_t(code - 192));
    if (!is_64(type)) op.value &= 0xffffffffu;
  } else if (code >= 240 && code <= 248) {
    op.kind = OperandKind::constant;
    op.value = inline_float(code, type);
  } else if (code == 255) {
    op.kind = OperandKind::constant;
    uses_literal = true;
    // A 64-bit float operand takes the literal as its high half; integer operands zero-extend.
    op.value = type == DataType::f64 ? std::uint64_t(literal) << 32 : literal;
  } else if (code >= 256) {
    op.kind = OperandKind::vgpr;
    op.index = std::uint16_t(code - 256);
  } else {
    op.kind = OperandKind::special;
    op.value = code;
  }
  return op;
}

Operand vgpr(unsigned index) {
  Operand op;
  op.kind = OperandKind::vgpr;
  op.index = std::uint16_t(index);
  return op;
}

Operand sgpr(unsigned index) {
  Operand op;
  op.kind = OperandKind::sgpr;
  op.index = std::uint16_t(index);
  return op;
}

void set_float_modifiers(Operand& op, DataType type, bool abs, bool neg) {
  if (type != DataType::f32 && type != DataType::f64 && type != DataType::f16) return;
  std::uint32_t sign = type == DataType::f16 ? 0x8000u : 0x80000000u;
  if (abs) op.and_mask = ~sign;
  if (neg) op.xor_mask = sign;
}

// The clamp and omod bits on an operation whose handler does not apply them: refused rather
// than ignored. A compare's clamp only makes a NaN input signal an exception (the ISA), which the
// emulator does not model, so it is accepted.
std::string unsupported_output_modifiers(const Inst& inst, const Semantics& sem) {
  if ((inst.flags & detail::kFlagClamp) && !(sem.flags & (detail::kSemClamp | detail::kSemCompare)))
    return "clamp is not supported on this operation";
  if (inst.omod && !(sem.flags & detail::kSemOmod))
    return "omod (an output multiplier) is not supported on this operation";
  return "";
}

// A source modifier or SDWA selection on an operation whose sources are packed elements read
// whole (kSemWholeSources): abs / neg would act on one 16-bit sign only. Refused.
std::string unsupported_whole_source_modifiers(const Inst& inst, const Semantics& sem) {
  if (!(sem.flags & detail::kSemWholeSources)) return "";
  if (inst.flags & detail::kFlagSdwa) return "SDWA is not supported on this operation";
  for (const Operand& op : inst.src)
    if (op.and_mask != ~0u || op.xor_mask != 0)
      return "abs / neg of a packed source is not supported on this operation";
  return "";
}

// Fills the operand fields of `inst` from the instruction words. Returns "" or why the encoding
// is not supported.
std::string decode_fields(Inst& inst, const Semantics& sem, const std::uint32_t* words,
                          unsigned size, Processor processor) {
  std::uint32_t w0 = words[0];
  std::uint32_t w1 = size >= 8 ? words[1] : 0;
  std::uint32_t literal = w1;
  bool uses_literal = false;
  auto src_type = [&](int i) { return sem.src_type[i]; };

  switch (sem.family) {
    case Family::sopp:
      inst.imm = std::int16_t(bits(w0, 15, 0));
      return "";
    case Family::salu: {
      if (bits(w0, 31, 23) == 0x17d) {  // SOP1
        inst.dst = sgpr(bits(w0, 22, 16));
        inst.src[0] = source(bits(w0, 7, 0), src_type(0), literal, uses_literal);
      } else if (bits(w0, 31, 23) == 0x17e) {  // SOPC
        inst.src[0] = source(bits(w0, 7, 0), src_type(0), literal, uses_literal);
        inst.src[1] = source(bits(w0, 15, 8), src_type(1), literal, uses_literal);
        inst.imm = bits(w0, 15, 8);          // s_set_gpr_idx_on: the mode is an immediate
      } else if (bits(w0, 31, 28) == 0xb) {  // SOPK
        inst.dst = sgpr(bits(w0, 22, 16));
        inst.imm = std::int16_t(bits(w0, 15, 0));
        inst.src[0] = inst.dst;
        if (size == 8) inst.imm2 = w1;  // s_setreg_imm32_b32
      } else {                          // SOP2
        inst.dst = sgpr(bits(w0, 22, 16));
        inst.src[0] = source(bits(w0, 7, 0), src_type(0), literal, uses_literal);
        inst.src[1] = source(bits(w0, 15, 8), src_type(1), literal, uses_literal);
      }
      return "";
    }
    case Family::smem: {
      inst.dst = sgpr(bits(w0, 12, 6));
      inst.saddr = sgpr(bits(w0, 5, 0) * 2);
      bool imm = bits(w0, 17, 17);
      bool soe = bits(w0, 14, 14);
      if (imm) {
        inst.imm = std::int32_t(bits(w1, 20, 0) << 11) >> 11;
        if (soe) inst.soffset = sgpr(bits(w1, 31, 25));
      } else if (soe) {
        inst.soffset = sgpr(bits(w1, 31, 25));
        inst.imm = std::int32_t(bits(w1, 20, 0) << 11) >> 11;
      } else {
        inst.soffset = sgpr(bits(w1, 6, 0));
      }
      if (bits(w0, 16, 16)) inst.flags |= detail::kFlagGlc;
      return "";
    }
    case Family::ds: {
      inst.imm = bits(w0, 7, 0);
      inst.imm2 = bits(w0, 15, 8);
      if (bits(w0, 16, 16)) return "GDS is not supported";
      bool acc = processor != Processor::gfx908 && bits(w0, 25, 25);
      inst.src[0] = vgpr(bits(w1, 7, 0));
      inst.src[1] = vgpr(bits(w1, 15, 8));
      inst.src[2] = vgpr(bits(w1, 23, 16));
      inst.dst = vgpr(bits(w1, 31, 24));
      if (acc) {
        inst.src[1].agpr = inst.src[2].agpr = inst.dst.agpr = true;
      }
      return "";
    }
    case Family::flat: {
      unsigned segment = bits(w0, 15, 14);
      std::int32_t offset = bits(w0, 12, 0);
      if (segment != 0)
        offset = std::int32_t(std::uint32_t(offset) << 19) >> 19;
      else
        offset &= 0xfff;
      inst.imm = offset;
      inst.op = std::uint16_t(segment);  // 0 flat, 1 scratch, 2 global
      if (bits(w0, 13, 13)) {
        if (processor == Processor::gfx942 && segment == 1)
          inst.flags |= detail::kFlagOffen;
        else
          return "FLAT loads to LDS are not supported";
      }
      if (bits(w0, 16, 16)) inst.flags |= detail::kFlagGlc;
      bool acc = processor != Processor::gfx908 && bits(w1, 23, 23);
      inst.src[0] = vgpr(bits(w1, 7, 0));
      inst.src[1] = vgpr(bits(w1, 15, 8));
      inst.dst = vgpr(bits(w1, 31, 24));
      unsigned saddr = bits(w1, 22, 16);
      if (saddr != 0x7f) inst.saddr = sgpr(saddr);
      if (acc) inst.src[1].agpr = inst.dst.agpr = true;
      return "";
    }
    case Family::mubuf: {
      inst.imm = bits(w0, 11, 0);
      if (bits(w0, 12, 12)) inst.flags |= detail::kFlagOffen;
      if (bits(w0, 13, 13)) inst.flags |= detail::kFlagIdxen;
      if (bits(w0, 14, 14)) inst.flags |= detail::kFlagGlc;
      if (bits(w0, 16, 16)) return "MUBUF loads to LDS are not supported";
      bool acc = processor != Processor::gfx908 && bits(w1, 23, 23);
      inst.src[0] = vgpr(bits(w1, 7, 0));
      inst.src[1] = vgpr(bits(w1, 15, 8));
      inst.dst = inst.src[1];
      inst.saddr = sgpr(bits(w1, 20, 16) * 4);
      inst.soffset = source(bits(w1, 31, 24), DataType::b32, literal, uses_literal);
      if (acc) inst.src[1].agpr = inst.dst.agpr = true;
      return "";
    }
    case Family::valu:
      break;
  }

  // VALU encodings.
  const bool vop3p = bits(w0, 31, 23) == 0x1a7;
  const bool vop3 = !vop3p && bits(w0, 31, 26) == 0x34;
  if (vop3p) {
    inst.dst = vgpr(bits(w0, 7, 0));
    for (int i = 0; i < 3; ++i)
      inst.src[i] = source(bits(w1, 8 + 9 * i, 9 * i), src_type(i), 0, uses_literal);
    if (sem.flags & detail::kSemMfma) {
      // CBSZ, ABID (broadcast within the A operand) and BLGP (B lane-group pattern).
      if (bits(w0, 10, 8) || bits(w0, 14, 11) || bits(w1, 31, 29))
        return "MFMA broadcast (cbsz/abid/blgp) is not supported";
      // gfx908's matrix cores always read C from and write D to AGPRs; gfx90a+ choose with
      // ACC_CD (bit 15).
      if (processor == Processor::gfx908 || bits(w0, 15, 15)) {
        inst.dst.agpr = true;
        if (inst.src[2].kind == OperandKind::vgpr) inst.src[2].agpr = true;
      }
      if (bits(w1, 27, 27) && inst.src[0].kind == OperandKind::vgpr) inst.src[0].agpr = true;
      if (bits(w1, 28, 28) && inst.src[1].kind == OperandKind::vgpr) inst.src[1].agpr = true;
    } else {
      inst.op_sel = std::uint8_t(bits(w0, 13, 11));
      inst.op_sel_hi = std::uint8_t(bits(w1, 28, 27) | (bits(w0, 14, 14) << 2));
      inst.neg_hi = std::uint8_t(bits(w0, 10, 8));
      inst.neg_lo = std::uint8_t(bits(w1, 31, 29));
      if (bits(w0, 15, 15)) inst.flags |= detail::kFlagClamp;
      if (std::string why = unsupported_output_modifiers(inst, sem); !why.empty()) return why;
      if ((inst.neg_lo || inst.neg_hi) && !(sem.flags & detail::kSemPackedNeg))
        return "neg_lo / neg_hi is not supported on this operation (its elements are not floating "
               "point)";
      if (sem.flags & detail::kSemDot) {
        if ((inst.op_sel & 4) || !(inst.op_sel_hi & 4) || ((inst.neg_lo | inst.neg_hi) & 4))
          return "op_sel / op_sel_hi / neg of the accumulator (src2) is not supported on this "
                 "operation";
        if ((sem.flags & detail::kSemWholeSources) && (inst.op_sel || inst.op_sel_hi != 7))
          return "op_sel / op_sel_hi is not supported on this operation (its sources are read "
                 "whole)";
      }
    }
    inst.flags |= detail::kFlagVgprIndexable;
    return uses_literal ? "VOP3P with a literal" : "";
  }
  if (vop3) {
    inst.dst = vgpr(bits(w0, 7, 0));
    if (sem.flags & (detail::kSemDstScalar | detail::kSemCompare)) inst.dst = sgpr(bits(w0, 7, 0));
    for (int i = 0; i < 3; ++i)
      inst.src[i] = source(bits(w1, 8 + 9 * i, 9 * i), src_type(i), 0, uses_literal);
    unsigned neg = bits(w1, 31, 29);
    if (sem.flags & detail::kSemVop3b) {
      inst.sdst = sgpr(bits(w0, 14, 8));
      for (int i = 0; i < 3; ++i)
        set_float_modifiers(inst.src[i], src_type(i), false, (neg >> i) & 1);
    } else {
      unsigned abs = bits(w0, 10, 8);
      // op_sel reads a source's high 16-bit half only where the handler does so (kSemOpSel, the
      // sources in Semantics::op); no handler writes a high half, and on a 32-bit operation the
      // ISA gives op_sel no meaning.
      inst.op_sel = std::uint8_t(bits(w0, 14, 11));
      const unsigned op_sel_sources = (sem.flags & detail::kSemOpSel) ? (sem.op & 7u) : 0u;
      if (inst.op_sel & 8 && op_sel_sources)
        return "op_sel of the destination (its high half) is not supported on this operation";
      if (inst.op_sel & ~op_sel_sources)
        return (sem.flags & detail::kSemLowHalves)
                   ? "op_sel (a high 16-bit half) is not supported on this 16-bit operation"
                   : "op_sel is not supported on this operation";
      for (int i = 0; i < 3; ++i) {
        set_float_modifiers(inst.src[i], src_type(i), (abs >> i) & 1, (neg >> i) & 1);
        if (!((inst.op_sel >> i) & 1)) continue;
        // The handler reads the high half: its sign is bit 31.
        if (inst.src[i].kind == OperandKind::constant)
          return "op_sel of a constant source is not supported";
        if (src_type(i) == DataType::f16) {
          if (inst.src[i].and_mask != ~0u) inst.src[i].and_mask = ~0x80000000u;
          if (inst.src[i].xor_mask) inst.src[i].xor_mask = 0x80000000u;
        }
      }
    }
    if (bits(w0, 15, 15)) inst.flags |= detail::kFlagClamp;
    inst.omod = std::uint8_t(bits(w1, 28, 27));
    if (std::string why = unsupported_output_modifiers(inst, sem); !why.empty()) return why;
    if (sem.flags & detail::kSemCompare) {
      inst.sdst = inst.dst;
    }
    if (sem.flags & detail::kSemAccumulate) inst.src[2] = inst.dst;
    if (std::string why = unsupported_whole_source_modifiers(inst, sem); !why.empty()) return why;
    inst.flags |= detail::kFlagVgprIndexable;
    return uses_literal ? "VOP3 with a literal" : "";
  }

  // VOP1 / VOP2 / VOPC, possibly with SDWA (src0 = 0xf9) or DPP (src0 = 0xfa).
  const bool vop1 = bits(w0, 31, 25) == 0x3f;
  const bool vopc = bits(w0, 31, 25) == 0x3e;
  unsigned src0_code = bits(w0, 8, 0);
  unsigned vsrc1 = bits(w0, 16, 9);
  unsigned vdst = bits(w0, 24, 17);
  if (vop1) {
    inst.dst = (sem.flags & detail::kSemDstScalar) ? sgpr(vdst) : vgpr(vdst);
  } else if (vopc) {
    inst.sdst = sgpr(detail::kVccLo);
    inst.src[1] = vgpr(vsrc1);
  } else {
    inst.dst = vgpr(vdst);
    inst.src[1] = vgpr(vsrc1);
    if (sem.flags & detail::kSemVop3b) inst.sdst = sgpr(detail::kVccLo);
    if (sem.flags & detail::kSemCarryIn) inst.src[2] = sgpr(detail::kVccLo);
    if (sem.flags & detail::kSemAccumulate) inst.src[2] = inst.dst;
  }
  if (src0_code == 0xf9) {  // SDWA
    inst.flags |= detail::kFlagSdwa;
    inst.src[0] = bits(w1, 23, 23) ? sgpr(bits(w1, 7, 0)) : vgpr(bits(w1, 7, 0));
    if (inst.src[0].kind == OperandKind::sgpr && bits(w1, 7, 0) >= 128) {
      bool unused = false;
      inst.src[0] = source(bits(w1, 7, 0), src_type(0), 0, unused);
    }
    inst.src[0].sdwa_sel = std::uint8_t(bits(w1, 18, 16));
    inst.src[0].sdwa_sext = bits(w1, 19, 19);
    set_float_modifiers(inst.src[0], src_type(0), bits(w1, 21, 21), bits(w1, 20, 20));
    if (!vop1) {
      if (bits(w1, 31, 31)) {
        bool unused = false;
        inst.src[1] = source(vsrc1, src_type(1), 0, unused);
      }
      inst.src[1].sdwa_sel = std::uint8_t(bits(w1, 26, 24));
      inst.src[1].sdwa_sext = bits(w1, 27, 27);
      set_float_modifiers(inst.src[1], src_type(1), bits(w1, 29, 29), bits(w1, 28, 28));
    }
    if (vopc) {
      if (bits(w1, 15, 15)) inst.sdst = sgpr(bits(w1, 14, 8));
    } else {
      inst.sdwa_dst_sel = std::uint8_t(bits(w1, 10, 8));
      inst.sdwa_dst_unused = std::uint8_t(bits(w1, 12, 11));
      if (bits(w1, 13, 13)) inst.flags |= detail::kFlagClamp;
      inst.omod = std::uint8_t(bits(w1, 15, 14));
      if (std::string why = unsupported_output_modifiers(inst, sem); !why.empty()) return why;
    }
  } else if (src0_code == 0xfa) {  // DPP
    inst.flags |= detail::kFlagDpp;
    inst.src[0] = vgpr(bits(w1, 7, 0));
    inst.dpp_ctrl = std::uint16_t(bits(w1, 16, 8));
    inst.dpp_bound_ctrl = bits(w1, 19, 19);
    set_float_modifiers(inst.src[0], src_type(0), bits(w1, 21, 21), bits(w1, 20, 20));
    if (!vop1) set_float_modifiers(inst.src[1], src_type(1), bits(w1, 23, 23), bits(w1, 22, 22));
    inst.dpp_bank_mask = std::uint8_t(bits(w1, 27, 24));
    inst.dpp_row_mask = std::uint8_t(bits(w1, 31, 28));
  } else {
    inst.src[0] = source(src0_code, src_type(0), literal, uses_literal);
    if (sem.flags & detail::kSemLiteralK) {
      // madmk: D = S0 * K + S1 -> sources (S0, K, S1); madak: D = S0 * S1 + K.
      Operand k;
      k.kind = OperandKind::constant;
      k.value = literal;
      if (sem.op == 1) {  // madmk / fmamk
        inst.src[2] = inst.src[1];
        inst.src[1] = k;
      } else {
        inst.src[2] = k;
      }
    }
  }
  if (std::string why = unsupported_whole_source_modifiers(inst, sem); !why.empty()) return why;
  inst.flags |= detail::kFlagVgprIndexable;
  return "";
}

std::string_view strip_encoding_suffix(std::string_view mnemonic) {
  for (std::string_view suffix : {"_e32", "_e64", "_sdwa", "_dpp"}) {
    if (mnemonic.size() > suffix.size() && mnemonic.ends_with(suffix))
      return mnemonic.substr(0, mnemonic.size() - suffix.size());
  }
  return mnemonic;
}

}  // namespace

// ---- CodeCache ---------------------------------------------------------------------------

detail::CodeObject* CodeCache::Impl::object_at(std::uint64_t host_pc) {
  auto it = objects.upper_bound(host_pc);
  if (it == objects.begin()) return nullptr;
  --it;
  if (host_pc - it->first >= it->second->size) return nullptr;
  return it->second.get();
}

std::uint64_t CodeCache::Impl::block_vaddr(std::uint32_t id) const {
  std::lock_guard lock(mutex);
  return id < block_vaddrs.size() ? block_vaddrs[id] : 0;
}

void CodeCache::Impl::mark_block_start_locked(detail::CodeObject& object, Inst& inst) {
  if (inst.flags & detail::kFlagBlockStart) return;
  inst.flags |= detail::kFlagBlockStart;
  inst.block_id = std::uint32_t(block_vaddrs.size());
  block_vaddrs.push_back(inst.host_pc - object.host_base + object.vaddr_base);
}

const Inst* CodeCache::Impl::decode_locked(detail::CodeObject& object, std::uint64_t host_pc,
                                           ErrorKind& kind, std::string& message) {
  std::uint64_t offset = host_pc - object.host_base;
  if (host_pc % 4 != 0) {
    kind = ErrorKind::illegal_instruction;
    message = "PC " + hex(host_pc) + " is not 4-byte aligned";
    return nullptr;
  }
  if (const Inst* done = object.slots[offset / 4].load(std::memory_order_acquire)) return done;
  std::uint64_t vaddr = offset + object.vaddr_base;
  isa::DecodeError error;
  std::optional<isa::Instruction> decoded =
      decoder_for(object.processor)
          .decode(std::span(reinterpret_cast<const std::uint8_t*>(host_pc),
                            std::min<std::uint64_t>(object.size - offset, 16)),
                  vaddr, &error);
  if (!decoded) {
    kind = ErrorKind::illegal_instruction;
    message = "illegal instruction: " + error.message + " for " +
              std::string(processor_name(object.processor));
    return nullptr;
  }
  const std::uint64_t size = decoded->size;
  const std::string& text = decoded->text;
  const std::string& mnemonic = decoded->mnemonic;
  const Semantics* sem = detail::find_semantics(strip_encoding_suffix(mnemonic));
  if (!sem) {
    kind = ErrorKind::unimplemented_instruction;
    message = "unimplemented instruction '" + text + "' at " + hex(vaddr);
    return nullptr;
  }
  Inst inst;
  inst.handler = sem->handler;
  inst.host_pc = host_pc;
  inst.next_pc = host_pc + size;
  inst.size = std::uint8_t(size);
  inst.width = sem->width;
  if (inst.op == 0) inst.op = sem->op;
  names.push_back(text);
  inst.name = names.back().c_str();
  std::uint32_t words[4] = {0, 0, 0, 0};
  std::memcpy(words, reinterpret_cast<const void*>(host_pc), size);
  std::uint16_t family_op = sem->op;
  std::string refused = decode_fields(inst, *sem, words, unsigned(size), object.processor);
  if (!refused.empty()) {
    kind = ErrorKind::unimplemented_instruction;
    message = "unimplemented form of '" + text + "' at " + hex(vaddr) + ": " + refused;
    return nullptr;
  }
  for (int i = 0; i < 3; ++i) inst.src[i].dwords = is_64(sem->src_type[i]) ? 2 : 1;
  if (sem->family != Family::flat)
    inst.op = family_op;
  else
    inst.op = std::uint16_t(inst.op | (family_op << 2));  // segment in bits 1:0
  if (sem->flags & detail::kSemBranch) inst.flags |= detail::kFlagBranch;
  if (sem->flags & detail::kSemCondBranch) inst.flags |= detail::kFlagCondBranch;
  if ((sem->flags & (detail::kSemBranch | detail::kSemCondBranch)) && sem->family == Family::sopp &&
      mnemonic != "s_endpgm") {
    inst.imm2 = std::int64_t(host_pc + 4 + inst.imm * 4);  // branch target (host)
  }
  object.pool.push_back(inst);
  Inst& stored = object.pool.back();
  if (object.block_starts.count(vaddr)) mark_block_start_locked(object, stored);
  object.slots[offset / 4].store(&stored, std::memory_order_release);
  return &stored;
}

const Inst* CodeCache::Impl::fetch_slow(std::uint64_t host_pc, ErrorKind& kind,
                                        std::string& message) {
  std::lock_guard lock(mutex);
  detail::CodeObject* object = object_at(host_pc);
  if (!object) {
    kind = ErrorKind::illegal_instruction;
    message = "PC " + hex(host_pc) + " is outside every registered code object";
    return nullptr;
  }
  return decode_locked(*object, host_pc, kind, message);
}

void CodeCache::Impl::prepare_entry(std::uint64_t entry) {
  std::lock_guard lock(mutex);
  detail::CodeObject* object = object_at(entry);
  if (!object) return;
  std::uint64_t entry_vaddr = entry - object->host_base + object->vaddr_base;
  if (!object->explored.insert(entry_vaddr).second) return;  // already explored from here
  // Walk everything reachable from the entry (branch targets and fall-throughs) that no earlier
  // walk has passed, then mark leaders as the analysis library defines blocks: the entry,
  // branch targets, and the instruction after a conditional branch, a call or a trap. (A walk
  // from every new entry over all it reaches made a rewritten kernel's probe calls quadratic:
  // each return point is an entry.)
  if (object->walked.empty()) object->walked.assign(object->size / 4, false);
  std::vector<std::uint64_t> work{entry};
  std::set<std::uint64_t> leaders{entry_vaddr};
  while (!work.empty()) {
    std::uint64_t pc = work.back();
    work.pop_back();
    while (object->host_base <= pc && pc < object->host_base + object->size &&
           !object->walked[(pc - object->host_base) / 4]) {
      object->walked[(pc - object->host_base) / 4] = true;
      ErrorKind kind;
      std::string message;
      const Inst* inst = decode_locked(*object, pc, kind, message);
      if (!inst) break;  // reported when (if) a wave fetches it
      std::uint64_t vaddr_next = inst->next_pc - object->host_base + object->vaddr_base;
      if (inst->flags & (detail::kFlagBranch | detail::kFlagCondBranch)) {
        if (inst->imm2 != 0) {
          std::uint64_t target = std::uint64_t(inst->imm2);
          leaders.insert(target - object->host_base + object->vaddr_base);
          work.push_back(target);
        }
        if (inst->flags & detail::kFlagCondBranch) leaders.insert(vaddr_next);
        if (!(inst->flags & detail::kFlagCondBranch)) break;
      }
      // Calls and traps end a block and fall through (the analysis library's definition).
      std::string_view name(inst->name);
      if (name.starts_with("s_swappc") || name.starts_with("s_trap")) leaders.insert(vaddr_next);
      pc = inst->next_pc;
    }
  }
  if (object->explicit_blocks) return;
  for (std::uint64_t vaddr : leaders) {
    object->block_starts.insert(vaddr);
    std::uint64_t host = vaddr - object->vaddr_base + object->host_base;
    if (host < object->host_base || host >= object->host_base + object->size) continue;
    const Inst* inst = object->slots[(host - object->host_base) / 4].load();
    if (inst) mark_block_start_locked(*object, const_cast<Inst&>(*inst));
  }
}

CodeCache::CodeCache() : impl_(std::make_unique<Impl>()) {}
CodeCache::~CodeCache() = default;

void CodeCache::add_object(Processor processor, const void* host_base, std::size_t size,
                           std::uint64_t original_vaddr_base) {
  std::uint64_t base = reinterpret_cast<std::uint64_t>(host_base);
  if (size == 0 || base % 4 != 0)
    throw Error("emu code cache: object at " + hex(base) + " must be non-empty and 4-byte aligned");
  decoder_for(processor);
  std::lock_guard lock(impl_->mutex);
  for (auto& [other_base, other] : impl_->objects) {
    if (base < other_base + other->size && other_base < base + size)
      throw Error("emu code cache: object at " + hex(base) + " overlaps the object at " +
                  hex(other_base));
  }
  auto object = std::make_unique<detail::CodeObject>();
  object->processor = processor;
  object->host_base = base;
  object->size = size;
  object->vaddr_base = original_vaddr_base;
  object->slots = std::make_unique<std::atomic<const Inst*>[]>((size + 3) / 4);
  impl_->objects.emplace(base, std::move(object));
}

bool CodeCache::remove_object(const void* host_base) {
  std::lock_guard lock(impl_->mutex);
  return impl_->objects.erase(reinterpret_cast<std::uint64_t>(host_base)) != 0;
}

void CodeCache::set_block_starts(const void* host_base, std::span<const std::uint64_t> vaddrs) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->objects.find(reinterpret_cast<std::uint64_t>(host_base));
  if (it == impl_->objects.end())
    throw Error("emu code cache: no object registered at " +
                hex(reinterpret_cast<std::uint64_t>(host_base)));
  detail::CodeObject& object = *it->second;
  object.explicit_blocks = true;
  object.block_starts = std::set<std::uint64_t>(vaddrs.begin(), vaddrs.end());
  for (Inst& inst : object.pool) {
    inst.flags &= ~detail::kFlagBlockStart;
    if (object.block_starts.count(inst.host_pc - object.host_base + object.vaddr_base))
      impl_->mark_block_start_locked(object, inst);
  }
}

std::optional<std::uint64_t> CodeCache::original_address(std::uint64_t host_pc) const {
  std::lock_guard lock(impl_->mutex);
  detail::CodeObject* object = impl_->object_at(host_pc);
  if (!object) return std::nullopt;
  return host_pc - object->host_base + object->vaddr_base;
}

std::optional<std::uint64_t> CodeCache::host_address(const void* host_base,
                                                     std::uint64_t original_vaddr) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->objects.find(reinterpret_cast<std::uint64_t>(host_base));
  if (it == impl_->objects.end()) return std::nullopt;
  const detail::CodeObject& object = *it->second;
  if (original_vaddr < object.vaddr_base || original_vaddr - object.vaddr_base >= object.size)
    return std::nullopt;
  return original_vaddr - object.vaddr_base + object.host_base;
}

std::string CodeCache::instruction_text(std::uint64_t host_pc) const {
  std::lock_guard lock(impl_->mutex);
  detail::CodeObject* object = impl_->object_at(host_pc);
  if (!object || host_pc % 4) return "";
  ErrorKind kind;
  std::string message;
  const Inst* inst = impl_->decode_locked(*object, host_pc, kind, message);
  if (inst) return inst->name;
  // Undecodable or unimplemented: the message carries the text when there is one.
  return "";
}

}  // namespace wavekit::emu
