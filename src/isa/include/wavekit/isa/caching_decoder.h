// A decoder that decodes each distinct encoding once. LLVM's disassembler and instruction
// printer cost a microsecond or more per instruction, and compiled code repeats instructions.
// An instruction's decoding depends on its own bytes alone (the encoding is prefix-free, and
// without a symbolizer LLVM keeps branch offsets as raw immediates), so a repeat is a copy with
// its address and branch target moved. The analysis and the rewriter decode through it.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavekit/isa/isa.h"

namespace wavekit::isa {

class CachingDecoder {
 public:
  explicit CachingDecoder(const Decoder& decoder);
  const std::string& processor() const { return decoder_.processor(); }

  // The instruction `bytes` start with, as first decoded (at whatever address that was: `at`
  // moves it to `address`); null, with `error` set as Decoder::decode sets it, where the bytes
  // do not decode. The instruction lives as long as the decoder.
  const Instruction* decode(std::span<const std::uint8_t> bytes, std::uint64_t address,
                            DecodeError* error);
  // Decoder::decode_range's result, through the cache.
  DecodedRange decode_range(std::span<const std::uint8_t> bytes, std::uint64_t address);

  // `decoded` (from decode) at `address`.
  static Instruction at(const Instruction& decoded, std::uint64_t address);
  static std::optional<std::uint64_t> branch_target_at(const Instruction& decoded,
                                                       std::uint64_t address);

 private:
  // The bytes, zero-padded, and their count (so that 4 bytes and 8 whose last 4 are 0 differ).
  using Key = std::array<std::uint32_t, 5>;
  // Open addressing with the keys in the table: a lookup, hit or miss (most sizes tried miss),
  // touches one or two cache lines instead of a node per probe.
  struct Slot {
    Key key{};
    const Instruction* instruction = nullptr;  // null: empty
  };
  static Key key(std::span<const std::uint8_t> bytes);
  Slot& slot_for(const Key& k);  // the slot holding `k`, else the empty one where it goes
  void insert(const Key& k, const Instruction* instruction);

  const Decoder& decoder_;
  std::deque<Instruction> decoded_;  // stable addresses
  std::vector<Slot> slots_;          // a power of two
  std::size_t used_ = 0;
};

}  // namespace wavekit::isa
