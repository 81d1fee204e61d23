// Bad input never takes the host down: random instruction words, run as a kernel, end in a
// reported error (or complete) -- every access they make is checked, every jump is fetched
// through the code cache, and endless loops are caught by the no-progress detector. (This test
// found the byte patterns that crash LLVM 22's AMDGPU disassembler, now refused by isa::Decoder.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "wavekit/emu/emu.h"

namespace wavekit::emu {
namespace {

TEST(Robustness, RandomCodeIsReportedNotFatal) {
  std::mt19937 random(2024);
  const std::uint64_t kCodeOffset = 256, kWords = 48;
  const int kPrograms = 3000;
  // One "object": a 64-byte kernel descriptor at 0, code at 256.
  auto* image = static_cast<std::uint8_t*>(std::aligned_alloc(256, 1024));
  auto* data = static_cast<std::uint32_t*>(std::aligned_alloc(256, 4096));
  std::uint64_t kernarg[2] = {reinterpret_cast<std::uint64_t>(data), 0};
  MemoryMap memory;
  memory.add(data, 4096, MemoryMap::kReadWrite, "data");
  memory.add(kernarg, sizeof kernarg, MemoryMap::kRead, "kernarg");
  int reported = 0, completed = 0;
  std::map<ErrorKind, int> kinds;
  for (int program = 0; program < kPrograms; ++program) {
    std::memset(image, 0, 1024);
    std::int64_t entry = kCodeOffset;
    std::memcpy(image + 16, &entry, 8);
    std::uint32_t rsrc2 = (2u << 1) | (1u << 7);  // 2 user SGPRs (kernarg ptr), workgroup id x
    std::memcpy(image + 52, &rsrc2, 4);
    std::uint16_t properties = 1u << 3;  // kernarg segment pointer
    std::memcpy(image + 56, &properties, 2);
    auto* code = reinterpret_cast<std::uint32_t*>(image + kCodeOffset);
    // Top bytes of the GFX9 encodings (VOP2/VOPC/VOP1, SALU, SOPP, SMEM, VOP3, VOP3P, DS,
    // FLAT, MUBUF) so that most words decode and the semantics run on random operands.
    static const std::uint8_t kPrefixes[] = {0x02, 0x26, 0x34, 0x68, 0x7c, 0x7e, 0x80, 0x86, 0x8e,
                                             0xbe, 0xbf, 0xc0, 0xd1, 0xd2, 0xd3, 0xd8, 0xdc, 0xe0};
    for (std::uint64_t i = 0; i < kWords; ++i) {
      code[i] = random();
      if (i % 2 == 0)
        code[i] =
            (code[i] & 0x00ffffffu) | (std::uint32_t(kPrefixes[random() % sizeof kPrefixes]) << 24);
    }
    code[kWords] = 0xbf810000;  // s_endpgm
    CodeCache cache;
    cache.add_object(Processor::gfx90a, image, 1024, 0);
    DispatchParams params;
    params.kernel_descriptor = image;
    params.kernarg = kernarg;
    params.grid[0] = 128;
    params.workgroup[0] = 64;
    params.options.host_threads = 1;
    params.options.no_progress_instructions = 20000;
    params.options.no_progress_seconds = 0;
    DispatchResult result = dispatch(params, memory, cache);
    if (result.ok()) {
      ++completed;
      continue;
    }
    ++reported;
    ++kinds[result.error];
    EXPECT_FALSE(result.message.empty());
    EXPECT_NE(result.error, ErrorKind::invalid_dispatch) << result.message;
  }
  // Random words mostly fail to decode or fault; the point is that every run came back.
  EXPECT_EQ(reported + completed, kPrograms);
  // The programs reach the executing semantics, not only the decoder.
  EXPECT_GT(kinds[ErrorKind::memory_fault] + kinds[ErrorKind::unimplemented_instruction], 0);
  EXPECT_GT(kinds[ErrorKind::illegal_instruction], 0);
  std::free(image);
  std::free(data);
}

}  // namespace
}  // namespace wavekit::emu
