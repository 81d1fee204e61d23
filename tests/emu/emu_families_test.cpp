// Directed instruction-family tests: asm/families.s runs one instruction (or a short idiom) per
// result slot on one wave; each expected value here is computed on the CPU from the ISA's
// definition of the instruction, independently of the emulator's code.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

struct Inputs {
  std::uint32_t a[64], b[64];
  float fa[64], fb[64];
};

using Expectation = std::function<std::uint32_t(const Inputs&, int lane)>;

std::uint32_t f(float value) { return std::bit_cast<std::uint32_t>(value); }

const std::vector<std::pair<const char*, Expectation>>& expectations() {
  static const std::vector<std::pair<const char*, Expectation>> all = {
      {"v_add_u32", [](const Inputs& in, int l) { return in.a[l] + in.b[l]; }},
      {"v_sub_u32", [](const Inputs& in, int l) { return in.a[l] - in.b[l]; }},
      {"v_mul_lo_u32", [](const Inputs& in, int l) { return in.a[l] * in.b[l]; }},
      {"v_mul_hi_u32",
       [](const Inputs& in, int l) {
         return std::uint32_t((std::uint64_t(in.a[l]) * in.b[l]) >> 32);
       }},
      {"v_lshlrev_b32", [](const Inputs& in, int l) { return in.a[l] << (in.b[l] & 31); }},
      {"v_ashrrev_i32",
       [](const Inputs& in, int l) {
         return std::uint32_t(std::int32_t(in.a[l]) >> (in.b[l] & 31));
       }},
      {"v_bfe_u32", [](const Inputs& in, int l) { return (in.a[l] >> 5) & 0x7f; }},
      {"v_alignbit_b32",
       [](const Inputs& in, int l) {
         return std::uint32_t(((std::uint64_t(in.a[l]) << 32) | in.b[l]) >> 7);
       }},
      {"v_add_f32", [](const Inputs& in, int l) { return f(in.fa[l] + in.fb[l]); }},
      {"v_fma_f32 with neg",
       [](const Inputs& in, int l) { return f(std::fma(in.fa[l], in.fb[l], -in.fa[l])); }},
      {"v_max_f32 with abs",
       [](const Inputs& in, int l) { return f(std::fmax(std::fabs(in.fa[l]), in.fb[l])); }},
      {"v_cvt_f32_i32", [](const Inputs& in, int l) { return f(float(std::int32_t(in.a[l]))); }},
      {"v_cvt_i32_f32",
       [](const Inputs& in, int l) { return std::uint32_t(std::int32_t(std::trunc(in.fa[l]))); }},
      {"v_cmp_gt_u32 + v_cndmask_b32",
       [](const Inputs& in, int l) { return in.a[l] > in.b[l] ? 7u : 3u; }},
      {"v_mov_b32_dpp row_shr:1 bound_ctrl",
       [](const Inputs& in, int l) { return l % 16 == 0 ? 0u : in.a[l - 1]; }},
      {"v_add_u32_sdwa",
       [](const Inputs& in, int l) { return ((in.a[l] & 0xff) + (in.b[l] & 0xffff)) << 16; }},
      {"v_readlane_b32 + SALU",
       [](const Inputs& in, int) { return ((in.a[5] * in.b[9]) >> 3) ^ in.b[9]; }},
      {"ds_write_b32 / ds_read_b32 offset",
       [](const Inputs& in, int l) { return l == 63 ? 0u : in.a[l + 1]; }},
      {"ds_add_u32 from every lane", [](const Inputs&, int) { return 64u * 3u; }},
      {"v_mad_u64_u32 low",
       [](const Inputs& in, int l) { return std::uint32_t(std::uint64_t(in.a[l]) * in.b[l]); }},
      {"v_mad_u64_u32 high",
       [](const Inputs& in, int l) {
         return std::uint32_t((std::uint64_t(in.a[l]) * in.b[l]) >> 32);
       }},
      {"EXEC mask", [](const Inputs& in, int l) { return l % 2 ? in.a[l] : in.a[l] + in.b[l]; }},
      {"s_and_saveexec + s_cbranch_execz",
       [](const Inputs& in, int l) { return in.a[l] < in.b[l] ? 1u : 2u; }},
      {"global_atomic_add (memory)", [](const Inputs& in, int l) { return 2 * in.b[l]; }},
      {"global_atomic_add glc (returned)", [](const Inputs& in, int l) { return in.b[l]; }},
      {"v_add_f32 mul:2", [](const Inputs& in, int l) { return f((in.fa[l] + in.fb[l]) * 2); }},
      {"v_mul_f32 div:2", [](const Inputs& in, int l) { return f((in.fa[l] * in.fb[l]) * 0.5f); }},
      {"v_add_f32 clamp",
       [](const Inputs& in, int l) { return f(std::clamp(in.fa[l] + in.fb[l], 0.0f, 1.0f)); }},
      {"v_add_f64 mul:4",
       [](const Inputs& in, int l) { return f(float((double(in.fa[l]) * 2) * 4)); }},
      {"v_mul_f64 clamp",
       [](const Inputs& in, int l) {
         return f(float(std::clamp(double(in.fa[l]) * in.fa[l], 0.0, 1.0)));
       }},
      // v_cndmask_b32 selects src1 where the condition lane is set (fa > fb), src0 elsewhere;
      // neg flips the selected value's sign bit, abs clears it.
      {"v_cndmask_b32_e64 with neg",
       [](const Inputs& in, int l) { return f(in.fa[l] > in.fb[l] ? -in.fb[l] : in.fa[l]); }},
      {"v_cndmask_b32_e64 with abs",
       [](const Inputs& in, int l) {
         return f(in.fa[l] > in.fb[l] ? in.fb[l] : std::fabs(in.fa[l]));
       }},
      {"v_cndmask_b32_e64 with neg and abs",
       [](const Inputs& in, int l) {
         return f(in.fa[l] > in.fb[l] ? -std::fabs(in.fb[l]) : -std::fabs(in.fa[l]));
       }},
  };
  return all;
}

TEST(Families, EachInstructionMatchesItsIsaDefinition) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/families_gfx90a.co");
  Buffer a(object.memory(), 256, "a"), b(object.memory(), 256, "b"), fa(object.memory(), 256, "fa"),
      fb(object.memory(), 256, "fb"), out(object.memory(), 256 * 40, "out");
  Inputs inputs;
  std::uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int l = 0; l < 64; ++l) {
    inputs.a[l] = next();
    inputs.b[l] = next() % 3 == 0 ? next() % 40 : next();  // small values exercise shifts
    inputs.fa[l] = float(std::int32_t(next() % 2001) - 1000) / 8.0f;
    inputs.fb[l] = float(std::int32_t(next() % 2001) - 1000) / 16.0f;
  }
  std::memcpy(a.as<void>(), inputs.a, 256);
  std::memcpy(b.as<void>(), inputs.b, 256);
  std::memcpy(fa.as<void>(), inputs.fa, 256);
  std::memcpy(fb.as<void>(), inputs.fb, 256);
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result =
      object.run("families", {a.address(), b.address(), fa.address(), fb.address(), out.address()},
                 wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;
  const auto& all = expectations();
  for (std::size_t k = 0; k < all.size(); ++k) {
    for (int l = 0; l < 64; ++l) {
      std::uint32_t actual = out.as<std::uint32_t>()[k * 64 + l];
      std::uint32_t expected = all[k].second(inputs, l);
      ASSERT_EQ(actual, expected) << "slot " << k << " (" << all[k].first << ") lane " << l;
    }
  }
}

}  // namespace
}  // namespace wavekit::emu::test
