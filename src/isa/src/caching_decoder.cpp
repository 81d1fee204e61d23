#include "wavekit/isa/caching_decoder.h"

#include <cstring>

namespace wavekit::isa {
namespace {

std::size_t hash(const std::array<std::uint32_t, 5>& k) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (std::uint32_t word : k) h = (h ^ word) * 0x100000001b3ull;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

}  // namespace

CachingDecoder::CachingDecoder(const Decoder& decoder) : decoder_(decoder), slots_(1024) {}

const Instruction* CachingDecoder::decode(std::span<const std::uint8_t> bytes,
                                          std::uint64_t address, DecodeError* error) {
  // Encodings are 4 to 16 bytes in words; with a prefix-free encoding at most one size matches.
  for (std::size_t size = 4; size <= 16 && size <= bytes.size(); size += 4)
    if (const Slot& slot = slot_for(key(bytes.first(size))); slot.instruction)
      return slot.instruction;
  std::optional<Instruction> inst = decoder_.decode(bytes, address, error);
  if (!inst) return nullptr;
  const Instruction* stored = &decoded_.emplace_back(std::move(*inst));
  insert(key(stored->bytes()), stored);
  return stored;
}

DecodedRange CachingDecoder::decode_range(std::span<const std::uint8_t> bytes,
                                          std::uint64_t address) {
  DecodedRange range;
  range.instructions.reserve(bytes.size() / 6);
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    DecodeError error;
    if (const Instruction* inst = decode(bytes.subspan(offset), address + offset, &error)) {
      range.instructions.push_back(at(*inst, address + offset));
      offset += inst->size;
    } else {
      range.errors.push_back(std::move(error));
      offset += 4;  // instructions are dword-aligned: resynchronise on the next dword
    }
  }
  return range;
}

Instruction CachingDecoder::at(const Instruction& decoded, std::uint64_t address) {
  Instruction inst = decoded;
  inst.branch_target = branch_target_at(decoded, address);
  inst.address = address;
  return inst;
}

std::optional<std::uint64_t> CachingDecoder::branch_target_at(const Instruction& decoded,
                                                              std::uint64_t address) {
  if (!decoded.branch_target) return std::nullopt;
  return address + (*decoded.branch_target - decoded.address);
}

CachingDecoder::Key CachingDecoder::key(std::span<const std::uint8_t> bytes) {
  Key k{};
  std::memcpy(k.data(), bytes.data(), bytes.size());
  k[4] = static_cast<std::uint32_t>(bytes.size());
  return k;
}

CachingDecoder::Slot& CachingDecoder::slot_for(const Key& k) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash(k) & mask;; i = (i + 1) & mask)
    if (!slots_[i].instruction || slots_[i].key == k) return slots_[i];
}

void CachingDecoder::insert(const Key& k, const Instruction* instruction) {
  if (2 * (used_ + 1) > slots_.size()) {  // keep the load at most 1/2
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& slot : old)
      if (slot.instruction) slot_for(slot.key) = slot;
  }
  slot_for(k) = Slot{k, instruction};
  ++used_;
}

}  // namespace wavekit::isa
