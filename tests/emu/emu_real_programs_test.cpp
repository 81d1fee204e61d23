// What real HIP programs (HeCBench: docs/hecbench.md) needed that the directed tests had missed
// (asm/real_programs.s): binary16 VALU instructions (conversion, crossEntropy, gru), the LDS f64
// add (expdist), the HW_REG_SH_MEM_BASES apertures and DS addresses that wrap (merge), the VOP3P
// mixed-precision FMAs (crossEntropy, gru) and packed f32 with inline constants (spm). Each
// binary16 expected value is computed here on the CPU from the ISA's definition with a binary16
// codec of this file's own (bit arithmetic and correctly rounded double arithmetic, not the
// compiler's _Float16, which the emulator uses): the op reads its sources' low halves, the result
// is rounded once to nearest even and GFX9 zeroes the destination's high half.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

struct Inputs {
  std::uint32_t a[64], b[64], c[64];
  float f[64];
};

// binary16 bits -> its exact value.
double decode(std::uint32_t bits) {
  const std::uint32_t h = bits & 0xffff, exponent = (h >> 10) & 31, mantissa = h & 1023;
  double value = exponent == 0    ? std::ldexp(double(mantissa), -24)
                 : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                  : std::ldexp(double(mantissa | 1024), int(exponent) - 25);
  return (h >> 15) ? -value : value;
}

// A double -> binary16, rounded to nearest even: the scaled magnitude's integer part and the
// remainder decide, in the subnormal range with the fixed 2^-24 quantum.
std::uint32_t encode(double value) {
  if (std::isnan(value)) return 0x7e00;
  const std::uint32_t sign = std::signbit(value) ? 0x8000u : 0u;
  double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  if (std::isinf(magnitude)) return sign | 0x7c00;  // converting infinity to an integer is UB
  int exponent = std::ilogb(magnitude);  // magnitude in [2^e, 2^(e+1))
  int quantum = exponent < -14 ? -24 : exponent - 10;
  double scaled = std::ldexp(magnitude, -quantum);  // exact: a power-of-two scaling
  double whole = std::floor(scaled), rest = scaled - whole;
  std::uint64_t units = std::uint64_t(whole);
  if (rest > 0.5 || (rest == 0.5 && (units & 1))) ++units;
  // units * 2^quantum: rebuild the fields (a carry into the next binade is handled by the value).
  double rounded = std::ldexp(double(units), quantum);
  if (rounded >= 65536.0) return sign | 0x7c00;
  if (rounded < std::ldexp(1.0, -14)) return sign | std::uint32_t(units);  // subnormal
  int e = std::ilogb(rounded);
  std::uint32_t mantissa = std::uint32_t(std::ldexp(rounded, 10 - e)) & 1023;
  return sign | std::uint32_t(e + 15) << 10 | mantissa;
}

bool is_nan16(std::uint32_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff); }
double a_(const Inputs& in, int l) { return decode(in.a[l]); }
double b_(const Inputs& in, int l) { return decode(in.b[l]); }
double c_(const Inputs& in, int l) { return decode(in.c[l]); }
double clamp01(double x) { return std::isnan(x) ? 0 : std::fmin(std::fmax(x, 0.0), 1.0); }

using Expectation = std::function<std::uint32_t(const Inputs&, int lane)>;

std::vector<std::pair<std::string, Expectation>> expectations() {
  auto to_u16 = [](double x) -> std::uint32_t {
    if (std::isnan(x) || x <= 0) return 0;
    return x >= 65535 ? 0xffff : std::uint32_t(x);
  };
  auto to_i16 = [](double x) -> std::uint32_t {
    if (std::isnan(x)) return 0;
    if (x <= -32768) return 0x8000;
    if (x >= 32767) return 0x7fff;
    return std::uint32_t(std::int32_t(std::trunc(x))) & 0xffff;
  };
  return {
      {"v_cvt_f16_f32", [](const Inputs& in, int l) { return encode(in.f[l]); }},
      {"v_cvt_f16_f32_e64 -f clamp",
       [](const Inputs& in, int l) { return encode(clamp01(-double(in.f[l]))); }},
      {"v_cvt_f16_f32_e64 f clamp",
       [](const Inputs& in, int l) { return encode(clamp01(double(in.f[l]))); }},
      {"v_add_f16", [](const Inputs& in, int l) { return encode(a_(in, l) + b_(in, l)); }},
      {"v_sub_f16", [](const Inputs& in, int l) { return encode(a_(in, l) - b_(in, l)); }},
      {"v_subrev_f16", [](const Inputs& in, int l) { return encode(b_(in, l) - a_(in, l)); }},
      {"v_mul_f16", [](const Inputs& in, int l) { return encode(a_(in, l) * b_(in, l)); }},
      {"v_mul_f16_e64 a, -b",
       [](const Inputs& in, int l) { return encode(a_(in, l) * -b_(in, l)); }},
      {"v_max_f16",
       [](const Inputs& in, int l) { return encode(std::fmax(a_(in, l), b_(in, l))); }},
      {"v_min_f16",
       [](const Inputs& in, int l) { return encode(std::fmin(a_(in, l), b_(in, l))); }},
      // a*b of two binary16 values is exact in double, so a*b + c rounds once there and once
      // to binary16; the first rounding is innocuous at 53 >= 2*11 + 2 bits.
      {"v_fma_f16",
       [](const Inputs& in, int l) { return encode(a_(in, l) * b_(in, l) + c_(in, l)); }},
      {"v_add_f16_e64 |a|, b clamp",
       [](const Inputs& in, int l) { return encode(clamp01(std::fabs(a_(in, l)) + b_(in, l))); }},
      {"v_cvt_f16_u16", [](const Inputs& in, int l) { return encode(double(in.a[l] & 0xffff)); }},
      {"v_cvt_f16_i16",
       [](const Inputs& in, int l) { return encode(double(std::int16_t(in.a[l] & 0xffff))); }},
      {"v_cvt_u16_f16", [=](const Inputs& in, int l) { return to_u16(a_(in, l)); }},
      {"v_cvt_i16_f16", [=](const Inputs& in, int l) { return to_i16(a_(in, l)); }},
      {"v_floor_f16", [](const Inputs& in, int l) { return encode(std::floor(a_(in, l))); }},
      {"v_ceil_f16", [](const Inputs& in, int l) { return encode(std::ceil(a_(in, l))); }},
      {"v_trunc_f16", [](const Inputs& in, int l) { return encode(std::trunc(a_(in, l))); }},
      {"v_rndne_f16", [](const Inputs& in, int l) { return encode(std::nearbyint(a_(in, l))); }},
      {"v_sqrt_f16", [](const Inputs& in, int l) { return encode(std::sqrt(a_(in, l))); }},
      {"v_ldexp_f16",
       [](const Inputs& in, int l) { return encode(std::ldexp(a_(in, l), (l & 31) - 16)); }},
      {"v_add_f16 0.5 (inline constant)",
       [](const Inputs& in, int l) { return encode(0.5 + a_(in, l)); }},
      {"v_add_f16 0x4200 (literal 3.0)",
       [](const Inputs& in, int l) { return encode(3.0 + a_(in, l)); }},
      {"v_cmp_lt_f16", [](const Inputs& in, int l) { return a_(in, l) < b_(in, l) ? 1u : 0u; }},
      {"v_cmp_eq_f16", [](const Inputs& in, int l) { return a_(in, l) == b_(in, l) ? 1u : 0u; }},
      {"v_cmp_gt_f16 (b, a)",
       [](const Inputs& in, int l) { return b_(in, l) > a_(in, l) ? 1u : 0u; }},
      {"v_cmp_u_f16",
       [](const Inputs& in, int l) {
         return std::isnan(a_(in, l)) || std::isnan(b_(in, l)) ? 1u : 0u;
       }},
      {"v_cmp_nge_f16",
       [](const Inputs& in, int l) { return !(a_(in, l) >= b_(in, l)) ? 1u : 0u; }},
      {"v_cmp_neq_f16",
       [](const Inputs& in, int l) { return !(a_(in, l) == b_(in, l)) ? 1u : 0u; }},
      {"v_cmp_class_f16 0x156",
       [](const Inputs& in, int l) {
         const std::uint32_t h = in.a[l] & 0xffff, e = (h >> 10) & 31, m = h & 1023;
         const bool neg = h >> 15;
         const bool quiet_nan = e == 31 && (m & 0x200), neg_inf = e == 31 && !m && neg,
                    neg_sub = e == 0 && m && neg, pos_zero = h == 0,
                    pos_normal = e && e != 31 && !neg;
         return quiet_nan || neg_inf || neg_sub || pos_zero || pos_normal ? 1u : 0u;
       }},
      {"v_cmp_le_f16 (vcc)",
       [](const Inputs& in, int l) { return a_(in, l) <= b_(in, l) ? 1u : 0u; }},
  };
}

std::uint32_t random_half(std::uint32_t r) {
  // Mostly normal values of moderate exponent (sums and products stay finite), some subnormals,
  // zeros, large values, infinities and NaNs for the conversions and compares.
  switch (r % 16) {
    case 0:
      return (r >> 4) & 0x83ff;  // a subnormal or zero
    case 1:
      return ((r >> 4) & 0x8000) | 0x7800 | ((r >> 8) & 0x3ff);  // 32768..65504
    case 2:
      return ((r >> 4) & 0x8000) | (r & 0x10 ? 0x7c00 : 0x7e01);  // +-inf, quiet NaN
    case 3:
      return ((r >> 4) & 0x8000) | 0x3800;  // +-0.5: ties for rndne / cvt
    default:
      return ((r >> 4) & 0x8000) | ((10 + (r >> 8) % 12) << 10) | ((r >> 12) & 0x3ff);
  }
}

TEST(HalfFloat, EachInstructionMatchesItsIsaDefinition) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  const auto all = expectations();
  Buffer a(object.memory(), 256, "a"), b(object.memory(), 256, "b"), c(object.memory(), 256, "c"),
      f(object.memory(), 256, "f"), out(object.memory(), 256 * all.size(), "out");
  Inputs inputs;
  std::uint32_t state = 2026;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int l = 0; l < 64; ++l) {
    inputs.a[l] = (next() & 0xffff0000u) | random_half(next());
    inputs.b[l] = (next() & 0xffff0000u) | random_half(next());
    inputs.c[l] = (next() & 0xffff0000u) | random_half(next());
    if (l % 8 == 5) inputs.b[l] = (inputs.b[l] & 0xffff0000u) | (inputs.a[l] & 0xffff);  // equal
    // binary32 values across binary16's range: normal, subnormal, overflowing, halfway cases.
    const float scales[] = {1.0f, 1e-5f, 1e-7f, 70000.0f, 0.33f};
    inputs.f[l] = (int(next() % 2000) - 1000) * scales[l % 5] / 7.0f;
    if (l % 11 == 3) inputs.f[l] = 1.0f + 0x1p-11f;  // halfway between two binary16: to even
  }
  std::memcpy(a.as<void>(), inputs.a, 256);
  std::memcpy(b.as<void>(), inputs.b, 256);
  std::memcpy(c.as<void>(), inputs.c, 256);
  std::memcpy(f.as<void>(), inputs.f, 256);
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result =
      object.run("half_float", {a.address(), b.address(), c.address(), f.address(), out.address()},
                 wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (std::size_t k = 0; k < all.size(); ++k) {
    for (int l = 0; l < 64; ++l) {
      const std::uint32_t actual = out.as<std::uint32_t>()[k * 64 + l];
      const std::uint32_t expected = all[k].second(inputs, l);
      const std::string where =
          "slot " + std::to_string(k) + " (" + all[k].first + ") lane " + std::to_string(l);
      if (is_nan16(expected)) {  // any NaN, its payload is not specified here
        EXPECT_TRUE(is_nan16(actual) && actual <= 0xffff) << where << std::hex << " " << actual;
        continue;
      }
      const bool min_max = all[k].first == "v_max_f16" || all[k].first == "v_min_f16";
      if (min_max && (expected & 0x7fff) == 0 && (actual & 0x7fff) == 0) continue;  // +-0
      EXPECT_EQ(actual, expected) << where << std::hex << " a=" << inputs.a[l]
                                  << " b=" << inputs.b[l] << " c=" << inputs.c[l]
                                  << " f=" << inputs.f[l];
    }
  }
}

// ---- v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16 --------------------------------------
// The ISA's pseudo-code: source i is the f32 in its 32 bits when op_sel_hi[i] = 0, else the f16
// in its high (op_sel[i] = 1) or low half; abs (the NEG_HI field) then neg; D = fma in f32;
// mixlo / mixhi: f32_to_f16 of that into one half, the other half kept. The f32 fma is computed
// here without the CPU's fmaf: a * b is exact in double (two 24-bit significands), p + c is
// split into the double sum s and its exact error e (Knuth's two-sum), and s rounded to odd (the
// neighbour toward e whose last bit is 1 when e != 0) rounds to f32 correctly (53 >= 24 + 2).

float bits_f32(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}
std::uint32_t f32_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

struct MixInputs {
  std::uint32_t a[64], b[64], c[64];     // two binary16 halves each
  std::uint32_t fa[64], fb[64], fc[64];  // binary32
};

// A source: f16 (the half `high` names) or the f32 word; |x| then -x.
double mix_source(std::uint32_t word, bool f16, bool high, bool abs, bool neg) {
  double x = f16 ? decode(high ? word >> 16 : word & 0xffff) : double(bits_f32(word));
  if (abs) x = std::fabs(x);
  return neg ? -x : x;
}

float fma_f32(double x, double y, double z) {
  const double p = x * y, s = p + z;
  if (!std::isfinite(p) || !std::isfinite(s)) return float(s);
  const double bp = s - p, e = (p - (s - bp)) + (z - bp);
  std::uint64_t bits;
  std::memcpy(&bits, &s, 8);
  double odd = s;
  if (e != 0 && !(bits & 1)) odd = std::nextafter(s, e > 0 ? INFINITY : -INFINITY);
  return float(odd);
}

float clamp01f(float x) { return std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f); }

// Each slot of asm/real_programs.s's fma_mix: its f32 result, and where it goes (0: the whole
// word, 1: the low half, 2: the high half of 0xdeadbeef).
struct MixSlot {
  std::string text;
  int placement;
  std::function<float(const MixInputs&, int lane)> value;
};

std::vector<MixSlot> mix_slots() {
  using I = const MixInputs&;
  auto h = [](std::uint32_t w, bool high) { return mix_source(w, true, high, false, false); };
  auto f = [](std::uint32_t w) { return mix_source(w, false, false, false, false); };
  return {
      {"mix_f32 a.l b.l c.l", 0,
       [=](I in, int l) { return fma_f32(h(in.a[l], 0), h(in.b[l], 0), h(in.c[l], 0)); }},
      {"mix_f32 a.h b.l c.h", 0,
       [=](I in, int l) { return fma_f32(h(in.a[l], 1), h(in.b[l], 0), h(in.c[l], 1)); }},
      {"mix_f32 fa b.h fb", 0,
       [=](I in, int l) { return fma_f32(f(in.fa[l]), h(in.b[l], 1), f(in.fb[l])); }},
      {"mix_f32 -fa |b.l| -|fc|", 0,
       [=](I in, int l) {
         return fma_f32(mix_source(in.fa[l], false, false, false, true),
                        mix_source(in.b[l], true, false, true, false),
                        mix_source(in.fc[l], false, false, true, true));
       }},
      {"mix_f32 fa fb fc", 0,
       [=](I in, int l) { return fma_f32(f(in.fa[l]), f(in.fb[l]), f(in.fc[l])); }},
      {"mix_f32 |a.l| b.h -c.l clamp", 0,
       [=](I in, int l) {
         return clamp01f(fma_f32(mix_source(in.a[l], true, false, true, false), h(in.b[l], 1),
                                 mix_source(in.c[l], true, false, false, true)));
       }},
      {"mix_f32 a.l 1.0 fa", 0,
       [=](I in, int l) { return fma_f32(h(in.a[l], 0), 1.0, f(in.fa[l])); }},
      {"mixlo fa fb fc", 1,
       [=](I in, int l) { return fma_f32(f(in.fa[l]), f(in.fb[l]), f(in.fc[l])); }},
      {"mixlo a.l b.l c.l", 1,
       [=](I in, int l) { return fma_f32(h(in.a[l], 0), h(in.b[l], 0), h(in.c[l], 0)); }},
      {"mixlo a.h -fa |c.l| clamp", 1,
       [=](I in, int l) {
         return clamp01f(fma_f32(h(in.a[l], 1), mix_source(in.fa[l], false, false, false, true),
                                 mix_source(in.c[l], true, false, true, false)));
       }},
      {"mixhi a.l b.h c.h", 2,
       [=](I in, int l) { return fma_f32(h(in.a[l], 0), h(in.b[l], 1), h(in.c[l], 1)); }},
      {"mixhi -b.h a.h fc clamp", 2,
       [=](I in, int l) {
         return clamp01f(
             fma_f32(mix_source(in.b[l], true, true, false, true), h(in.a[l], 1), f(in.fc[l])));
       }},
      {"mixlo s(0.125) fb fc", 1,
       [=](I in, int l) { return fma_f32(0.125, f(in.fb[l]), f(in.fc[l])); }},
      {"mixhi a.l b.l c.l (even lanes)", 3,
       [=](I in, int l) { return fma_f32(h(in.a[l], 0), h(in.b[l], 0), h(in.c[l], 0)); }},
  };
}

bool is_nan32(std::uint32_t bits) {
  return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffff);
}

TEST(FmaMix, EachFormMatchesTheIsaPseudoCode) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  const auto slots = mix_slots();
  Buffer a(object.memory(), 256, "a"), b(object.memory(), 256, "b"), c(object.memory(), 256, "c"),
      fa(object.memory(), 256, "fa"), fb(object.memory(), 256, "fb"),
      fc(object.memory(), 256, "fc"), out(object.memory(), 256 * slots.size(), "out");
  MixInputs in;
  std::uint32_t state = 90;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  // f32 values of moderate magnitude (no subnormal result), with all 24 significant bits.
  auto random_f32 = [&] {
    const std::uint32_t r = next();
    return (r & 0x80000000u) | std::uint32_t(117 + next() % 20) << 23 | (next() & 0x7fffff);
  };
  for (int l = 0; l < 64; ++l) {
    in.a[l] = random_half(next()) << 16 | random_half(next());
    in.b[l] = random_half(next()) << 16 | random_half(next());
    in.c[l] = random_half(next()) << 16 | random_half(next());
    in.fa[l] = random_f32();
    in.fb[l] = random_f32();
    in.fc[l] = random_f32();
    if (l % 4 == 1) {  // f16 values as f32: mixlo fa fb fc then rounds like an f16 FMA
      in.fa[l] = f32_bits(float(decode(random_half(next()))));
      in.fc[l] = f32_bits(float(decode(random_half(next()))));
    }
    if (l % 4 == 2) {
      // fc halfway between two f16 values, fa * fb far below fc's f32 half-ulp: the f32 FMA
      // gives fc, whose conversion is a tie (to even); one rounding from the exact value would
      // go the product's way. The ISA's f32_to_f16(fma(...)) is two roundings.
      const double low = decode(0x3c00 | (next() & 0x3ff) | (next() & 0x8000));
      in.fc[l] = f32_bits(float(low + std::copysign(0x1p-11, low)));
      in.fa[l] = f32_bits(0x1p-20f);
      in.fb[l] = f32_bits(next() & 1 ? 0x1p-12f : -0x1p-12f);
    }
  }
  std::memcpy(a.as<void>(), in.a, 256);
  std::memcpy(b.as<void>(), in.b, 256);
  std::memcpy(c.as<void>(), in.c, 256);
  std::memcpy(fa.as<void>(), in.fa, 256);
  std::memcpy(fb.as<void>(), in.fb, 256);
  std::memcpy(fc.as<void>(), in.fc, 256);
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("fma_mix",
                           {a.address(), b.address(), c.address(), fa.address(), fb.address(),
                            fc.address(), out.address()},
                           wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    for (int l = 0; l < 64; ++l) {
      const std::uint32_t actual = out.as<std::uint32_t>()[k * 64 + l];
      const float value = slots[k].value(in, l);
      const std::string where =
          "slot " + std::to_string(k) + " (" + slots[k].text + ") lane " + std::to_string(l) +
          " a=" + std::to_string(in.a[l]) + " b=" + std::to_string(in.b[l]) +
          " c=" + std::to_string(in.c[l]) + " fa=" + std::to_string(in.fa[l]) +
          " fb=" + std::to_string(in.fb[l]) + " fc=" + std::to_string(in.fc[l]);
      int placement = slots[k].placement;
      if (placement == 3) {
        if (l % 2) {
          EXPECT_EQ(actual, 0xdeadbeefu) << where;
          continue;
        }
        placement = 2;
      }
      if (placement == 0) {
        if (std::isnan(value)) {
          EXPECT_TRUE(is_nan32(actual)) << where << std::hex << " " << actual;
        } else {
          EXPECT_EQ(actual, f32_bits(value)) << where << " expected " << value;
        }
        continue;
      }
      const std::uint32_t half = encode(value);
      const std::uint32_t kept = placement == 1 ? actual >> 16 : actual & 0xffff;
      const std::uint32_t written = placement == 1 ? actual & 0xffff : actual >> 16;
      EXPECT_EQ(kept, placement == 1 ? 0xdeadu : 0xbeefu) << where << std::hex << " " << actual;
      if (is_nan16(half)) {
        EXPECT_TRUE(is_nan16(written)) << where << std::hex << " " << actual;
      } else {
        EXPECT_EQ(written, half) << where << std::hex << " " << actual << " expected " << half;
      }
    }
  }
}

// Packed f32 with inline float constants (HeCBench spm: its coordinates came out one less and a
// load faulted below its buffer): the constant is an f32, op_sel_hi = 0 reads the low dword
// for the high half as well. Expected values: CPU float arithmetic (fmaf for the fused one).
TEST(PackedF32, InlineFloatConstantsAreF32Values) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  Buffer x(object.memory(), 512, "x"), y(object.memory(), 512, "y"),
      out(object.memory(), 512 * 5, "out");
  float xs[128], ys[128];
  std::uint32_t state = 7;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int i = 0; i < 128; ++i) {
    xs[i] = float(int(next() % 20001) - 10000) / 64.0f;
    ys[i] = float(int(next() % 2001) - 1000) / 16.0f;
  }
  std::memcpy(x.as<void>(), xs, 512);
  std::memcpy(y.as<void>(), ys, 512);
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result =
      object.run("pk_f32_constants", {x.address(), y.address(), out.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  const float inv_2pi = bits_f32(0x3e22f983u);  // the hardware's 1/(2*pi)
  const std::function<float(float, float)> ops[] = {
      [](float a, float) { return a + 1.0f; },
      [](float a, float) { return a * 0.5f; },
      [](float a, float b) { return std::fmaf(a, b, -2.0f); },
      [=](float a, float) { return a * inv_2pi; },
      [](float a, float) { return 4.0f + a; },
  };
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < 128; ++i)  // lane i / 2, half i % 2
      EXPECT_EQ(out.as<std::uint32_t>()[k * 128 + i], f32_bits(ops[k](xs[i], ys[i])))
          << "slot " << k << " lane " << i / 2 << " half " << i % 2 << " x=" << xs[i]
          << " y=" << ys[i];
}

TEST(HalfFloat, LdsF64AddReturnsTheOldValueAndSumsEveryLane) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  Buffer out(object.memory(), 128 * 8, "out");
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("lds_add_f64", {out.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  const double* values = out.as<double>();
  // 0.25 + sum over lanes of (lane + 0.5) = 0.25 + 2016 + 32, exact in double.
  for (int l = 0; l < 64; ++l) EXPECT_EQ(values[64 + l], 2048.25) << "lane " << l;
  // Each add returned the value before it: 0.25 plus the adds of the lanes before it, in some
  // order; so the returned values are distinct, at least 0.25, and each below the final sum by
  // at least that lane's own addend.
  std::vector<double> returned(values, values + 64);
  std::sort(returned.begin(), returned.end());
  EXPECT_EQ(returned.front(), 0.25);
  EXPECT_EQ(std::adjacent_find(returned.begin(), returned.end()), returned.end());
  for (int l = 0; l < 64; ++l) EXPECT_LE(values[l] + l + 0.5, 2048.25) << "lane " << l;
}

TEST(Apertures, ShMemBasesNamesTheAperturesFlatAccessesUse) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  Buffer out(object.memory(), 512, "out");
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("apertures", {out.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;  // before: a write at 0x0 + 4 * lane faulted
  const std::uint32_t* values = out.as<std::uint32_t>();
  for (int l = 0; l < 64; ++l) EXPECT_EQ(values[l], 100u + l) << "lane " << l;
  EXPECT_EQ(values[64], std::uint32_t(kSharedApertureBase >> 48));
  EXPECT_EQ(values[65], std::uint32_t(kPrivateApertureBase >> 48));
  EXPECT_EQ(values[66], 1u);
}

TEST(Lds, AnOffsetOverANegativeBaseWrapsIn32Bits) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/real_programs_gfx90a.co");
  Buffer out(object.memory(), 256, "out");
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("lds_wrap", {out.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;  // before: lane 0's write at 0x1'0000'0004
  for (int l = 0; l < 64; ++l) EXPECT_EQ(out.as<std::uint32_t>()[l], 7u + l) << "lane " << l;
}

// ---- asm/compiler_ops.s: what compiled half-precision, integer and byte-packing code emits
// -------- Each expected value from the ISA's definition, computed here with this file's binary16
// codec and integer arithmetic: 16-bit results zero the destination's high half (v_mac_f16 keeps
// it, as GFX9 does for it), op_sel reads a source's high half, the clamp bit saturates integer
// results and limits float ones to [0, 1].

struct OpsInputs {
  std::uint32_t a[64], b[64], c[64];     // integers
  std::uint32_t h0[64], h1[64], h2[64];  // two binary16 each
  std::uint32_t f0[64], f1[64];          // binary32
};

// How a slot's words compare: bit for bit, or as binary16 / binary32 values where any NaN
// matches a NaN (and, for min / max / med, -0 matches +0).
enum class Compare { bits, f16_low, f16_low_zeros, f16_pair, f32 };

struct OpsSlot {
  std::string text;
  Compare compare;
  std::function<std::uint32_t(const OpsInputs&, int lane)> expected;
};

std::uint32_t lo16(std::uint32_t x) { return x & 0xffff; }
std::uint32_t hi16(std::uint32_t x) { return x >> 16; }
std::int64_t s16(std::uint32_t x) { return std::int64_t(x & 0xffff) - ((x & 0x8000) ? 65536 : 0); }
std::int64_t s32(std::uint32_t x) {
  return std::int64_t(x) - ((x >> 31) ? (std::int64_t(1) << 32) : 0);
}
std::uint32_t sat_u32(std::int64_t x) {
  return x < 0 ? 0 : x > 0xffffffffll ? 0xffffffffu : std::uint32_t(x);
}
std::uint32_t sat_i32(std::int64_t x) {
  return std::uint32_t(std::clamp<std::int64_t>(x, -2147483648ll, 2147483647ll));
}
std::uint32_t sat_i16(std::int64_t x) {
  return std::uint32_t(std::clamp<std::int64_t>(x, -32768, 32767)) & 0xffff;
}
std::uint32_t sat_u16(std::int64_t x) {
  return std::uint32_t(std::clamp<std::int64_t>(x, 0, 65535));
}

// A double -> binary16 rounded toward zero: encode()'s quantum, the remainder dropped; past the
// largest finite value, 65504.
std::uint32_t encode_toward_zero(double value) {
  if (std::isnan(value)) return 0x7e00;
  const std::uint32_t sign = std::signbit(value) ? 0x8000u : 0u;
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | 0x7c00;
  if (magnitude == 0) return sign;
  const int exponent = std::ilogb(magnitude);
  const int quantum = exponent < -14 ? -24 : exponent - 10;
  const double truncated = std::ldexp(std::floor(std::ldexp(magnitude, -quantum)), quantum);
  if (truncated > 65504.0) return sign | 0x7bff;
  return sign | encode(truncated);
}

// IEEE minNum / maxNum (a NaN operand gives the other) and the ISA's med3 on binary16 values.
double min_num(double x, double y) { return std::isnan(x) ? y : std::isnan(y) ? x : x < y ? x : y; }
double max_num(double x, double y) { return std::isnan(x) ? y : std::isnan(y) ? x : x > y ? x : y; }
double med3(double x, double y, double z) {
  if (std::isnan(x) || std::isnan(y) || std::isnan(z)) return min_num(min_num(x, y), z);
  double v[3] = {x, y, z};
  std::sort(v, v + 3);
  return v[1];
}

// Class of an IEEE value from its fields: bit 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal,
// 4 -subnormal, 5 -0, 6 +0, 7 +subnormal, 8 +normal, 9 +inf.
unsigned ieee_class(std::uint64_t bits, int exponent_bits, int mantissa_bits) {
  const std::uint64_t mantissa = bits & ((1ull << mantissa_bits) - 1);
  const std::uint64_t exponent = (bits >> mantissa_bits) & ((1ull << exponent_bits) - 1);
  const bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1;
  if (exponent == (1ull << exponent_bits) - 1) {
    if (mantissa) return (mantissa >> (mantissa_bits - 1)) & 1 ? 1 : 0;
    return negative ? 2 : 9;
  }
  if (exponent) return negative ? 3 : 8;
  if (mantissa) return negative ? 4 : 7;
  return negative ? 5 : 6;
}

// sum of two binary16 products plus an f32, rounded once: the binary16 values are integers times
// 2^-24, so the products' sum is an integer P times 2^-48, and c (at least 2^-24 in magnitude
// here, or 0; below 2^70 or dominating the products) an integer C times 2^-48; P + C is exact in
// 128 bits and its conversion to float rounds once (to nearest even).
float dot2_f16(double a0, double b0, double a1, double b1, float c) {
  const double values[] = {a0, b0, a1, b1, double(c)};
  for (double v : values)
    if (!std::isfinite(v)) return float(a0 * b0 + a1 * b1 + double(c));
  // Beyond 2^70 the products (below 2^33 in magnitude) are under half an ulp of c.
  if (std::fabs(c) >= 0x1p70f) return c;
  auto units = [](double x) { return __int128(std::llround(std::ldexp(x, 24))); };
  const __int128 sum =
      units(a0) * units(b0) + units(a1) * units(b1) + __int128(std::ldexp(double(c), 48));
  return std::ldexp(float(sum), -48);
}

std::int64_t dot_elements(std::uint32_t a, std::uint32_t b, unsigned bits, bool is_signed) {
  std::int64_t sum = 0;
  for (unsigned k = 0; k < 32 / bits; ++k) {
    auto element = [&](std::uint32_t x) {
      const std::int64_t v = (x >> (k * bits)) & ((1u << bits) - 1);
      return is_signed && v >= (1 << (bits - 1)) ? v - (1 << bits) : v;
    };
    sum += element(a) * element(b);
  }
  return sum;
}

std::uint64_t absolute_differences(std::uint32_t a, std::uint32_t b, unsigned bits, bool masked) {
  std::uint64_t sum = 0;
  for (unsigned k = 0; k < 32 / bits; ++k) {
    const std::int64_t x = (a >> (k * bits)) & ((1u << bits) - 1);
    const std::int64_t y = (b >> (k * bits)) & ((1u << bits) - 1);
    if (masked && y == 0) continue;
    sum += std::uint64_t(x > y ? x - y : y - x);
  }
  return sum;
}

// Round half to even by hand (the integer part and the remainder), after the ISA's limits.
std::uint32_t to_nearest_even(double x) {
  const double whole = std::floor(x), rest = x - whole;
  std::int64_t n = std::int64_t(whole);
  if (rest > 0.5 || (rest == 0.5 && (n & 1))) ++n;
  return std::uint32_t(n);
}
std::uint32_t snorm(double x) {
  if (std::isnan(x)) return 0;
  return to_nearest_even((x < -1 ? -1 : x > 1 ? 1 : x) * 32767.0) & 0xffff;
}
std::uint32_t unorm(double x) {
  if (std::isnan(x)) return 0;
  return to_nearest_even((x < 0 ? 0 : x > 1 ? 1 : x) * 65535.0);
}
std::uint32_t unorm8(double x) {
  if (std::isnan(x)) return 0;
  return to_nearest_even(x < 0 ? 0 : x > 255 ? 255 : x);
}

// v_cube*: which of x, y, z has the largest magnitude (z first, then y, on ties; NaN compares
// false), and from it the face id (+x 0, -x 1, +y 2, -y 3, +z 4, -z 5), 2 * the major component
// and the face's s and t coordinates. what: 0 id, 1 ma, 2 sc, 3 tc.
std::uint32_t cube(std::uint32_t xb, std::uint32_t yb, std::uint32_t zb, int what) {
  const float x = bits_f32(xb), y = bits_f32(yb), z = bits_f32(zb);
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  float r[4];
  if (az >= ax && az >= ay) {
    const bool negative = z < 0;
    r[0] = negative ? 5 : 4, r[1] = 2 * z, r[2] = negative ? -x : x, r[3] = -y;
  } else if (ay >= ax) {
    const bool negative = y < 0;
    r[0] = negative ? 3 : 2, r[1] = 2 * y, r[2] = x, r[3] = negative ? -z : z;
  } else {
    const bool negative = x < 0;
    r[0] = negative ? 1 : 0, r[1] = 2 * x, r[2] = negative ? z : -z, r[3] = -y;
  }
  return f32_bits(r[what]);
}

// 2/pi's fraction in hex (1184 bits: Machin's formula, integer arithmetic), bit 0 its most
// significant; v_trig_preop_f64 as the ISA describes it and LLVM's constant folding computes it:
// 53 bits from bit 53 * segment (+ the exponent beyond 1077), truncated, times 2^-(53 + that
// shift) (2^128 more for exponents >= 1968); a NaN quieted; 0 once the three 32-bit words from
// the shift's word pass the table.
std::uint64_t trig_preop_reference(std::uint64_t x, std::uint32_t segment) {
  static const char* const kHex =
      "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d1"
      "921c"
      "fe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05"
      "980f"
      "ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d"
      "5d08"
      "56033046";
  const int exponent = int((x >> 52) & 0x7ff);
  if (exponent == 0x7ff && (x & 0xfffffffffffffull)) return x | (1ull << 51);
  int shift = int(segment) * 53 + (exponent > 1077 ? exponent - 1077 : 0);
  const int table_bits = int(std::strlen(kHex)) * 4;
  if (shift / 32 + 3 > table_bits / 32) return 0;  // the three words from the shift's one
  auto bit = [&](int i) {
    const char c = kHex[i / 4];
    const int nibble = c <= '9' ? c - '0' : c - 'a' + 10;
    return (nibble >> (3 - i % 4)) & 1;
  };
  double value = 0;
  for (int i = 0; i < 53; ++i)
    if (bit(shift + i)) value += std::ldexp(1.0, -1 - i);  // exact: 53 bits
  value = std::ldexp(value, -shift + (exponent >= 1968 ? 128 : 0));
  return std::bit_cast<std::uint64_t>(value);
}

std::vector<OpsSlot> ops_slots() {
  using I = const OpsInputs&;
  using C = Compare;
  auto h = [](std::uint32_t half) { return decode(half); };
  auto f = [](std::uint32_t word) { return bits_f32(word); };
  auto pk = [](std::uint32_t lo, std::uint32_t hi) { return (lo & 0xffff) | (hi & 0xffff) << 16; };
  auto cls = [](std::uint64_t bits, int e, int m, std::uint32_t mask) {
    return (mask >> ieee_class(bits, e, m)) & 1;
  };
  std::vector<OpsSlot> slots = {
      {"v_pack_b32_f16", C::bits, [=](I in, int l) { return pk(in.h0[l], in.h1[l]); }},
      {"v_pack_b32_f16 -v5.h |v6.h|", C::bits,
       [=](I in, int l) { return pk(hi16(in.h0[l]) ^ 0x8000, hi16(in.h1[l]) & 0x7fff); }},
      {"v_pack_b32_f16 v6 -v5.h", C::bits,
       [=](I in, int l) { return pk(in.h1[l], hi16(in.h0[l]) ^ 0x8000); }},
      {"v_cvt_pkrtz_f16_f32", C::f16_pair,
       [=](I in, int l) {
         return pk(encode_toward_zero(f(in.f0[l])), encode_toward_zero(f(in.f1[l])));
       }},
      {"v_cvt_pkrtz_f16_f32 -f1 |f0|", C::f16_pair,
       [=](I in, int l) {
         return pk(encode_toward_zero(-f(in.f1[l])), encode_toward_zero(std::fabs(f(in.f0[l]))));
       }},
      {"v_med3_f16", C::f16_low_zeros,
       [=](I in, int l) { return encode(med3(h(in.h0[l]), h(in.h1[l]), h(in.h2[l]))); }},
      {"v_med3_f16 h0.h -h1 h2.h clamp", C::f16_low_zeros,
       [=](I in, int l) {
         return encode(clamp01(med3(h(hi16(in.h0[l])), -h(in.h1[l]), h(hi16(in.h2[l])))));
       }},
      {"v_min3_f16", C::f16_low_zeros,
       [=](I in, int l) {
         return encode(min_num(min_num(h(in.h0[l]), h(in.h1[l])), h(in.h2[l])));
       }},
      {"v_max3_f16 h0 |h1.h| h2", C::f16_low_zeros,
       [=](I in, int l) {
         return encode(max_num(max_num(h(in.h0[l]), std::fabs(h(hi16(in.h1[l])))), h(in.h2[l])));
       }},
      {"v_med3_i16", C::bits,
       [=](I in, int l) {
         std::int64_t v[3] = {s16(in.a[l]), s16(in.b[l]), s16(in.c[l])};
         std::sort(v, v + 3);
         return std::uint32_t(v[1]) & 0xffff;
       }},
      {"v_med3_u16 a.h b c", C::bits,
       [=](I in, int l) {
         std::uint32_t v[3] = {hi16(in.a[l]), lo16(in.b[l]), lo16(in.c[l])};
         std::sort(v, v + 3);
         return v[1];
       }},
      {"v_min3_i16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(std::min({s16(in.a[l]), s16(in.b[l]), s16(in.c[l])})) & 0xffff;
       }},
      {"v_max3_i16 a b c.h", C::bits,
       [=](I in, int l) {
         return std::uint32_t(std::max({s16(in.a[l]), s16(in.b[l]), s16(hi16(in.c[l]))})) & 0xffff;
       }},
      {"v_min3_u16 a b.h c", C::bits,
       [=](I in, int l) {
         return std::min({lo16(in.a[l]), hi16(in.b[l]), lo16(in.c[l])});
       }},
      {"v_max3_u16", C::bits,
       [=](I in, int l) {
         return std::max({lo16(in.a[l]), lo16(in.b[l]), lo16(in.c[l])});
       }},
      {"v_mad_u32_u16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(std::uint64_t(lo16(in.a[l])) * lo16(in.b[l]) + in.c[l]);
       }},
      {"v_mad_u32_u16 a.h b.h c clamp", C::bits,
       [=](I in, int l) { return sat_u32(std::int64_t(hi16(in.a[l])) * hi16(in.b[l]) + in.c[l]); }},
      {"v_mad_i32_i16", C::bits,
       [=](I in, int l) { return std::uint32_t(s16(in.a[l]) * s16(in.b[l]) + s32(in.c[l])); }},
      {"v_mad_i32_i16 a b.h c clamp", C::bits,
       [=](I in, int l) { return sat_i32(s16(in.a[l]) * s16(hi16(in.b[l])) + s32(in.c[l])); }},
      {"v_pk_add_i16", C::bits,
       [=](I in, int l) {
         return pk(std::uint32_t(s16(in.a[l]) + s16(in.b[l])),
                   std::uint32_t(s16(hi16(in.a[l])) + s16(hi16(in.b[l]))));
       }},
      {"v_pk_add_i16 clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_i16(s16(in.a[l]) + s16(in.b[l])),
                   sat_i16(s16(hi16(in.a[l])) + s16(hi16(in.b[l]))));
       }},
      {"v_pk_sub_i16", C::bits,
       [=](I in, int l) {
         return pk(std::uint32_t(s16(in.a[l]) - s16(in.b[l])),
                   std::uint32_t(s16(hi16(in.a[l])) - s16(hi16(in.b[l]))));
       }},
      {"v_pk_sub_i16 op_sel:[1,0] op_sel_hi:[0,1] clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_i16(s16(hi16(in.a[l])) - s16(in.b[l])),
                   sat_i16(s16(in.a[l]) - s16(hi16(in.b[l]))));
       }},
      {"v_pk_min_i16", C::bits,
       [=](I in, int l) {
         return pk(std::uint32_t(std::min(s16(in.a[l]), s16(in.b[l]))),
                   std::uint32_t(std::min(s16(hi16(in.a[l])), s16(hi16(in.b[l])))));
       }},
      {"v_pk_max_i16 op_sel_hi:[1,0]", C::bits,
       [=](I in, int l) {
         return pk(std::uint32_t(std::max(s16(in.a[l]), s16(in.b[l]))),
                   std::uint32_t(std::max(s16(hi16(in.a[l])), s16(in.b[l]))));
       }},
      {"v_pk_ashrrev_i16", C::bits,
       [=](I in, int l) {
         auto shr = [](std::int64_t v, std::uint32_t n) {
           return std::uint32_t(v / (1 << n) - (v < 0 && v % (1 << n) ? 1 : 0));
         };
         return pk(shr(s16(in.b[l]), in.a[l] & 15), shr(s16(hi16(in.b[l])), hi16(in.a[l]) & 15));
       }},
      {"v_pk_mad_i16", C::bits,
       [=](I in, int l) {
         return pk(std::uint32_t(s16(in.a[l]) * s16(in.b[l]) + s16(in.c[l])),
                   std::uint32_t(s16(hi16(in.a[l])) * s16(hi16(in.b[l])) + s16(hi16(in.c[l]))));
       }},
      {"v_pk_mad_i16 clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_i16(s16(in.a[l]) * s16(in.b[l]) + s16(in.c[l])),
                   sat_i16(s16(hi16(in.a[l])) * s16(hi16(in.b[l])) + s16(hi16(in.c[l]))));
       }},
      {"v_pk_mad_u16 op_sel:[0,0,1] op_sel_hi:[1,1,0]", C::bits,
       [=](I in, int l) {
         return pk(lo16(in.a[l]) * lo16(in.b[l]) + hi16(in.c[l]),
                   hi16(in.a[l]) * hi16(in.b[l]) + lo16(in.c[l]));
       }},
      {"v_pk_mad_u16 clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_u16(std::int64_t(lo16(in.a[l])) * lo16(in.b[l]) + lo16(in.c[l])),
                   sat_u16(std::int64_t(hi16(in.a[l])) * hi16(in.b[l]) + hi16(in.c[l])));
       }},
      {"v_pk_add_u16 clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_u16(std::int64_t(lo16(in.a[l])) + lo16(in.b[l])),
                   sat_u16(std::int64_t(hi16(in.a[l])) + hi16(in.b[l])));
       }},
      {"v_pk_sub_u16 clamp", C::bits,
       [=](I in, int l) {
         return pk(sat_u16(std::int64_t(lo16(in.a[l])) - lo16(in.b[l])),
                   sat_u16(std::int64_t(hi16(in.a[l])) - hi16(in.b[l])));
       }},
      // v_mac_f16 as v_mad_f16: the product rounded to binary16, then the sum.
      {"v_mac_f16 (h2's high half kept)", C::f16_low,
       [=](I in, int l) {
         return (in.h2[l] & 0xffff0000u) |
                encode(decode(encode(h(in.h0[l]) * h(in.h1[l]))) + h(in.h2[l]));
       }},
      {"v_mac_f16_e64 -h0 |h1| clamp", C::f16_low,
       [=](I in, int l) {
         const double sum = decode(encode(-h(in.h0[l]) * std::fabs(h(in.h1[l])))) + h(in.h2[l]);
         return (in.h2[l] & 0xffff0000u) | encode(clamp01(decode(encode(sum))));
       }},
      {"v_pk_fmac_f16", C::f16_pair,
       [=](I in, int l) {
         return pk(encode(h(in.h0[l]) * h(in.h1[l]) + h(in.h2[l])),
                   encode(h(hi16(in.h0[l])) * h(hi16(in.h1[l])) + h(hi16(in.h2[l]))));
       }},
      {"v_frexp_mant_f16", C::f16_low,
       [=](I in, int l) {
         const double x = h(in.h0[l]);
         if (!std::isfinite(x) || x == 0) return encode(x);
         return encode(std::ldexp(x, -(std::ilogb(x) + 1)));
       }},
      {"v_frexp_exp_i16_f16", C::bits,
       [=](I in, int l) {
         const double x = h(in.h0[l]);
         if (!std::isfinite(x) || x == 0) return 0u;
         return std::uint32_t(std::ilogb(x) + 1) & 0xffff;
       }},
  };
  auto to_i32 = [](double x) -> std::uint32_t {
    if (std::isnan(x)) return 0;
    if (x >= 2147483648.0) return 0x7fffffffu;
    if (x < -2147483648.0) return 0x80000000u;
    return std::uint32_t(std::int64_t(x));
  };
  const std::vector<OpsSlot> more = {
      {"v_cvt_flr_i32_f32", C::bits,
       [=](I in, int l) { return to_i32(std::floor(double(f(in.f0[l])))); }},
      {"v_cvt_rpi_i32_f32", C::bits,
       [=](I in, int l) { return to_i32(std::floor(double(f(in.f0[l])) + 0.5)); }},
      {"v_cvt_rpi_i32_f32 -f0", C::bits,
       [=](I in, int l) { return to_i32(std::floor(-double(f(in.f0[l])) + 0.5)); }},
      {"v_cmpx_class_f32 mask", C::bits,
       [=](I in, int l) { return cls(in.f0[l], 8, 23, in.a[l]); }},
      {"v_cmpx_class_f32 exec", C::bits,
       [=](I in, int l) { return cls(in.f0[l], 8, 23, in.a[l]); }},
      {"v_cmpx_class_f32 (vcc) mask", C::bits,
       [=](I in, int l) { return cls(in.f0[l], 8, 23, in.a[l]); }},
      {"v_cmpx_class_f32 (vcc) exec", C::bits,
       [=](I in, int l) { return cls(in.f0[l], 8, 23, in.a[l]); }},
      {"v_cmpx_class_f16 mask", C::bits,
       [=](I in, int l) { return cls(lo16(in.h0[l]), 5, 10, in.a[l]); }},
      {"v_cmpx_class_f16 exec", C::bits,
       [=](I in, int l) { return cls(lo16(in.h0[l]), 5, 10, in.a[l]); }},
      {"v_cmpx_class_f64 mask", C::bits,
       [=](I in, int l) { return cls(in.f0[l] | std::uint64_t(in.f1[l]) << 32, 11, 52, in.a[l]); }},
      {"v_cmpx_class_f64 exec", C::bits,
       [=](I in, int l) { return cls(in.f0[l] | std::uint64_t(in.f1[l]) << 32, 11, 52, in.a[l]); }},
      {"v_dot2_f32_f16", C::f32,
       [=](I in, int l) {
         return f32_bits(
             dot2_f16(h(in.h0[l]), h(in.h1[l]), h(hi16(in.h0[l])), h(hi16(in.h1[l])), f(in.f1[l])));
       }},
      {"v_dot2_f32_f16 op_sel neg clamp", C::f32,
       [=](I in, int l) {
         return f32_bits(clamp01f(dot2_f16(-h(hi16(in.h0[l])), h(in.h1[l]), h(in.h0[l]),
                                           -h(hi16(in.h1[l])), f(in.f1[l]))));
       }},
      {"v_dot2c_f32_f16", C::f32,
       [=](I in, int l) {
         return f32_bits(
             dot2_f16(h(in.h0[l]), h(in.h1[l]), h(hi16(in.h0[l])), h(hi16(in.h1[l])), f(in.f1[l])));
       }},
      {"v_dot2_i32_i16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(dot_elements(in.a[l], in.b[l], 16, true) + s32(in.c[l]));
       }},
      {"v_dot2_i32_i16 op_sel:[0,1,0] op_sel_hi:[1,0,1] clamp", C::bits,
       [=](I in, int l) {
         return sat_i32(s16(in.a[l]) * s16(hi16(in.b[l])) + s16(hi16(in.a[l])) * s16(in.b[l]) +
                        s32(in.c[l]));
       }},
      {"v_dot2_u32_u16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(dot_elements(in.a[l], in.b[l], 16, false) + in.c[l]);
       }},
      {"v_dot2_u32_u16 clamp", C::bits,
       [=](I in, int l) { return sat_u32(dot_elements(in.a[l], in.b[l], 16, false) + in.c[l]); }},
  };
  slots.insert(slots.end(), more.begin(), more.end());
  for (unsigned bits : {8u, 4u})
    for (bool is_signed : {true, false})
      for (bool clamp : {false, true}) {
        const std::string name = std::string(bits == 8 ? "v_dot4_" : "v_dot8_") +
                                 (is_signed ? "i32_i" : "u32_u") + std::to_string(bits) +
                                 (clamp ? " clamp" : "");
        slots.push_back({name, C::bits, [=](I in, int l) {
                           const std::int64_t sum =
                               dot_elements(in.a[l], in.b[l], bits, is_signed) +
                               (is_signed ? s32(in.c[l]) : std::int64_t(in.c[l]));
                           if (!clamp) return std::uint32_t(sum);
                           return is_signed ? sat_i32(sum) : sat_u32(sum);
                         }});
      }
  const std::vector<OpsSlot> rest = {
      {"v_dot2c_i32_i16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(dot_elements(in.a[l], in.b[l], 16, true) + s32(in.c[l]));
       }},
      {"v_dot4c_i32_i8", C::bits,
       [=](I in, int l) {
         return std::uint32_t(dot_elements(in.a[l], in.b[l], 8, true) + s32(in.c[l]));
       }},
      {"v_dot8c_i32_i4", C::bits,
       [=](I in, int l) {
         return std::uint32_t(dot_elements(in.a[l], in.b[l], 4, true) + s32(in.c[l]));
       }},
      {"v_dot4c_i32_i8_e64 clamp", C::bits,
       [=](I in, int l) {
         return sat_i32(dot_elements(in.a[l], in.b[l], 8, true) + s32(in.c[l]));
       }},
      {"v_sad_u8", C::bits,
       [=](I in, int l) {
         return std::uint32_t(absolute_differences(in.a[l], in.b[l], 8, false) + in.c[l]);
       }},
      {"v_sad_u8 clamp", C::bits,
       [=](I in, int l) {
         return sat_u32(std::int64_t(absolute_differences(in.a[l], in.b[l], 8, false)) + in.c[l]);
       }},
      {"v_sad_hi_u8", C::bits,
       [=](I in, int l) {
         return std::uint32_t((absolute_differences(in.a[l], in.b[l], 8, false) << 16) + in.c[l]);
       }},
      {"v_sad_u16", C::bits,
       [=](I in, int l) {
         return std::uint32_t(absolute_differences(in.a[l], in.b[l], 16, false) + in.c[l]);
       }},
      {"v_sad_u16 clamp", C::bits,
       [=](I in, int l) {
         return sat_u32(std::int64_t(absolute_differences(in.a[l], in.b[l], 16, false)) + in.c[l]);
       }},
      {"v_msad_u8", C::bits,
       [=](I in, int l) {
         return std::uint32_t(absolute_differences(in.a[l], in.b[l], 8, true) + in.c[l]);
       }},
      {"v_cvt_pknorm_i16_f32", C::bits,
       [=](I in, int l) { return pk(snorm(f(in.f0[l])), snorm(f(in.f1[l]))); }},
      {"v_cvt_pknorm_u16_f32 -f1 |f0|", C::bits,
       [=](I in, int l) { return pk(unorm(-f(in.f1[l])), unorm(std::fabs(f(in.f0[l])))); }},
      {"v_cvt_pknorm_i16_f16 h0.h -h1", C::bits,
       [=](I in, int l) { return pk(snorm(h(hi16(in.h0[l]))), snorm(-h(in.h1[l]))); }},
      {"v_cvt_pknorm_u16_f16 |h0| h1.h", C::bits,
       [=](I in, int l) { return pk(unorm(std::fabs(h(in.h0[l]))), unorm(h(hi16(in.h1[l])))); }},
      {"v_cvt_norm_i16_f16", C::bits, [=](I in, int l) { return snorm(h(in.h0[l])); }},
      {"v_cvt_norm_u16_f16 -h0", C::bits, [=](I in, int l) { return unorm(-h(in.h0[l])); }},
      {"v_cvt_pk_u8_f32 f0 into c", C::bits,
       [=](I in, int l) {
         const unsigned shift = 8 * ((l >> 3) & 3);
         return (in.c[l] & ~(0xffu << shift)) | unorm8(f(in.f0[l])) << shift;
       }},
      {"v_cvt_pk_u8_f32 -f0 into c", C::bits,
       [=](I in, int l) {
         const unsigned shift = 8 * ((l >> 3) & 3);
         return (in.c[l] & ~(0xffu << shift)) | unorm8(-f(in.f0[l])) << shift;
       }},
      {"v_cubeid_f32 f0 f1 a", C::f32,
       [=](I in, int l) { return cube(in.f0[l], in.f1[l], in.a[l], 0); }},
      {"v_cubema_f32 f0 f1 a", C::f32,
       [=](I in, int l) { return cube(in.f0[l], in.f1[l], in.a[l], 1); }},
      {"v_cubesc_f32 f0 f1 a", C::f32,
       [=](I in, int l) { return cube(in.f0[l], in.f1[l], in.a[l], 2); }},
      {"v_cubetc_f32 f0 f1 a", C::f32,
       [=](I in, int l) { return cube(in.f0[l], in.f1[l], in.a[l], 3); }},
      {"v_cubeid_f32 f1 a f0", C::f32,
       [=](I in, int l) { return cube(in.f1[l], in.a[l], in.f0[l], 0); }},
      {"v_cubesc_f32 -f1 a f0", C::f32,
       [=](I in, int l) { return cube(in.f1[l] ^ 0x80000000u, in.a[l], in.f0[l], 2); }},
      {"v_cubetc_f32 a |f0| f1", C::f32,
       [=](I in, int l) { return cube(in.a[l], in.f0[l] & 0x7fffffffu, in.f1[l], 3); }},
      {"v_cubema_f32 a f1 f0", C::f32,
       [=](I in, int l) { return cube(in.a[l], in.f1[l], in.f0[l], 1); }},
      {"v_cvt_off_f32_i4", C::f32,
       [=](I in, int l) {
         const int nibble = int(in.a[l] & 15);
         return f32_bits(float(nibble < 8 ? nibble : nibble - 16) * 0.0625f);
       }},
      {"v_cvt_off_f32_i4 mul:2", C::f32,
       [=](I in, int l) {
         const int nibble = int(in.b[l] & 15);
         return f32_bits(float(nibble < 8 ? nibble : nibble - 16) * 0.125f);
       }},
      // Legacy multiply: 0 times anything (inf, NaN) is 0; then the add, each rounded to f32.
      {"v_mad_legacy_f32 f0 f1 a", C::f32,
       [=](I in, int l) {
         const float x = f(in.f0[l]), y = f(in.f1[l]);
         const float product = x == 0 || y == 0 ? 0.0f : float(double(x) * double(y));
         return f32_bits(float(double(product) + double(f(in.a[l]))));
       }},
  };
  slots.insert(slots.end(), rest.begin(), rest.end());
  struct Preop {
    const char* text;
    int segment;  // -1: a's low 5 bits
    bool negate;
  };
  for (Preop p :
       {Preop{"v_trig_preop_f64 x, a", -1, false}, Preop{"v_trig_preop_f64 x, 0", 0, false},
        Preop{"v_trig_preop_f64 -x, 1", 1, true}, Preop{"v_trig_preop_f64 x, 2", 2, false}})
    for (int word = 0; word < 2; ++word)
      slots.push_back(
          {std::string(p.text) + (word ? " (high)" : " (low)"), C::bits, [=](I in, int l) {
             std::uint64_t x = in.f0[l] | std::uint64_t(in.f1[l]) << 32;
             if (p.negate) x ^= 1ull << 63;
             const std::uint64_t r =
                 trig_preop_reference(x, p.segment < 0 ? in.a[l] & 31 : std::uint32_t(p.segment));
             return std::uint32_t(word ? r >> 32 : r);
           }});
  // op_sel on the 16-bit VOP3-only operations that were there.
  const std::vector<OpsSlot> op_sel = {
      {"v_add_i16 a.h b clamp", C::bits,
       [=](I in, int l) { return sat_i16(s16(hi16(in.a[l])) + s16(in.b[l])); }},
      {"v_sub_i16 a b.h", C::bits,
       [=](I in, int l) { return std::uint32_t(s16(in.a[l]) - s16(hi16(in.b[l]))) & 0xffff; }},
      {"v_mad_u16 a.h b c.h clamp", C::bits,
       [=](I in, int l) {
         return sat_u16(std::int64_t(hi16(in.a[l])) * lo16(in.b[l]) + hi16(in.c[l]));
       }},
      {"v_mad_i16 a b.h c.h", C::bits,
       [=](I in, int l) {
         return std::uint32_t(s16(in.a[l]) * s16(hi16(in.b[l])) + s16(hi16(in.c[l]))) & 0xffff;
       }},
      {"v_fma_f16 h0.h -h1.h h2", C::f16_low,
       [=](I in, int l) { return encode(h(hi16(in.h0[l])) * -h(hi16(in.h1[l])) + h(in.h2[l])); }},
      {"v_mad_f16 h0 h1 |h2.h|", C::f16_low,
       [=](I in, int l) {
         return encode(decode(encode(h(in.h0[l]) * h(in.h1[l]))) + std::fabs(h(hi16(in.h2[l]))));
       }},
  };
  slots.insert(slots.end(), op_sel.begin(), op_sel.end());
  slots.push_back({"v_cvt_pkaccum_u8_f32 f0 into c (the destination)", C::bits, [=](I in, int l) {
                     const unsigned shift = 8 * ((l >> 3) & 3);
                     return (in.c[l] & ~(0xffu << shift)) | unorm8(f(in.f0[l])) << shift;
                   }});
  // SDWA places a binary16 result with its output modifiers applied in the selected half.
  slots.push_back({"v_add_f16_sdwa h0.h + h1 clamp into WORD_1 (preserve)", C::bits,
                   [=](I in, int l) -> std::uint32_t {
                     const std::uint32_t r = encode(clamp01(h(hi16(in.h0[l])) + h(in.h1[l])));
                     return r << 16 | 0xbeefu;
                   }});
  slots.push_back({"v_frexp_mant_f16_sdwa h0 mul:2 into WORD_1 (pad)", C::bits,
                   [=](I in, int l) -> std::uint32_t {
                     const double x = h(in.h0[l]);
                     const double m =
                         !std::isfinite(x) || x == 0 ? x : std::ldexp(x, -(std::ilogb(x) + 1));
                     return encode(m * 2) << 16;
                   }});
  // And an f32 result's: the low 16 bits of the modified value in the selected word.
  slots.push_back({"v_add_f32_sdwa (f0 + f1) mul:2 into WORD_1 (preserve)", C::bits,
                   [=](I in, int l) -> std::uint32_t {
                     const float sum = float(double(f(in.f0[l])) + double(f(in.f1[l])));
                     return (f32_bits(sum * 2.0f) & 0xffff) << 16 | 0xbeefu;
                   }});
  slots.push_back({"v_mul_f32_sdwa (f0 * f1) mul:4 into WORD_0 (sign-extended)", C::bits,
                   [=](I in, int l) -> std::uint32_t {
                     const float product = float(double(f(in.f0[l])) * double(f(in.f1[l])));
                     const std::uint32_t low = f32_bits(product * 4.0f) & 0xffff;
                     return low | ((low & 0x8000) ? 0xffff0000u : 0u);
                   }});
  slots.push_back({"v_swap_b32 (a, b): the first register gets b", C::bits,
                   [=](I in, int l) -> std::uint32_t { return in.b[l]; }});
  slots.push_back({"v_swap_b32 (a, b): the second register gets a", C::bits,
                   [=](I in, int l) -> std::uint32_t { return in.a[l]; }});
  slots.push_back({"v_swap_b32 in the even lanes: b there, a elsewhere", C::bits,
                   [=](I in, int l) -> std::uint32_t { return l % 2 == 0 ? in.b[l] : in.a[l]; }});
  return slots;
}

bool ops_agree(std::uint32_t actual, std::uint32_t expected, Compare compare) {
  auto half = [](std::uint32_t x, std::uint32_t y, bool zeros) {
    if (is_nan16(y)) return is_nan16(x);
    if (zeros && (x & 0x7fff) == 0 && (y & 0x7fff) == 0) return true;
    return x == y;
  };
  switch (compare) {
    case Compare::bits:
      return actual == expected;
    case Compare::f16_low:
    case Compare::f16_low_zeros:
      return (actual >> 16) == (expected >> 16) &&
             half(actual & 0xffff, expected & 0xffff, compare == Compare::f16_low_zeros);
    case Compare::f16_pair:
      return half(actual & 0xffff, expected & 0xffff, false) &&
             half(actual >> 16, expected >> 16, false);
    case Compare::f32:
      return is_nan32(expected) ? is_nan32(actual) : actual == expected;
  }
  return false;
}

OpsInputs ops_inputs() {
  OpsInputs in;
  std::uint32_t state = 1703;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  // Halves and words at the integer extremes, small values (zero bytes for v_msad_u8) and noise.
  auto half = [&]() -> std::uint32_t {
    static const std::uint32_t special[] = {0, 1, 0x7fff, 0x8000, 0xffff, 0x00ff, 0xff00, 0x8001};
    const std::uint32_t r = next();
    switch (r % 4) {
      case 0:
        return special[(r >> 8) % 8];
      case 1:
        return (r >> 8) % 16;
      default:
        return r >> 16;
    }
  };
  auto word = [&]() -> std::uint32_t {
    static const std::uint32_t special[] = {0xffffffffu, 0x7fffffffu, 0x80000000u,
                                            0xfffffff0u, 0x7ffffff0u, 0x80000010u};
    const std::uint32_t r = next();
    if (r % 3 == 0) return special[(r >> 8) % 6];
    return half() | half() << 16;
  };
  // f32 values for the conversions: halfway cases, out of the i32 and binary16 ranges, NaN, inf.
  auto f32_value = [&](int l) -> std::uint32_t {
    static const float special[] = {0.5f,     -0.5f,  1.5f,           -1.5f,    2.5f,
                                    -2.5f,    3e9f,   -3e9f,          70000.0f, -65519.0f,
                                    65520.0f, 1e-30f, -2147483648.0f, INFINITY, -INFINITY,
                                    NAN,      0.0f,   -0.0f,          1e-7f,    0.49999997f};
    if (l % 3 == 0) return f32_bits(special[(l / 3) % 20]);
    if (l % 3 == 1 && l % 4 == 1) return f32_bits(float(next() % 512) / 2.0f);  // u8 ties
    const float scales[] = {1.0f, 1e-5f, 1e-7f, 70000.0f, 0.33f};
    return f32_bits((int(next() % 2000) - 1000) * scales[l % 5] / 7.0f);
  };
  // The dot products' f32 addend: 0 or at least 2^-24 in magnitude (see dot2_f16), NaN, inf.
  auto addend = [&](int l) -> std::uint32_t {
    if (l % 16 == 1) return 0x7f800000u;
    if (l % 16 == 9) return 0x7fc00000u;
    if (l % 16 == 5) return 0;
    const std::uint32_t r = next();
    return (r & 0x80000000u) | std::uint32_t(127 - 24 + next() % 60) << 23 | (next() & 0x7fffff);
  };
  for (int l = 0; l < 64; ++l) {
    in.a[l] = word();
    in.b[l] = word();
    in.c[l] = word();
    in.h0[l] = random_half(next()) << 16 | random_half(next());
    in.h1[l] = random_half(next()) << 16 | random_half(next());
    in.h2[l] = random_half(next()) << 16 | random_half(next());
    in.f0[l] = f32_value(l);
    in.f1[l] = addend(l);
    if (l % 8 == 6) in.h1[l] = in.h0[l];  // equal sources for min / max / med
    if (l % 16 == 13) {
      // p0 + p1 on an f32 tie (1 + 2^-10 + 2^-24) plus 0 (to even) or +-2^-24 (breaks it).
      in.h0[l] = 0x0c003c00u;  // {1.0, 2^-12}
      in.h1[l] = 0x0c003c01u;  // {1 + 2^-10, 2^-12}
      in.f1[l] = l % 32 == 13 ? 0u : f32_bits(l % 64 < 32 ? 0x1p-24f : -0x1p-24f);
    }
  }
  // Ties between the magnitudes for v_cube*: |f1| = |f0| > |a| = 0, |a| = |f0|.
  for (int l : {6, 54}) {
    in.f1[l] = in.f0[l] ^ 0x80000000u;
    in.a[l] = 0;
  }
  in.a[30] = in.f0[30] ^ 0x80000000u;
  // Exponents >= 1968 for v_trig_preop_f64 (F1 the high dword; an f32 near 1e36).
  // Exponents 1972, 1968 (the first scaled) and 1967; then segment 21 (shift 1113) with
  // exponents 1090, 1083 and 1084: shifts 1126, 1119 and 1120, which underflow; segment 4 with
  // exponents 1984 and 1985 (scaled by 2^128): shift 1119, the table's last, and 1120, past it.
  in.f1[3] = 0x7b4f3000u;
  in.f1[19] = 0x7b000000u;
  in.f1[35] = 0x7af12345u;
  const std::array<std::uint32_t, 3> boundary[] = {{51, 0x44200000u, 21},
                                                   {59, 0x43b00000u, 21},
                                                   {52, 0x43c00000u, 21},
                                                   {60, 0x7c000000u, 4},
                                                   {62, 0x7c100000u, 4}};
  for (auto [l, high, segment] : boundary) {
    in.f1[l] = high;
    in.a[l] = (in.a[l] & ~31u) | segment;
  }
  // f64 classes for v_cmpx_class_f64 (F0 the low, F1 the high dword).
  const std::uint32_t highs[] = {0x7ff00000u, 0xfff00000u, 0x7ff80000u,
                                 0x7ff00000u, 0x00000000u, 0x80000000u};
  const std::uint32_t lows[] = {0u, 0u, 0u, 1u, 5u, 0u};
  for (int k = 0; k < 6; ++k) {
    in.f1[40 + k] = highs[k];
    in.f0[40 + k] = lows[k];
  }
  return in;
}

TEST(CompilerOps, EachInstructionMatchesItsIsaDefinition) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/compiler_ops_gfx90a.co");
  const auto slots = ops_slots();
  const OpsInputs in = ops_inputs();
  const std::uint32_t* arrays[] = {in.a, in.b, in.c, in.h0, in.h1, in.h2, in.f0, in.f1};
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::uint64_t> pointers;
  for (const std::uint32_t* array : arrays) {
    buffers.push_back(std::make_unique<Buffer>(object.memory(), 256, "in"));
    std::memcpy(buffers.back()->as<void>(), array, 256);
    pointers.push_back(buffers.back()->address());
  }
  Buffer out(object.memory(), 256 * slots.size(), "out");
  pointers.push_back(out.address());
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("compiler_ops", pointers, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (std::size_t k = 0; k < slots.size(); ++k)
    for (int l = 0; l < 64; ++l) {
      const std::uint32_t actual = out.as<std::uint32_t>()[k * 64 + l];
      const std::uint32_t expected = slots[k].expected(in, l);
      EXPECT_TRUE(ops_agree(actual, expected, slots[k].compare))
          << "slot " << k << " (" << slots[k].text << ") lane " << l << std::hex << ": expected 0x"
          << expected << ", emulated 0x" << actual << "; a=0x" << in.a[l] << " b=0x" << in.b[l]
          << " c=0x" << in.c[l] << " h0=0x" << in.h0[l] << " h1=0x" << in.h1[l] << " h2=0x"
          << in.h2[l] << " f0=0x" << in.f0[l] << " f1=0x" << in.f1[l];
    }
}

}  // namespace
}  // namespace wavekit::emu::test
