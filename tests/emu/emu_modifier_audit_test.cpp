// The VOP3/VOP3P modifier audit (issue 17). Which source and output modifiers an opcode takes
// comes from LLVM's own decoder rather than from a list of ours: every VOP3 and VOP3P opcode of
// the target is encoded with plain VGPR sources, then once per modifier bit, and LLVM's printed
// text says whether the bit is a modifier of that instruction (`-v10`, `|v10|`, `clamp`, `mul:2`,
// `op_sel:[...]`, `neg_lo:[...]`, ...). Each accepted modifier then runs on the emulator, and
// its result must equal the plain instruction's result on inputs transformed the way the ISA
// defines the modifier (neg flips the operand's sign bit, abs clears it, op_sel reads the high
// half, clamp limits a float result to [0, 1] with NaN as 0, omod scales it) — or the emulator
// must refuse the encoding with a message. An ignored modifier, the bug class of
// v_cndmask_b32_e64's neg/abs, fails here.
//
// WAVEKIT_MODIFIER_AUDIT_LOG=FILE writes every opcode, variant and verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <variant>

#include "emu_test_support.h"
#include "wavekit/isa/isa.h"

namespace wavekit::emu::test {
namespace {

constexpr unsigned kLanes = 64;
constexpr unsigned kSlots = 8;  // dwords per lane in and out: v10..v15, v20, v21 in
constexpr std::uint64_t kMask = 0x5555aaaaf0f00ff0ull;
// VOP3's source fields: VGPR n is 256 + n; s30 names the pair s[30:31] for mask sources.
constexpr unsigned kSourceVgprs[3] = {256 + 10, 256 + 12, 256 + 14};
constexpr unsigned kMaskSgpr = 30;
constexpr unsigned kVdst = 20;
constexpr unsigned kSdst = 24;  // VOP3b's carry-out pair

enum class Encoding { vop3, vop3p };

// A modifier as the audit applies it: which bit, and what the ISA says it means.
struct Modifier {
  enum class Kind { neg, abs, clamp, omod, op_sel, op_sel_hi, neg_lo, neg_hi } kind;
  int index = 0;  // the source (op_sel 3: the destination), or omod's value 1..3
  std::uint64_t bit = 0;
  std::string name() const {
    static const char* names[] = {"neg",    "abs",       "clamp",  "omod",
                                  "op_sel", "op_sel_hi", "neg_lo", "neg_hi"};
    std::string n = names[int(kind)];
    if (kind == Kind::clamp) return n;
    return n + (kind == Kind::omod ? ":" : " src") + std::to_string(index);
  }
};

struct Opcode {
  Encoding encoding;
  unsigned opcode = 0;
  bool vop3b = false;
  std::uint64_t plain = 0;
  std::string text, mnemonic;
  std::vector<std::string> destinations, sources;  // as printed: "v20", "v[10:11]", "s[30:31]"
  std::vector<std::pair<Modifier, std::uint64_t>> accepted;  // modifier, encoding with it
};

std::optional<std::string> decode_text(const isa::Decoder& decoder, std::uint64_t encoding) {
  std::uint8_t bytes[8];
  std::memcpy(bytes, &encoding, 8);
  auto instruction = decoder.decode(bytes, 0);
  if (!instruction || instruction->size != 8) return std::nullopt;
  return instruction->text;
}

std::uint64_t vop3_encoding(unsigned opcode, const unsigned sources[3], unsigned vdst) {
  std::uint64_t w0 = (0x34ull << 26) | (std::uint64_t(opcode) << 16) | vdst;
  std::uint64_t w1 = sources[0] | (sources[1] << 9) | (std::uint64_t(sources[2]) << 18);
  return w0 | (w1 << 32);
}

std::uint64_t vop3p_encoding(unsigned opcode, const unsigned sources[3], unsigned vdst) {
  // op_sel_hi is 1 for every source by default (the high result reads the high halves).
  std::uint64_t w0 = (0x1a7ull << 23) | (std::uint64_t(opcode) << 16) | (1u << 14) | vdst;
  std::uint64_t w1 =
      sources[0] | (sources[1] << 9) | (std::uint64_t(sources[2]) << 18) | (3ull << 27);
  return w0 | (w1 << 32);
}

// "v_fma_f32 v20, v10, v12, v14 clamp" -> operands {"v20", "v10", "v12", "v14"}.
std::vector<std::string> printed_operands(const std::string& text) {
  std::vector<std::string> operands;
  std::size_t space = text.find(' ');
  if (space == std::string::npos) return operands;
  std::stringstream rest(text.substr(space + 1));
  std::string item;
  while (std::getline(rest, item, ',')) {
    std::size_t begin = item.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    item = item.substr(begin);
    if (std::size_t end = item.find(' '); end != std::string::npos) item = item.substr(0, end);
    operands.push_back(item);
  }
  return operands;
}

// The modifier bits of an encoding family: (modifier, the bit in the 64-bit encoding, the text
// LLVM prints for it given the printed source names).
std::vector<Modifier> candidate_modifiers(Encoding encoding, bool vop3b) {
  using K = Modifier::Kind;
  std::vector<Modifier> all;
  auto w0 = [](int bit) { return 1ull << bit; };
  auto w1 = [](int bit) { return 1ull << (32 + bit); };
  if (encoding == Encoding::vop3) {
    for (int i = 0; i < 3; ++i) {
      all.push_back({K::neg, i, w1(29 + i)});
      if (!vop3b) all.push_back({K::abs, i, w0(8 + i)});
    }
    all.push_back({K::clamp, 0, w0(15)});
    for (int v = 1; v <= 3; ++v) all.push_back({K::omod, v, std::uint64_t(v) << 59});
    if (!vop3b)
      for (int i = 0; i < 4; ++i) all.push_back({K::op_sel, i, w0(11 + i)});
  } else {
    for (int i = 0; i < 3; ++i) {
      all.push_back({K::neg_lo, i, w1(29 + i)});
      all.push_back({K::neg_hi, i, w0(8 + i)});
      all.push_back({K::op_sel, i, w0(11 + i)});
      all.push_back({K::op_sel_hi, i, i < 2 ? w1(27 + i) : w0(14)});  // cleared, not set
    }
    all.push_back({K::clamp, 0, w0(15)});
  }
  return all;
}

bool printed_as_modifier(const Modifier& m, const std::string& text,
                         const std::vector<std::string>& sources) {
  using K = Modifier::Kind;
  auto source = [&](int i) -> std::string {
    return i < int(sources.size()) ? sources[i] : std::string("\x01");
  };
  switch (m.kind) {
    case K::neg:
      return text.find(" -" + source(m.index)) != std::string::npos ||
             text.find(" -|" + source(m.index)) != std::string::npos;
    case K::abs:
      return text.find("|" + source(m.index) + "|") != std::string::npos;
    case K::clamp:
      return text.find(" clamp") != std::string::npos;
    case K::omod:
      return text.find(m.index == 1   ? " mul:2"
                       : m.index == 2 ? " mul:4"
                                      : " div:2") != std::string::npos;
    case K::op_sel:
      return text.find(" op_sel:") != std::string::npos;
    case K::op_sel_hi:
      return text.find(" op_sel_hi:") != std::string::npos;
    // The mixed-precision VOP3P operations print NEG as neg and NEG_HI as abs, VOP3-style.
    case K::neg_lo:
      return text.find(" neg_lo:") != std::string::npos ||
             text.find(" -" + source(m.index)) != std::string::npos;
    case K::neg_hi:
      return text.find(" neg_hi:") != std::string::npos ||
             text.find("|" + source(m.index) + "|") != std::string::npos;
  }
  return false;
}

// Every VOP3/VOP3P opcode LLVM decodes for the processor, with the modifiers it prints.
std::vector<Opcode> enumerate_opcodes(const isa::Decoder& decoder) {
  std::vector<Opcode> found;
  // Sources to try, in order: all VGPRs, then the mask pair in the third or second place (a
  // VOP3 v_cndmask_b32 or v_addc_co_u32 reads a lane mask there).
  const unsigned source_sets[3][3] = {{kSourceVgprs[0], kSourceVgprs[1], kSourceVgprs[2]},
                                      {kSourceVgprs[0], kSourceVgprs[1], kMaskSgpr},
                                      {kSourceVgprs[0], kMaskSgpr, kSourceVgprs[2]}};
  for (Encoding encoding : {Encoding::vop3, Encoding::vop3p}) {
    // VOP3's opcodes 0x380 and up are VOP3P's encoding prefix (0x1a7 in bits 31:23).
    unsigned opcodes = encoding == Encoding::vop3 ? 0x380 : 128;
    for (unsigned op = 0; op < opcodes; ++op) {
      for (const auto& sources : source_sets) {
        std::uint64_t plain = encoding == Encoding::vop3 ? vop3_encoding(op, sources, kVdst)
                                                         : vop3p_encoding(op, sources, kVdst);
        std::optional<std::string> text = decode_text(decoder, plain);
        if (!text) continue;
        Opcode entry;
        entry.encoding = encoding;
        entry.opcode = op;
        if (encoding == Encoding::vop3) {
          // VOP3b keeps its carry-out SGPRs where VOP3a keeps abs and op_sel.
          std::uint64_t with_sdst = plain | (std::uint64_t(kSdst) << 8);
          std::optional<std::string> sdst_text = decode_text(decoder, with_sdst);
          if (sdst_text && sdst_text->find("s[24:25]") != std::string::npos) {
            entry.vop3b = true;
            plain = with_sdst;
            text = sdst_text;
          }
        }
        entry.plain = plain;
        entry.text = *text;
        entry.mnemonic = text->substr(0, text->find(' '));
        std::vector<std::string> operands = printed_operands(*text);
        // Destinations are the operands before the first of our sources.
        std::size_t first_source = 0;
        while (first_source < operands.size() && operands[first_source] != "v10" &&
               operands[first_source] != "v[10:11]")
          ++first_source;
        entry.destinations.assign(operands.begin(), operands.begin() + first_source);
        entry.sources.assign(operands.begin() + first_source, operands.end());
        for (const Modifier& m : candidate_modifiers(encoding, entry.vop3b)) {
          std::uint64_t with = m.kind == Modifier::Kind::op_sel_hi ? plain & ~m.bit : plain | m.bit;
          std::optional<std::string> modified = decode_text(decoder, with);
          if (modified && *modified != entry.text &&
              printed_as_modifier(m, *modified, entry.sources))
            entry.accepted.emplace_back(m, with);
        }
        found.push_back(std::move(entry));
        break;
      }
    }
  }
  return found;
}

// ---- types, from the mnemonic's suffixes (the ISA's naming: v_cvt_<dst>_<src>) ----

enum class Type { none, f16, f32, f64, integer, bits };

Type type_of(const std::string& token) {
  static const std::regex pattern("^([fiub])(16|32|64)$");
  std::smatch m;
  if (!std::regex_match(token, m, pattern)) return Type::none;
  if (m[1] == "f") return m[2] == "16" ? Type::f16 : m[2] == "32" ? Type::f32 : Type::f64;
  return m[1] == "b" ? Type::bits : Type::integer;
}

struct Types {
  Type destination = Type::none, source = Type::none;
};

Types types_of(const std::string& mnemonic) {
  std::stringstream parts(mnemonic);
  std::string token;
  Types t;
  while (std::getline(parts, token, '_')) {
    Type type = type_of(token);
    if (type == Type::none) continue;
    if (t.destination == Type::none) t.destination = type;
    t.source = type;
  }
  return t;
}

struct Register {
  unsigned index = 0;
  bool wide = false;
  bool vector = false;
};

std::optional<Register> parse_register(const std::string& name) {
  static const std::regex pattern(R"(^([vs])(\d+)$|^([vs])\[(\d+):(\d+)\]$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return std::nullopt;
  if (m[1].matched) return Register{unsigned(std::stoul(m[2])), false, m[1] == "v"};
  unsigned first = unsigned(std::stoul(m[4])), last = unsigned(std::stoul(m[5]));
  if (last != first + 1) return std::nullopt;
  return Register{first, true, m[3] == "v"};
}

// Where a VGPR's dword lives in a lane's input slots (v10..v15 -> 0..5, v20, v21 -> 6, 7) and
// in its output slots (v20, v21 -> 0, 1; then s20, s21, s24, s25, vcc_lo, vcc_hi).
std::optional<unsigned> input_slot(unsigned vgpr) {
  if (vgpr >= 10 && vgpr <= 15) return vgpr - 10;
  if (vgpr == 20 || vgpr == 21) return vgpr - 14;
  return std::nullopt;
}

std::optional<unsigned> output_slot(unsigned vgpr) {
  if (vgpr == 20 || vgpr == 21) return vgpr - 20;
  return std::nullopt;
}

// ---- inputs ----

using Lanes = std::array<std::array<std::uint32_t, kSlots>, kLanes>;

std::uint16_t f16_bits(float value) { return std::bit_cast<std::uint16_t>(_Float16(value)); }
float f16_value(std::uint16_t bits) { return float(std::bit_cast<_Float16>(bits)); }

// Values a modifier changes visibly: both signs, magnitudes on both sides of 1, and in a few
// lanes zero, infinity and NaN.
Lanes make_inputs(Type type, std::uint32_t seed) {
  std::uint32_t state = seed;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  auto value = [&](unsigned lane) -> double {
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, INFINITY, -INFINITY, NAN};
    if (lane % 8 == 7) return specials[(lane / 8) % 8];
    double magnitude = double(next() % 4096 + 1) / 512.0;  // (0, 8]
    return next() & 1 ? -magnitude : magnitude;
  };
  Lanes lanes{};
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    for (unsigned s = 0; s < kSlots; s += 2) {
      std::uint32_t* pair = &lanes[lane][s];
      switch (type) {
        case Type::f16:
          pair[0] = f16_bits(float(value(lane))) |
                    (std::uint32_t(f16_bits(float(value(lane + 1)))) << 16);
          pair[1] = f16_bits(float(value(lane + 2))) |
                    (std::uint32_t(f16_bits(float(value(lane + 3)))) << 16);
          break;
        case Type::f32:
          pair[0] = std::bit_cast<std::uint32_t>(float(value(lane)));
          pair[1] = std::bit_cast<std::uint32_t>(float(value(lane + 1)));
          break;
        case Type::f64: {
          std::uint64_t bits = std::bit_cast<std::uint64_t>(value(lane));
          pair[0] = std::uint32_t(bits);
          pair[1] = std::uint32_t(bits >> 32);
          break;
        }
        default:
          pair[0] = next() % 3 == 0 ? next() % 64 : next();
          pair[1] = next() % 3 == 0 ? next() % 64 : next();
          break;
      }
    }
  }
  return lanes;
}

// ---- running one encoding ----

class Probe {
 public:
  explicit Probe(const std::string& processor)
      : object_(std::string(WAVEKIT_EMU_TEST_OBJECTS) + "/modifier_probe_" + processor + ".co"),
        in_(object_.memory(), kLanes * kSlots * 4, "in"),
        out_(object_.memory(), kLanes * kSlots * 4, "out") {
    isa::Assembler assembler(processor);
    std::vector<std::uint8_t> placeholder =
        assembler.assemble("v_fma_f64 v[20:21], v[10:11], v[12:13], v[14:15]");
    std::uint64_t entry = object_.base() + object_.entry_vaddr("modifier_probe");
    const auto* code = reinterpret_cast<const std::uint8_t*>(entry);
    for (std::size_t offset = 0; offset + 8 <= 512; offset += 4)
      if (std::memcmp(code + offset, placeholder.data(), 8) == 0) placeholder_ = entry + offset;
    if (!placeholder_) throw wavekit::Error("modifier_probe: placeholder instruction not found");
  }

  // The result lanes, or the emulator's message when it refuses or fails.
  std::variant<Lanes, std::string> run(std::uint64_t encoding, const Lanes& inputs) {
    std::uint8_t bytes[8];
    std::memcpy(bytes, &encoding, 8);
    object_.patch_code(placeholder_, bytes);
    std::memcpy(in_.as<void>(), inputs.data(), sizeof(Lanes));
    std::memset(out_.as<void>(), 0xee, sizeof(Lanes));
    const std::uint32_t wave[3] = {kLanes, 1, 1};
    DispatchResult result =
        object_.run("modifier_probe", {in_.address(), out_.address(), kMask}, wave, wave);
    if (!result.ok()) return result.message.empty() ? std::string("failed") : result.message;
    Lanes out;
    std::memcpy(out.data(), out_.as<void>(), sizeof(Lanes));
    return out;
  }

 private:
  LoadedObject object_;
  Buffer in_, out_;
  std::uint64_t placeholder_ = 0;
};

// ---- the ISA's meaning of each modifier, as a transformation of inputs or of the result ----

// The sign bit of a source as its register holds it: an f64's in the pair's high dword.
std::uint32_t sign_bit(Type type, bool wide) {
  return !wide && type == Type::f16 ? 0x8000u : 0x80000000u;
}

// Applies `op` to the float result in `lane`'s output slots; false where the destination is not
// a float register of the output.
template <typename Op>
bool map_float_result(Type type, Register dst, std::array<std::uint32_t, kSlots>& lane, Op op) {
  std::optional<unsigned> slot = output_slot(dst.index);
  if (!slot || !dst.vector) return false;
  std::uint32_t& lo = lane[*slot];
  if (type == Type::f64 && dst.wide) {
    std::uint32_t& hi = lane[*slot + 1];
    double v = std::bit_cast<double>(std::uint64_t(lo) | (std::uint64_t(hi) << 32));
    std::uint64_t bits = std::bit_cast<std::uint64_t>(op(v));
    lo = std::uint32_t(bits);
    hi = std::uint32_t(bits >> 32);
    return true;
  }
  if (dst.wide) return false;
  if (type == Type::f32) {
    lo = std::bit_cast<std::uint32_t>(float(op(double(std::bit_cast<float>(lo)))));
    return true;
  }
  if (type == Type::f16) {
    lo = (lo & 0xffff0000u) | f16_bits(float(op(double(f16_value(std::uint16_t(lo))))));
    return true;
  }
  return false;
}

double clamp01(double v) {
  if (std::isnan(v)) return 0.0;
  return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}

// Two elements agree bit for bit or, compared as `type`, as zeros of either sign or as NaNs of
// any payload.
bool same_element(std::uint64_t x, std::uint64_t y, Type type) {
  if (x == y) return true;
  auto agree = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == 0 && b == 0);
  };
  switch (type) {
    case Type::f16:
      return agree(f16_value(std::uint16_t(x)), f16_value(std::uint16_t(y)));
    case Type::f32:
      return agree(std::bit_cast<float>(std::uint32_t(x)), std::bit_cast<float>(std::uint32_t(y)));
    case Type::f64:
      return agree(std::bit_cast<double>(x), std::bit_cast<double>(y));
    default:
      return false;
  }
}

// Results agree slot by slot: f64 results as pairs, f16 results in their low halves (the high
// halves bit for bit), others per dword.
bool same_result(const Lanes& a, const Lanes& b, Type type) {
  for (unsigned lane = 0; lane < kLanes; ++lane)
    for (unsigned s = 0; s < kSlots; ++s) {
      std::uint32_t x = a[lane][s], y = b[lane][s];
      if (type == Type::f64 && s % 2 == 0) {
        auto wide = [&](const Lanes& l) {
          return std::uint64_t(l[lane][s]) | (std::uint64_t(l[lane][s + 1]) << 32);
        };
        if (!same_element(wide(a), wide(b), type)) return false;
        ++s;
      } else if (type == Type::f16) {
        if ((x >> 16) != (y >> 16) || !same_element(x & 0xffff, y & 0xffff, type)) return false;
      } else if (!same_element(x, y, type == Type::f32 ? type : Type::bits)) {
        return false;
      }
    }
  return true;
}

// Integer clamp on an add or sub: the exact result saturated to the destination's type (16-bit
// results in the low half, the high half zero as GFX9 leaves it; packed: each element). A
// function of the two source words, or none for the other integer operations.
using Saturation = std::uint32_t (*)(std::uint32_t x, std::uint32_t y);
Saturation integer_saturation(std::string mnemonic) {
  if (mnemonic.ends_with("_e64")) mnemonic.resize(mnemonic.size() - 4);
  using u32 = std::uint32_t;
  using i64 = std::int64_t;
  static const auto u16 = [](i64 v) { return u32(std::clamp<i64>(v, 0, 0xffff)); };
  static const auto i16 = [](i64 v) { return u32(std::clamp<i64>(v, -32768, 32767)) & 0xffffu; };
  static const auto s16 = [](u32 v) { return i64(std::int16_t(v & 0xffff)); };
  static const auto s32 = [](u32 v) { return i64(std::int32_t(v)); };
  static const auto u32_sat = [](i64 v) { return u32(std::clamp<i64>(v, 0, 0xffffffffll)); };
  static const auto i32_sat = [](i64 v) {
    return u32(std::int32_t(std::clamp<i64>(v, INT32_MIN, INT32_MAX)));
  };
  static const std::pair<const char*, Saturation> table[] = {
      {"v_add_u32", [](u32 x, u32 y) { return u32_sat(i64(x) + y); }},
      {"v_sub_u32", [](u32 x, u32 y) { return u32_sat(i64(x) - y); }},
      {"v_subrev_u32", [](u32 x, u32 y) { return u32_sat(i64(y) - x); }},
      {"v_add_i32", [](u32 x, u32 y) { return i32_sat(s32(x) + s32(y)); }},
      {"v_sub_i32", [](u32 x, u32 y) { return i32_sat(s32(x) - s32(y)); }},
      {"v_add_u16", [](u32 x, u32 y) { return u16(i64(x & 0xffff) + (y & 0xffff)); }},
      {"v_sub_u16", [](u32 x, u32 y) { return u16(i64(x & 0xffff) - (y & 0xffff)); }},
      {"v_subrev_u16", [](u32 x, u32 y) { return u16(i64(y & 0xffff) - (x & 0xffff)); }},
      {"v_add_i16", [](u32 x, u32 y) { return i16(s16(x) + s16(y)); }},
      {"v_sub_i16", [](u32 x, u32 y) { return i16(s16(x) - s16(y)); }},
      {"v_pk_add_u16",
       [](u32 x, u32 y) {
         return u16(i64(x & 0xffff) + (y & 0xffff)) | u16(i64(x >> 16) + (y >> 16)) << 16;
       }},
      {"v_pk_sub_u16",
       [](u32 x, u32 y) {
         return u16(i64(x & 0xffff) - (y & 0xffff)) | u16(i64(x >> 16) - (y >> 16)) << 16;
       }},
      {"v_pk_add_i16",
       [](u32 x, u32 y) { return i16(s16(x) + s16(y)) | i16(s16(x >> 16) + s16(y >> 16)) << 16; }},
      {"v_pk_sub_i16",
       [](u32 x, u32 y) { return i16(s16(x) - s16(y)) | i16(s16(x >> 16) - s16(y >> 16)) << 16; }},
  };
  for (const auto& [name, saturation] : table)
    if (mnemonic == name) return saturation;
  return nullptr;
}

struct Verdicts {
  // unverified: emulated, with no generated oracle to check the result against.
  int checked = 0, refused = 0, unverified = 0, plain_refused = 0;
  std::vector<std::string> mismatches;
  std::set<std::string> checked_names;  // "v_cndmask_b32_e64 neg src0"
};

// Checks one accepted modifier of `op` on the emulator. Returns a line for the log.
std::string check_modifier(Probe& probe, const Opcode& op, const Modifier& m,
                           std::uint64_t encoding, const Lanes& inputs, const Lanes& plain,
                           Verdicts& verdicts) {
  using K = Modifier::Kind;
  const Types types = types_of(op.mnemonic);
  const std::string name = op.mnemonic + " " + m.name();
  const bool packed = op.encoding == Encoding::vop3p;
  const bool compare = op.mnemonic.starts_with("v_cmp");
  const bool mixed = op.mnemonic.find("_mix") != std::string::npos;
  // Without an oracle the variant still runs: the emulator refusing it is the safe outcome.
  auto unverified = [&](const std::string& why) {
    auto result = probe.run(encoding, inputs);
    if (auto* message = std::get_if<std::string>(&result)) {
      ++verdicts.refused;
      return name + ": refused: " + message->substr(0, message->find('\n')) +
             " (no generated oracle: " + why + ")";
    }
    ++verdicts.unverified;
    return name + ": emulated, no generated oracle (" + why + ")";
  };

  // The expected result: the plain instruction on transformed inputs, or the plain result
  // transformed.
  Lanes transformed = inputs;
  std::optional<Lanes> expected;
  Type compared = packed ? Type::bits : types.destination;
  if (m.kind == K::neg || m.kind == K::abs) {
    std::optional<Register> src = parse_register(op.sources.at(m.index));
    if (!src || !src->vector) return unverified("a modifier on a non-VGPR source");
    if (types.source != Type::f16 && types.source != Type::f32 && types.source != Type::f64 &&
        types.source != Type::bits)
      return unverified("no float type in the mnemonic");
    std::uint32_t sign = sign_bit(types.source, src->wide);
    unsigned slot = *input_slot(src->index) + (src->wide ? 1 : 0);
    for (auto& lane : transformed)
      lane[slot] = m.kind == K::neg ? lane[slot] ^ sign : lane[slot] & ~sign;
  } else if (m.kind == K::clamp && compare) {
    expected = plain;  // a compare's clamp only makes a NaN signal an exception
  } else if (m.kind == K::clamp && integer_saturation(op.mnemonic)) {
    // The exact sum or difference of the two sources, saturated, in the destination v20.
    std::optional<Register> x = parse_register(op.sources.at(0));
    std::optional<Register> y = parse_register(op.sources.at(1));
    std::optional<Register> dst = parse_register(op.destinations.front());
    if (!x || !y || !dst || !x->vector || !y->vector || x->wide || y->wide || !dst->vector ||
        dst->wide || !output_slot(dst->index))
      return unverified("integer clamp on operands that are not single VGPRs");
    Saturation saturation = integer_saturation(op.mnemonic);
    Lanes result = plain;
    for (unsigned lane = 0; lane < kLanes; ++lane)
      result[lane][*output_slot(dst->index)] =
          saturation(inputs[lane][*input_slot(x->index)], inputs[lane][*input_slot(y->index)]);
    expected = result;
    compared = Type::bits;
  } else if ((m.kind == K::clamp || m.kind == K::omod) && !mixed) {
    if (packed) return unverified("clamp of packed elements");
    if (op.destinations.empty()) return unverified("no destination");
    std::optional<Register> dst = parse_register(op.destinations.front());
    if (!dst) return unverified("destination not a register");
    if (types.destination != Type::f16 && types.destination != Type::f32 &&
        types.destination != Type::f64)
      return unverified("integer clamp (saturation): directed tests");
    static constexpr double kScale[4] = {1, 2, 4, 0.5};
    Lanes result = plain;
    bool mapped = true;
    for (auto& lane : result)
      mapped &= map_float_result(types.destination, *dst, lane, [&](double v) {
        return m.kind == K::clamp ? clamp01(v) : v * kScale[m.index];
      });
    if (!mapped) return unverified("result not a float register");
    expected = result;
  } else if (m.kind == K::op_sel && !packed) {
    if (m.index == 3) return unverified("op_sel of the destination");
    std::optional<Register> src = parse_register(op.sources.at(m.index));
    if (!src || !src->vector || src->wide) return unverified("op_sel of a non-VGPR source");
    unsigned slot = *input_slot(src->index);
    for (auto& lane : transformed) lane[slot] >>= 16;
  } else if (mixed) {
    // VOP3P mixed precision, every source an f16 in the plain encoding (op_sel_hi set): NEG
    // negates a source, NEG_HI takes its absolute value, op_sel reads its high half.
    if (m.kind == K::op_sel_hi) return unverified("an f32 source of a mixed-precision operation");
    if (m.kind == K::clamp) {
      if (op.mnemonic.find("mixhi") != std::string::npos)
        return unverified("clamp of a high-half result");
      Type result = op.mnemonic.ends_with("_f32") ? Type::f32 : Type::f16;
      Lanes clamped = plain;
      for (auto& lane : clamped)
        map_float_result(result, Register{kVdst, false, true}, lane, clamp01);
      expected = clamped;
      compared = result;
    } else {
      std::optional<Register> src = parse_register(op.sources.at(m.index));
      if (!src || !src->vector || src->wide) return unverified("a modifier on a non-VGPR source");
      unsigned slot = *input_slot(src->index);
      for (auto& lane : transformed)
        lane[slot] = m.kind == K::neg_lo   ? lane[slot] ^ 0x8000u
                     : m.kind == K::neg_hi ? lane[slot] & ~0x8000u
                                           : lane[slot] >> 16;
    }
  } else {
    // VOP3P: the packed operations, each result half reading its own source half.
    if (!op.mnemonic.starts_with("v_pk_") || op.mnemonic == "v_pk_mov_b32")
      return unverified("a VOP3P operation that is not an element-wise packed one");
    std::optional<Register> src = parse_register(op.sources.at(m.index));
    if (!src || !src->vector) return unverified("a modifier on a non-VGPR source");
    const bool float_elements = types.source == Type::f16 || types.source == Type::f32;
    if ((m.kind == K::neg_lo || m.kind == K::neg_hi) && !float_elements)
      return unverified("neg of integer elements");
    unsigned slot = *input_slot(src->index);
    for (auto& lane : transformed) {
      const unsigned width = src->wide ? 32 : 16;
      const std::uint64_t element_mask = (1ull << width) - 1;
      std::uint64_t value =
          src->wide ? (std::uint64_t(lane[slot + 1]) << 32) | lane[slot] : lane[slot];
      const std::uint64_t lo = value & element_mask, hi = (value >> width) & element_mask;
      std::uint64_t new_lo = lo, new_hi = hi;
      const std::uint64_t sign = 1ull << (width - 1);
      if (m.kind == K::op_sel) new_lo = hi;
      if (m.kind == K::op_sel_hi) new_hi = lo;
      if (m.kind == K::neg_lo) new_lo ^= sign;
      if (m.kind == K::neg_hi) new_hi ^= sign;
      std::uint64_t packed_value = new_lo | (new_hi << width);
      lane[slot] = std::uint32_t(packed_value);
      if (src->wide) lane[slot + 1] = std::uint32_t(packed_value >> 32);
    }
  }
  if (!expected) {
    auto result = probe.run(op.plain, transformed);
    if (auto* message = std::get_if<std::string>(&result))
      return unverified("the plain instruction failed on transformed inputs: " + *message);
    expected = std::get<Lanes>(result);
  }
  auto actual = probe.run(encoding, inputs);
  if (auto* message = std::get_if<std::string>(&actual)) {
    ++verdicts.refused;
    return name + ": refused: " + message->substr(0, message->find('\n'));
  }
  ++verdicts.checked;
  verdicts.checked_names.insert(name);
  if (!same_result(std::get<Lanes>(actual), *expected,
                   m.kind == K::clamp || m.kind == K::omod ? compared : Type::bits)) {
    const Lanes& got = std::get<Lanes>(actual);
    std::ostringstream where;
    for (unsigned lane = 0; lane < kLanes && where.str().empty(); ++lane)
      for (unsigned s = 0; s < kSlots; ++s)
        if (got[lane][s] != (*expected)[lane][s]) {
          where << "lane " << lane << " slot " << s << ": expected 0x" << std::hex
                << (*expected)[lane][s] << ", emulated 0x" << got[lane][s] << ", inputs";
          for (std::uint32_t word : inputs[lane]) where << " 0x" << word;
          break;
        }
    verdicts.mismatches.push_back(name + " (" + where.str() + ")");
    return name + ": MISMATCH (" + where.str() + ")";
  }
  return name + ": ok";
}

void audit(const std::string& processor) {
  isa::Decoder decoder(processor);
  std::vector<Opcode> opcodes = enumerate_opcodes(decoder);
  Probe probe(processor);
  Verdicts verdicts;
  std::ostringstream log;
  int with_modifiers = 0;
  for (const Opcode& op : opcodes) {
    log << processor << " " << (op.encoding == Encoding::vop3 ? "VOP3" : "VOP3P") << " 0x"
        << std::hex << op.opcode << std::dec << " " << op.text << "\n";
    if (op.accepted.empty()) continue;
    ++with_modifiers;
    const Types types = types_of(op.mnemonic);
    Type input_type = op.mnemonic.find("_mix") != std::string::npos ? Type::f16 : types.source;
    Lanes inputs = make_inputs(input_type, 12345u + op.opcode);
    auto plain = probe.run(op.plain, inputs);
    if (auto* message = std::get_if<std::string>(&plain)) {
      ++verdicts.plain_refused;
      log << "  not emulated: " << message->substr(0, message->find('\n')) << "\n";
      continue;
    }
    for (const auto& [modifier, encoding] : op.accepted)
      log << "  "
          << check_modifier(probe, op, modifier, encoding, inputs, std::get<Lanes>(plain), verdicts)
          << "\n";
  }
  log << processor << ": " << opcodes.size() << " opcodes, " << with_modifiers
      << " with modifiers; " << verdicts.checked << " modifiers checked, " << verdicts.refused
      << " refused by the emulator, " << verdicts.unverified << " without a generated oracle, "
      << verdicts.plain_refused << " opcodes not emulated\n";
  if (const char* path = std::getenv("WAVEKIT_MODIFIER_AUDIT_LOG")) {
    std::ofstream file(path, std::ios::app);
    file << log.str();
  }
  std::cout << log.str().substr(log.str().rfind(processor + ": ")) << std::flush;

  for (const std::string& mismatch : verdicts.mismatches)
    ADD_FAILURE() << processor << ": " << mismatch
                  << " differs from its ISA definition (WAVEKIT_MODIFIER_AUDIT_LOG=FILE lists all)";
  // The audit must have reached the instructions it exists for.
  EXPECT_GT(verdicts.checked, 300);
  for (const char* needed : {"v_cndmask_b32_e64 neg src0", "v_cndmask_b32_e64 abs src1",
                             "v_fma_f32 neg src2", "v_add_f32_e64 clamp", "v_mul_f64 omod:1"})
    EXPECT_TRUE(verdicts.checked_names.contains(needed)) << processor << ": " << needed;
}

TEST(ModifierAudit, Gfx908) { audit("gfx908"); }
TEST(ModifierAudit, Gfx90a) { audit("gfx90a"); }
TEST(ModifierAudit, Gfx942) { audit("gfx942"); }

}  // namespace
}  // namespace wavekit::emu::test
