// Scalar (SMEM) atomics: asm/scalar_atomics.s runs each s_atomic_* form once on one wave; the
// expected memory and returned registers here come from the ISA's definition of each operation,
// computed on the CPU without the emulator's code.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "emu_test_support.h"

namespace wavekit::emu::test {
namespace {

struct Case {
  std::string op;  // swap, cmpswap, add, ... (the mnemonic without s_atomic_ and _x2)
  bool x2 = false;
  bool glc = true;
  std::uint64_t memory = 0;  // the 64-bit word at mem + 8k before the atomic
  std::uint32_t sdata[4] = {};
};

// The value memory holds after `op`; `bits` wide (32: the low dword of the word).
std::uint64_t oracle(const std::string& op, unsigned bits, std::uint64_t old, std::uint64_t data,
                     std::uint64_t compare) {
  const std::uint64_t mask = bits == 64 ? ~0ull : 0xffffffffull;
  old &= mask;
  data &= mask;
  compare &= mask;
  auto sign = [&](std::uint64_t v) -> std::int64_t {
    return bits == 64 ? std::int64_t(v) : std::int64_t(std::int32_t(std::uint32_t(v)));
  };
  if (op == "swap") return data;
  if (op == "cmpswap") return old == compare ? data : old;
  if (op == "add") return (old + data) & mask;
  if (op == "sub") return (old - data) & mask;
  if (op == "smin") return sign(data) < sign(old) ? data : old;
  if (op == "umin") return std::min(old, data);
  if (op == "smax") return sign(data) > sign(old) ? data : old;
  if (op == "umax") return std::max(old, data);
  if (op == "and") return old & data;
  if (op == "or") return old | data;
  if (op == "xor") return old ^ data;
  if (op == "inc") return old >= data ? 0 : old + 1;
  if (op == "dec") return old == 0 || old > data ? data : old - 1;
  ADD_FAILURE() << "no oracle for " << op;
  return 0;
}

std::vector<Case> cases() {
  // Operands picked to cross the 32-bit boundary (carry, borrow), to differ between signed and
  // unsigned order, and to take both arms of cmpswap, inc and dec.
  auto c = [](std::string op, bool x2, std::uint64_t memory, std::uint32_t d0, std::uint32_t d1,
              std::uint32_t d2 = 0x5a5a5a5a, std::uint32_t d3 = 0xa5a5a5a5, bool glc = true) {
    Case k;
    k.op = std::move(op);
    k.x2 = x2;
    k.glc = glc;
    k.memory = memory;
    k.sdata[0] = d0;
    k.sdata[1] = d1;
    k.sdata[2] = d2;
    k.sdata[3] = d3;
    return k;
  };
  return {
      c("swap", false, 0x1111111122222222, 0xdeadbeef, 0x33333333),
      c("swap", true, 0x1111111122222222, 0xdeadbeef, 0xfeedface),
      c("cmpswap", false, 0x7777777712345678, 0xabcdef01, 0x12345678),  // src, cmp: equal
      c("cmpswap", true, 0x0000000100000002, 0x11111111, 0x22222222, 0x00000002, 0x00000001),
      c("add", false, 0x00000005fffffff0, 0x20, 0x99999999),  // wraps in 32 bits, no carry out
      c("add", true, 0x00000001ffffffff, 0x1, 0x0),           // carry into the high dword
      c("sub", false, 0x0000000900000001, 0x2, 0x0),
      c("sub", true, 0x0000000100000000, 0x1, 0x0),  // borrow from the high dword
      c("smin", false, 0x0000000000000005, 0xfffffffe, 0x0),
      c("smin", true, 0x0000000000000005, 0xfffffffe, 0xffffffff),
      c("umin", false, 0x0000000000000005, 0xfffffffe, 0x0),
      c("umin", true, 0x0000000200000000, 0xffffffff, 0x00000001),
      c("smax", false, 0x00000000fffffff0, 0x3, 0x0),
      c("smax", true, 0xfffffffffffffff0, 0x3, 0x0),
      c("umax", false, 0x00000000fffffff0, 0x3, 0x0),
      c("umax", true, 0x0000000100000000, 0xffffffff, 0x0),
      c("and", false, 0xffffffff0f0f0f0f, 0x00ff00ff, 0x0),
      c("and", true, 0xff00ff000f0f0f0f, 0x00ff00ff, 0xf0f0f0f0),
      c("or", false, 0x00000000f0000000, 0x0000000f, 0x0),
      c("or", true, 0x00000000f0000000, 0x0000000f, 0x80000000),
      c("xor", false, 0x12345678aaaaaaaa, 0xffffffff, 0x0),
      c("xor", true, 0x12345678aaaaaaaa, 0xffffffff, 0xffff0000),
      c("inc", false, 0x0000000000000009, 0x9, 0x0),                      // old >= data: wraps to 0
      c("inc", true, 0x00000000ffffffff, 0x0, 0x1),                       // 64-bit: carries
      c("dec", false, 0x0000000000000000, 0x7, 0x0),                      // old == 0: data
      c("dec", true, 0x0000000100000000, 0xffffffff, 0x1),                // borrows
      c("add", true, 0x00000000ffffffff, 0x1, 0x0, 0, 0, false),          // no glc
      c("cmpswap", true, 0x0000000000000003, 0x9, 0x0, 0x4, 0x0, false),  // no glc, not equal
      c("umax", false, 0x0000000000000003, 0x9, 0x0, 0, 0, false),        // no glc
      c("add", true, 0x00000000fffffffe, 0x3, 0x0),                       // soffset form
  };
}

TEST(ScalarAtomics, EachOperationMatchesItsIsaDefinition) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/scalar_atomics_gfx90a.co");
  const std::vector<Case> all = cases();
  Buffer mem(object.memory(), 512, "mem"), ops(object.memory(), 16 * all.size(), "ops"),
      ret(object.memory(), 16 * all.size(), "ret"), misc(object.memory(), 16, "misc");
  for (std::size_t k = 0; k < all.size(); ++k) {
    mem.as<std::uint64_t>()[k] = all[k].memory;
    std::memcpy(ops.as<std::uint32_t>() + 4 * k, all[k].sdata, 16);
  }
  const std::uint64_t misc_word = 0x00000001fffffff0;  // at mem + 8*30
  const std::uint64_t last = 0x00000003fffffff0;       // at mem + 0xf8, the resource's last
  const std::uint64_t beyond = 0x0123456789abcdef;     // at mem + 0x100, outside the resource
  mem.as<std::uint64_t>()[30] = misc_word;
  mem.as<std::uint64_t>()[31] = last;
  mem.as<std::uint64_t>()[32] = beyond;
  const std::uint32_t wave[3] = {64, 1, 1};
  auto result = object.run(
      "scalar_atomics", {mem.address(), ops.address(), ret.address(), misc.address()}, wave, wave);
  ASSERT_TRUE(result.ok()) << result.message;

  for (std::size_t k = 0; k < all.size(); ++k) {
    const Case& c = all[k];
    const unsigned bits = c.x2 ? 64 : 32;
    const unsigned width = c.x2 ? 2 : 1;
    const std::uint32_t* s = c.sdata;
    const std::uint64_t data = c.x2 ? s[0] | std::uint64_t(s[1]) << 32 : s[0];
    const std::uint64_t compare = c.x2 ? s[2] | std::uint64_t(s[3]) << 32 : s[1];
    std::uint64_t expected = oracle(c.op, bits, c.memory, data, compare);
    if (!c.x2) expected |= c.memory & 0xffffffff00000000ull;  // the high dword is untouched
    const std::string what = "case " + std::to_string(k) + " (s_atomic_" + c.op +
                             (c.x2 ? "_x2" : "") + (c.glc ? " glc" : "") + ")";
    EXPECT_EQ(mem.as<std::uint64_t>()[k], expected) << what << ": memory";
    std::uint32_t registers[4];
    std::memcpy(registers, s, 16);
    if (c.glc) {
      registers[0] = std::uint32_t(c.memory);
      if (width == 2) registers[1] = std::uint32_t(c.memory >> 32);
    }
    for (int d = 0; d < 4; ++d)
      EXPECT_EQ(ret.as<std::uint32_t>()[4 * k + d], registers[d]) << what << ": SDATA dword " << d;
  }

  EXPECT_EQ(misc.as<std::uint32_t>()[0], 1u) << "SCC set before an atomic";
  EXPECT_EQ(misc.as<std::uint32_t>()[1], 0u) << "SCC clear before an atomic";
  EXPECT_EQ(mem.as<std::uint64_t>()[30], misc_word + 3 + 4);  // 64-bit add of 3, 32-bit add of 4
  EXPECT_EQ(misc.as<std::uint32_t>()[2], std::uint32_t(last)) << "s_buffer_atomic_add glc";
  EXPECT_EQ(mem.as<std::uint64_t>()[31], last + 5) << "s_buffer_atomic_add in range";
  EXPECT_EQ(misc.as<std::uint32_t>()[3], 0u) << "s_buffer_atomic_add out of range returns 0";
  EXPECT_EQ(mem.as<std::uint64_t>()[32], beyond) << "s_buffer_atomic_add out of range";
}

TEST(ScalarAtomics, ContendedAddsFromEveryWaveAllLand) {
  LoadedObject object(WAVEKIT_EMU_TEST_OBJECTS "/scalar_atomics_gfx90a.co");
  constexpr std::uint32_t kWaves = 512;
  Buffer counter(object.memory(), 16, "counter"), tickets(object.memory(), 4 * kWaves, "tickets");
  const std::uint32_t grid[3] = {64 * kWaves, 1, 1}, block[3] = {64, 1, 1};
  auto result = object.run("contended", {counter.address(), tickets.address()}, grid, block);
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(counter.as<std::uint64_t>()[0], kWaves);
  EXPECT_EQ(counter.as<std::uint64_t>()[1], kWaves);  // the 32-bit ticket counter, high dword 0
  std::vector<std::uint32_t> taken(tickets.as<std::uint32_t>(),
                                   tickets.as<std::uint32_t>() + kWaves);
  std::sort(taken.begin(), taken.end());
  for (std::uint32_t i = 0; i < kWaves; ++i)
    ASSERT_EQ(taken[i], i) << "each wave takes a distinct ticket";
}

}  // namespace
}  // namespace wavekit::emu::test
