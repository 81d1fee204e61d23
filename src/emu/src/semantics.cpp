// Instruction semantics, one handler per mnemonic (GFX9 ISA manuals for MI100 / MI200 / MI300),
// and the table that binds mnemonics to handlers at decode time.
#include "semantics.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>

#include "code_cache.h"
#include "memory.h"

namespace wavekit::emu::detail {

namespace {

using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i32 = std::int32_t;
using i64 = std::int64_t;

float as_f32(u32 bits) { return std::bit_cast<float>(bits); }
u32 bits_of(float value) { return std::bit_cast<u32>(value); }
double as_f64(u64 bits) { return std::bit_cast<double>(bits); }
u64 bits_of(double value) { return std::bit_cast<u64>(value); }

// ---- operand access ----------------------------------------------------------------------

u32 vector_index(const Wave& w, const Inst& in, const Operand& op, unsigned slot) {
  u32 index = op.index + (op.agpr ? w.agpr_base : 0u);
  if (w.gpr_idx_on && (in.flags & kFlagVgprIndexable) && ((w.gpr_idx_mode >> slot) & 1))
    index += w.s[kM0] & 0xffu;
  return index % kVectorRegisters;
}

u64 special_value(const Wave& w, u64 code) {
  switch (code) {
    case 235:
      return kSharedApertureBase;
    case 236:
      return kSharedApertureBase + 0xffffffffull;
    case 237:
      return kPrivateApertureBase;
    case 238:
      return kPrivateApertureBase + 0xffffffffull;
    case 251:
      return (w.s[kVccLo] | w.s[kVccHi]) == 0;  // vccz
    case 252:
      return w.exec() == 0;  // execz
    case 253:
      return w.scc;
    default:
      return 0;
  }
}

// A scalar read (SALU / SMEM / uniform VALU operand), 32 or 64 bits.
u32 scalar32(const Wave& w, const Operand& op) {
  switch (op.kind) {
    case OperandKind::sgpr:
      return w.s[op.index];
    case OperandKind::constant:
      return u32(op.value);
    case OperandKind::special:
      return u32(special_value(w, op.value));
    default:
      return 0;
  }
}
u64 scalar64(const Wave& w, const Operand& op) {
  switch (op.kind) {
    case OperandKind::sgpr:
      return w.sreg64(op.index);
    case OperandKind::constant:
      return op.value;
    case OperandKind::special:
      return special_value(w, op.value);
    default:
      return 0;
  }
}

// A 32-bit view of a VALU source for all lanes: value of lane l is p[l * stride].
struct View32 {
  const u32* p;
  u32 stride;
  u32 operator[](unsigned lane) const { return p[lane * stride]; }
};

u32 sdwa_select(u32 value, const Operand& op) {
  switch (op.sdwa_sel) {
    case 0:
    case 1:
    case 2:
    case 3: {
      u32 byte = (value >> (8 * op.sdwa_sel)) & 0xffu;
      return op.sdwa_sext ? u32(i32(std::int8_t(byte))) : byte;
    }
    case 4:
    case 5: {
      u32 word = (value >> (16 * (op.sdwa_sel - 4))) & 0xffffu;
      return op.sdwa_sext ? u32(i32(std::int16_t(word))) : word;
    }
    default:
      return value;
  }
}

// Source lane of a DPP lane, or -1 when the source is out of range for that control.
int dpp_source_lane(unsigned control, int lane) {
  int row = lane & ~15, in_row = lane & 15;
  if (control <= 0xff) return (lane & ~3) | ((control >> ((lane & 3) * 2)) & 3);
  if (control >= 0x101 && control <= 0x10f) {
    int n = int(control & 15);
    return in_row + n < 16 ? lane + n : -1;
  }
  if (control >= 0x111 && control <= 0x11f) {
    int n = int(control & 15);
    return in_row >= n ? lane - n : -1;
  }
  if (control >= 0x121 && control <= 0x12f) return row + ((in_row - int(control & 15)) & 15);
  switch (control) {
    case 0x130:
      return lane + 1 < 64 ? lane + 1 : -1;  // wave_shl:1
    case 0x134:
      return (lane + 1) & 63;  // wave_rol:1
    case 0x138:
      return lane >= 1 ? lane - 1 : -1;  // wave_shr:1
    case 0x13c:
      return (lane - 1) & 63;  // wave_ror:1
    case 0x140:
      return row + 15 - in_row;  // row_mirror
    case 0x141:
      return (lane & ~7) + 7 - (lane & 7);  // row_half_mirror
    case 0x142:
      return row >= 16 ? row - 1 : -1;  // row_bcast:15
    case 0x143:
      return row >= 32 ? 31 : -1;  // row_bcast:31
    default:
      return -2;
  }
}

View32 read32(Wave& w, const Inst& in, unsigned i, u32* tmp) {
  const Operand& op = in.src[i];
  View32 view{nullptr, 0};
  switch (op.kind) {
    case OperandKind::vgpr:
      view = {w.vreg(vector_index(w, in, op, i)), 1};
      break;
    case OperandKind::sgpr:
      view = {&w.s[op.index], 0};
      break;
    case OperandKind::constant:
      view = {reinterpret_cast<const u32*>(&op.value), 0};
      break;
    case OperandKind::special:
      tmp[0] = u32(special_value(w, op.value));
      view = {tmp, 0};
      break;
    case OperandKind::none: {
      static const u32 zero = 0;
      return {&zero, 0};
    }
  }
  const bool dpp = i == 0 && (in.flags & kFlagDpp);
  const bool sdwa = (in.flags & kFlagSdwa) && op.sdwa_sel != 6;
  if (!dpp && !sdwa && op.and_mask == ~0u && op.xor_mask == 0) return view;
  if (dpp) {
    u64 exec = w.exec(), allowed = 0;
    for (int lane = 0; lane < 64; ++lane) {
      int source = dpp_source_lane(in.dpp_ctrl, lane);
      bool row_on = (in.dpp_row_mask >> (lane >> 4)) & 1;
      bool bank_on = (in.dpp_bank_mask >> ((lane >> 2) & 3)) & 1;
      if (!row_on || !bank_on) continue;
      if (source < 0 || !((exec >> source) & 1)) {
        if (in.dpp_bound_ctrl) {
          tmp[lane] = 0;
          allowed |= 1ull << lane;
        }
        continue;
      }
      tmp[lane] = view[unsigned(source)];
      allowed |= 1ull << lane;
    }
    w.dpp_lanes = allowed;
  } else {
    for (unsigned lane = 0; lane < 64; ++lane) tmp[lane] = view[lane];
  }
  for (unsigned lane = 0; lane < 64; ++lane) {
    u32 value = tmp[lane];
    if (sdwa) value = sdwa_select(value, op);
    tmp[lane] = (value & op.and_mask) ^ op.xor_mask;
  }
  return {tmp, 1};
}

// 64-bit view: lo/hi dwords; a 32-bit operand reads with hi = 0.
struct View64 {
  const u32* lo;
  const u32* hi;
  u32 stride;
  u64 operator[](unsigned lane) const {
    return u64(lo[lane * stride]) | (u64(hi[lane * stride]) << 32);
  }
};

View64 read64(Wave& w, const Inst& in, unsigned i, u32* tmp) {
  const Operand& op = in.src[i];
  static const u32 zeros[64] = {};
  if (op.dwords == 1) {
    View32 v = read32(w, in, i, tmp);
    return {v.p, zeros, v.stride};
  }
  View64 view{zeros, zeros, 0};
  switch (op.kind) {
    case OperandKind::vgpr: {
      u32 index = vector_index(w, in, op, i);
      view = {w.vreg(index), w.vreg((index + 1) % kVectorRegisters), 1};
      break;
    }
    case OperandKind::sgpr:
      view = {&w.s[op.index], &w.s[(op.index + 1) & 127], 0};
      break;
    case OperandKind::constant: {
      const u32* words = reinterpret_cast<const u32*>(&op.value);
      view = {words, words + 1, 0};
      break;
    }
    case OperandKind::special: {
      u64 value = special_value(w, op.value);
      tmp[0] = u32(value);
      tmp[64] = u32(value >> 32);
      view = {tmp, tmp + 64, 0};
      break;
    }
    case OperandKind::none:
      break;
  }
  if (op.and_mask == ~0u && op.xor_mask == 0) return view;
  for (unsigned lane = 0; lane < 64; ++lane) {
    tmp[lane] = view.lo[lane * view.stride];
    tmp[64 + lane] = (view.hi[lane * view.stride] & op.and_mask) ^ op.xor_mask;
  }
  return {tmp, tmp + 64, 1};
}

u64 write_lanes(Wave& w, const Inst& in) {
  u64 lanes = w.exec();
  if (in.flags & kFlagDpp) lanes &= w.dpp_lanes;
  return lanes;
}

void write32(Wave& w, const Inst& in, u32* dst, unsigned lane, u32 value) {
  if (!(in.flags & kFlagSdwa) || in.sdwa_dst_sel == 6) {
    dst[lane] = value;
    return;
  }
  unsigned sel = in.sdwa_dst_sel;
  unsigned shift = sel < 4 ? 8 * sel : 16 * (sel - 4);
  u32 mask = (sel < 4 ? 0xffu : 0xffffu) << shift;
  u32 placed = (value << shift) & mask;
  switch (in.sdwa_dst_unused) {
    case 0:
      dst[lane] = placed;
      break;
    case 1: {  // sign-extend into the upper bits
      unsigned top = sel < 4 ? 8 * sel + 7 : 16 * (sel - 4) + 15;
      bool negative = (placed >> top) & 1;
      u32 above = top == 31 ? 0 : (~0u << (top + 1));
      dst[lane] = placed | (negative ? above : 0);
      break;
    }
    default:
      dst[lane] = (dst[lane] & ~mask) | placed;
      break;
  }
  (void)w;
}

// VOP3's output modifier (×2, ×4, ×0.5) then clamp to [0, 1] (NaN clamps to 0), for f32 and f64.
template <typename Float>
Float output_modified(const Inst& in, Float value) {
  static constexpr Float kScale[4] = {1, 2, 4, Float(0.5)};
  if (in.omod) value *= kScale[in.omod & 3];  // untouched without one (a NaN keeps its bits)
  if (in.flags & kFlagClamp) {
    if (std::isnan(value)) return 0;
    value = value < 0 ? Float(0) : (value > 1 ? Float(1) : value);
  }
  return value;
}

float output_f32(const Inst& in, float value) { return output_modified(in, value); }
double output_f64(const Inst& in, double value) { return output_modified(in, value); }

// ---- VALU templates ----------------------------------------------------------------------

// 32-bit result from 32-bit sources; F(a, b, c, lane).
template <auto F>
void valu32(Wave& w, const Inst& in) {
  u32 t0[64], t1[64], t2[64];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1), c = read32(w, in, 2, t2);
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  if (lanes == ~0ull && !(in.flags & kFlagSdwa)) {
    for (unsigned lane = 0; lane < 64; ++lane) d[lane] = F(a[lane], b[lane], c[lane], lane);
    return;
  }
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) write32(w, in, d, lane, F(a[lane], b[lane], c[lane], lane));
}

// Output modifiers on the f32 (width 1) or f64 (width 2) result in the destination.
void apply_output_modifiers(Wave& w, const Inst& in) {
  u32 index = vector_index(w, in, in.dst, 3);
  u32* lo = w.vreg(index);
  u32* hi = w.vreg((index + 1) % kVectorRegisters);
  u64 lanes = write_lanes(w, in);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    if (in.width == 2) {
      u64 r = bits_of(output_f64(in, as_f64(u64(lo[lane]) | (u64(hi[lane]) << 32))));
      lo[lane] = u32(r);
      hi[lane] = u32(r >> 32);
    } else {
      lo[lane] = bits_of(output_f32(in, as_f32(lo[lane])));
    }
  }
}

// Any handler writing an f32 or f64 result (conversions, ldexp, frexp_mant: computed on bits),
// then the output modifiers. With an SDWA dst_sel other than DWORD the whole result is computed
// and modified first, then placed as dst_sel says (the modifiers act on the value, not on the
// bits dst_sel left in the register).
template <Handler H>
void float_result(Wave& w, const Inst& in) {
  if (!in.omod && !(in.flags & kFlagClamp)) {
    H(w, in);
    return;
  }
  if (!(in.flags & kFlagSdwa) || in.sdwa_dst_sel == 6) {
    H(w, in);
    apply_output_modifiers(w, in);
    return;
  }
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  u32 kept[64];
  std::memcpy(kept, d, sizeof kept);
  Inst whole = in;
  whole.sdwa_dst_sel = 6;
  H(w, whole);
  apply_output_modifiers(w, whole);
  const u64 lanes = write_lanes(w, in);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    const u32 value = d[lane];
    d[lane] = kept[lane];
    write32(w, in, d, lane, value);
  }
}

// f32 arithmetic with output modifiers.
template <auto F>
void valu_f32(Wave& w, const Inst& in) {
  float_result<valu32<+[](u32 a, u32 b, u32 c, unsigned) {
    return bits_of(F(as_f32(a), as_f32(b), as_f32(c)));
  }>>(w, in);
}

// General: 64-bit views of every source, result of in.width dwords (1 or 2).
template <auto F>
void valu64(Wave& w, const Inst& in) {
  u32 t0[128], t1[128], t2[128];
  View64 a = read64(w, in, 0, t0), b = read64(w, in, 1, t1), c = read64(w, in, 2, t2);
  u64 lanes = write_lanes(w, in);
  u32 index = vector_index(w, in, in.dst, 3);
  u32* lo = w.vreg(index);
  u32* hi = w.vreg((index + 1) % kVectorRegisters);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    u64 r = F(a[lane], b[lane], c[lane]);
    if (in.width == 2) {
      lo[lane] = u32(r);
      hi[lane] = u32(r >> 32);
    } else {
      write32(w, in, lo, lane, u32(r));
    }
  }
}

template <auto F>
void valu_f64(Wave& w, const Inst& in) {
  float_result<
      valu64<+[](u64 a, u64 b, u64 c) { return bits_of(F(as_f64(a), as_f64(b), as_f64(c))); }>>(w,
                                                                                                in);
}

void write_mask(Wave& w, const Operand& dst, u64 mask) {
  if (dst.kind == OperandKind::sgpr && dst.index < kScalarFileSize - 1 && dst.index != kNull)
    w.set_sreg64(dst.index, mask);
}

// VOPC: F(a, b) per lane -> bit; inactive lanes give 0. cmpx also writes EXEC.
template <auto F, bool kExec>
void vcmp(Wave& w, const Inst& in) {
  u32 t0[128], t1[128];
  View64 a = read64(w, in, 0, t0), b = read64(w, in, 1, t1);
  u64 lanes = w.exec(), mask = 0;
  for (unsigned lane = 0; lane < 64; ++lane)
    if (((lanes >> lane) & 1) && F(a[lane], b[lane])) mask |= 1ull << lane;
  write_mask(w, in.sdst, mask);
  if (kExec) w.set_exec(mask);
}

// Carry-in/carry-out arithmetic: F(a, b, carry_in, carry_out&) -> 32-bit result.
template <auto F>
void vcarry(Wave& w, const Inst& in) {
  u32 t0[64], t1[64];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1);
  u64 carry_in = in.src[2].kind == OperandKind::sgpr ? w.sreg64(in.src[2].index) : 0;
  u64 lanes = write_lanes(w, in), carry_out = 0;
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    bool carry = false;
    d[lane] = F(a[lane], b[lane], bool((carry_in >> lane) & 1), carry);
    if (carry) carry_out |= 1ull << lane;
  }
  write_mask(w, in.sdst, carry_out);
}

// Integer add/sub whose VOP3 clamp bit saturates instead of wrapping.
template <auto F, auto Saturating>
void valu32_clamp(Wave& w, const Inst& in) {
  if (in.flags & kFlagClamp)
    valu32<Saturating>(w, in);
  else
    valu32<F>(w, in);
}

u32 lo16(u32 value) { return value & 0xffffu; }
i32 sext16(u32 value) { return std::int16_t(value); }
i32 saturate16(i64 value) {
  return i32(std::clamp<i64>(value, std::numeric_limits<std::int16_t>::min(),
                             std::numeric_limits<std::int16_t>::max()));
}

u32 saturate_signed(i64 value) {
  return u32(i32(
      std::clamp<i64>(value, std::numeric_limits<i32>::min(), std::numeric_limits<i32>::max())));
}

void v_cndmask_b32(Wave& w, const Inst& in) {
  u32 t0[64], t1[64];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1);
  u64 select = scalar64(w, in.src[2]);
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) write32(w, in, d, lane, ((select >> lane) & 1) ? b[lane] : a[lane]);
}

void v_readfirstlane_b32(Wave& w, const Inst& in) {
  u32 t0[64];
  View32 a = read32(w, in, 0, t0);
  u64 exec = w.exec();
  unsigned lane = exec ? unsigned(__builtin_ctzll(exec)) : 0;
  w.s[in.dst.index] = a[lane];
}

void v_readlane_b32(Wave& w, const Inst& in) {
  u32 t0[64];
  View32 a = read32(w, in, 0, t0);
  w.s[in.dst.index] = a[scalar32(w, in.src[1]) & 63];
}

void v_writelane_b32(Wave& w, const Inst& in) {
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  d[scalar32(w, in.src[1]) & 63] = scalar32(w, in.src[0]);
}

void v_accvgpr_read_b32(Wave& w, const Inst& in) {
  Operand source = in.src[0];
  if (source.kind == OperandKind::vgpr) source.agpr = true;
  Inst copy = in;
  copy.src[0] = source;
  valu32<+[](u32 a, u32, u32, unsigned) { return a; }>(w, copy);
}

void v_accvgpr_write_b32(Wave& w, const Inst& in) {
  Inst copy = in;
  copy.dst.agpr = true;
  valu32<+[](u32 a, u32, u32, unsigned) { return a; }>(w, copy);
}

void v_accvgpr_mov_b32(Wave& w, const Inst& in) {
  Inst copy = in;
  copy.dst.agpr = true;
  copy.src[0].agpr = true;
  valu32<+[](u32 a, u32, u32, unsigned) { return a; }>(w, copy);
}

// VOP3P packed f32 (gfx90a+): each half selects its source halves with op_sel / op_sel_hi.
template <auto F>
void vpk_f32(Wave& w, const Inst& in) {
  u32 t[3][128];
  View64 s[3] = {read64(w, in, 0, t[0]), read64(w, in, 1, t[1]), read64(w, in, 2, t[2])};
  u64 lanes = write_lanes(w, in);
  u32 index = vector_index(w, in, in.dst, 3);
  u32* lo = w.vreg(index);
  u32* hi = w.vreg((index + 1) % kVectorRegisters);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    float x[3], y[3];
    for (int i = 0; i < 3; ++i) {
      u64 v = s[i][lane];
      u32 lo_part = (in.op_sel >> i) & 1 ? u32(v >> 32) : u32(v);
      u32 hi_part = (in.op_sel_hi >> i) & 1 ? u32(v >> 32) : u32(v);
      if ((in.neg_lo >> i) & 1) lo_part ^= 0x80000000u;
      if ((in.neg_hi >> i) & 1) hi_part ^= 0x80000000u;
      x[i] = as_f32(lo_part);
      y[i] = as_f32(hi_part);
    }
    lo[lane] = bits_of(F(x[0], x[1], x[2]));
    hi[lane] = bits_of(F(y[0], y[1], y[2]));
  }
}

// VOP3P packed 16-bit: each result half picks its source halves with op_sel (low result) and
// op_sel_hi (high result); neg_lo / neg_hi negate per half. _Float16 + - * are IEEE binary16
// (exact in binary32, rounded once). v_pk_fma_f16 rounds the binary32 fma to binary16, which can
// differ from a fused binary16 fma in rare double-rounding cases.
template <auto F>
void vpk_16(Wave& w, const Inst& in) {
  u32 t[3][64];
  View32 s[3] = {read32(w, in, 0, t[0]), read32(w, in, 1, t[1]), read32(w, in, 2, t[2])};
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    std::uint16_t x[3], y[3];
    for (int i = 0; i < 3; ++i) {
      u32 v = s[i][lane];
      x[i] = std::uint16_t((in.op_sel >> i) & 1 ? v >> 16 : v);
      y[i] = std::uint16_t((in.op_sel_hi >> i) & 1 ? v >> 16 : v);
      if ((in.neg_lo >> i) & 1) x[i] ^= 0x8000;
      if ((in.neg_hi >> i) & 1) y[i] ^= 0x8000;
    }
    d[lane] = u32(F(x[0], x[1], x[2])) | (u32(F(y[0], y[1], y[2])) << 16);
  }
}

// Packed 16-bit integer operations whose clamp bit saturates each element.
template <auto F, auto Saturating>
void vpk_16_clamp(Wave& w, const Inst& in) {
  if (in.flags & kFlagClamp)
    vpk_16<Saturating>(w, in);
  else
    vpk_16<F>(w, in);
}

_Float16 as_f16(std::uint16_t bits) { return std::bit_cast<_Float16>(bits); }
std::uint16_t bits_of(_Float16 value) { return std::bit_cast<std::uint16_t>(value); }

// v_swap_b32 vdst, vsrc0 (gfx9): exchanges two VGPRs in the active lanes; the encoding only
// allows a VGPR source, and the exchange of a register with itself leaves it as it was.
void v_swap_b32(Wave& w, const Inst& in) {
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  u32* s = w.vreg(vector_index(w, in, in.src[0], 0));
  const u64 lanes = write_lanes(w, in);
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) std::swap(d[lane], s[lane]);
}

void v_pk_mov_b32(Wave& w, const Inst& in) {
  u32 t0[128], t1[128];
  View64 a = read64(w, in, 0, t0), b = read64(w, in, 1, t1);
  u64 lanes = write_lanes(w, in);
  u32 index = vector_index(w, in, in.dst, 3);
  u32* lo = w.vreg(index);
  u32* hi = w.vreg((index + 1) % kVectorRegisters);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    u64 x = a[lane], y = b[lane];
    u32 new_lo = (in.op_sel & 1) ? u32(x >> 32) : u32(x);
    u32 new_hi = (in.op_sel & 2) ? u32(y >> 32) : u32(y);
    lo[lane] = new_lo;
    hi[lane] = new_hi;
  }
}

// MFMA with f32 inputs: M x N x K per block, `blocks` blocks, layouts from AMD's matrix
// instruction calculator (A[i][k] in lane i + M*k (+ 4*b for the 4x4 blocks), B[k][j] alike,
// D[i][j] in register/lane per the calculator's output layout).
template <int M, int K, int Blocks>
void mfma_f32(Wave& w, const Inst& in) {
  u32 ta[64], tb[64];
  View32 a = read32(w, in, 0, ta), b = read32(w, in, 1, tb);
  constexpr int kRegisters = M * M * Blocks / 64;
  float acc[kRegisters][64];
  // C
  for (int r = 0; r < kRegisters; ++r) {
    if (in.src[2].kind == OperandKind::vgpr) {
      Operand c = in.src[2];
      c.index = std::uint16_t(c.index + r);
      const u32* reg = w.vreg(vector_index(w, in, c, 2));
      for (int lane = 0; lane < 64; ++lane) acc[r][lane] = as_f32(reg[lane]);
    } else {
      float value = as_f32(scalar32(w, in.src[2]));
      for (int lane = 0; lane < 64; ++lane) acc[r][lane] = value;
    }
  }
  for (int block = 0; block < Blocks; ++block) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < M; ++j) {
        int reg, lane;
        if (Blocks == 16) {
          reg = i, lane = j + 4 * block;
        } else if (M == 16) {
          reg = i % 4, lane = j + 16 * (i / 4);
        } else {
          reg = (i % 4) + 4 * (i / 8), lane = j + 32 * ((i / 4) % 2);
        }
        float sum = acc[reg][lane];
        for (int k = 0; k < K; ++k) {
          int a_lane = Blocks == 16 ? i + 4 * block : i + M * k;
          int b_lane = Blocks == 16 ? j + 4 * block : j + M * k;
          sum = std::fma(as_f32(a[unsigned(a_lane)]), as_f32(b[unsigned(b_lane)]), sum);
        }
        acc[reg][lane] = sum;
      }
    }
  }
  for (int r = 0; r < kRegisters; ++r) {
    Operand d = in.dst;
    d.index = std::uint16_t(d.index + r);
    u32* reg = w.vreg(vector_index(w, in, d, 3));
    for (int lane = 0; lane < 64; ++lane) reg[lane] = bits_of(acc[r][lane]);
  }
}

// ---- float helpers matching the ISA ------------------------------------------------------

u32 cvt_u32_f32(float x) {
  if (std::isnan(x) || x <= 0.0f) return 0;
  if (x >= 4294967296.0f) return 0xffffffffu;
  return u32(x);
}
i32 cvt_i32_f32(float x) {
  if (std::isnan(x)) return 0;
  if (x <= -2147483648.0f) return std::numeric_limits<i32>::min();
  if (x >= 2147483648.0f) return std::numeric_limits<i32>::max();
  return i32(x);
}
u32 cvt_u32_f64(double x) {
  if (std::isnan(x) || x <= 0.0) return 0;
  if (x >= 4294967296.0) return 0xffffffffu;
  return u32(x);
}
i32 cvt_i32_f64(double x) {
  if (std::isnan(x)) return 0;
  if (x <= -2147483648.0) return std::numeric_limits<i32>::min();
  if (x >= 2147483647.0) return std::numeric_limits<i32>::max();
  return i32(x);
}

// v_trig_preop_f64: 53 bits of 2/pi's fraction from bit 53 * S1[4:0] (plus the exponent of S0
// beyond 1077, so that large arguments get the bits they need), truncated, scaled by 2^-(53 +
// the shift) (2^128 more for exponents >= 1968, whose products would underflow otherwise); a
// NaN is quieted; a segment past the table is 0 (LLVM's constant folding of
// amdgcn.trig.preop, which states the hardware's behaviour). The fraction bits of 2/pi, 32 a
// word (computed from Machin's formula for pi with integer arithmetic).
constexpr u32 kTwoOverPi[37] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046};

u64 trig_preop(u64 bits, u32 segment) {
  if (std::isnan(as_f64(bits))) return bits | 0x0008000000000000ull;
  const u32 exponent = u32(bits >> 52) & 0x7ffu;
  u32 shift = (segment & 31u) * 53u;
  if (exponent > 1077) shift += exponent - 1077;
  const u32 index = shift >> 5, offset = shift & 31u;
  if (index + 2 >= std::size(kTwoOverPi)) return 0;
  u64 window = (u64(kTwoOverPi[index]) << 32) | kTwoOverPi[index + 1];
  if (offset) window = (window << offset) | (u64(kTwoOverPi[index + 2]) >> (32 - offset));
  const int scale = -53 - int(shift) + (exponent >= 1968 ? 128 : 0);
  return bits_of(std::ldexp(double(window >> 11), scale));
}

struct CubeFace {
  float id, ma, sc, tc;
};
CubeFace cube_face(float x, float y, float z) {
  if (std::fabs(z) >= std::fabs(x) && std::fabs(z) >= std::fabs(y))
    return {z < 0 ? 5.0f : 4.0f, z + z, z < 0 ? -x : x, -y};
  if (std::fabs(y) >= std::fabs(x)) return {y < 0 ? 3.0f : 2.0f, y + y, x, y < 0 ? -z : z};
  return {x < 0 ? 1.0f : 0.0f, x + x, x < 0 ? z : -z, -y};
}

// IEEE-754 minNum/maxNum as the GFX9 VALU does in IEEE mode: a NaN operand yields the other.
float fmin_ieee(float a, float b) { return std::fmin(a, b); }
float fmax_ieee(float a, float b) { return std::fmax(a, b); }

float f16_to_f32(u32 h) {
  u32 sign = (h >> 15) & 1, exponent = (h >> 10) & 31, mantissa = h & 1023;
  float value;
  if (exponent == 0)
    value = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
  else
    value = std::ldexp(float(mantissa | 1024), int(exponent) - 25);
  return sign ? -value : value;
}

// ---- f16 VALU (VOP1 / VOP2 / VOP3 / VOPC) ---------------------------------------------------
// The sources' low halves are IEEE binary16 (f16_to_f32 is exact); F computes in double, where
// add, sub, mul and fma of binary16 values are exact, and the result is rounded once to binary16
// (round to nearest even, the MODE register's default; _Float16(double) is one correct rounding).
// The destination's high half is zeroed: GFX9 does so for these opcodes (LLVM's
// GCNSubtarget::zeroesHigh16BitsOfDest); op_sel (a high half) is refused at decode
// (kSemLowHalves). Output modifiers apply to the rounded result (exact but for omod's scaling
// into the subnormal or overflow range).
float h2f(u32 x) { return f16_to_f32(x & 0xffff); }
u32 round_f16(double value) { return bits_of(_Float16(value)); }

// A binary16 result from F (u32 sources -> binary16 bits), then the output modifiers, before
// an SDWA dst_sel places it (applied to the register afterwards they read and rewrote its low
// half, whatever dst_sel had written there).
template <auto F>
void valu_f16_result(Wave& w, const Inst& in) {
  if (in.omod == 0 && !(in.flags & kFlagClamp)) {
    valu32<F>(w, in);
    return;
  }
  u32 t0[64], t1[64], t2[64];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1), c = read32(w, in, 2, t2);
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1)
      write32(w, in, d, lane,
              round_f16(output_modified(in, double(h2f(F(a[lane], b[lane], c[lane], lane))))));
}

template <auto F>
void valu_f16(Wave& w, const Inst& in) {
  valu_f16_result<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
    return round_f16(F(double(h2f(a)), double(h2f(b)), double(h2f(c))));
  }>(w, in);
}

// ---- VOP3P mixed precision (v_fma_mix_f32, v_fma_mixlo_f16, v_fma_mixhi_f16) -----------------
// Per source i (the ISA's pseudo-code): op_sel_hi[i] = 0 reads the 32 bits as an f32, 1 reads
// an f16, the high half when op_sel[i] = 1, converted to f32 exactly. The NEG_HI field is each
// source's abs modifier, NEG (neg_lo) its negation, applied in that order. D = fma(in0, in1,
// in2) rounded once to f32; mixlo / mixhi then convert that f32 to f16 (the ISA's
// f32_to_f16(fma(...)): two roundings) into the low / high half, keeping the other half. Clamp
// limits the result to [0, 1] (a NaN to 0). The operands are declared f16, so that an inline
// float constant is its f16 encoding; as an f32 source it is that f16 value (LLVM's
// VOP3PInstructions.td: "the inline immediate values are really f16 converted to f32").
bool is_f16_inline_float(const Operand& op) {
  if (op.kind != OperandKind::constant) return false;
  switch (op.value) {
    case 0x3800:
    case 0xb800:
    case 0x3c00:
    case 0xbc00:
    case 0x4000:
    case 0xc000:
    case 0x4400:
    case 0xc400:
    case 0x3118:
      return true;
    default:
      return false;
  }
}

enum class MixResult { f32, lo, hi };

template <MixResult kResult>
void v_fma_mix(Wave& w, const Inst& in) {
  u32 t[3][64];
  View32 s[3] = {read32(w, in, 0, t[0]), read32(w, in, 1, t[1]), read32(w, in, 2, t[2])};
  bool constant_f16[3];
  for (int i = 0; i < 3; ++i) constant_f16[i] = is_f16_inline_float(in.src[i]);
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    float x[3];
    for (int i = 0; i < 3; ++i) {
      u32 v = s[i][lane];
      if ((in.op_sel_hi >> i) & 1)
        x[i] = f16_to_f32((in.op_sel >> i) & 1 ? v >> 16 : v & 0xffff);
      else
        x[i] = constant_f16[i] ? f16_to_f32(v & 0xffff) : as_f32(v);
      if ((in.neg_hi >> i) & 1) x[i] = std::fabs(x[i]);
      if ((in.neg_lo >> i) & 1) x[i] = -x[i];
    }
    float r = std::fma(x[0], x[1], x[2]);
    if (in.flags & kFlagClamp) r = std::isnan(r) ? 0.0f : std::fmin(std::fmax(r, 0.0f), 1.0f);
    if constexpr (kResult == MixResult::f32)
      d[lane] = bits_of(r);
    else if constexpr (kResult == MixResult::lo)
      d[lane] = (d[lane] & 0xffff0000u) | round_f16(double(r));
    else
      d[lane] = (d[lane] & 0xffffu) | (round_f16(double(r)) << 16);
  }
}

// ---- VOP3 op_sel (kSemOpSel) -----------------------------------------------------------------
// Source i is shifted right 16 when its op_sel bit is set (its high half read; decode moved an f16
// source's abs / neg to bit 31 and refuses op_sel elsewhere). F reads the bits it needs; with
// the clamp bit Saturating computes the result instead.
template <auto F, auto Saturating = F>
void valu32_sel(Wave& w, const Inst& in) {
  u32 t[3][64];
  View32 s[3] = {read32(w, in, 0, t[0]), read32(w, in, 1, t[1]), read32(w, in, 2, t[2])};
  const unsigned shift[3] = {in.op_sel & 1 ? 16u : 0u, in.op_sel & 2 ? 16u : 0u,
                             in.op_sel & 4 ? 16u : 0u};
  const bool saturate = in.flags & kFlagClamp;
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    const u32 a = s[0][lane] >> shift[0], b = s[1][lane] >> shift[1], c = s[2][lane] >> shift[2];
    d[lane] = saturate ? Saturating(a, b, c, lane) : F(a, b, c, lane);
  }
}

// A binary16 result (the high half zeroed) from op_sel-selected binary16 sources, then the output
// modifiers, as valu_f16.
template <auto F>
void valu_f16_sel(Wave& w, const Inst& in) {
  valu32_sel<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
    return round_f16(F(double(h2f(a)), double(h2f(b)), double(h2f(c))));
  }>(w, in);
  if (in.omod == 0 && !(in.flags & kFlagClamp)) return;
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  u64 lanes = write_lanes(w, in);
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) d[lane] = round_f16(output_modified(in, double(h2f(d[lane]))));
}

// The ISA's V_MED3 on IEEE values: with a NaN operand the min3 of the three (minNum drops
// NaNs), else the maximum of the two that are not the max3.
double med3_ieee(double a, double b, double c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return std::fmin(std::fmin(a, b), c);
  const double m = std::fmax(std::fmax(a, b), c);
  if (m == a) return std::fmax(b, c);
  if (m == b) return std::fmax(a, c);
  return std::fmax(a, b);
}

// An f32 to binary16 rounded toward zero (v_cvt_pkrtz_f16_f32): the nearest binary16, one step
// toward zero when that is beyond the value (a finite value past 65504 gives 65504). A NaN
// converts as v_cvt_f16_f32 converts it.
u32 f16_rtz(float x) {
  if (std::isnan(x)) return round_f16(double(x));
  u32 nearest = round_f16(double(x));
  if (std::fabs(double(h2f(nearest))) > std::fabs(double(x))) --nearest;  // magnitude - 1 ulp
  return nearest;
}

// v_mac_f16: D.f16 = S0 * S1 + D.f16, as v_mad_f16 (the product rounded to binary16, then the
// sum), output modifiers on the result. GFX9 keeps the destination's high half: LLVM's
// GCNSubtarget::zeroesHigh16BitsOfDest counts v_mac_f16 / v_fmac_f16 among the instructions
// that zero it on gfx8 only ("in gfx9 ... some instructions changed to preserving the high
// bits").
void v_mac_f16(Wave& w, const Inst& in) {
  u32 t0[64], t1[64], t2[64];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1), c = read32(w, in, 2, t2);
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    const double product = double(_Float16(double(h2f(a[lane])) * double(h2f(b[lane]))));
    u32 r = round_f16(product + double(h2f(c[lane])));
    if (in.omod || (in.flags & kFlagClamp)) r = round_f16(output_modified(in, double(h2f(r))));
    d[lane] = (c[lane] & 0xffff0000u) | r;
  }
}

// ---- dot products -------------------------------------------------------------------------------
// D = sum of the element products + S2. The VOP3P forms (v_dot*) pick the two 16-bit elements of
// src0 / src1 as the packed operations do (element 0: op_sel, element 1: op_sel_hi; neg_lo /
// neg_hi negate an f16 element); the 8- and 4-bit forms and the VOP2 accumulate forms (v_dot*c,
// S2 = D) read their sources whole. Integer sums are exact; they wrap to 32 bits, or with the
// clamp bit saturate. v_dot2_f32_f16: the exact sum rounded once to f32 (the ISA states no
// intermediate rounding): the products and their sum are exact in binary128, and the final add
// is rounded to odd there (TwoSum's error decides the last bit), so that the conversion to f32
// rounds as the exact value would. Clamp limits that to [0, 1].
enum class DotKind { f32_f16, i32_i16, u32_u16, i32_i8, u32_u8, i32_i4, u32_u4 };

float round_sum_f32(__float128 p, __float128 c) {
  const __float128 s = p + c;
  const __float128 bp = s - p, e = (p - (s - bp)) + (c - bp);
  if (e == 0 || s != s || s - s != 0) return float(s);  // exact, NaN or infinite
  unsigned __int128 bits;
  std::memcpy(&bits, &s, sizeof bits);
  if (!(bits & 1)) {  // even: one ulp toward e (magnitude up when e has s's sign)
    const bool s_negative = s < 0, e_negative = e < 0;
    bits = s_negative == e_negative ? bits + 1 : bits - 1;
  }
  __float128 odd;
  std::memcpy(&odd, &bits, sizeof odd);
  return float(odd);
}

template <DotKind kKind, bool kVop3p>
void v_dot(Wave& w, const Inst& in) {
  u32 t[3][64];
  View32 s[3] = {read32(w, in, 0, t[0]), read32(w, in, 1, t[1]), read32(w, in, 2, t[2])};
  u64 lanes = write_lanes(w, in);
  u32* d = w.vreg(vector_index(w, in, in.dst, 3));
  const bool clamp = in.flags & kFlagClamp;
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    u32 x[2] = {s[0][lane], s[1][lane]};
    const u32 c = s[2][lane];
    if (kVop3p &&
        (kKind == DotKind::f32_f16 || kKind == DotKind::i32_i16 || kKind == DotKind::u32_u16)) {
      for (int i = 0; i < 2; ++i) {
        u32 lo = (in.op_sel >> i) & 1 ? x[i] >> 16 : x[i] & 0xffff;
        u32 hi = (in.op_sel_hi >> i) & 1 ? x[i] >> 16 : x[i] & 0xffff;
        if ((in.neg_lo >> i) & 1) lo ^= 0x8000;
        if ((in.neg_hi >> i) & 1) hi ^= 0x8000;
        x[i] = lo | (hi << 16);
      }
    }
    const u32 a = x[0], b = x[1];
    if constexpr (kKind == DotKind::f32_f16) {
      const __float128 p = __float128(double(h2f(a)) * double(h2f(b))) +
                           __float128(double(h2f(a >> 16)) * double(h2f(b >> 16)));
      float r = round_sum_f32(p, __float128(as_f32(c)));
      if (clamp) r = std::isnan(r) ? 0.0f : std::fmin(std::fmax(r, 0.0f), 1.0f);
      d[lane] = bits_of(r);
      continue;
    }
    constexpr bool kSigned =
        kKind == DotKind::i32_i16 || kKind == DotKind::i32_i8 || kKind == DotKind::i32_i4;
    constexpr unsigned kBits = kKind == DotKind::i32_i16 || kKind == DotKind::u32_u16 ? 16
                               : kKind == DotKind::i32_i8 || kKind == DotKind::u32_u8 ? 8
                                                                                      : 4;
    i64 sum = kSigned ? i64(i32(c)) : i64(c);
    for (unsigned k = 0; k < 32 / kBits; ++k) {
      const u32 mask = (1u << kBits) - 1, sign = 1u << (kBits - 1);
      const u32 ea = (a >> (k * kBits)) & mask, eb = (b >> (k * kBits)) & mask;
      const i64 va = kSigned ? i64(ea ^ sign) - i64(sign) : i64(ea);
      const i64 vb = kSigned ? i64(eb ^ sign) - i64(sign) : i64(eb);
      sum += va * vb;
    }
    if (!clamp)
      d[lane] = u32(u64(sum));
    else if (kSigned)
      d[lane] = saturate_signed(sum);
    else
      d[lane] = u32(std::min<i64>(sum, 0xffffffffll));
  }
}

// Sums of absolute differences of unsigned elements (kBits 8 or 16) plus S2; v_sad_hi_u8 shifts
// the sum left 16, v_msad_u8 skips the bytes whose S1 byte (the reference) is 0. Wrapping, or
// with the clamp bit saturated to u32.
template <unsigned kBits, bool kHigh, bool kMasked>
u64 sad(u32 a, u32 b, u32 c) {
  u64 sum = 0;
  const u32 mask = (1u << kBits) - 1;
  for (unsigned k = 0; k < 32 / kBits; ++k) {
    const u32 x = (a >> (k * kBits)) & mask, y = (b >> (k * kBits)) & mask;
    if (kMasked && y == 0) continue;
    sum += x > y ? x - y : y - x;
  }
  return (kHigh ? sum << 16 : sum) + c;
}

// Float to a normalized 16-bit integer or an unsigned byte (v_cvt_pknorm_*, v_cvt_norm_*,
// v_cvt_pk_u8_f32): the value limited to [-1, 1] (snorm) or [0, 1] (unorm) and scaled by 32767
// or 65535, or limited to [0, 255] (u8), then rounded to the nearest integer, ties to even (the
// MODE register's default rounding; exact in double, so one rounding); NaN gives 0.
u32 snorm16(double x) {
  if (std::isnan(x)) return 0;
  return u32(i32(std::nearbyint(std::clamp(x, -1.0, 1.0) * 32767.0))) & 0xffffu;
}
u32 unorm16(double x) {
  if (std::isnan(x)) return 0;
  return u32(std::nearbyint(std::clamp(x, 0.0, 1.0) * 65535.0));
}
u32 unorm8_of(double x) {
  if (std::isnan(x)) return 0;
  return u32(std::nearbyint(std::clamp(x, 0.0, 255.0)));
}

// binary16 to a 16-bit integer, as v_cvt_u32_f32 / v_cvt_i32_f32: truncated, saturated, NaN 0.
u32 cvt_u16_f16(float x) {
  if (std::isnan(x) || x <= 0) return 0;
  if (x >= 65535.0f) return 0xffff;
  return u32(x);
}
u32 cvt_i16_f16(float x) {
  if (std::isnan(x)) return 0;
  if (x <= -32768.0f) return 0x8000;
  if (x >= 32767.0f) return 0x7fff;
  return u32(i32(x)) & 0xffff;
}

// Biased exponent field of an IEEE value.
int biased_exponent(float x) { return int((bits_of(x) >> 23) & 0xff); }
int biased_exponent(double x) { return int((bits_of(x) >> 52) & 0x7ff); }

// v_div_scale (the ISA's pseudo-code): scales the numerator or the denominator by 2^kScale when
// the quotient would lose precision; VCC tells v_div_fmas to undo the scaling.
// kExponentGap is 96 (f32) / 768 (f64); kMantissaBits 23 / 53.
template <typename T, int kMantissaBits, int kScale>
T div_scale(T s0, T s1, T s2, bool& vcc) {
  constexpr int kExponentGap = sizeof(T) == 4 ? 96 : 768;
  vcc = false;
  auto denormal = [](auto x) { return std::fpclassify(x) == FP_SUBNORMAL; };
  if (s2 == T(0) || s1 == T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (biased_exponent(s2) - biased_exponent(s1) >= kExponentGap) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, kScale) : s0;
  }
  if (denormal(s1)) return std::ldexp(s0, kScale);
  if (denormal(1.0 / double(s1)) && denormal(s2 / s1)) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, kScale) : s0;
  }
  if (denormal(1.0 / double(s1))) return std::ldexp(s0, -kScale);
  if (denormal(s2 / s1)) {
    vcc = true;
    return s0 == s2 ? std::ldexp(s0, kScale) : s0;
  }
  if (biased_exponent(s2) <= kMantissaBits) return std::ldexp(s0, kScale);
  return s0;
}

template <typename T, int kMantissaBits, int kScale>
void v_div_scale(Wave& w, const Inst& in) {
  u32 t[3][128];
  View64 s[3] = {read64(w, in, 0, t[0]), read64(w, in, 1, t[1]), read64(w, in, 2, t[2])};
  u64 lanes = w.exec(), vcc = 0;
  u32 index = vector_index(w, in, in.dst, 3);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    bool flag = false;
    if constexpr (sizeof(T) == 4) {
      float r = div_scale<float, kMantissaBits, kScale>(
          as_f32(u32(s[0][lane])), as_f32(u32(s[1][lane])), as_f32(u32(s[2][lane])), flag);
      w.vreg(index)[lane] = bits_of(r);
    } else {
      double r = div_scale<double, kMantissaBits, kScale>(as_f64(s[0][lane]), as_f64(s[1][lane]),
                                                          as_f64(s[2][lane]), flag);
      w.vreg(index)[lane] = u32(bits_of(r));
      w.vreg((index + 1) % kVectorRegisters)[lane] = u32(bits_of(r) >> 32);
    }
    if (flag) vcc |= 1ull << lane;
  }
  write_mask(w, in.sdst, vcc);
}

template <typename T>
T div_fixup(T s0, T s1, T s2) {  // s0 quotient estimate, s1 denominator, s2 numerator
  bool sign_out = std::signbit(s1) != std::signbit(s2);
  if (std::isnan(s2)) return s2;
  if (std::isnan(s1)) return s1;
  if (s1 == T(0) && s2 == T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (std::isinf(s1) && std::isinf(s2)) return std::numeric_limits<T>::quiet_NaN();
  if (s1 == T(0) || std::isinf(s2)) return sign_out ? -INFINITY : INFINITY;
  if (std::isinf(s1) || s2 == T(0)) return sign_out ? -T(0) : T(0);
  if (std::isnan(s0)) return sign_out ? -std::abs(s2 / s1) : std::abs(s2 / s1);
  return sign_out ? -std::abs(s0) : std::abs(s0);
}

template <typename T>
void v_div_fmas(Wave& w, const Inst& in) {
  u32 t[3][128];
  View64 s[3] = {read64(w, in, 0, t[0]), read64(w, in, 1, t[1]), read64(w, in, 2, t[2])};
  u64 vcc = w.sreg64(kVccLo), lanes = w.exec();
  u32 index = vector_index(w, in, in.dst, 3);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    if constexpr (sizeof(T) == 4) {
      float c = as_f32(u32(s[2][lane]));
      float r = std::fma(as_f32(u32(s[0][lane])), as_f32(u32(s[1][lane])), c);
      // Undo div_scale: by 2^64 when the numerator was large, 2^-64 otherwise.
      if ((vcc >> lane) & 1) r = std::ldexp(r, biased_exponent(c) >= 64 ? 64 : -64);
      w.vreg(index)[lane] = bits_of(output_f32(in, r));
    } else {
      double c = as_f64(s[2][lane]);
      double r = std::fma(as_f64(s[0][lane]), as_f64(s[1][lane]), c);
      if ((vcc >> lane) & 1) r = std::ldexp(r, biased_exponent(c) >= 128 ? 128 : -128);
      u64 bits = bits_of(output_f64(in, r));
      w.vreg(index)[lane] = u32(bits);
      w.vreg((index + 1) % kVectorRegisters)[lane] = u32(bits >> 32);
    }
  }
}

void v_mad_u64_u32(Wave& w, const Inst& in) {
  u32 t0[64], t1[64], t2[128];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1);
  View64 c = read64(w, in, 2, t2);
  u64 lanes = w.exec(), carry = 0;
  u32 index = vector_index(w, in, in.dst, 3);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    unsigned __int128 r = (unsigned __int128)(u64(a[lane]) * u64(b[lane])) + c[lane];
    if (r >> 64) carry |= 1ull << lane;
    w.vreg(index)[lane] = u32(r);
    w.vreg((index + 1) % kVectorRegisters)[lane] = u32(u64(r) >> 32);
  }
  write_mask(w, in.sdst, carry);
}

void v_mad_i64_i32(Wave& w, const Inst& in) {
  u32 t0[64], t1[64], t2[128];
  View32 a = read32(w, in, 0, t0), b = read32(w, in, 1, t1);
  View64 c = read64(w, in, 2, t2);
  u64 lanes = w.exec(), carry = 0;
  u32 index = vector_index(w, in, in.dst, 3);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    __int128 r = __int128(i64(i32(a[lane])) * i64(i32(b[lane]))) + __int128(i64(c[lane]));
    if (r != __int128(i64(r))) carry |= 1ull << lane;
    w.vreg(index)[lane] = u32(u64(r));
    w.vreg((index + 1) % kVectorRegisters)[lane] = u32(u64(r) >> 32);
  }
  write_mask(w, in.sdst, carry);
}

// ---- SALU -----------------------------------------------------------------------------

template <auto F>  // F(a, b, scc&) -> u32
void salu32(Wave& w, const Inst& in) {
  bool scc = w.scc;
  u32 r = F(scalar32(w, in.src[0]), scalar32(w, in.src[1]), scc);
  if (in.dst.index != kNull) w.s[in.dst.index] = r;
  w.scc = scc;
}

template <auto F>  // F(a, b, scc&) -> u64
void salu64(Wave& w, const Inst& in) {
  bool scc = w.scc;
  u64 r = F(scalar64(w, in.src[0]), scalar64(w, in.src[1]), scc);
  if (in.dst.index < kScalarFileSize - 1) w.set_sreg64(in.dst.index, r);
  w.scc = scc;
}

// 64-bit first source, 32-bit second (shifts, bfe).
template <auto F>
void salu64_32(Wave& w, const Inst& in) {
  bool scc = w.scc;
  u64 r = F(scalar64(w, in.src[0]), u64(scalar32(w, in.src[1])), scc);
  w.set_sreg64(in.dst.index, r);
  w.scc = scc;
}

template <auto F>  // SOPC: F(a, b) -> scc
void scmp32(Wave& w, const Inst& in) {
  w.scc = F(scalar32(w, in.src[0]), scalar32(w, in.src[1]));
}
template <auto F>
void scmp64(Wave& w, const Inst& in) {
  w.scc = F(scalar64(w, in.src[0]), scalar64(w, in.src[1]));
}

// SOPK: F(sdst value, simm16, scc&) -> u32 (written back unless compare).
template <auto F, bool kWrite>
void sopk(Wave& w, const Inst& in) {
  bool scc = w.scc;
  u32 r = F(w.s[in.dst.index], u32(i32(in.imm)), scc);
  if (kWrite) w.s[in.dst.index] = r;
  w.scc = scc;
}

template <auto F>  // s_*_saveexec_b64: sdst = exec; exec = F(src, exec); scc = exec != 0
void saveexec(Wave& w, const Inst& in) {
  u64 old = w.exec();
  u64 value = scalar64(w, in.src[0]);
  u64 mask = F(value, old);
  w.set_sreg64(in.dst.index, old);
  w.set_exec(mask);
  w.scc = mask != 0;
}

void s_getpc_b64(Wave& w, const Inst& in) { w.set_sreg64(in.dst.index, in.next_pc); }

void jump(Wave& w, u64 target) {
  w.pc = target;
  // A computed jump lands on a function entry (or a return point): explore it for leaders.
  w.ctx->code->prepare_entry(target);
}

void s_setpc_b64(Wave& w, const Inst& in) { jump(w, scalar64(w, in.src[0])); }
void s_swappc_b64(Wave& w, const Inst& in) {
  u64 target = scalar64(w, in.src[0]);
  w.set_sreg64(in.dst.index, in.next_pc);
  jump(w, target);
}

// HW_REG_SH_MEM_BASES: bits 63:48 of the private (15:0) and shared (31:16) apertures. Read-only
// (the driver's): gfx9 code without a queue pointer (code object v5, HIP's -O3 kernels) builds
// its generic LDS and scratch addresses from it, so it must name the apertures the emulator's
// flat accesses recognise (kSharedApertureBase, kPrivateApertureBase).
constexpr u32 kHwRegShMemBases = 15;
constexpr u32 kShMemBases =
    u32(kPrivateApertureBase >> 48) | (u32(kSharedApertureBase >> 48) << 16);

void s_getreg_b32(Wave& w, const Inst& in) {
  u32 id = u32(in.imm) & 63, offset = (u32(in.imm) >> 6) & 31,
      size = ((u32(in.imm) >> 11) & 31) + 1;
  u32 value = id == kHwRegShMemBases ? kShMemBases : id < 32 ? w.hwreg[id] : 0;
  u32 mask = size >= 32 ? ~0u : ((1u << size) - 1);
  w.s[in.dst.index] = (value >> offset) & mask;
}
void setreg(Wave& w, u32 field, u32 value) {
  u32 id = field & 63, offset = (field >> 6) & 31, size = ((field >> 11) & 31) + 1;
  if (id >= 32) return;
  u32 mask = (size >= 32 ? ~0u : ((1u << size) - 1)) << offset;
  w.hwreg[id] = (w.hwreg[id] & ~mask) | ((value << offset) & mask);
}
void s_setreg_b32(Wave& w, const Inst& in) { setreg(w, u32(in.imm), w.s[in.dst.index]); }
void s_setreg_imm32_b32(Wave& w, const Inst& in) { setreg(w, u32(in.imm), u32(in.imm2)); }

void s_set_gpr_idx_on(Wave& w, const Inst& in) {
  w.gpr_idx_on = true;
  w.gpr_idx_mode = std::uint8_t(in.imm & 15);
  w.s[kM0] = (w.s[kM0] & 0xffff0f00u) | (scalar32(w, in.src[0]) & 0xffu) | (u32(in.imm & 15) << 12);
}
void s_set_gpr_idx_off(Wave& w, const Inst&) { w.gpr_idx_on = false; }
void s_set_gpr_idx_mode(Wave& w, const Inst& in) { w.gpr_idx_mode = std::uint8_t(in.imm & 15); }

// ---- program control --------------------------------------------------------------------

void s_nop(Wave&, const Inst&) {}
void s_endpgm(Wave& w, const Inst&) {
  w.state = WaveState::ended;
  w.vm.count = w.lgkm.count = 0;
}
void s_branch(Wave& w, const Inst& in) { w.pc = u64(in.imm2); }
template <int kCondition>
void s_cbranch(Wave& w, const Inst& in) {
  bool take = false;
  switch (kCondition) {
    case 0:
      take = !w.scc;
      break;
    case 1:
      take = w.scc;
      break;
    case 2:
      take = (w.s[kVccLo] | w.s[kVccHi]) == 0;
      break;
    case 3:
      take = (w.s[kVccLo] | w.s[kVccHi]) != 0;
      break;
    case 4:
      take = w.exec() == 0;
      break;
    case 5:
      take = w.exec() != 0;
      break;
  }
  if (take) w.pc = u64(in.imm2);
}

void s_waitcnt(Wave& w, const Inst& in) {
  u32 imm = u32(in.imm) & 0xffffu;
  unsigned vmcnt = (imm & 15) | (((imm >> 14) & 3) << 4);
  unsigned lgkmcnt = (imm >> 8) & 15;
  bool waited = w.vm.count > vmcnt || w.lgkm.count > lgkmcnt;
  complete_until(w, w.vm, vmcnt);
  complete_until(w, w.lgkm, lgkmcnt);
  if (waited) w.yield = true;
}

void s_barrier(Wave& w, const Inst&) {
  w.state = WaveState::at_barrier;
  w.yield = true;
}
void s_sleep(Wave& w, const Inst&) { w.yield = true; }
void s_trap(Wave& w, const Inst& in) {
  fault(w, ErrorKind::trap, 0, "s_trap " + std::to_string(in.imm & 0xff));
}

// ---- memory access trace ----------------------------------------------------------------

// The record of this execution of `in`, when the dispatch records memory accesses (nullptr
// otherwise); the caller appends one address per lane of `lanes`, in lane order.
MemoryAccessRecord* trace_access(Wave& w, const Inst& in, MemoryAccessKind kind, u64 lanes) {
  if (!w.ctx->options.record_memory_accesses) return nullptr;
  MemoryAccessRecord& record = w.memory_accesses.emplace_back();
  record.pc = in.host_pc;
  record.kind = kind;
  record.lanes = lanes;
  record.addresses.reserve(std::size_t(std::popcount(lanes)));
  return &record;
}

void trace_scalar_access(Wave& w, const Inst& in, u64 address) {
  if (MemoryAccessRecord* record = trace_access(w, in, MemoryAccessKind::scalar, 1))
    record->addresses.push_back(address);
}

// ---- scalar memory ----------------------------------------------------------------------

void s_load(Wave& w, const Inst& in) {
  u64 address = w.sreg64(in.saddr.index) + u64(in.imm);
  if (in.soffset.kind == OperandKind::sgpr) address += w.s[in.soffset.index];
  address &= ~3ull;
  trace_scalar_access(w, in, address);
  std::uint8_t* pointer = global_pointer(w, address, in.width * 4u, MemoryMap::kRead);
  if (!pointer) return;
  Pending& entry = issue(w, w.lgkm);
  entry.vector = false;
  entry.dst = in.dst.index;
  entry.width = in.width;
  std::memcpy(entry.data, pointer, in.width * 4u);
}

void s_buffer_load(Wave& w, const Inst& in) {
  u64 base = w.sreg64(in.saddr.index) & 0xffffffffffffull;
  u32 num_records = w.s[in.saddr.index + 2];
  u64 offset = u64(in.imm);
  if (in.soffset.kind == OperandKind::sgpr) offset += w.s[in.soffset.index];
  offset &= ~3ull;
  trace_scalar_access(w, in, base + offset);
  Pending& entry = issue(w, w.lgkm);
  entry.vector = false;
  entry.dst = in.dst.index;
  entry.width = in.width;
  for (unsigned i = 0; i < in.width; ++i) {
    u64 at = offset + 4 * i;
    entry.data[i] = 0;  // out of range of the resource: reads 0, as the hardware does
    if (at + 4 > num_records) continue;
    std::uint8_t* pointer = global_pointer(w, base + at, 4, MemoryMap::kRead);
    if (!pointer) return;
    std::memcpy(&entry.data[i], pointer, 4);
  }
}

void s_store(Wave& w, const Inst& in) {
  u64 address = (w.sreg64(in.saddr.index) + u64(in.imm)) & ~3ull;
  if (in.soffset.kind == OperandKind::sgpr) address += w.s[in.soffset.index];
  trace_scalar_access(w, in, address);
  std::uint8_t* pointer = global_pointer(w, address, in.width * 4u, MemoryMap::kWrite);
  if (!pointer) return;
  if (single_copy_64(pointer, in.width * 4u)) {
    store_64(pointer, w.s[in.dst.index], w.s[(in.dst.index + 1) & 127]);
  } else {
    for (unsigned i = 0; i < in.width; ++i)
      store_element(pointer + 4 * i, w.s[(in.dst.index + i) & 127], 4);
  }
  issue(w, w.lgkm);
  if (program_write(w, address)) w.ctx->progress_events.fetch_add(1, std::memory_order_relaxed);
}

void s_memtime(Wave& w, const Inst& in) {
  // A monotonic counter: the wave's executed instruction count stands in for the clock. Reading
  // it counts as progress for no-progress detection: a wave waiting for time to pass (clock64()
  // spins, s_memrealtime back-off) waits for something that does happen.
  w.ctx->progress_events.fetch_add(1, std::memory_order_relaxed);
  Pending& entry = issue(w, w.lgkm);
  entry.vector = false;
  entry.dst = in.dst.index;
  entry.width = 2;
  entry.data[0] = u32(w.instructions);
  entry.data[1] = u32(w.instructions >> 32);
}

// ---- vector memory ----------------------------------------------------------------------

enum MemoryOp : std::uint16_t {
  kLoadU8 = 1,
  kLoadI8,
  kLoadU16,
  kLoadI16,
  kLoad32,
  kLoadD16Lo,
  kLoadD16Hi,
  kLoadU8D16Lo,
  kLoadU8D16Hi,
  kLoadI8D16Lo,
  kLoadI8D16Hi,
  kStore8 = 16,
  kStore16,
  kStore32,
  kStore8Hi,
  kStore16Hi,
};
constexpr u16 kAtomic = 32;  // + AtomicOp
enum AtomicOp : std::uint16_t {
  kSwap,
  kCmpSwap,
  kAdd,
  kSub,
  kSMin,
  kUMin,
  kSMax,
  kUMax,
  kAnd,
  kOr,
  kXor,
  kInc,
  kDec,
  kAddF32,
  kAddF64,
  kMinF64,
  kMaxF64,
};

unsigned access_bytes(u16 op, unsigned width) {
  switch (op) {
    case kLoadU8:
    case kLoadI8:
    case kStore8:
    case kStore8Hi:
    case kLoadU8D16Lo:
    case kLoadU8D16Hi:
    case kLoadI8D16Lo:
    case kLoadI8D16Hi:
      return 1;
    case kLoadU16:
    case kLoadI16:
    case kStore16:
    case kStore16Hi:
    case kLoadD16Lo:
    case kLoadD16Hi:
      return 2;
    default:
      return 4 * width;
  }
}

u32 extend_loaded(u16 op, const std::uint8_t* bytes) {
  switch (op) {
    case kLoadU8:
    case kLoadU8D16Lo:
    case kLoadU8D16Hi:
      return bytes[0];
    case kLoadI8:
    case kLoadI8D16Lo:
    case kLoadI8D16Hi:
      return u32(i32(std::int8_t(bytes[0])));
    case kLoadU16:
    case kLoadD16Lo:
    case kLoadD16Hi: {
      std::uint16_t v;
      std::memcpy(&v, bytes, 2);
      return v;
    }
    case kLoadI16: {
      std::int16_t v;
      std::memcpy(&v, bytes, 2);
      return u32(i32(v));
    }
    default: {
      u32 v;
      std::memcpy(&v, bytes, 4);
      return v;
    }
  }
}

template <typename T>
T atomic_apply(u16 op, T* pointer, T value, T compare, bool& changed) {
  std::atomic_ref<T> ref(*pointer);
  T old = ref.load(std::memory_order_relaxed);
  for (;;) {
    T next = old;
    switch (op) {
      case kSwap:
        next = value;
        break;
      case kCmpSwap:
        next = old == compare ? value : old;
        break;
      case kAdd:
        next = old + value;
        break;
      case kSub:
        next = old - value;
        break;
      case kSMin:
        next = std::make_signed_t<T>(value) < std::make_signed_t<T>(old) ? value : old;
        break;
      case kUMin:
        next = value < old ? value : old;
        break;
      case kSMax:
        next = std::make_signed_t<T>(value) > std::make_signed_t<T>(old) ? value : old;
        break;
      case kUMax:
        next = value > old ? value : old;
        break;
      case kAnd:
        next = old & value;
        break;
      case kOr:
        next = old | value;
        break;
      case kXor:
        next = old ^ value;
        break;
      case kInc:
        next = old >= value ? 0 : old + 1;
        break;
      case kDec:
        next = (old == 0 || old > value) ? value : old - 1;
        break;
      case kAddF32:
        if constexpr (sizeof(T) == 4) next = bits_of(as_f32(old) + as_f32(value));
        break;
      case kAddF64:
        if constexpr (sizeof(T) == 8) next = bits_of(as_f64(old) + as_f64(value));
        break;
      case kMinF64:
        if constexpr (sizeof(T) == 8) next = bits_of(std::fmin(as_f64(old), as_f64(value)));
        break;
      case kMaxF64:
        if constexpr (sizeof(T) == 8) next = bits_of(std::fmax(as_f64(old), as_f64(value)));
        break;
    }
    if (next == old) {
      changed = false;
      return old;
    }
    if (ref.compare_exchange_weak(old, next, std::memory_order_acq_rel)) {
      changed = true;
      return old;
    }
  }
}

// ---- scalar atomics ----------------------------------------------------------------------

// SMEM atomics (s_atomic_*, s_buffer_atomic_*; GFX9 ISA "Scalar Memory Operations"). SDATA
// holds the operand (width dwords), followed for cmpswap by the compare value; with GLC the
// value memory held before the operation returns into SDATA[0 .. width), counted on lgkmcnt
// like a load. SCC is not touched. in.op: AtomicOp, plus kScalarBufferAtomic for the buffer
// forms, whose address is the resource's base + offset and which, like the buffer loads, do
// nothing out of range (an atomic that returns gets 0).
constexpr u16 kScalarBufferAtomic = 0x100;

void s_atomic(Wave& w, const Inst& in) {
  const u16 atomic = u16(in.op & 0xff);
  const bool buffer = (in.op & kScalarBufferAtomic) != 0;
  const unsigned bytes = in.width * 4u;
  u64 offset = u64(in.imm);
  if (in.soffset.kind == OperandKind::sgpr) offset += w.s[in.soffset.index];
  u64 address;
  bool in_range = true;
  if (buffer) {
    address = (w.sreg64(in.saddr.index) & 0xffffffffffffull) + (offset & ~3ull);
    in_range = (offset & ~3ull) + bytes <= w.s[in.saddr.index + 2];
  } else {
    address = (w.sreg64(in.saddr.index) + offset) & ~3ull;
  }
  trace_scalar_access(w, in, address);
  const unsigned data = in.dst.index;
  Pending* entry = nullptr;
  if (in.flags & kFlagGlc) {
    entry = &issue(w, w.lgkm);
    entry->vector = false;
    entry->dst = u16(data);
    entry->width = in.width;
    for (unsigned i = 0; i < in.width; ++i) entry->data[i] = 0;
  } else {
    issue(w, w.lgkm);
  }
  if (!in_range) return;
  if (address % bytes) {
    fault(w, ErrorKind::memory_fault, address, std::string("misaligned ") + in.name);
    return;
  }
  std::uint8_t* pointer = global_pointer(w, address, bytes, MemoryMap::kReadWrite);
  if (!pointer) return;
  bool changed = false;
  u64 old;
  if (in.width == 2) {
    u64 value = w.sreg64(data);
    u64 compare = atomic == kCmpSwap ? w.sreg64(data + 2) : 0;
    old = atomic_apply<u64>(atomic, reinterpret_cast<u64*>(pointer), value, compare, changed);
  } else {
    u32 value = w.s[data];
    u32 compare = atomic == kCmpSwap ? w.s[data + 1] : 0;
    old = atomic_apply<u32>(atomic, reinterpret_cast<u32*>(pointer), value, compare, changed);
  }
  if (entry) {
    entry->data[0] = u32(old);
    if (in.width == 2) entry->data[1] = u32(old >> 32);
  }
  if (changed && program_write(w, address))
    w.ctx->progress_events.fetch_add(1, std::memory_order_relaxed);
}

// Where a lane's access goes, by FLAT segment: 0 flat (generic), 1 scratch, 2 global.
struct LaneAddress {
  u64 address;  // generic / global address, or per-lane private address (scratch)
  bool private_lane;
  u64 named;  // the address as the instruction forms it (a FLAT generic address stays generic)
};

LaneAddress lane_address(Wave& w, const Inst& in, unsigned lane) {
  unsigned segment = in.op & 3;
  if (segment == 1) {  // scratch: saddr or vaddr (gfx942 may use both), + offset
    u64 address = u64(in.imm);
    if (in.saddr.kind == OperandKind::sgpr) address += w.s[in.saddr.index];
    // gfx942 says with the SVE bit whether VADDR takes part; earlier targets use VADDR exactly
    // when SADDR is off.
    bool use_vaddr = w.ctx->processor == Processor::gfx942 ? (in.flags & kFlagOffen) != 0
                                                           : in.saddr.kind != OperandKind::sgpr;
    if (use_vaddr) address += w.vreg(vector_index(w, in, in.src[0], 0))[lane];
    return {u32(address), true, u32(address)};
  }
  if (segment == 2 && in.saddr.kind == OperandKind::sgpr) {
    const u64 address =
        w.sreg64(in.saddr.index) + w.vreg(vector_index(w, in, in.src[0], 0))[lane] + u64(in.imm);
    return {address, false, address};
  }
  u32 index = vector_index(w, in, in.src[0], 0);
  u64 address =
      u64(w.vreg(index)[lane]) | (u64(w.vreg((index + 1) % kVectorRegisters)[lane]) << 32);
  address += u64(in.imm);
  if (segment == 0) {
    u64 aperture = address & 0xffffffff00000000ull;
    if (aperture == kPrivateApertureBase) return {u32(address), true, address};
  }
  return {address, false, address};
}

MemoryAccessKind vector_access_kind(const Inst& in) {
  switch (in.op & 3) {
    case 1:
      return MemoryAccessKind::scratch;
    case 2:
      return MemoryAccessKind::global;
    default:
      return MemoryAccessKind::flat;
  }
}

// Records every active lane's address of a FLAT / GLOBAL / SCRATCH instruction before it
// accesses memory, so that an access that faults is in the trace too.
void trace_vector_access(Wave& w, const Inst& in, u64 lanes) {
  MemoryAccessRecord* record = trace_access(w, in, vector_access_kind(in), lanes);
  if (!record) return;
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) record->addresses.push_back(lane_address(w, in, lane).named);
}

// Host pointer for `bytes` (<= 4 within one element for private) at dword `d` of a lane.
std::uint8_t* lane_pointer(Wave& w, const Inst& in, const LaneAddress& at, unsigned lane,
                           unsigned byte_offset, unsigned bytes, unsigned access) {
  if (at.private_lane) return private_pointer(w, u32(at.address + byte_offset), lane, bytes);
  if ((in.op & 3) == 0) return flat_pointer(w, at.address + byte_offset, lane, bytes, access);
  return global_pointer(w, at.address + byte_offset, bytes, access);
}

void vector_memory(Wave& w, const Inst& in) {
  u16 op = in.op >> 2;
  u64 lanes = w.exec();
  trace_vector_access(w, in, lanes);
  if (op >= kAtomic) {
    u16 atomic = u16(op - kAtomic);
    bool wide = in.width == 2;
    bool returns = in.flags & kFlagGlc;
    Pending* entry = nullptr;
    if (returns) {
      entry = &issue(w, w.vm);
      entry->dst = u16(vector_index(w, in, in.dst, 3));
      entry->width = in.width;
      entry->lanes = lanes;
    } else {
      issue(w, w.vm);
    }
    u32 data_index = vector_index(w, in, in.src[1], 1);
    bool any_change = false;
    for (unsigned lane = 0; lane < 64; ++lane) {
      if (!((lanes >> lane) & 1)) continue;
      LaneAddress at = lane_address(w, in, lane);
      unsigned bytes = wide ? 8 : 4;
      std::uint8_t* pointer = at.private_lane
                                  ? nullptr
                                  : lane_pointer(w, in, at, lane, 0, bytes, MemoryMap::kReadWrite);
      if (at.private_lane) {
        fault(w, ErrorKind::unimplemented_instruction, at.address, "atomic on private memory");
      }
      if (!pointer) return;
      if (at.address % bytes) {
        fault(w, ErrorKind::memory_fault, at.address, "misaligned atomic");
        return;
      }
      bool changed = false;
      u64 old;
      if (wide) {
        u64 value = u64(w.vreg(data_index)[lane]) |
                    (u64(w.vreg((data_index + 1) % kVectorRegisters)[lane]) << 32);
        u64 compare = 0;
        if (atomic == kCmpSwap)
          compare = u64(w.vreg((data_index + 2) % kVectorRegisters)[lane]) |
                    (u64(w.vreg((data_index + 3) % kVectorRegisters)[lane]) << 32);
        old = atomic_apply<u64>(atomic, reinterpret_cast<u64*>(pointer), value, compare, changed);
      } else {
        u32 value = w.vreg(data_index)[lane];
        u32 compare = atomic == kCmpSwap ? w.vreg((data_index + 1) % kVectorRegisters)[lane] : 0;
        old = atomic_apply<u32>(atomic, reinterpret_cast<u32*>(pointer), value, compare, changed);
      }
      any_change |= changed && program_write(w, at.address);
      if (entry) {
        entry->data[lane] = u32(old);
        if (wide) entry->data[64 + lane] = u32(old >> 32);
      }
    }
    if (any_change) w.ctx->progress_events.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (op >= kStore8) {
    u32 data_index = vector_index(w, in, in.src[1], 1);
    unsigned bytes = access_bytes(op, in.width);
    bool program = false;  // some lane wrote the program's memory (not only tool memory)
    for (unsigned lane = 0; lane < 64; ++lane) {
      if (!((lanes >> lane) & 1)) continue;
      LaneAddress at = lane_address(w, in, lane);
      if (!at.private_lane) {
        std::uint8_t* pointer = lane_pointer(w, in, at, lane, 0, bytes, MemoryMap::kWrite);
        if (!pointer) return;
        program = program || program_write(w, at.address);
        if (single_copy_64(pointer, bytes)) {
          store_64(pointer, w.vreg(data_index)[lane],
                   w.vreg((data_index + 1) % kVectorRegisters)[lane]);
          continue;
        }
        for (unsigned d = 0; d < (bytes + 3) / 4; ++d) {
          u32 value = w.vreg((data_index + d) % kVectorRegisters)[lane];
          if (op == kStore8Hi || op == kStore16Hi) value >>= 16;
          store_element(pointer + 4 * d, value, bytes < 4 ? bytes : 4);
        }
        continue;
      }
      for (unsigned d = 0; d < (bytes + 3) / 4; ++d) {
        unsigned piece = bytes < 4 ? bytes : 4;
        std::uint8_t* pointer = lane_pointer(w, in, at, lane, 4 * d, piece, MemoryMap::kWrite);
        if (!pointer) return;
        program = true;  // private (scratch) memory is the program's
        u32 value = w.vreg((data_index + d) % kVectorRegisters)[lane];
        if (op == kStore8Hi || op == kStore16Hi) value >>= 16;
        store_element(pointer, value, piece);
      }
    }
    issue(w, w.vm);
    if (program) w.ctx->progress_events.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Loads: read now, write the registers at the covering s_waitcnt.
  Pending& entry = issue(w, w.vm);
  entry.dst = u16(vector_index(w, in, in.dst, 3));
  entry.width = in.width;
  entry.lanes = lanes;
  entry.d16 = op == kLoadD16Lo || op == kLoadD16Hi || op == kLoadU8D16Lo || op == kLoadU8D16Hi ||
              op == kLoadI8D16Lo || op == kLoadI8D16Hi;
  entry.d16_hi = op == kLoadD16Hi || op == kLoadU8D16Hi || op == kLoadI8D16Hi;
  unsigned bytes = access_bytes(op, in.width);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    LaneAddress at = lane_address(w, in, lane);
    if (!at.private_lane && bytes > 4) {
      std::uint8_t* pointer = lane_pointer(w, in, at, lane, 0, bytes, MemoryMap::kRead);
      if (!pointer) return;
      if (single_copy_64(pointer, bytes)) {
        const u64 value = load_64(pointer);
        entry.data[lane] = u32(value);
        entry.data[64 + lane] = u32(value >> 32);
        continue;
      }
      for (unsigned d = 0; d < in.width; ++d)
        std::memcpy(&entry.data[d * 64 + lane], pointer + 4 * d, 4);
      continue;
    }
    for (unsigned d = 0; d < (bytes + 3) / 4; ++d) {
      unsigned piece = bytes < 4 ? bytes : 4;
      std::uint8_t* pointer = lane_pointer(w, in, at, lane, 4 * d, piece, MemoryMap::kRead);
      if (!pointer) return;
      entry.data[d * 64 + lane] = extend_loaded(op, pointer);
    }
  }
}

// MUBUF through a buffer resource (the private segment buffer for scratch): the ISA's
// swizzled / linear address computation.
void buffer_memory(Wave& w, const Inst& in) {
  u16 op = in.op >> 2;
  const u32* rsrc = &w.s[in.saddr.index];
  u64 base = u64(rsrc[0]) | (u64(rsrc[1] & 0xffffu) << 32);
  u32 stride = (rsrc[1] >> 16) & 0x3fffu;
  bool swizzle = (rsrc[1] >> 31) & 1;
  bool add_tid = (rsrc[3] >> 23) & 1;
  u32 element_size = 2u << ((rsrc[3] >> 19) & 3);
  u32 index_stride = 8u << ((rsrc[3] >> 21) & 3);
  u32 soffset = scalar32(w, in.soffset);
  u64 lanes = w.exec();
  u32 vaddr = vector_index(w, in, in.src[0], 0);
  unsigned bytes = access_bytes(op, in.width);
  bool store = op >= kStore8 && op < kAtomic;
  if (op >= kAtomic) {
    fault(w, ErrorKind::unimplemented_instruction, 0, std::string("buffer atomics: ") + in.name);
    return;
  }
  MemoryAccessRecord* record = trace_access(w, in, MemoryAccessKind::buffer, lanes);
  Pending* entry = nullptr;
  if (!store) {
    entry = &issue(w, w.vm);
    entry->dst = u16(vector_index(w, in, in.dst, 3));
    entry->width = in.width;
    entry->lanes = lanes;
    entry->d16 = op == kLoadD16Lo || op == kLoadD16Hi;
    entry->d16_hi = op == kLoadD16Hi;
  }
  u32 data_index = vector_index(w, in, in.src[1], 1);
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    u32 index = (in.flags & kFlagIdxen) ? w.vreg(vaddr)[lane] : 0;
    u32 offset = u32(in.imm);
    if (in.flags & kFlagOffen)
      offset += w.vreg((vaddr + ((in.flags & kFlagIdxen) ? 1 : 0)) % kVectorRegisters)[lane];
    if (add_tid) index += lane;
    for (unsigned d = 0; d < (bytes + 3) / 4; ++d) {
      u32 o = offset + 4 * d;
      u64 address;
      if (swizzle) {
        address = base + soffset + u64(index / index_stride) * stride * index_stride +
                  u64(o / element_size) * element_size * index_stride +
                  u64(index % index_stride) * element_size + o % element_size;
      } else {
        address = base + soffset + u64(index) * stride + o;
      }
      if (record && d == 0) record->addresses.push_back(address);
      unsigned piece = bytes < 4 ? bytes : 4;
      std::uint8_t* pointer;
      if (address >= w.scratch_base && address + piece <= w.scratch_base + w.scratch_size) {
        pointer = reinterpret_cast<std::uint8_t*>(address);
      } else {  // outside this wave's scratch: only a known allocation will do
        pointer = global_pointer(w, address, piece, store ? MemoryMap::kWrite : MemoryMap::kRead);
      }
      if (!pointer) return;
      if (store) {
        u32 value = w.vreg((data_index + d) % kVectorRegisters)[lane];
        if (op == kStore8Hi || op == kStore16Hi) value >>= 16;
        store_element(pointer, value, piece);
      } else {
        entry->data[d * 64 + lane] = extend_loaded(op, pointer);
      }
    }
  }
  if (store) issue(w, w.vm);
}

// ---- LDS ---------------------------------------------------------------------------------

enum DsOp : std::uint16_t {
  kDsRead = 1,
  kDsReadU8,
  kDsReadI8,
  kDsReadU16,
  kDsReadI16,
  kDsRead2,
  kDsRead2St64,
  kDsWrite,
  kDsWrite8,
  kDsWrite16,
  kDsWrite2,
  kDsWrite2St64,
  kDsWrite8Hi,
  kDsWrite16Hi,
  kDsReadU16D16,
  kDsReadU16D16Hi,
  kDsBpermute,
  kDsPermute,
  kDsSwizzle,
};
// A DS address: the VGPR plus the instruction's offset in 32 bits, wrapping as the hardware's
// adder does. clang folds a constant into the offset field over a base that may be negative
// (gfx9 allows it; only SI needed the base non-negative): merge's ds_read_b32 at
// v = 0xfffffffc, offset:2064 reads LDS byte 2060.
u64 lds_address(u32 vgpr, u32 offset) { return u64(u32(vgpr + offset)); }

constexpr u16 kDsAtomic = 64;  // + AtomicOp, +32 for the returning form

// Records every active lane's LDS address: VADDR + the 16-bit offset, or for the 2-address
// forms the first address, VADDR + offset0 * the element size (x64 for *st64).
void trace_lds_access(Wave& w, const Inst& in, u64 lanes, const u32* address, u32 offset16) {
  MemoryAccessRecord* record = trace_access(w, in, MemoryAccessKind::lds, lanes);
  if (!record) return;
  const bool pair =
      in.op == kDsRead2 || in.op == kDsRead2St64 || in.op == kDsWrite2 || in.op == kDsWrite2St64;
  const bool st64 = in.op == kDsRead2St64 || in.op == kDsWrite2St64;
  const u32 offset = pair ? u32(in.imm) * (st64 ? 64u : 1u) * in.width * 4 : offset16;
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((lanes >> lane) & 1) record->addresses.push_back(u64(address[lane]) + offset);
}

void ds(Wave& w, const Inst& in) {
  u16 op = in.op;
  u64 lanes = w.exec();
  u32 addr_index = vector_index(w, in, in.src[0], 0);
  u32 data0 = vector_index(w, in, in.src[1], 1);
  u32 data1 = vector_index(w, in, in.src[2], 2);
  const u32* address = w.vreg(addr_index);
  u32 offset16 = u32(in.imm) | (u32(in.imm2) << 8);
  if (op == kDsBpermute || op == kDsPermute) {
    Pending& entry = issue(w, w.lgkm);
    entry.dst = u16(vector_index(w, in, in.dst, 3));
    entry.width = 1;
    entry.lanes = lanes;
    const u32* data = w.vreg(data0);
    if (op == kDsBpermute) {
      for (unsigned lane = 0; lane < 64; ++lane) {
        unsigned source = ((address[lane] + offset16) >> 2) & 63;
        entry.data[lane] = ((lanes >> source) & 1) ? data[source] : 0;
      }
    } else {
      for (unsigned lane = 0; lane < 64; ++lane) entry.data[lane] = 0;
      for (unsigned lane = 0; lane < 64; ++lane)
        if ((lanes >> lane) & 1) entry.data[((address[lane] + offset16) >> 2) & 63] = data[lane];
    }
    return;
  }
  if (op == kDsSwizzle) {
    Pending& entry = issue(w, w.lgkm);
    entry.dst = u16(vector_index(w, in, in.dst, 3));
    entry.width = 1;
    entry.lanes = lanes;
    const u32* data = w.vreg(addr_index);
    for (unsigned lane = 0; lane < 64; ++lane) {
      unsigned source;
      if (offset16 & 0x8000) {  // quad permute
        source = (lane & ~3u) | ((offset16 >> ((lane & 3) * 2)) & 3);
      } else {  // bitmask mode within groups of 32
        unsigned and_mask = offset16 & 31, or_mask = (offset16 >> 5) & 31,
                 xor_mask = (offset16 >> 10) & 31;
        source = (lane & 32) | ((((lane & 31) & and_mask) | or_mask) ^ xor_mask);
      }
      entry.data[lane] = ((lanes >> source) & 1) ? data[source] : 0;
    }
    return;
  }
  trace_lds_access(w, in, lanes, address, offset16);
  if (op >= kDsAtomic) {
    bool returns = op >= kDsAtomic + 32;
    u16 atomic = u16((op - kDsAtomic) & 31);
    Pending* entry = nullptr;
    if (returns) {
      entry = &issue(w, w.lgkm);
      entry->dst = u16(vector_index(w, in, in.dst, 3));
      entry->width = in.width;
      entry->lanes = lanes;
    } else {
      issue(w, w.lgkm);
    }
    for (unsigned lane = 0; lane < 64; ++lane) {
      if (!((lanes >> lane) & 1)) continue;
      unsigned bytes = in.width * 4;
      std::uint8_t* pointer = lds_pointer(w, lds_address(address[lane], offset16), bytes);
      if (!pointer) return;
      bool changed = false;
      u64 old;
      if (in.width == 2) {
        u64 value =
            u64(w.vreg(data0)[lane]) | (u64(w.vreg((data0 + 1) % kVectorRegisters)[lane]) << 32);
        u64 compare =
            u64(w.vreg(data1)[lane]) | (u64(w.vreg((data1 + 1) % kVectorRegisters)[lane]) << 32);
        // ds_cmpst: data0 is the compare value, data1 the new one.
        if (atomic == kCmpSwap) std::swap(value, compare);
        u64 current;
        std::memcpy(&current, pointer, 8);
        old = atomic_apply<u64>(atomic, &current, value, compare, changed);
        std::memcpy(pointer, &current, 8);
      } else {
        u32 value = w.vreg(data0)[lane], compare = w.vreg(data1)[lane];
        if (atomic == kCmpSwap) std::swap(value, compare);
        u32 current;
        std::memcpy(&current, pointer, 4);
        old = atomic_apply<u32>(atomic, &current, value, compare, changed);
        std::memcpy(pointer, &current, 4);
      }
      if (entry) {
        entry->data[lane] = u32(old);
        if (in.width == 2) entry->data[64 + lane] = u32(old >> 32);
      }
    }
    return;
  }
  bool is_read = op <= kDsRead2St64 || op == kDsReadU16D16 || op == kDsReadU16D16Hi;
  if (is_read) {
    Pending& entry = issue(w, w.lgkm);
    entry.dst = u16(vector_index(w, in, in.dst, 3));
    entry.lanes = lanes;
    entry.d16 = op == kDsReadU16D16 || op == kDsReadU16D16Hi;
    entry.d16_hi = op == kDsReadU16D16Hi;
    bool pair = op == kDsRead2 || op == kDsRead2St64;
    entry.width = std::uint8_t(pair ? 2 * in.width : in.width);
    for (unsigned lane = 0; lane < 64; ++lane) {
      if (!((lanes >> lane) & 1)) continue;
      if (pair) {
        u32 scale = (op == kDsRead2St64 ? 64u : 1u) * in.width * 4;
        for (unsigned half = 0; half < 2; ++half) {
          u64 at = lds_address(address[lane], (half ? u32(in.imm2) : u32(in.imm)) * scale);
          std::uint8_t* pointer = lds_pointer(w, at, in.width * 4);
          if (!pointer) return;
          for (unsigned d = 0; d < in.width; ++d)
            std::memcpy(&entry.data[(half * in.width + d) * 64 + lane], pointer + 4 * d, 4);
        }
        continue;
      }
      u16 load_op = op == kDsReadU8                                                      ? kLoadU8
                    : op == kDsReadI8                                                    ? kLoadI8
                    : (op == kDsReadU16 || op == kDsReadU16D16 || op == kDsReadU16D16Hi) ? kLoadU16
                    : op == kDsReadI16                                                   ? kLoadI16
                                                                                         : kLoad32;
      unsigned bytes = access_bytes(load_op, in.width);
      std::uint8_t* pointer = lds_pointer(w, lds_address(address[lane], offset16), bytes);
      if (!pointer) return;
      if (bytes <= 4) {
        entry.data[lane] = extend_loaded(load_op, pointer);
      } else {
        for (unsigned d = 0; d < in.width; ++d)
          std::memcpy(&entry.data[d * 64 + lane], pointer + 4 * d, 4);
      }
    }
    return;
  }
  for (unsigned lane = 0; lane < 64; ++lane) {
    if (!((lanes >> lane) & 1)) continue;
    if (op == kDsWrite2 || op == kDsWrite2St64) {
      u32 scale = (op == kDsWrite2St64 ? 64u : 1u) * in.width * 4;
      for (unsigned half = 0; half < 2; ++half) {
        u64 at = lds_address(address[lane], (half ? u32(in.imm2) : u32(in.imm)) * scale);
        std::uint8_t* pointer = lds_pointer(w, at, in.width * 4);
        if (!pointer) return;
        u32 source = half ? data1 : data0;
        for (unsigned d = 0; d < in.width; ++d)
          std::memcpy(pointer + 4 * d, &w.vreg((source + d) % kVectorRegisters)[lane], 4);
      }
      continue;
    }
    unsigned bytes = op == kDsWrite8 || op == kDsWrite8Hi     ? 1
                     : op == kDsWrite16 || op == kDsWrite16Hi ? 2
                                                              : in.width * 4;
    std::uint8_t* pointer = lds_pointer(w, lds_address(address[lane], offset16), bytes);
    if (!pointer) return;
    for (unsigned d = 0; d < (bytes + 3) / 4; ++d) {
      u32 value = w.vreg((data0 + d) % kVectorRegisters)[lane];
      if (op == kDsWrite8Hi || op == kDsWrite16Hi) value >>= 16;
      std::memcpy(pointer + 4 * d, &value, bytes < 4 ? bytes : 4);
    }
  }
  issue(w, w.lgkm);
}

// ---- the table ---------------------------------------------------------------------------

using Table = std::unordered_map<std::string_view, Semantics>;

constexpr DataType B32 = DataType::b32, B64 = DataType::b64, F32 = DataType::f32,
                   F64 = DataType::f64;

void add(Table& t, std::string_view name, Handler handler, Family family,
         std::array<DataType, 3> types = {B32, B32, B32}, std::uint8_t width = 1,
         std::uint16_t op = 0, std::uint32_t flags = 0) {
  Semantics s;
  s.handler = handler;
  s.family = family;
  for (int i = 0; i < 3; ++i) s.src_type[i] = types[size_t(i)];
  s.width = width;
  s.op = op;
  s.flags = flags;
  t.emplace(name, s);
}

#define V32(name, ...)                                                 \
  add(t, name, valu32<+[](u32 a, u32 b, u32 c, unsigned lane) -> u32 { \
        (void)a;                                                       \
        (void)b;                                                       \
        (void)c;                                                       \
        (void)lane;                                                    \
        return (__VA_ARGS__);                                          \
      }>,                                                              \
      Family::valu)
#define VF32(name, ...)                                           \
  add(t, name, valu_f32<+[](float a, float b, float c) -> float { \
        (void)a;                                                  \
        (void)b;                                                  \
        (void)c;                                                  \
        return (__VA_ARGS__);                                     \
      }>,                                                         \
      Family::valu, {F32, F32, F32}, 1, 0, kSemOutputModifiers)
#define VF64(name, ...)                                               \
  add(t, name, valu_f64<+[](double a, double b, double c) -> double { \
        (void)a;                                                      \
        (void)b;                                                      \
        (void)c;                                                      \
        return (__VA_ARGS__);                                         \
      }>,                                                             \
      Family::valu, {F64, F64, F64}, 2, 0, kSemOutputModifiers)
#define V64(name, types, width, ...)                    \
  add(t, name, valu64<+[](u64 a, u64 b, u64 c) -> u64 { \
        (void)a;                                        \
        (void)b;                                        \
        (void)c;                                        \
        return (__VA_ARGS__);                           \
      }>,                                               \
      Family::valu, types, width)
#define V64_FLOAT(name, types, width, ...)                           \
  add(t, name, float_result<valu64<+[](u64 a, u64 b, u64 c) -> u64 { \
        (void)a;                                                     \
        (void)b;                                                     \
        (void)c;                                                     \
        return (__VA_ARGS__);                                        \
      }>>,                                                           \
      Family::valu, types, width, 0, kSemOutputModifiers)
// One compare form: the expression per lane on the sources read as `kind`; exec true: v_cmpx.
#define VCMP_FORM(name, exec, type, kind, flags, ...) \
  add(t, name,                                        \
      vcmp<+[](u64 x, u64 y) -> bool {                \
        kind a = kind##_of(x), b = kind##_of(y);      \
        (void)a;                                      \
        (void)b;                                      \
        return (__VA_ARGS__);                         \
      },                                              \
           exec>,                                     \
      Family::valu, {type, type, type}, 1, 0, kSemCompare | (flags))
#define VCMP(prefix, type, kind, flags, ...)                         \
  VCMP_FORM("v_cmp_" prefix, false, type, kind, flags, __VA_ARGS__); \
  VCMP_FORM("v_cmpx_" prefix, true, type, kind, flags, __VA_ARGS__)

using I16 = i32;
using U16 = u32;
using I32 = i32;
using U32 = u32;
using I64 = i64;
using U64 = u64;
using F32T = float;
using F64T = double;
// 16-bit compares read only the low half of each source (GFX9 ISA: "16-bit operands").
I16 I16_of(u64 x) { return std::int16_t(x); }
U16 U16_of(u64 x) { return u16(x); }
I32 I32_of(u64 x) { return i32(u32(x)); }
U32 U32_of(u64 x) { return u32(x); }
I64 I64_of(u64 x) { return i64(x); }
U64 U64_of(u64 x) { return x; }
F32T F32T_of(u64 x) { return as_f32(u32(x)); }
F64T F64T_of(u64 x) { return as_f64(x); }
using F16T = float;
F16T F16T_of(u64 x) { return f16_to_f32(u32(x) & 0xffff); }

bool class_f32(u64 x, u64 m) {
  float a = as_f32(u32(x));
  int c = std::fpclassify(a);
  bool neg = std::signbit(a);
  unsigned bit = std::isnan(a)       ? ((u32(x) & 0x400000u) ? 1 : 0)
                 : c == FP_INFINITE  ? (neg ? 2 : 9)
                 : c == FP_NORMAL    ? (neg ? 3 : 8)
                 : c == FP_SUBNORMAL ? (neg ? 4 : 7)
                                     : (neg ? 5 : 6);
  return (m >> bit) & 1;
}
bool class_f64(u64 x, u64 m) {
  double a = as_f64(x);
  int c = std::fpclassify(a);
  bool neg = std::signbit(a);
  unsigned bit = std::isnan(a)       ? ((x & 0x8000000000000ull) ? 1 : 0)
                 : c == FP_INFINITE  ? (neg ? 2 : 9)
                 : c == FP_NORMAL    ? (neg ? 3 : 8)
                 : c == FP_SUBNORMAL ? (neg ? 4 : 7)
                                     : (neg ? 5 : 6);
  return (m >> bit) & 1;
}
// The class of binary16 from its bits (a binary16 subnormal is a normal binary32).
bool class_f16(u64 x, u64 m) {
  const u32 h = u32(x) & 0xffff, exponent = (h >> 10) & 31, mantissa = h & 1023;
  const bool neg = (h >> 15) & 1;
  unsigned bit = exponent == 31 ? (mantissa ? ((mantissa & 0x200) ? 1 : 0) : (neg ? 2 : 9))
                 : exponent     ? (neg ? 3 : 8)
                 : mantissa     ? (neg ? 4 : 7)
                                : (neg ? 5 : 6);
  return (m >> bit) & 1;
}

void add_compares(Table& t) {
#define INT_CMPS(suffix, type, kind, flags)      \
  VCMP("f_" suffix, type, kind, flags, false);   \
  VCMP("lt_" suffix, type, kind, flags, a < b);  \
  VCMP("eq_" suffix, type, kind, flags, a == b); \
  VCMP("le_" suffix, type, kind, flags, a <= b); \
  VCMP("gt_" suffix, type, kind, flags, a > b);  \
  VCMP("ne_" suffix, type, kind, flags, a != b); \
  VCMP("lg_" suffix, type, kind, flags, a != b); \
  VCMP("ge_" suffix, type, kind, flags, a >= b); \
  VCMP("t_" suffix, type, kind, flags, true)
  INT_CMPS("i16", B32, I16, kSemLowHalves);
  INT_CMPS("u16", B32, U16, kSemLowHalves);
  INT_CMPS("i32", B32, I32, 0);
  INT_CMPS("u32", B32, U32, 0);
  INT_CMPS("i64", B64, I64, 0);
  INT_CMPS("u64", B64, U64, 0);
#define FLOAT_CMPS(suffix, type, kind, flags)                             \
  VCMP("f_" suffix, type, kind, flags, false);                            \
  VCMP("lt_" suffix, type, kind, flags, a < b);                           \
  VCMP("eq_" suffix, type, kind, flags, a == b);                          \
  VCMP("le_" suffix, type, kind, flags, a <= b);                          \
  VCMP("gt_" suffix, type, kind, flags, a > b);                           \
  VCMP("lg_" suffix, type, kind, flags, a<b || a> b);                     \
  VCMP("ge_" suffix, type, kind, flags, a >= b);                          \
  VCMP("o_" suffix, type, kind, flags, !std::isnan(a) && !std::isnan(b)); \
  VCMP("u_" suffix, type, kind, flags, std::isnan(a) || std::isnan(b));   \
  VCMP("nge_" suffix, type, kind, flags, !(a >= b));                      \
  VCMP("nlg_" suffix, type, kind, flags, !(a < b || a > b));              \
  VCMP("ngt_" suffix, type, kind, flags, !(a > b));                       \
  VCMP("nle_" suffix, type, kind, flags, !(a <= b));                      \
  VCMP("neq_" suffix, type, kind, flags, !(a == b));                      \
  VCMP("nlt_" suffix, type, kind, flags, !(a < b));                       \
  VCMP("tru_" suffix, type, kind, flags, true)
  FLOAT_CMPS("f32", F32, F32T, 0);
  FLOAT_CMPS("f64", F64, F64T, 0);
  // binary16: the sources' low halves (f16_to_f32 is exact, so the order is binary16's).
  FLOAT_CMPS("f16", DataType::f16, F16T, kSemLowHalves);
  // v_cmp_class: bit mask of IEEE classes in S1; v_cmpx_class also writes EXEC.
  add(t, "v_cmp_class_f32", vcmp<class_f32, false>, Family::valu, {F32, B32, B32}, 1, 0,
      kSemCompare);
  add(t, "v_cmpx_class_f32", vcmp<class_f32, true>, Family::valu, {F32, B32, B32}, 1, 0,
      kSemCompare);
  add(t, "v_cmp_class_f64", vcmp<class_f64, false>, Family::valu, {F64, B32, B32}, 1, 0,
      kSemCompare);
  add(t, "v_cmpx_class_f64", vcmp<class_f64, true>, Family::valu, {F64, B32, B32}, 1, 0,
      kSemCompare);
  add(t, "v_cmp_class_f16", vcmp<class_f16, false>, Family::valu, {DataType::f16, B32, B32}, 1, 0,
      kSemCompare | kSemLowHalves);
  add(t, "v_cmpx_class_f16", vcmp<class_f16, true>, Family::valu, {DataType::f16, B32, B32}, 1, 0,
      kSemCompare | kSemLowHalves);
}

u32 bfe(u32 value, u32 offset, u32 width, bool sign) {
  offset &= 31;
  width &= 31;
  if (width == 0) return 0;
  u32 field = (value >> offset) & ((width >= 32) ? ~0u : ((1u << width) - 1));
  if (sign && offset + width < 32 && ((field >> (width - 1)) & 1)) field |= ~0u << width;
  return field;
}

void add_valu(Table& t) {
  // Moves and bit operations.
  V32("v_mov_b32", a);
  add(t, "v_mov_b64", valu64<+[](u64 a, u64, u64) { return a; }>, Family::valu, {B64, B64, B64}, 2);
  add(t, "v_pk_mov_b32", v_pk_mov_b32, Family::valu, {B64, B64, B64}, 2);
  add(t, "v_swap_b32", v_swap_b32, Family::valu);
  V32("v_not_b32", ~a);
  V32("v_and_b32", a & b);
  V32("v_or_b32", a | b);
  V32("v_xor_b32", a ^ b);
  V32("v_xnor_b32", ~(a ^ b));
  V32("v_or3_b32", a | b | c);
  V32("v_xad_u32", (a ^ b) + c);
  V32("v_and_or_b32", (a & b) | c);
  V32("v_lshl_or_b32", (a << (b & 31)) | c);
  V32("v_lshl_add_u32", (a << (b & 31)) + c);
  V32("v_add_lshl_u32", (a + b) << (c & 31));
  V32("v_add3_u32", a + b + c);
  V32("v_bfi_b32", (a & b) | (~a & c));
  V32("v_bfm_b32", ((1u << (a & 31)) - 1) << (b & 31));
  V32("v_bfe_u32", bfe(a, b, c, false));
  V32("v_bfe_i32", bfe(a, b, c, true));
  V32("v_alignbit_b32", u32(((u64(a) << 32) | b) >> (c & 31)));
  V32("v_alignbyte_b32", u32(((u64(a) << 32) | b) >> (8 * (c & 3))));
  V32("v_perm_b32", [&] {
    u64 value = (u64(a) << 32) | b;
    u32 r = 0;
    for (int i = 0; i < 4; ++i) {
      u32 sel = (c >> (8 * i)) & 0xff, byte;
      if (sel < 8)
        byte = u32(value >> (8 * sel)) & 0xff;
      else if (sel < 12)
        byte = ((value >> (16 * (sel - 8) + 15)) & 1) ? 0xff : 0;
      else if (sel == 12)
        byte = 0;
      else
        byte = 0xff;
      r |= byte << (8 * i);
    }
    return r;
  }());
  V32("v_lshlrev_b32", b << (a & 31));
  V32("v_lshrrev_b32", b >> (a & 31));
  V32("v_ashrrev_i32", u32(i32(b) >> (a & 31)));
  V32("v_bcnt_u32_b32", u32(std::popcount(a)) + b);
  V32("v_ffbh_u32", a ? u32(std::countl_zero(a)) : ~0u);
  V32("v_ffbl_b32", a ? u32(std::countr_zero(a)) : ~0u);
  V32("v_ffbh_i32", (a == 0 || a == ~0u) ? ~0u : u32(std::countl_zero(i32(a) < 0 ? ~a : a) - 1));
  V32("v_bfrev_b32", [&] {
    u32 r = 0;
    for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1) << (31 - i);
    return r;
  }());
  V32("v_mbcnt_lo_u32_b32", u32(std::popcount(a & ((1ull << (lane < 32 ? lane : 32)) - 1))) + b);
  V32("v_mbcnt_hi_u32_b32",
      u32(std::popcount(a & (lane <= 32 ? 0u : u32((1ull << (lane - 32)) - 1)))) + b);
  // Integer arithmetic.
#define V32_CLAMP(name, wrap, saturate)                                             \
  add(t, name,                                                                      \
      valu32_clamp<+[](u32 a, u32 b, u32, unsigned) -> u32 { return (wrap); },      \
                   +[](u32 a, u32 b, u32, unsigned) -> u32 { return (saturate); }>, \
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp)
#define V32_CLAMP_3(name, wrap, saturate)                                             \
  add(t, name,                                                                        \
      valu32_clamp<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { return (wrap); },      \
                   +[](u32 a, u32 b, u32 c, unsigned) -> u32 { return (saturate); }>, \
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp)
  V32_CLAMP("v_add_u32", a + b, u64(a) + b > 0xffffffffull ? 0xffffffffu : a + b);
  V32_CLAMP("v_sub_u32", a - b, b > a ? 0u : a - b);
  V32_CLAMP("v_subrev_u32", b - a, a > b ? 0u : b - a);
  V32_CLAMP("v_add_i32", a + b, saturate_signed(i64(i32(a)) + i32(b)));
  V32_CLAMP("v_sub_i32", a - b, saturate_signed(i64(i32(a)) - i32(b)));
  V32("v_mul_lo_u32", a * b);
  V32("v_mul_hi_u32", u32((u64(a) * b) >> 32));
  V32("v_mul_hi_i32", u32(u64(i64(i32(a)) * i32(b)) >> 32));
  V32("v_mul_u32_u24", (a & 0xffffffu) * (b & 0xffffffu));
  V32("v_mul_i32_i24", u32(i64(i32(a << 8) >> 8) * (i32(b << 8) >> 8)));
  V32("v_mul_hi_u32_u24", u32((u64(a & 0xffffffu) * (b & 0xffffffu)) >> 32));
  V32("v_mad_u32_u24", (a & 0xffffffu) * (b & 0xffffffu) + c);
  V32("v_mad_i32_i24", u32(i64(i32(a << 8) >> 8) * (i32(b << 8) >> 8)) + c);
  V32("v_min_i32", i32(a) < i32(b) ? a : b);
  V32("v_max_i32", i32(a) > i32(b) ? a : b);
  V32("v_min_u32", a < b ? a : b);
  V32("v_max_u32", a > b ? a : b);
  V32("v_min3_i32", u32(std::min({i32(a), i32(b), i32(c)})));
  V32("v_max3_i32", u32(std::max({i32(a), i32(b), i32(c)})));
  V32("v_min3_u32", std::min({a, b, c}));
  V32("v_max3_u32", std::max({a, b, c}));
  V32("v_med3_i32",
      u32(std::max(std::min(i32(a), i32(b)), std::min(std::max(i32(a), i32(b)), i32(c)))));
  V32("v_med3_u32", std::max(std::min(a, b), std::min(std::max(a, b), c)));
  V32("v_sad_u32", (a > b ? a - b : b - a) + c);
  add(t, "v_add_co_u32", vcarry<+[](u32 a, u32 b, bool, bool& carry) {
        u64 r = u64(a) + b;
        carry = r >> 32;
        return u32(r);
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemVop3b);
  add(t, "v_sub_co_u32", vcarry<+[](u32 a, u32 b, bool, bool& carry) {
        carry = b > a;
        return a - b;
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemVop3b);
  add(t, "v_subrev_co_u32", vcarry<+[](u32 a, u32 b, bool, bool& carry) {
        carry = a > b;
        return b - a;
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemVop3b);
  add(t, "v_addc_co_u32", vcarry<+[](u32 a, u32 b, bool in, bool& carry) {
        u64 r = u64(a) + b + in;
        carry = r >> 32;
        return u32(r);
      }>,
      Family::valu, {B32, B32, B64}, 1, 0, kSemVop3b | kSemCarryIn);
  add(t, "v_subb_co_u32", vcarry<+[](u32 a, u32 b, bool in, bool& carry) {
        carry = u64(b) + in > a;
        return a - b - in;
      }>,
      Family::valu, {B32, B32, B64}, 1, 0, kSemVop3b | kSemCarryIn);
  add(t, "v_subbrev_co_u32", vcarry<+[](u32 a, u32 b, bool in, bool& carry) {
        carry = u64(a) + in > b;
        return b - a - in;
      }>,
      Family::valu, {B32, B32, B64}, 1, 0, kSemVop3b | kSemCarryIn);
  // Its VOP3 form takes FP input modifiers (LLVM's VOP_CNDMASK profile: src0/src1_modifiers):
  // typed f32 so that neg and abs apply; inline constants are the same bits either way.
  add(t, "v_cndmask_b32", v_cndmask_b32, Family::valu, {F32, F32, B64}, 1, 0, kSemCarryIn);
  add(t, "v_mad_u64_u32", v_mad_u64_u32, Family::valu, {B32, B32, B64}, 2, 0, kSemVop3b);
  add(t, "v_mad_i64_i32", v_mad_i64_i32, Family::valu, {B32, B32, B64}, 2, 0, kSemVop3b);
  add(t, "v_readfirstlane_b32", v_readfirstlane_b32, Family::valu, {B32, B32, B32}, 1, 0,
      kSemDstScalar);
  add(t, "v_readlane_b32", v_readlane_b32, Family::valu, {B32, B32, B32}, 1, 0, kSemDstScalar);
  add(t, "v_writelane_b32", v_writelane_b32, Family::valu);
  add(t, "v_accvgpr_read_b32", v_accvgpr_read_b32, Family::valu);
  add(t, "v_accvgpr_write_b32", v_accvgpr_write_b32, Family::valu);
  add(t, "v_accvgpr_mov_b32", v_accvgpr_mov_b32, Family::valu);
  // 16-bit integer (VOP2 / VOP3, SDWA). Each reads the low halves of its sources and leaves its
  // 16-bit result in the low half of the destination with the high half ZEROED: GFX9 zeroes it
  // for these opcodes (gfx10+ would preserve it; LLVM's GCNSubtarget::zeroesHigh16BitsOfDest
  // relies on the GFX9 behaviour). SDWA dst_sel places the result instead. The VOP3 clamp bit
  // saturates the integer add / sub / mad instead of wrapping.
#define V16(name, ...)                                            \
  add(t, name, valu32<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
        (void)c;                                                  \
        return u32(__VA_ARGS__) & 0xffffu;                        \
      }>,                                                         \
      Family::valu, {B32, B32, B32}, 1, 0, kSemLowHalves)
#define V16_CLAMP(name, wrap, saturate)                        \
  add(t, name,                                                 \
      valu32_clamp<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
        (void)c;                                               \
        return u32(wrap) & 0xffffu;                            \
      },                                                       \
                   +[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
                     (void)c;                                  \
                     return u32(saturate) & 0xffffu;           \
                   }>,                                         \
      Family::valu, {B32, B32, B32}, 1, 0, kSemLowHalves | kSemClamp)
  V16_CLAMP("v_add_u16", lo16(a) + lo16(b), std::min(lo16(a) + lo16(b), 0xffffu));
  V16_CLAMP("v_sub_u16", lo16(a) - lo16(b), lo16(b) > lo16(a) ? 0u : lo16(a) - lo16(b));
  V16_CLAMP("v_subrev_u16", lo16(b) - lo16(a), lo16(a) > lo16(b) ? 0u : lo16(b) - lo16(a));
  // The VOP3-only ones take op_sel on their sources (GFX9), `sources` the mask of them.
#define V16_CLAMP_SEL(name, sources, wrap, saturate)         \
  add(t, name,                                               \
      valu32_sel<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
        (void)c;                                             \
        return u32(wrap) & 0xffffu;                          \
      },                                                     \
                 +[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
                   (void)c;                                  \
                   return u32(saturate) & 0xffffu;           \
                 }>,                                         \
      Family::valu, {B32, B32, B32}, 1, sources, kSemLowHalves | kSemClamp | kSemOpSel)
  V16_CLAMP_SEL("v_add_i16", 3, sext16(a) + sext16(b), saturate16(sext16(a) + sext16(b)));
  V16_CLAMP_SEL("v_sub_i16", 3, sext16(a) - sext16(b), saturate16(sext16(a) - sext16(b)));
  V16("v_mul_lo_u16", lo16(a) * lo16(b));
  V16_CLAMP_SEL("v_mad_u16", 7, lo16(a) * lo16(b) + lo16(c),
                std::min(lo16(a) * lo16(b) + lo16(c), 0xffffu));
  V16_CLAMP_SEL("v_mad_i16", 7, sext16(a) * sext16(b) + sext16(c),
                saturate16(sext16(a) * sext16(b) + sext16(c)));
#undef V16_CLAMP_SEL
  V16_CLAMP("v_mad_legacy_u16", lo16(a) * lo16(b) + lo16(c),
            std::min(lo16(a) * lo16(b) + lo16(c), 0xffffu));
  V16_CLAMP("v_mad_legacy_i16", sext16(a) * sext16(b) + sext16(c),
            saturate16(sext16(a) * sext16(b) + sext16(c)));
  V16("v_lshlrev_b16", lo16(b) << (a & 15));
  V16("v_lshrrev_b16", lo16(b) >> (a & 15));
  V16("v_ashrrev_i16", sext16(b) >> (a & 15));
  V16("v_max_u16", std::max(lo16(a), lo16(b)));
  V16("v_min_u16", std::min(lo16(a), lo16(b)));
  V16("v_max_i16", std::max(sext16(a), sext16(b)));
  V16("v_min_i16", std::min(sext16(a), sext16(b)));
  // VOP3-only 16-bit min3 / max3 / med3 (GFX9 op_sel on each source). The destination's high
  // half is zeroed, as for v_mad_u16 (the op_sel-capable 16-bit operation LLVM's
  // zeroesHigh16BitsOfDest lists for GFX9; these it does not list, so no compiled code relies on
  // either).
#define V16_SEL(name, ...)                                            \
  add(t, name, valu32_sel<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { \
        return u32(__VA_ARGS__) & 0xffffu;                            \
      }>,                                                             \
      Family::valu, {B32, B32, B32}, 1, 7, kSemLowHalves | kSemOpSel)
  V16_SEL("v_min3_i16", std::min({sext16(a), sext16(b), sext16(c)}));
  V16_SEL("v_max3_i16", std::max({sext16(a), sext16(b), sext16(c)}));
  V16_SEL("v_min3_u16", std::min({lo16(a), lo16(b), lo16(c)}));
  V16_SEL("v_max3_u16", std::max({lo16(a), lo16(b), lo16(c)}));
  V16_SEL("v_med3_i16", std::max(std::min(sext16(a), sext16(b)),
                                 std::min(std::max(sext16(a), sext16(b)), sext16(c))));
  V16_SEL("v_med3_u16",
          std::max(std::min(lo16(a), lo16(b)), std::min(std::max(lo16(a), lo16(b)), lo16(c))));
#undef V16_SEL
  // D.u32 = S0.u16 * S1.u16 + S2.u32 (op_sel on S0 / S1), clamp saturating.
  add(t, "v_mad_u32_u16",
      valu32_sel<+[](u32 a, u32 b, u32 c, unsigned) -> u32 { return lo16(a) * lo16(b) + c; },
                 +[](u32 a, u32 b, u32 c, unsigned) -> u32 {
                   return u32(std::min<u64>(u64(lo16(a)) * lo16(b) + c, 0xffffffffull));
                 }>,
      Family::valu, {B32, B32, B32}, 1, 3, kSemOpSel | kSemClamp);
  add(t, "v_mad_i32_i16",
      valu32_sel<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
        return u32(u64(i64(sext16(a)) * sext16(b) + i64(i32(c))));
      },
                 +[](u32 a, u32 b, u32 c, unsigned) -> u32 {
                   return saturate_signed(i64(sext16(a)) * sext16(b) + i64(i32(c)));
                 }>,
      Family::valu, {B32, B32, B32}, 1, 3, kSemOpSel | kSemClamp);
  // Sums of absolute differences.
  V32_CLAMP_3("v_sad_u8", u32(sad<8, false, false>(a, b, c)),
              u32(std::min<u64>(sad<8, false, false>(a, b, c), 0xffffffffull)));
  V32_CLAMP_3("v_sad_hi_u8", u32(sad<8, true, false>(a, b, c)),
              u32(std::min<u64>(sad<8, true, false>(a, b, c), 0xffffffffull)));
  V32_CLAMP_3("v_sad_u16", u32(sad<16, false, false>(a, b, c)),
              u32(std::min<u64>(sad<16, false, false>(a, b, c), 0xffffffffull)));
  V32_CLAMP_3("v_msad_u8", u32(sad<8, false, true>(a, b, c)),
              u32(std::min<u64>(sad<8, false, true>(a, b, c), 0xffffffffull)));
  // 64-bit integer.
  V64("v_lshlrev_b64", (std::array{B32, B64, B32}), 2, b << (a & 63));
  V64("v_lshrrev_b64", (std::array{B32, B64, B32}), 2, b >> (a & 63));
  V64("v_ashrrev_i64", (std::array{B32, B64, B32}), 2, u64(i64(b) >> (a & 63)));
  V64("v_lshl_add_u64", (std::array{B64, B32, B64}), 2, (a << (b & 7)) + c);
  // f32.
  VF32("v_add_f32", a + b);
  VF32("v_sub_f32", a - b);
  VF32("v_subrev_f32", b - a);
  VF32("v_mul_f32", a * b);
  VF32("v_mul_legacy_f32", (a == 0.0f || b == 0.0f) ? 0.0f : a * b);
  VF32("v_fma_f32", std::fma(a, b, c));
  VF32("v_mad_f32", a * b + c);
  add(t, "v_fmac_f32", valu_f32<+[](float a, float b, float c) { return std::fma(a, b, c); }>,
      Family::valu, {F32, F32, F32}, 1, 0, kSemAccumulate | kSemOutputModifiers);
  add(t, "v_mac_f32", valu_f32<+[](float a, float b, float c) { return a * b + c; }>, Family::valu,
      {F32, F32, F32}, 1, 0, kSemAccumulate | kSemOutputModifiers);
  add(t, "v_fmamk_f32", valu_f32<+[](float a, float k, float b) { return std::fma(a, k, b); }>,
      Family::valu, {F32, F32, F32}, 1, 1, kSemLiteralK);
  add(t, "v_fmaak_f32", valu_f32<+[](float a, float b, float k) { return std::fma(a, b, k); }>,
      Family::valu, {F32, F32, F32}, 1, 2, kSemLiteralK);
  add(t, "v_madmk_f32", valu_f32<+[](float a, float k, float b) { return a * k + b; }>,
      Family::valu, {F32, F32, F32}, 1, 1, kSemLiteralK);
  add(t, "v_madak_f32", valu_f32<+[](float a, float b, float k) { return a * b + k; }>,
      Family::valu, {F32, F32, F32}, 1, 2, kSemLiteralK);
  VF32("v_min_f32", fmin_ieee(a, b));
  VF32("v_max_f32", fmax_ieee(a, b));
  VF32("v_min3_f32", fmin_ieee(fmin_ieee(a, b), c));
  VF32("v_max3_f32", fmax_ieee(fmax_ieee(a, b), c));
  VF32("v_med3_f32", fmax_ieee(fmin_ieee(a, b), fmin_ieee(fmax_ieee(a, b), c)));
  VF32("v_mad_legacy_f32", ((a == 0.0f || b == 0.0f) ? 0.0f : a * b) + c);
  // Cube map coordinates of the direction (S0, S1, S2) = (x, y, z): the major axis is z when
  // |z| >= |x| and |z| >= |y|, else y when |y| >= |x|, else x (a NaN compares false); id is the
  // face (4 / 5 for +z / -z, 2 / 3 for y, 0 / 1 for x), ma twice the major component, sc / tc the
  // face coordinates (LLVM's constant folding of the amdgcn.cube* intrinsics agrees).
  VF32("v_cubeid_f32", cube_face(a, b, c).id);
  VF32("v_cubema_f32", cube_face(a, b, c).ma);
  VF32("v_cubesc_f32", cube_face(a, b, c).sc);
  VF32("v_cubetc_f32", cube_face(a, b, c).tc);
  VF32("v_floor_f32", std::floor(a));
  VF32("v_ceil_f32", std::ceil(a));
  VF32("v_trunc_f32", std::trunc(a));
  VF32("v_rndne_f32", std::nearbyint(a));
  VF32("v_fract_f32", std::isinf(a) ? std::numeric_limits<float>::quiet_NaN()
                                    : std::fmin(a - std::floor(a), 0x1.fffffep-1f));
  // Approximate ops: the hardware is accurate to about 1 ULP; the host's correctly rounded
  // result is within that (tests state the tolerance).
  VF32("v_rcp_f32", 1.0f / a);
  VF32("v_rcp_iflag_f32", 1.0f / a);
  VF32("v_rsq_f32", 1.0f / std::sqrt(a));
  VF32("v_sqrt_f32", std::sqrt(a));
  VF32("v_exp_f32", std::exp2(a));
  VF32("v_log_f32", std::log2(a));
  VF32("v_sin_f32", std::sin(a * 6.2831853071795864769f));
  VF32("v_cos_f32", std::cos(a * 6.2831853071795864769f));
  add(t, "v_ldexp_f32", float_result<valu32<+[](u32 a, u32 b, u32, unsigned) {
        return bits_of(std::ldexp(as_f32(a), i32(b)));
      }>>,
      Family::valu, {F32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_frexp_mant_f32", float_result<valu32<+[](u32 a, u32, u32, unsigned) {
        int e;
        float x = as_f32(a);
        return bits_of(std::isinf(x) || std::isnan(x) ? x : std::frexp(x, &e));
      }>>,
      Family::valu, {F32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_frexp_exp_i32_f32", valu32<+[](u32 a, u32, u32, unsigned) {
        int e = 0;
        float x = as_f32(a);
        if (std::isinf(x) || std::isnan(x)) return 0u;
        std::frexp(x, &e);
        return u32(e);
      }>,
      Family::valu, {F32, B32, B32});
  add(t, "v_div_scale_f32", v_div_scale<float, 23, 64>, Family::valu, {F32, F32, F32}, 1, 0,
      kSemVop3b);
  add(t, "v_div_scale_f64", v_div_scale<double, 53, 128>, Family::valu, {F64, F64, F64}, 2, 0,
      kSemVop3b);
  add(t, "v_div_fmas_f32", v_div_fmas<float>, Family::valu, {F32, F32, F32}, 1, 0,
      kSemOutputModifiers);
  add(t, "v_div_fmas_f64", v_div_fmas<double>, Family::valu, {F64, F64, F64}, 2, 0,
      kSemOutputModifiers);
  VF32("v_div_fixup_f32", div_fixup(a, b, c));
  VF64("v_div_fixup_f64", div_fixup(a, b, c));
  // Conversions.
  add(t, "v_cvt_f32_u32",
      float_result<valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float(a)); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_i32",
      float_result<valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float(i32(a))); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_u32_f32", valu32<+[](u32 a, u32, u32, unsigned) { return cvt_u32_f32(as_f32(a)); }>,
      Family::valu, {F32, F32, F32});
  add(t, "v_cvt_i32_f32",
      valu32<+[](u32 a, u32, u32, unsigned) { return u32(cvt_i32_f32(as_f32(a))); }>, Family::valu,
      {F32, F32, F32});
  // A signed 4-bit integer (S0[3:0]) over 16: -0.5 .. 0.4375.
  add(t, "v_cvt_off_f32_i4", float_result<valu32<+[](u32 a, u32, u32, unsigned) {
        return bits_of(float(i32((a & 15u) ^ 8u) - 8) / 16.0f);
      }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_ubyte0",
      float_result<valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float(a & 0xff)); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_ubyte1",
      float_result<
          valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float((a >> 8) & 0xff)); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_ubyte2",
      float_result<
          valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float((a >> 16) & 0xff)); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_ubyte3",
      float_result<valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(float(a >> 24)); }>>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemOutputModifiers);
  add(t, "v_cvt_f32_f16",
      float_result<
          valu32<+[](u32 a, u32, u32, unsigned) { return bits_of(f16_to_f32(a & 0xffff)); }>>,
      Family::valu, {DataType::f16, B32, B32}, 1, 0, kSemOutputModifiers);
  {
    constexpr DataType F16 = DataType::f16;
#define VF16(name, types, ...)                                        \
  add(t, name, valu_f16<+[](double a, double b, double c) -> double { \
        (void)a;                                                      \
        (void)b;                                                      \
        (void)c;                                                      \
        return (__VA_ARGS__);                                         \
      }>,                                                             \
      Family::valu, types, 1, 0, kSemLowHalves | kSemOutputModifiers)
    const std::array<DataType, 3> h3 = {F16, F16, F16};
    VF16("v_add_f16", h3, a + b);
    VF16("v_sub_f16", h3, a - b);
    VF16("v_subrev_f16", h3, b - a);
    VF16("v_mul_f16", h3, a * b);
    VF16("v_max_f16", h3, std::fmax(a, b));
    VF16("v_min_f16", h3, std::fmin(a, b));
    // The VOP3-only fma / mad take op_sel on each source (GFX9); their legacy forms do not.
    add(t, "v_fma_f16",
        valu_f16_sel<+[](double a, double b, double c) -> double { return std::fma(a, b, c); }>,
        Family::valu, h3, 1, 7, kSemLowHalves | kSemOpSel | kSemOutputModifiers);
    VF16("v_fma_legacy_f16", h3, std::fma(a, b, c));
    // v_mad_f16: a multiply rounded to binary16, then the add rounded again (not fused).
    add(t, "v_mad_f16", valu_f16_sel<+[](double a, double b, double c) -> double {
          return double(_Float16(a * b)) + c;
        }>,
        Family::valu, h3, 1, 7, kSemLowHalves | kSemOpSel | kSemOutputModifiers);
    VF16("v_mad_legacy_f16", h3, double(_Float16(a * b)) + c);
    VF16("v_div_fixup_f16", h3, double(div_fixup(float(a), float(b), float(c))));
    VF16("v_div_fixup_legacy_f16", h3, double(div_fixup(float(a), float(b), float(c))));
    VF16("v_sqrt_f16", h3, std::sqrt(a));
    VF16("v_rcp_f16", h3, 1.0 / a);
    VF16("v_rsq_f16", h3, 1.0 / std::sqrt(a));
    VF16("v_log_f16", h3, std::log2(a));
    VF16("v_exp_f16", h3, std::exp2(a));
    VF16("v_floor_f16", h3, std::floor(a));
    VF16("v_ceil_f16", h3, std::ceil(a));
    VF16("v_trunc_f16", h3, std::trunc(a));
    VF16("v_rndne_f16", h3, std::nearbyint(a));
    VF16("v_fract_f16", h3,
         std::isinf(a) ? std::numeric_limits<double>::quiet_NaN() : a - std::floor(a));
    // sin / cos take the angle in revolutions, as the f32 forms.
    add(t, "v_frexp_mant_f16", valu_f16<+[](double a, double, double) -> double {
          int e;
          return std::isinf(a) || std::isnan(a) ? a : std::frexp(a, &e);
        }>,
        Family::valu, h3, 1, 0, kSemLowHalves | kSemOutputModifiers);
    // VOP3-only min3 / max3 / med3 (op_sel on each source; IEEE minNum / maxNum).
#define VF16_SEL(name, ...)                                                                \
  add(t, name,                                                                             \
      valu_f16_sel<+[](double a, double b, double c) -> double { return (__VA_ARGS__); }>, \
      Family::valu, h3, 1, 7, kSemLowHalves | kSemOpSel | kSemOutputModifiers)
    VF16_SEL("v_min3_f16", std::fmin(std::fmin(a, b), c));
    VF16_SEL("v_max3_f16", std::fmax(std::fmax(a, b), c));
    VF16_SEL("v_med3_f16", med3_ieee(a, b, c));
#undef VF16_SEL
    add(t, "v_mac_f16", v_mac_f16, Family::valu, h3, 1, 0, kSemAccumulate | kSemOutputModifiers);
    // D = {S1.f16, S0.f16}: the bits as they are, after abs / neg (op_sel on each source).
    add(t, "v_pack_b32_f16",
        valu32_sel<+[](u32 a, u32 b, u32, unsigned) -> u32 { return (a & 0xffffu) | (b << 16); }>,
        Family::valu, h3, 1, 3, kSemOpSel);
    VF16("v_sin_f16", h3, std::sin(a * 6.283185307179586));
    VF16("v_cos_f16", h3, std::cos(a * 6.283185307179586));
#undef VF16
  }
  // Those whose sources or results are not binary16 values.
  add(t, "v_cvt_f16_f32", valu_f16_result<+[](u32 a, u32, u32, unsigned) -> u32 {
        return round_f16(double(as_f32(a)));
      }>,
      Family::valu, {F32, B32, B32}, 1, 0, kSemLowHalves | kSemOutputModifiers);
  // D.f16 = S0.f16 * 2^S1.i16: the exponent is an integer, not a binary16 value. Clamping it to
  // +-64 changes nothing once the product is rounded to binary16 (its exponents span -24..15).
  add(t, "v_ldexp_f16", valu_f16_result<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return round_f16(
            std::ldexp(double(h2f(a)), std::clamp(i32(std::int16_t(b & 0xffff)), -64, 64)));
      }>,
      Family::valu, {DataType::f16, B32, B32}, 1, 0, kSemLowHalves | kSemOutputModifiers);
  add(t, "v_cvt_f16_u16", valu_f16_result<+[](u32 a, u32, u32, unsigned) -> u32 {
        return round_f16(double(a & 0xffff));
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemLowHalves | kSemOutputModifiers);
  add(t, "v_cvt_f16_i16", valu_f16_result<+[](u32 a, u32, u32, unsigned) -> u32 {
        return round_f16(double(std::int16_t(a & 0xffff)));
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemLowHalves | kSemOutputModifiers);
  // D.i16 = the exponent of frexp (0 for inf / NaN), the high half zeroed.
  add(t, "v_frexp_exp_i16_f16", valu32<+[](u32 a, u32, u32, unsigned) -> u32 {
        int e = 0;
        const double x = double(h2f(a));
        if (std::isinf(x) || std::isnan(x)) return 0u;
        std::frexp(x, &e);
        return u32(e) & 0xffffu;
      }>,
      Family::valu, {DataType::f16, B32, B32}, 1, 0, kSemLowHalves);
  // D = {rtz_f16(S1.f32), rtz_f16(S0.f32)}.
  add(t, "v_cvt_pkrtz_f16_f32", valu32<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return f16_rtz(as_f32(a)) | (f16_rtz(as_f32(b)) << 16);
      }>,
      Family::valu, {F32, F32, B32});
  // Normalized 16-bit packing: D = {norm(S1), norm(S0)}; the f16 forms take op_sel.
  add(t, "v_cvt_pknorm_i16_f32", valu32<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return snorm16(double(as_f32(a))) | (snorm16(double(as_f32(b))) << 16);
      }>,
      Family::valu, {F32, F32, B32});
  add(t, "v_cvt_pknorm_u16_f32", valu32<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return unorm16(double(as_f32(a))) | (unorm16(double(as_f32(b))) << 16);
      }>,
      Family::valu, {F32, F32, B32});
  add(t, "v_cvt_pknorm_i16_f16", valu32_sel<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return snorm16(double(h2f(a))) | (snorm16(double(h2f(b))) << 16);
      }>,
      Family::valu, {DataType::f16, DataType::f16, B32}, 1, 3, kSemOpSel);
  add(t, "v_cvt_pknorm_u16_f16", valu32_sel<+[](u32 a, u32 b, u32, unsigned) -> u32 {
        return unorm16(double(h2f(a))) | (unorm16(double(h2f(b))) << 16);
      }>,
      Family::valu, {DataType::f16, DataType::f16, B32}, 1, 3, kSemOpSel);
  // D.i16 / D.u16 = norm(S0.f16), the high half zeroed as for the other 16-bit results.
  add(t, "v_cvt_norm_i16_f16",
      valu32<+[](u32 a, u32, u32, unsigned) -> u32 { return snorm16(double(h2f(a))); }>,
      Family::valu, {DataType::f16, B32, B32}, 1, 0, kSemLowHalves);
  add(t, "v_cvt_norm_u16_f16",
      valu32<+[](u32 a, u32, u32, unsigned) -> u32 { return unorm16(double(h2f(a))); }>,
      Family::valu, {DataType::f16, B32, B32}, 1, 0, kSemLowHalves);
  // S0.f32 as an unsigned byte into byte S1[1:0] of S2.
  add(t, "v_cvt_pk_u8_f32", valu32<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
        const u32 shift = 8 * (b & 3);
        return (c & ~(0xffu << shift)) | (unorm8_of(double(as_f32(a))) << shift);
      }>,
      Family::valu, {F32, B32, B32});
  // The same byte into D itself (the other bytes kept): S2 is the destination.
  add(t, "v_cvt_pkaccum_u8_f32", valu32<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
        const u32 shift = 8 * (b & 3);
        return (c & ~(0xffu << shift)) | (unorm8_of(double(as_f32(a))) << shift);
      }>,
      Family::valu, {F32, B32, B32}, 1, 0, kSemAccumulate);
  // (int)floor(S0.f) and (int)floor(S0.f + 0.5) (the sum exact), saturated as v_cvt_i32_f32.
  add(t, "v_cvt_flr_i32_f32", valu32<+[](u32 a, u32, u32, unsigned) -> u32 {
        return u32(cvt_i32_f64(std::floor(double(as_f32(a)))));
      }>,
      Family::valu, {F32, F32, F32});
  add(t, "v_cvt_rpi_i32_f32", valu32<+[](u32 a, u32, u32, unsigned) -> u32 {
        return u32(cvt_i32_f64(std::floor(double(as_f32(a)) + 0.5)));
      }>,
      Family::valu, {F32, F32, F32});
  add(t, "v_cvt_u16_f16",
      valu32<+[](u32 a, u32, u32, unsigned) -> u32 { return cvt_u16_f16(h2f(a)); }>, Family::valu,
      {DataType::f16, B32, B32}, 1, 0, kSemLowHalves);
  add(t, "v_cvt_i16_f16",
      valu32<+[](u32 a, u32, u32, unsigned) -> u32 { return cvt_i16_f16(h2f(a)); }>, Family::valu,
      {DataType::f16, B32, B32}, 1, 0, kSemLowHalves);
  V64_FLOAT("v_cvt_f64_f32", (std::array{F32, B32, B32}), 2, bits_of(double(as_f32(u32(a)))));
  V64_FLOAT("v_cvt_f32_f64", (std::array{F64, B32, B32}), 1, bits_of(float(as_f64(a))));
  V64_FLOAT("v_cvt_f64_u32", (std::array{B32, B32, B32}), 2, bits_of(double(u32(a))));
  V64_FLOAT("v_cvt_f64_i32", (std::array{B32, B32, B32}), 2, bits_of(double(i32(u32(a)))));
  V64("v_cvt_u32_f64", (std::array{F64, B32, B32}), 1, cvt_u32_f64(as_f64(a)));
  V64("v_cvt_i32_f64", (std::array{F64, B32, B32}), 1, u32(cvt_i32_f64(as_f64(a))));
  // f64.
  V64_FLOAT("v_trig_preop_f64", (std::array{F64, B32, B32}), 2, trig_preop(a, u32(b)));
  VF64("v_add_f64", a + b);
  VF64("v_mul_f64", a * b);
  VF64("v_fma_f64", std::fma(a, b, c));
  add(t, "v_fmac_f64", valu_f64<+[](double a, double b, double c) { return std::fma(a, b, c); }>,
      Family::valu, {F64, F64, F64}, 2, 0, kSemAccumulate | kSemOutputModifiers);
  VF64("v_min_f64", std::fmin(a, b));
  VF64("v_max_f64", std::fmax(a, b));
  VF64("v_floor_f64", std::floor(a));
  VF64("v_ceil_f64", std::ceil(a));
  VF64("v_trunc_f64", std::trunc(a));
  VF64("v_rndne_f64", std::nearbyint(a));
  VF64("v_fract_f64", std::isinf(a) ? std::numeric_limits<double>::quiet_NaN()
                                    : std::fmin(a - std::floor(a), 0x1.fffffffffffffp-1));
  VF64("v_rcp_f64", 1.0 / a);
  VF64("v_rsq_f64", 1.0 / std::sqrt(a));
  VF64("v_sqrt_f64", std::sqrt(a));
  V64_FLOAT("v_ldexp_f64", (std::array{F64, B32, B32}), 2,
            bits_of(std::ldexp(as_f64(a), i32(u32(b)))));
  V64_FLOAT("v_frexp_mant_f64", (std::array{F64, B32, B32}), 2, [&] {
    int e;
    double x = as_f64(a);
    return bits_of(std::isinf(x) || std::isnan(x) ? x : std::frexp(x, &e));
  }());
  V64("v_frexp_exp_i32_f64", (std::array{F64, B32, B32}), 1, [&] {
    int e = 0;
    double x = as_f64(a);
    if (std::isinf(x) || std::isnan(x)) return u64(0);
    std::frexp(x, &e);
    return u64(u32(e));
  }());
  // Packed f32 (gfx90a+).
  constexpr DataType PK = DataType::pk_f32;
  add(t, "v_pk_add_f32", vpk_f32<+[](float a, float b, float) { return a + b; }>, Family::valu,
      {PK, PK, PK}, 2, 0, kSemPackedNeg);
  add(t, "v_pk_mul_f32", vpk_f32<+[](float a, float b, float) { return a * b; }>, Family::valu,
      {PK, PK, PK}, 2, 0, kSemPackedNeg);
  add(t, "v_pk_fma_f32", vpk_f32<+[](float a, float b, float c) { return std::fma(a, b, c); }>,
      Family::valu, {PK, PK, PK}, 2, 0, kSemPackedNeg);
  // Packed 16-bit.
  using h = std::uint16_t;
  add(t, "v_pk_add_f16",
      vpk_16<+[](h a, h b, h) { return bits_of(_Float16(as_f16(a) + as_f16(b))); }>, Family::valu,
      {B32, B32, B32}, 1, 0, kSemPackedNeg);
  add(t, "v_pk_mul_f16",
      vpk_16<+[](h a, h b, h) { return bits_of(_Float16(as_f16(a) * as_f16(b))); }>, Family::valu,
      {B32, B32, B32}, 1, 0, kSemPackedNeg);
  add(t, "v_pk_fma_f16", vpk_16<+[](h a, h b, h c) {
        return bits_of(_Float16(std::fma(float(as_f16(a)), float(as_f16(b)), float(as_f16(c)))));
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemPackedNeg);
  add(t, "v_pk_max_f16", vpk_16<+[](h a, h b, h) {
        return bits_of(_Float16(std::fmax(float(as_f16(a)), float(as_f16(b)))));
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemPackedNeg);
  add(t, "v_pk_min_f16", vpk_16<+[](h a, h b, h) {
        return bits_of(_Float16(std::fmin(float(as_f16(a)), float(as_f16(b)))));
      }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemPackedNeg);
  // Packed integer add / sub / mad: the clamp bit saturates each element.
  using s16 = std::int16_t;
  add(t, "v_pk_add_u16",
      vpk_16_clamp<+[](h a, h b, h) { return h(a + b); },
                   +[](h a, h b, h) { return h(std::min(u32(a) + b, 0xffffu)); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_sub_u16",
      vpk_16_clamp<+[](h a, h b, h) { return h(a - b); },
                   +[](h a, h b, h) { return h(b > a ? 0 : a - b); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_add_i16",
      vpk_16_clamp<+[](h a, h b, h) { return h(a + b); },
                   +[](h a, h b, h) { return h(saturate16(i32(s16(a)) + s16(b))); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_sub_i16",
      vpk_16_clamp<+[](h a, h b, h) { return h(a - b); },
                   +[](h a, h b, h) { return h(saturate16(i32(s16(a)) - s16(b))); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_mad_u16",
      vpk_16_clamp<+[](h a, h b, h c) { return h(u32(a) * b + c); },
                   +[](h a, h b, h c) { return h(std::min(u32(a) * b + c, 0xffffu)); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_mad_i16",
      vpk_16_clamp<+[](h a, h b, h c) { return h(u32(a) * b + c); },
                   +[](h a, h b, h c) { return h(saturate16(i32(s16(a)) * s16(b) + s16(c))); }>,
      Family::valu, {B32, B32, B32}, 1, 0, kSemClamp);
  add(t, "v_pk_min_i16", vpk_16<+[](h a, h b, h) { return s16(a) < s16(b) ? a : b; }>,
      Family::valu);
  add(t, "v_pk_max_i16", vpk_16<+[](h a, h b, h) { return s16(a) > s16(b) ? a : b; }>,
      Family::valu);
  add(t, "v_pk_ashrrev_i16", vpk_16<+[](h a, h b, h) { return h(s16(b) >> (a & 15)); }>,
      Family::valu);
  // v_pk_fmac_f16 (VOP2): D.lo = fma(S0.lo, S1.lo, D.lo), D.hi likewise, each as v_fma_f16.
  add(t, "v_pk_fmac_f16", valu32<+[](u32 a, u32 b, u32 c, unsigned) -> u32 {
        auto fma16 = [](u32 x, u32 y, u32 z) {
          return round_f16(std::fma(double(h2f(x)), double(h2f(y)), double(h2f(z))));
        };
        return fma16(a, b, c) | (fma16(a >> 16, b >> 16, c >> 16) << 16);
      }>,
      Family::valu, {DataType::f16, DataType::f16, DataType::f16}, 1, 0,
      kSemAccumulate | kSemWholeSources);
  // Dot products (VOP3P) and their accumulate forms (VOP2, D = dot + D).
  {
    constexpr DataType F16 = DataType::f16;
    const std::array<DataType, 3> dot_f16 = {F16, F16, F32};
    add(t, "v_dot2_f32_f16", v_dot<DotKind::f32_f16, true>, Family::valu, dot_f16, 1, 0,
        kSemDot | kSemClamp | kSemPackedNeg);
    add(t, "v_dot2_i32_i16", v_dot<DotKind::i32_i16, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemClamp);
    add(t, "v_dot2_u32_u16", v_dot<DotKind::u32_u16, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemClamp);
    add(t, "v_dot4_i32_i8", v_dot<DotKind::i32_i8, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemWholeSources | kSemClamp);
    add(t, "v_dot4_u32_u8", v_dot<DotKind::u32_u8, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemWholeSources | kSemClamp);
    add(t, "v_dot8_i32_i4", v_dot<DotKind::i32_i4, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemWholeSources | kSemClamp);
    add(t, "v_dot8_u32_u4", v_dot<DotKind::u32_u4, true>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemDot | kSemWholeSources | kSemClamp);
    add(t, "v_dot2c_f32_f16", v_dot<DotKind::f32_f16, false>, Family::valu, {F16, F16, F32}, 1, 0,
        kSemAccumulate | kSemWholeSources);
    add(t, "v_dot2c_i32_i16", v_dot<DotKind::i32_i16, false>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemAccumulate | kSemWholeSources | kSemClamp);
    add(t, "v_dot4c_i32_i8", v_dot<DotKind::i32_i8, false>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemAccumulate | kSemWholeSources | kSemClamp);
    add(t, "v_dot8c_i32_i4", v_dot<DotKind::i32_i4, false>, Family::valu, {B32, B32, B32}, 1, 0,
        kSemAccumulate | kSemWholeSources | kSemClamp);
  }
  add(t, "v_pk_mul_lo_u16", vpk_16<+[](h a, h b, h) { return h(u32(a) * b); }>, Family::valu);
  add(t, "v_pk_lshlrev_b16", vpk_16<+[](h a, h b, h) { return h(b << (a & 15)); }>, Family::valu);
  add(t, "v_pk_lshrrev_b16", vpk_16<+[](h a, h b, h) { return h(b >> (a & 15)); }>, Family::valu);
  add(t, "v_pk_max_u16", vpk_16<+[](h a, h b, h) { return a > b ? a : b; }>, Family::valu);
  add(t, "v_pk_min_u16", vpk_16<+[](h a, h b, h) { return a < b ? a : b; }>, Family::valu);
  // Mixed precision (gfx908+; gfx900's v_mad_mix* share the opcodes but not these targets).
  {
    constexpr std::array<DataType, 3> mix = {DataType::f16, DataType::f16, DataType::f16};
    add(t, "v_fma_mix_f32", v_fma_mix<MixResult::f32>, Family::valu, mix, 1, 0,
        kSemClamp | kSemPackedNeg);
    add(t, "v_fma_mixlo_f16", v_fma_mix<MixResult::lo>, Family::valu, mix, 1, 0,
        kSemClamp | kSemPackedNeg);
    add(t, "v_fma_mixhi_f16", v_fma_mix<MixResult::hi>, Family::valu, mix, 1, 0,
        kSemClamp | kSemPackedNeg);
  }
  // MFMA (f32 inputs).
  add(t, "v_mfma_f32_4x4x1f32", mfma_f32<4, 1, 16>, Family::valu, {F32, F32, F32}, 4, 0, kSemMfma);
  add(t, "v_mfma_f32_4x4x1_16b_f32", mfma_f32<4, 1, 16>, Family::valu, {F32, F32, F32}, 4, 0,
      kSemMfma);
  add(t, "v_mfma_f32_16x16x4f32", mfma_f32<16, 4, 1>, Family::valu, {F32, F32, F32}, 4, 0,
      kSemMfma);
  add(t, "v_mfma_f32_16x16x4_f32", mfma_f32<16, 4, 1>, Family::valu, {F32, F32, F32}, 4, 0,
      kSemMfma);
  add(t, "v_mfma_f32_32x32x2f32", mfma_f32<32, 2, 1>, Family::valu, {F32, F32, F32}, 16, 0,
      kSemMfma);
  add(t, "v_mfma_f32_32x32x2_f32", mfma_f32<32, 2, 1>, Family::valu, {F32, F32, F32}, 16, 0,
      kSemMfma);
  add_compares(t);
}

void add_salu(Table& t) {
#define S32(name, ...)                                      \
  add(t, name, salu32<+[](u32 a, u32 b, bool& scc) -> u32 { \
        (void)a;                                            \
        (void)b;                                            \
        (void)scc;                                          \
        return (__VA_ARGS__);                               \
      }>,                                                   \
      Family::salu)
#define S64(name, ...)                                      \
  add(t, name, salu64<+[](u64 a, u64 b, bool& scc) -> u64 { \
        (void)a;                                            \
        (void)b;                                            \
        (void)scc;                                          \
        return (__VA_ARGS__);                               \
      }>,                                                   \
      Family::salu, {B64, B64, B64}, 2)
#define S64_32(name, ...)                                      \
  add(t, name, salu64_32<+[](u64 a, u64 b, bool& scc) -> u64 { \
        (void)a;                                               \
        (void)b;                                               \
        (void)scc;                                             \
        return (__VA_ARGS__);                                  \
      }>,                                                      \
      Family::salu, {B64, B32, B32}, 2)
  S32("s_mov_b32", a);
  S64("s_mov_b64", a);
  add(
      t, "s_cmov_b32",
      +[](Wave& w, const Inst& in) {
        if (w.scc) w.s[in.dst.index] = scalar32(w, in.src[0]);
      },
      Family::salu);
  add(t, "s_cmov_b64",
      +[](Wave& w, const Inst& in) {
        if (w.scc) w.set_sreg64(in.dst.index, scalar64(w, in.src[0]));
      },
      Family::salu, {B64, B64, B64});
  S32("s_not_b32", (scc = ~a != 0, ~a));
  S64("s_not_b64", (scc = ~a != 0, ~a));
  S32("s_brev_b32", [&] {
    u32 r = 0;
    for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1) << (31 - i);
    return r;
  }());
  S32("s_bcnt0_i32_b32", [&] {
    u32 r = u32(32 - std::popcount(a));
    scc = r != 0;
    return r;
  }());
  S32("s_bcnt1_i32_b32", [&] {
    u32 r = u32(std::popcount(a));
    scc = r != 0;
    return r;
  }());
  add(t, "s_bcnt1_i32_b64",
      +[](Wave& w, const Inst& in) {
        u32 r = u32(std::popcount(scalar64(w, in.src[0])));
        w.s[in.dst.index] = r;
        w.scc = r != 0;
      },
      Family::salu, {B64, B64, B64});
  add(t, "s_bcnt0_i32_b64",
      +[](Wave& w, const Inst& in) {
        u32 r = u32(64 - std::popcount(scalar64(w, in.src[0])));
        w.s[in.dst.index] = r;
        w.scc = r != 0;
      },
      Family::salu, {B64, B64, B64});
  S32("s_ff1_i32_b32", a ? u32(std::countr_zero(a)) : ~0u);
  add(t, "s_ff1_i32_b64",
      +[](Wave& w, const Inst& in) {
        u64 a = scalar64(w, in.src[0]);
        w.s[in.dst.index] = a ? u32(std::countr_zero(a)) : ~0u;
      },
      Family::salu, {B64, B64, B64});
  S32("s_flbit_i32_b32", a ? u32(std::countl_zero(a)) : ~0u);
  add(t, "s_flbit_i32_b64",
      +[](Wave& w, const Inst& in) {
        u64 a = scalar64(w, in.src[0]);
        w.s[in.dst.index] = a ? u32(std::countl_zero(a)) : ~0u;
      },
      Family::salu, {B64, B64, B64});
  S32("s_flbit_i32", (a == 0 || a == ~0u) ? ~0u : u32(std::countl_zero(i32(a) < 0 ? ~a : a)));
  S32("s_sext_i32_i8", u32(i32(std::int8_t(a))));
  S32("s_sext_i32_i16", u32(i32(std::int16_t(a))));
  S32("s_abs_i32", [&] {
    u32 r = i32(a) < 0 ? u32(-i64(i32(a))) : a;
    scc = r != 0;
    return r;
  }());
  add(
      t, "s_bitset0_b32",
      +[](Wave& w, const Inst& in) { w.s[in.dst.index] &= ~(1u << (scalar32(w, in.src[0]) & 31)); },
      Family::salu);
  add(
      t, "s_bitset1_b32",
      +[](Wave& w, const Inst& in) { w.s[in.dst.index] |= 1u << (scalar32(w, in.src[0]) & 31); },
      Family::salu);
  add(t, "s_getpc_b64", s_getpc_b64, Family::salu, {B64, B64, B64});
  add(t, "s_setpc_b64", s_setpc_b64, Family::salu, {B64, B64, B64}, 2, 0, kSemBranch);
  add(t, "s_swappc_b64", s_swappc_b64, Family::salu, {B64, B64, B64}, 2, 0, kSemCall);
  add(t, "s_and_saveexec_b64", saveexec<+[](u64 s, u64 e) { return s & e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_or_saveexec_b64", saveexec<+[](u64 s, u64 e) { return s | e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_xor_saveexec_b64", saveexec<+[](u64 s, u64 e) { return s ^ e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_andn2_saveexec_b64", saveexec<+[](u64 s, u64 e) { return s & ~e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_orn2_saveexec_b64", saveexec<+[](u64 s, u64 e) { return s | ~e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_nand_saveexec_b64", saveexec<+[](u64 s, u64 e) { return ~(s & e); }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_nor_saveexec_b64", saveexec<+[](u64 s, u64 e) { return ~(s | e); }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_xnor_saveexec_b64", saveexec<+[](u64 s, u64 e) { return ~(s ^ e); }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_andn1_saveexec_b64", saveexec<+[](u64 s, u64 e) { return ~s & e; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_orn1_saveexec_b64", saveexec<+[](u64 s, u64 e) { return ~s | e; }>, Family::salu,
      {B64, B64, B64});
  // SOP2.
  S32("s_add_u32", [&] {
    u64 r = u64(a) + b;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_sub_u32", (scc = b > a, a - b));
  S32("s_add_i32", [&] {
    i64 r = i64(i32(a)) + i32(b);
    scc = r != i32(r);
    return u32(r);
  }());
  S32("s_sub_i32", [&] {
    i64 r = i64(i32(a)) - i32(b);
    scc = r != i32(r);
    return u32(r);
  }());
  S32("s_addc_u32", [&] {
    u64 r = u64(a) + b + scc;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_subb_u32", [&] {
    u32 r = a - b - scc;
    scc = u64(b) + scc > a;
    return r;
  }());
  S32("s_min_i32", (scc = i32(a) < i32(b), scc ? a : b));
  S32("s_min_u32", (scc = a < b, scc ? a : b));
  S32("s_max_i32", (scc = i32(a) > i32(b), scc ? a : b));
  S32("s_max_u32", (scc = a > b, scc ? a : b));
  S32("s_cselect_b32", scc ? a : b);
  S64("s_cselect_b64", scc ? a : b);
  S32("s_and_b32", (scc = (a & b) != 0, a & b));
  S32("s_or_b32", (scc = (a | b) != 0, a | b));
  S32("s_xor_b32", (scc = (a ^ b) != 0, a ^ b));
  S32("s_andn2_b32", (scc = (a & ~b) != 0, a & ~b));
  S32("s_orn2_b32", (scc = (a | ~b) != 0, a | ~b));
  S32("s_nand_b32", (scc = ~(a & b) != 0, ~(a & b)));
  S32("s_nor_b32", (scc = ~(a | b) != 0, ~(a | b)));
  S32("s_xnor_b32", (scc = ~(a ^ b) != 0, ~(a ^ b)));
  S64("s_and_b64", (scc = (a & b) != 0, a & b));
  S64("s_or_b64", (scc = (a | b) != 0, a | b));
  S64("s_xor_b64", (scc = (a ^ b) != 0, a ^ b));
  S64("s_andn2_b64", (scc = (a & ~b) != 0, a & ~b));
  S64("s_orn2_b64", (scc = (a | ~b) != 0, a | ~b));
  S64("s_nand_b64", (scc = ~(a & b) != 0, ~(a & b)));
  S64("s_nor_b64", (scc = ~(a | b) != 0, ~(a | b)));
  S64("s_xnor_b64", (scc = ~(a ^ b) != 0, ~(a ^ b)));
  S32("s_lshl_b32", (scc = (a << (b & 31)) != 0, a << (b & 31)));
  S32("s_lshr_b32", (scc = (a >> (b & 31)) != 0, a >> (b & 31)));
  S32("s_ashr_i32", (scc = (i32(a) >> (b & 31)) != 0, u32(i32(a) >> (b & 31))));
  S64_32("s_lshl_b64", (scc = (a << (b & 63)) != 0, a << (b & 63)));
  S64_32("s_lshr_b64", (scc = (a >> (b & 63)) != 0, a >> (b & 63)));
  S64_32("s_ashr_i64", (scc = (i64(a) >> (b & 63)) != 0, u64(i64(a) >> (b & 63))));
  S32("s_bfm_b32", ((1u << (a & 31)) - 1) << (b & 31));
  add(
      t, "s_bfm_b64",
      +[](Wave& w, const Inst& in) {
        u32 a = scalar32(w, in.src[0]), b = scalar32(w, in.src[1]);
        w.set_sreg64(in.dst.index, ((1ull << (a & 63)) - 1) << (b & 63));
      },
      Family::salu);
  S32("s_mul_i32", a * b);
  S32("s_mul_hi_u32", u32((u64(a) * b) >> 32));
  S32("s_mul_hi_i32", u32(u64(i64(i32(a)) * i32(b)) >> 32));
  S32("s_bfe_u32", [&] {
    u32 r = bfe(a, b & 31, (b >> 16) & 127, false);
    scc = r != 0;
    return r;
  }());
  S32("s_bfe_i32", [&] {
    u32 r = bfe(a, b & 31, (b >> 16) & 127, true);
    scc = r != 0;
    return r;
  }());
  S64_32("s_bfe_u64", [&] {
    u32 off = b & 63, width = (b >> 16) & 127;
    u64 r = width == 0 ? 0 : (a >> off) & (width >= 64 ? ~0ull : ((1ull << width) - 1));
    scc = r != 0;
    return r;
  }());
  S64_32("s_bfe_i64", [&] {
    u32 off = b & 63, width = (b >> 16) & 127;
    u64 r = width == 0 ? 0 : (a >> off) & (width >= 64 ? ~0ull : ((1ull << width) - 1));
    if (width && width < 64 && ((r >> (width - 1)) & 1)) r |= ~0ull << width;
    scc = r != 0;
    return r;
  }());
  S32("s_absdiff_i32", [&] {
    i64 d = i64(i32(a)) - i32(b);
    u32 r = u32(d < 0 ? -d : d);
    scc = r != 0;
    return r;
  }());
  S32("s_lshl1_add_u32", [&] {
    u64 r = (u64(a) << 1) + b;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_lshl2_add_u32", [&] {
    u64 r = (u64(a) << 2) + b;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_lshl3_add_u32", [&] {
    u64 r = (u64(a) << 3) + b;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_lshl4_add_u32", [&] {
    u64 r = (u64(a) << 4) + b;
    scc = r >> 32;
    return u32(r);
  }());
  S32("s_pack_ll_b32_b16", (a & 0xffff) | (b << 16));
  S32("s_pack_lh_b32_b16", (a & 0xffff) | (b & 0xffff0000u));
  S32("s_pack_hh_b32_b16", (a >> 16) | (b & 0xffff0000u));
  // SOPC.
#define SC32(name, kind, ...)                     \
  add(t, name, scmp32<+[](u32 x, u32 y) -> bool { \
        kind a = kind(x), b = kind(y);            \
        return (__VA_ARGS__);                     \
      }>,                                         \
      Family::salu)
  SC32("s_cmp_eq_i32", i32, a == b);
  SC32("s_cmp_lg_i32", i32, a != b);
  SC32("s_cmp_gt_i32", i32, a > b);
  SC32("s_cmp_ge_i32", i32, a >= b);
  SC32("s_cmp_lt_i32", i32, a < b);
  SC32("s_cmp_le_i32", i32, a <= b);
  SC32("s_cmp_eq_u32", u32, a == b);
  SC32("s_cmp_lg_u32", u32, a != b);
  SC32("s_cmp_gt_u32", u32, a > b);
  SC32("s_cmp_ge_u32", u32, a >= b);
  SC32("s_cmp_lt_u32", u32, a < b);
  SC32("s_cmp_le_u32", u32, a <= b);
  SC32("s_bitcmp0_b32", u32, ((a >> (b & 31)) & 1) == 0);
  SC32("s_bitcmp1_b32", u32, ((a >> (b & 31)) & 1) == 1);
  add(t, "s_cmp_eq_u64", scmp64<+[](u64 a, u64 b) { return a == b; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_cmp_lg_u64", scmp64<+[](u64 a, u64 b) { return a != b; }>, Family::salu,
      {B64, B64, B64});
  add(t, "s_bitcmp0_b64", scmp64<+[](u64 a, u64 b) { return ((a >> (b & 63)) & 1) == 0; }>,
      Family::salu, {B64, B32, B32});
  add(t, "s_bitcmp1_b64", scmp64<+[](u64 a, u64 b) { return ((a >> (b & 63)) & 1) == 1; }>,
      Family::salu, {B64, B32, B32});
  add(t, "s_set_gpr_idx_on", s_set_gpr_idx_on, Family::salu);
  // SOPK.
#define SK(name, write, ...)                     \
  add(t, name,                                   \
      sopk<+[](u32 d, u32 k, bool& scc) -> u32 { \
        (void)d;                                 \
        (void)k;                                 \
        (void)scc;                               \
        return (__VA_ARGS__);                    \
      },                                         \
           write>,                               \
      Family::salu)
  SK("s_movk_i32", true, k);
  SK("s_cmovk_i32", true, scc ? k : d);
  SK("s_addk_i32", true, [&] {
    i64 r = i64(i32(d)) + i32(k);
    scc = r != i32(r);
    return u32(r);
  }());
  SK("s_mulk_i32", true, d * k);
  SK("s_cmpk_eq_i32", false, (scc = i32(d) == i32(k), d));
  SK("s_cmpk_lg_i32", false, (scc = i32(d) != i32(k), d));
  SK("s_cmpk_gt_i32", false, (scc = i32(d) > i32(k), d));
  SK("s_cmpk_ge_i32", false, (scc = i32(d) >= i32(k), d));
  SK("s_cmpk_lt_i32", false, (scc = i32(d) < i32(k), d));
  SK("s_cmpk_le_i32", false, (scc = i32(d) <= i32(k), d));
  SK("s_cmpk_eq_u32", false, (scc = d == (k & 0xffff), d));
  SK("s_cmpk_lg_u32", false, (scc = d != (k & 0xffff), d));
  SK("s_cmpk_gt_u32", false, (scc = d > (k & 0xffff), d));
  SK("s_cmpk_ge_u32", false, (scc = d >= (k & 0xffff), d));
  SK("s_cmpk_lt_u32", false, (scc = d < (k & 0xffff), d));
  SK("s_cmpk_le_u32", false, (scc = d <= (k & 0xffff), d));
  add(t, "s_getreg_b32", s_getreg_b32, Family::salu);
  add(t, "s_setreg_b32", s_setreg_b32, Family::salu);
  add(t, "s_setreg_imm32_b32", s_setreg_imm32_b32, Family::salu);
  // SOPP.
  add(t, "s_nop", s_nop, Family::sopp);
  add(t, "s_endpgm", s_endpgm, Family::sopp, {B32, B32, B32}, 1, 0, kSemBranch);
  add(t, "s_branch", s_branch, Family::sopp, {B32, B32, B32}, 1, 0, kSemBranch);
  add(t, "s_cbranch_scc0", s_cbranch<0>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_cbranch_scc1", s_cbranch<1>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_cbranch_vccz", s_cbranch<2>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_cbranch_vccnz", s_cbranch<3>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_cbranch_execz", s_cbranch<4>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_cbranch_execnz", s_cbranch<5>, Family::sopp, {B32, B32, B32}, 1, 0, kSemCondBranch);
  add(t, "s_waitcnt", s_waitcnt, Family::sopp);
  add(t, "s_barrier", s_barrier, Family::sopp);
  add(t, "s_sleep", s_sleep, Family::sopp);
  add(t, "s_trap", s_trap, Family::sopp);
  add(t, "s_setprio", s_nop, Family::sopp);
  add(t, "s_icache_inv", s_nop, Family::sopp);
  add(t, "s_set_gpr_idx_off", s_set_gpr_idx_off, Family::sopp);
  add(t, "s_set_gpr_idx_mode", s_set_gpr_idx_mode, Family::sopp);
}

void add_memory(Table& t) {
  // SMEM.
  for (auto [name, width] : {std::pair{"s_load_dword", 1},
                             {"s_load_dwordx2", 2},
                             {"s_load_dwordx4", 4},
                             {"s_load_dwordx8", 8},
                             {"s_load_dwordx16", 16}})
    add(t, name, s_load, Family::smem, {B32, B32, B32}, std::uint8_t(width));
  for (auto [name, width] : {std::pair{"s_buffer_load_dword", 1},
                             {"s_buffer_load_dwordx2", 2},
                             {"s_buffer_load_dwordx4", 4},
                             {"s_buffer_load_dwordx8", 8},
                             {"s_buffer_load_dwordx16", 16}})
    add(t, name, s_buffer_load, Family::smem, {B32, B32, B32}, std::uint8_t(width));
  for (auto [name, width] :
       {std::pair{"s_store_dword", 1}, {"s_store_dwordx2", 2}, {"s_store_dwordx4", 4}})
    add(t, name, s_store, Family::smem, {B32, B32, B32}, std::uint8_t(width));
  add(t, "s_dcache_wb", s_nop, Family::smem);
  add(t, "s_dcache_inv", s_nop, Family::smem);
  add(t, "s_dcache_inv_vol", s_nop, Family::smem);
  add(t, "s_dcache_wb_vol", s_nop, Family::smem);
  add(t, "s_memtime", s_memtime, Family::smem, {B32, B32, B32}, 2);
  // Cache maintenance: the emulated memory is the host's coherent memory, where a store is
  // visible as soon as it executes, so write-backs and invalidations have nothing to do.
  for (const char* name :
       {"buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_wbl2", "buffer_invl2", "buffer_inv"})
    add(t, name, s_nop, Family::mubuf);
  add(t, "s_memrealtime", s_memtime, Family::smem, {B32, B32, B32}, 2);
  // FLAT / GLOBAL / SCRATCH, and MUBUF with the same data-size selectors.
  struct Access {
    const char* suffix;
    std::uint16_t op;
    std::uint8_t width;
  };
  const Access accesses[] = {
      {"load_ubyte", kLoadU8, 1},          {"load_sbyte", kLoadI8, 1},
      {"load_ushort", kLoadU16, 1},        {"load_sshort", kLoadI16, 1},
      {"load_dword", kLoad32, 1},          {"load_dwordx2", kLoad32, 2},
      {"load_dwordx3", kLoad32, 3},        {"load_dwordx4", kLoad32, 4},
      {"load_short_d16", kLoadD16Lo, 1},   {"load_short_d16_hi", kLoadD16Hi, 1},
      {"load_ubyte_d16", kLoadU8D16Lo, 1}, {"load_ubyte_d16_hi", kLoadU8D16Hi, 1},
      {"load_sbyte_d16", kLoadI8D16Lo, 1}, {"load_sbyte_d16_hi", kLoadI8D16Hi, 1},
      {"store_byte", kStore8, 1},          {"store_short", kStore16, 1},
      {"store_dword", kStore32, 1},        {"store_dwordx2", kStore32, 2},
      {"store_dwordx3", kStore32, 3},      {"store_dwordx4", kStore32, 4},
      {"store_byte_d16_hi", kStore8Hi, 1}, {"store_short_d16_hi", kStore16Hi, 1},
  };
  static std::deque<std::string> names;
  for (const char* prefix : {"flat_", "global_", "scratch_", "buffer_"}) {
    for (const Access& a : accesses) {
      names.push_back(std::string(prefix) + a.suffix);
      bool buffer = prefix[0] == 'b';
      add(t, names.back(), buffer ? buffer_memory : vector_memory,
          buffer ? Family::mubuf : Family::flat, {B32, B32, B32}, a.width,
          std::uint16_t(buffer ? a.op << 2 : a.op));
    }
  }
  struct Atomic {
    const char* suffix;
    AtomicOp op;
  };
  const Atomic atomics[] = {
      {"swap", kSwap}, {"cmpswap", kCmpSwap}, {"add", kAdd},   {"sub", kSub}, {"smin", kSMin},
      {"umin", kUMin}, {"smax", kSMax},       {"umax", kUMax}, {"and", kAnd}, {"or", kOr},
      {"xor", kXor},   {"inc", kInc},         {"dec", kDec}};
  // SMEM atomics: the same thirteen operations, 32- and 64-bit, on an address or a buffer.
  for (const char* prefix : {"s_atomic_", "s_buffer_atomic_"}) {
    const u16 buffer = prefix[2] == 'b' ? kScalarBufferAtomic : 0;
    for (const Atomic& a : atomics) {
      names.push_back(std::string(prefix) + a.suffix);
      add(t, names.back(), s_atomic, Family::smem, {B32, B32, B32}, 1, u16(buffer | a.op));
      names.push_back(std::string(prefix) + a.suffix + "_x2");
      add(t, names.back(), s_atomic, Family::smem, {B32, B32, B32}, 2, u16(buffer | a.op));
    }
  }
  for (const char* prefix : {"flat_atomic_", "global_atomic_"}) {
    for (const Atomic& a : atomics) {
      names.push_back(std::string(prefix) + a.suffix);
      add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 1,
          std::uint16_t(kAtomic + a.op));
      names.push_back(std::string(prefix) + a.suffix + "_x2");
      add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 2,
          std::uint16_t(kAtomic + a.op));
    }
    names.push_back(std::string(prefix) + "add_f32");
    add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 1,
        std::uint16_t(kAtomic + kAddF32));
    names.push_back(std::string(prefix) + "add_f64");
    add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 2,
        std::uint16_t(kAtomic + kAddF64));
    names.push_back(std::string(prefix) + "min_f64");
    add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 2,
        std::uint16_t(kAtomic + kMinF64));
    names.push_back(std::string(prefix) + "max_f64");
    add(t, names.back(), vector_memory, Family::flat, {B32, B32, B32}, 2,
        std::uint16_t(kAtomic + kMaxF64));
  }
  // DS.
  add(t, "ds_read_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsRead);
  add(t, "ds_read_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsRead);
  add(t, "ds_read_b96", ds, Family::ds, {B32, B32, B32}, 3, kDsRead);
  add(t, "ds_read_b128", ds, Family::ds, {B32, B32, B32}, 4, kDsRead);
  add(t, "ds_read_u8", ds, Family::ds, {B32, B32, B32}, 1, kDsReadU8);
  add(t, "ds_read_i8", ds, Family::ds, {B32, B32, B32}, 1, kDsReadI8);
  add(t, "ds_read_u16", ds, Family::ds, {B32, B32, B32}, 1, kDsReadU16);
  add(t, "ds_read_i16", ds, Family::ds, {B32, B32, B32}, 1, kDsReadI16);
  add(t, "ds_read_u16_d16", ds, Family::ds, {B32, B32, B32}, 1, kDsReadU16D16);
  add(t, "ds_read_u16_d16_hi", ds, Family::ds, {B32, B32, B32}, 1, kDsReadU16D16Hi);
  add(t, "ds_read2_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsRead2);
  add(t, "ds_read2_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsRead2);
  add(t, "ds_read2st64_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsRead2St64);
  add(t, "ds_read2st64_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsRead2St64);
  add(t, "ds_write_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite);
  add(t, "ds_write_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsWrite);
  add(t, "ds_write_b96", ds, Family::ds, {B32, B32, B32}, 3, kDsWrite);
  add(t, "ds_write_b128", ds, Family::ds, {B32, B32, B32}, 4, kDsWrite);
  add(t, "ds_write_b8", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite8);
  add(t, "ds_write_b16", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite16);
  add(t, "ds_write_b8_d16_hi", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite8Hi);
  add(t, "ds_write_b16_d16_hi", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite16Hi);
  add(t, "ds_write2_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite2);
  add(t, "ds_write2_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsWrite2);
  add(t, "ds_write2st64_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsWrite2St64);
  add(t, "ds_write2st64_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsWrite2St64);
  add(t, "ds_bpermute_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsBpermute);
  add(t, "ds_permute_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsPermute);
  add(t, "ds_swizzle_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsSwizzle);
  struct DsAtomic {
    const char* name;
    AtomicOp op;
  };
  const DsAtomic ds_atomics[] = {{"add_u", kAdd},  {"sub_u", kSub},  {"min_i", kSMin},
                                 {"min_u", kUMin}, {"max_i", kSMax}, {"max_u", kUMax},
                                 {"and_b", kAnd},  {"or_b", kOr},    {"xor_b", kXor},
                                 {"inc_u", kInc},  {"dec_u", kDec}};
  for (const DsAtomic& a : ds_atomics) {
    std::string base = std::string("ds_") + a.name;
    std::string n32 = base + "32";
    std::string n64 = base + "64";
    for (auto [name, width] : {std::pair{n32, 1}, {n64, 2}}) {
      names.push_back(name);
      add(t, names.back(), ds, Family::ds, {B32, B32, B32}, std::uint8_t(width),
          std::uint16_t(kDsAtomic + a.op));
      std::string rtn = name;
      rtn.insert(rtn.find('_', 3), "_rtn");
      names.push_back(rtn);
      add(t, names.back(), ds, Family::ds, {B32, B32, B32}, std::uint8_t(width),
          std::uint16_t(kDsAtomic + 32 + a.op));
    }
  }
  add(t, "ds_add_f32", ds, Family::ds, {B32, B32, B32}, 1, kDsAtomic + kAddF32);
  add(t, "ds_add_rtn_f32", ds, Family::ds, {B32, B32, B32}, 1, kDsAtomic + 32 + kAddF32);
  // gfx90a's LDS f64 add (atomicAdd on a __shared__ double).
  add(t, "ds_add_f64", ds, Family::ds, {B32, B32, B32}, 2, kDsAtomic + kAddF64);
  add(t, "ds_add_rtn_f64", ds, Family::ds, {B32, B32, B32}, 2, kDsAtomic + 32 + kAddF64);
  add(t, "ds_wrxchg_rtn_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsAtomic + 32 + kSwap);
  add(t, "ds_wrxchg_rtn_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsAtomic + 32 + kSwap);
  add(t, "ds_cmpst_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsAtomic + kCmpSwap);
  add(t, "ds_cmpst_rtn_b32", ds, Family::ds, {B32, B32, B32}, 1, kDsAtomic + 32 + kCmpSwap);
  add(t, "ds_cmpst_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsAtomic + kCmpSwap);
  add(t, "ds_cmpst_rtn_b64", ds, Family::ds, {B32, B32, B32}, 2, kDsAtomic + 32 + kCmpSwap);
}

const Table& table() {
  static const Table instance = [] {
    Table t;
    add_salu(t);
    add_valu(t);
    add_memory(t);
    return t;
  }();
  return instance;
}

}  // namespace

const Semantics* find_semantics(std::string_view mnemonic) {
  const Table& t = table();
  auto it = t.find(mnemonic);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace wavekit::emu::detail
