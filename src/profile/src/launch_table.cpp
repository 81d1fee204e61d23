#include "launch_table.h"

#include <bit>
#include <cstring>

namespace wavekit::profile {

LaunchTable::LaunchTable(std::size_t capacity, std::size_t work_capacity)
    : slots_(std::make_unique<Slot[]>(std::bit_ceil(std::max<std::size_t>(capacity, 2)))),
      mask_(std::bit_ceil(std::max<std::size_t>(capacity, 2)) - 1),
      work_slots_(
          std::make_unique<WorkSlot[]>(std::bit_ceil(std::max<std::size_t>(work_capacity, 2)))),
      work_mask_(std::bit_ceil(std::max<std::size_t>(work_capacity, 2)) - 1) {}

void LaunchTable::record_with_work(std::uint64_t correlation, NodeId context, std::uint32_t phase,
                                   const LaunchWork& work) {
  // Work slots are written by whichever thread launches; the seqlock lets the consumer detect
  // a torn read (two launches racing for one slot) and treat it as missing, not as garbage.
  WorkSlot& ws = work_slots_[correlation & work_mask_];
  std::uint64_t seq = ws.sequence.load(std::memory_order_relaxed);
  ws.sequence.store(seq | 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  ws.correlation = correlation;
  ws.work = work;
  ws.sequence.store((seq | 1) + 1, std::memory_order_release);

  Slot& slot = slots_[correlation & mask_];
  slot.context.store(context, std::memory_order_relaxed);
  slot.phase_and_flags.store((phase << 1) | 1, std::memory_order_relaxed);
  slot.correlation.store(correlation, std::memory_order_release);
}

std::optional<LaunchInfo> LaunchTable::lookup(std::uint64_t correlation) const {
  const Slot& slot = slots_[correlation & mask_];
  if (slot.correlation.load(std::memory_order_acquire) != correlation) return std::nullopt;
  LaunchInfo info;
  info.context = slot.context.load(std::memory_order_relaxed);
  std::uint32_t flags = slot.phase_and_flags.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  // A launch 'capacity' ids later may have overwritten the slot while we read it.
  if (slot.correlation.load(std::memory_order_relaxed) != correlation) return std::nullopt;
  info.phase = flags >> 1;
  info.has_work = flags & 1;
  return info;
}

std::optional<LaunchWork> LaunchTable::lookup_work(std::uint64_t correlation) const {
  const WorkSlot& ws = work_slots_[correlation & work_mask_];
  std::uint64_t before = ws.sequence.load(std::memory_order_acquire);
  if (before & 1) return std::nullopt;
  std::uint64_t stored_correlation;
  LaunchWork work;
  std::memcpy(&stored_correlation, &ws.correlation, sizeof stored_correlation);
  std::memcpy(&work, &ws.work, sizeof work);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (ws.sequence.load(std::memory_order_relaxed) != before) return std::nullopt;
  if (stored_correlation != correlation) return std::nullopt;
  return work;
}

std::optional<std::uint32_t> LaunchTable::lookup_graph_exec(std::uint64_t correlation) const {
  const GraphSlot& slot = graph_slots_[correlation & kGraphMask];
  if (slot.correlation.load(std::memory_order_acquire) != correlation) return std::nullopt;
  std::uint32_t exec_id = slot.exec_id.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  // A later graph launch may have taken the slot while we read it.
  if (slot.correlation.load(std::memory_order_relaxed) != correlation) return std::nullopt;
  return exec_id;
}

}  // namespace wavekit::profile
