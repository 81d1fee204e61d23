#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <sstream>

#include "wavekit/emu/emu.h"
#include "wavekit/support/error.h"

namespace wavekit::emu {

struct MemoryMap::State {
  mutable std::shared_mutex mutex;
  std::map<std::uint64_t, Range> ranges;  // keyed by base
  std::atomic<std::uint64_t> generation{0};

  void insert(Range range);
};

MemoryMap::MemoryMap() : state_(std::make_unique<State>()) {}
MemoryMap::~MemoryMap() = default;

static std::string describe(const MemoryMap::Range& range) {
  std::ostringstream out;
  out << "[0x" << std::hex << range.base << ", 0x" << range.base + range.size << ")";
  if (!range.label.empty()) out << " (" << range.label << ")";
  if (range.host_base != range.base) out << " at host 0x" << range.host_base;
  return out.str();
}

void MemoryMap::State::insert(Range range) {
  if (range.size == 0) throw Error("emu memory map: empty range " + describe(range));
  std::unique_lock lock(mutex);
  auto next = ranges.lower_bound(range.base);
  if (next != ranges.end() && next->first < range.base + range.size)
    throw Error("emu memory map: " + describe(range) + " overlaps " + describe(next->second));
  if (next != ranges.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second.size > range.base)
      throw Error("emu memory map: " + describe(range) + " overlaps " + describe(previous->second));
  }
  ranges.emplace(range.base, std::move(range));
  generation.fetch_add(1, std::memory_order_release);
}

void MemoryMap::add(const void* base, std::size_t size, unsigned access, std::string label,
                    std::size_t requested) {
  const auto address = reinterpret_cast<std::uint64_t>(base);
  state_->insert(
      Range{address, size, access, std::move(label), requested < size ? requested : 0, address});
}

void MemoryMap::add_translated(std::uint64_t device_base, const void* host, std::size_t size,
                               unsigned access, std::string label) {
  state_->insert(
      Range{device_base, size, access, std::move(label), 0, reinterpret_cast<std::uint64_t>(host)});
}

bool MemoryMap::remove(const void* base) {
  std::unique_lock lock(state_->mutex);
  bool removed = state_->ranges.erase(reinterpret_cast<std::uint64_t>(base)) != 0;
  if (removed) state_->generation.fetch_add(1, std::memory_order_release);
  return removed;
}

bool MemoryMap::mark_tool_memory(const void* base) {
  std::unique_lock lock(state_->mutex);
  auto it = state_->ranges.find(reinterpret_cast<std::uint64_t>(base));
  if (it == state_->ranges.end()) return false;
  it->second.access |= kToolMemory;
  // Waves cache a range's access bits; a new generation makes them look it up again.
  state_->generation.fetch_add(1, std::memory_order_release);
  return true;
}

std::optional<MemoryMap::Range> MemoryMap::find(std::uint64_t address) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->ranges.upper_bound(address);
  if (it == state_->ranges.begin()) return std::nullopt;
  --it;
  if (address - it->first >= it->second.size) return std::nullopt;
  return it->second;
}

std::optional<MemoryMap::Range> MemoryMap::find_below(std::uint64_t address) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->ranges.upper_bound(address);
  if (it == state_->ranges.begin()) return std::nullopt;
  return std::prev(it)->second;
}

bool MemoryMap::contains(std::uint64_t address, std::size_t size, unsigned access) const {
  auto range = find(address);
  return range && (range->access & access) == access &&
         address + size <= range->base + range->size && address + size >= address;
}

std::vector<MemoryMap::Range> MemoryMap::ranges() const {
  std::shared_lock lock(state_->mutex);
  std::vector<Range> all;
  for (auto& [base, range] : state_->ranges) all.push_back(range);
  return all;
}

std::uint64_t MemoryMap::generation() const {
  return state_->generation.load(std::memory_order_acquire);
}

}  // namespace wavekit::emu
