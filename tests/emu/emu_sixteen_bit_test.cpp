// 16-bit integer VALU instructions (asm/sixteen_bit.s): arithmetic in VOP2, VOP3 (with clamp)
// and SDWA forms, and every integer compare condition as VOPC and VOP3. Each expected value is
// computed here on the CPU from the ISA's definition: the op works on the sources' low halves
// and GFX9 zeroes the destination's high half (SDWA's dst_sel places the result instead).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

struct Inputs {
  std::uint32_t a[64], b[64], c[64];
};

using Expectation = std::function<std::uint32_t(const Inputs&, int lane)>;

std::uint32_t lo(std::uint32_t value) { return value & 0xffff; }
std::int32_t sx(std::uint32_t value) { return std::int16_t(value & 0xffff); }
std::uint32_t u16_result(std::int64_t value) { return std::uint32_t(value) & 0xffff; }
std::uint32_t clamp_unsigned(std::int64_t value) {
  return u16_result(std::clamp<std::int64_t>(value, 0, 0xffff));
}
std::uint32_t clamp_signed(std::int64_t value) {
  return u16_result(std::clamp<std::int64_t>(value, -32768, 32767));
}

std::vector<std::pair<std::string, Expectation>> expectations() {
  std::vector<std::pair<std::string, Expectation>> all = {
      {"v_add_u16", [](const Inputs& in, int l) { return u16_result(lo(in.a[l]) + lo(in.b[l])); }},
      {"v_add_u16_e64 clamp",
       [](const Inputs& in, int l) { return clamp_unsigned(lo(in.a[l]) + lo(in.b[l])); }},
      {"v_sub_u16",
       [](const Inputs& in, int l) { return u16_result(std::int64_t(lo(in.a[l])) - lo(in.b[l])); }},
      {"v_sub_u16_e64 clamp",
       [](const Inputs& in, int l) {
         return clamp_unsigned(std::int64_t(lo(in.a[l])) - lo(in.b[l]));
       }},
      {"v_subrev_u16",
       [](const Inputs& in, int l) { return u16_result(std::int64_t(lo(in.b[l])) - lo(in.a[l])); }},
      {"v_subrev_u16_e64 clamp",
       [](const Inputs& in, int l) {
         return clamp_unsigned(std::int64_t(lo(in.b[l])) - lo(in.a[l]));
       }},
      {"v_mul_lo_u16",
       [](const Inputs& in, int l) { return u16_result(std::int64_t(lo(in.a[l])) * lo(in.b[l])); }},
      {"v_mul_lo_u16_e64",
       [](const Inputs& in, int l) { return u16_result(std::int64_t(lo(in.b[l])) * lo(in.a[l])); }},
      {"v_lshlrev_b16",
       [](const Inputs& in, int l) { return u16_result(lo(in.a[l]) << (in.b[l] & 15)); }},
      {"v_lshrrev_b16", [](const Inputs& in, int l) { return lo(in.a[l]) >> (in.b[l] & 15); }},
      {"v_ashrrev_i16",
       [](const Inputs& in, int l) { return u16_result(sx(in.a[l]) >> (in.b[l] & 15)); }},
      {"v_ashrrev_i16_e64",
       [](const Inputs& in, int l) { return u16_result(sx(in.a[l]) >> (in.b[l] & 15)); }},
      {"v_max_u16", [](const Inputs& in, int l) { return std::max(lo(in.a[l]), lo(in.b[l])); }},
      {"v_min_u16", [](const Inputs& in, int l) { return std::min(lo(in.a[l]), lo(in.b[l])); }},
      {"v_max_i16",
       [](const Inputs& in, int l) { return u16_result(std::max(sx(in.a[l]), sx(in.b[l]))); }},
      {"v_min_i16_e64",
       [](const Inputs& in, int l) { return u16_result(std::min(sx(in.a[l]), sx(in.b[l]))); }},
      {"v_add_i16", [](const Inputs& in, int l) { return u16_result(sx(in.a[l]) + sx(in.b[l])); }},
      {"v_add_i16 clamp",
       [](const Inputs& in, int l) { return clamp_signed(sx(in.a[l]) + sx(in.b[l])); }},
      {"v_sub_i16 clamp",
       [](const Inputs& in, int l) { return clamp_signed(sx(in.a[l]) - sx(in.b[l])); }},
      {"v_mad_legacy_u16",
       [](const Inputs& in, int l) {
         return u16_result(std::int64_t(lo(in.a[l])) * lo(in.b[l]) + lo(in.c[l]));
       }},
      {"v_mad_legacy_i16 clamp",
       [](const Inputs& in, int l) {
         return clamp_signed(std::int64_t(sx(in.a[l])) * sx(in.b[l]) + sx(in.c[l]));
       }},
      {"v_mad_u16 clamp",
       [](const Inputs& in, int l) {
         return clamp_unsigned(std::int64_t(lo(in.a[l])) * lo(in.b[l]) + lo(in.c[l]));
       }},
      {"v_mad_i16",
       [](const Inputs& in, int l) {
         return u16_result(std::int64_t(sx(in.a[l])) * sx(in.b[l]) + sx(in.c[l]));
       }},
      {"v_add_u16_sdwa WORD_1 <- a.WORD_1 + b.WORD_0, low half preserved",
       [](const Inputs& in, int l) {
         return (u16_result((in.a[l] >> 16) + lo(in.b[l])) << 16) | 0xbeefu;
       }},
      {"v_add_u16 -1", [](const Inputs& in, int l) { return u16_result(lo(in.a[l]) + 0xffff); }},
      {"v_lshlrev_b16 3", [](const Inputs& in, int l) { return u16_result(lo(in.a[l]) << 3); }},
  };
  struct Condition {
    const char* name;
    std::function<bool(std::int64_t, std::int64_t)> holds;
  };
  const Condition conditions[] = {
      {"f", [](std::int64_t, std::int64_t) { return false; }},
      {"lt", [](std::int64_t x, std::int64_t y) { return x < y; }},
      {"eq", [](std::int64_t x, std::int64_t y) { return x == y; }},
      {"le", [](std::int64_t x, std::int64_t y) { return x <= y; }},
      {"gt", [](std::int64_t x, std::int64_t y) { return x > y; }},
      {"ne", [](std::int64_t x, std::int64_t y) { return x != y; }},
      {"ge", [](std::int64_t x, std::int64_t y) { return x >= y; }},
      {"t", [](std::int64_t, std::int64_t) { return true; }},
  };
  for (bool is_signed : {false, true}) {
    auto value = [is_signed](std::uint32_t raw) -> std::int64_t {
      return is_signed ? std::int64_t(sx(raw)) : std::int64_t(lo(raw));
    };
    for (const Condition& condition : conditions) {
      std::string name = std::string("v_cmp_") + condition.name + (is_signed ? "_i16" : "_u16");
      auto holds = condition.holds;
      all.emplace_back(name, [=](const Inputs& in, int l) {
        return holds(value(in.a[l]), value(in.b[l])) ? 1u : 0u;
      });
      all.emplace_back(name + "_e64 (swapped)", [=](const Inputs& in, int l) {
        return holds(value(in.b[l]), value(in.a[l])) ? 1u : 0u;
      });
    }
  }
  all.emplace_back("v_cmp_eq_u16_sdwa a.WORD_1 == b.WORD_0", [](const Inputs& in, int l) {
    return (in.a[l] >> 16) == lo(in.b[l]) ? 1u : 0u;
  });
  all.emplace_back("v_cmpx_gt_i16",
                   [](const Inputs& in, int l) { return sx(in.a[l]) > sx(in.b[l]) ? 1u : 0u; });
  return all;
}

TEST(SixteenBit, EachInstructionMatchesItsIsaDefinition) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/sixteen_bit_gfx90a.co");
  const auto all = expectations();
  Buffer a(object.memory(), 256, "a"), b(object.memory(), 256, "b"), c(object.memory(), 256, "c"),
      out(object.memory(), 256 * all.size(), "out");
  Inputs inputs;
  std::uint32_t state = 2024;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int l = 0; l < 64; ++l) {
    inputs.a[l] = next();
    inputs.b[l] = next();
    inputs.c[l] = next();
    // Equal low halves under different high halves (compares must ignore the high half), small
    // values and extremes (clamping, signed/unsigned order), and a.hi == b.lo for the SDWA compare.
    switch (l % 6) {
      case 0:
        inputs.b[l] = (inputs.b[l] & 0xffff0000u) | lo(inputs.a[l]);
        break;
      case 1:
        inputs.a[l] = (inputs.a[l] & 0xffff0000u) | (next() % 40);
        inputs.b[l] = (inputs.b[l] & 0xffff0000u) | (next() % 40);
        break;
      case 2:
        inputs.a[l] = (inputs.a[l] & 0xffff0000u) | 0x7ff0u;
        inputs.b[l] = (inputs.b[l] & 0xffff0000u) | 0x8010u;
        break;
      case 3:
        inputs.b[l] = (inputs.b[l] & 0xffff0000u) | (inputs.a[l] >> 16);
        break;
      default:
        break;
    }
  }
  std::memcpy(a.as<void>(), inputs.a, 256);
  std::memcpy(b.as<void>(), inputs.b, 256);
  std::memcpy(c.as<void>(), inputs.c, 256);
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result =
      object.run("sixteen_bit", {a.address(), b.address(), c.address(), out.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  for (std::size_t k = 0; k < all.size(); ++k) {
    for (int l = 0; l < 64; ++l) {
      std::uint32_t actual = out.as<std::uint32_t>()[k * 64 + l];
      std::uint32_t expected = all[k].second(inputs, l);
      ASSERT_EQ(actual, expected) << "slot " << k << " (" << all[k].first << ") lane " << l
                                  << " a=" << std::hex << inputs.a[l] << " b=" << inputs.b[l]
                                  << " c=" << inputs.c[l];
    }
  }
}

TEST(SixteenBit, OpSelOfAHighHalfIsRefusedNotExecuted) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/sixteen_bit_gfx90a.co");
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run("sixteen_bit_op_sel", {}, wave, wave);
  ASSERT_EQ(result.error, ErrorKind::unimplemented_instruction) << result.message;
  EXPECT_NE(result.message.find("v_add_i16"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("op_sel"), std::string::npos) << result.message;
}

}  // namespace
}  // namespace wavekit::emu::test
