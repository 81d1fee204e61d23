// The per-launch hot path. A launch callback writes one direct-mapped slot indexed by the
// correlation id: no lock, no allocation, no synchronisation with the GPU. Correlation ids
// are unique and increasing, so slots are overwritten, never erased; the consumer checks that
// the slot still holds the record's id, and a mismatch means it lagged more than `capacity`
// launches behind (counted as unattributed). Declared work (FLOPs, bytes) for a launch goes to
// a second, smaller table, written only for launches that carry it; the executable graph of a
// graph launch (graph-level tracing) goes to a third, written only for graph launches.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "context_tree.h"
#include "wavekit/profile/metrics.h"

namespace wavekit::profile {

struct LaunchInfo {
  NodeId context = kRootNode;
  std::uint32_t phase = 0;
  bool has_work = false;
};

struct LaunchWork {
  std::array<double, kPrecisionCount> flops{};
  double bytes = 0;
};

class LaunchTable {
 public:
  // Capacities are rounded up to powers of two.
  explicit LaunchTable(std::size_t capacity = std::size_t{1} << 20,
                       std::size_t work_capacity = std::size_t{1} << 14);

  void record(std::uint64_t correlation, NodeId context, std::uint32_t phase) {
    Slot& slot = slots_[correlation & mask_];
    slot.context.store(context, std::memory_order_relaxed);
    slot.phase_and_flags.store(phase << 1, std::memory_order_relaxed);
    slot.correlation.store(correlation, std::memory_order_release);
  }
  void record_with_work(std::uint64_t correlation, NodeId context, std::uint32_t phase,
                        const LaunchWork& work);

  // The launch's info if its slot still holds it.
  std::optional<LaunchInfo> lookup(std::uint64_t correlation) const;
  std::optional<LaunchWork> lookup_work(std::uint64_t correlation) const;

  // The executable graph a graph launch ran (its CUPTI exec id), after record().
  void record_graph_exec(std::uint64_t correlation, std::uint32_t exec_id) {
    GraphSlot& slot = graph_slots_[correlation & kGraphMask];
    slot.correlation.store(~std::uint64_t{0}, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    slot.exec_id.store(exec_id, std::memory_order_relaxed);
    slot.correlation.store(correlation, std::memory_order_release);
  }
  std::optional<std::uint32_t> lookup_graph_exec(std::uint64_t correlation) const;

  std::size_t capacity() const { return mask_ + 1; }

 private:
  struct Slot {
    std::atomic<std::uint64_t> correlation{~std::uint64_t{0}};
    std::atomic<NodeId> context{0};
    std::atomic<std::uint32_t> phase_and_flags{0};  // phase << 1 | has_work
  };
  struct WorkSlot {
    std::atomic<std::uint64_t> sequence{0};  // odd while being written (a seqlock)
    std::uint64_t correlation = ~std::uint64_t{0};
    LaunchWork work;
  };
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_;
  struct GraphSlot {
    std::atomic<std::uint64_t> correlation{~std::uint64_t{0}};
    std::atomic<std::uint32_t> exec_id{0};
  };
  // Graph launches are few (each runs many kernels): 4096 outstanding ones is plenty.
  static constexpr std::size_t kGraphMask = 4095;
  std::unique_ptr<WorkSlot[]> work_slots_;
  std::size_t work_mask_;
  std::unique_ptr<GraphSlot[]> graph_slots_ = std::make_unique<GraphSlot[]>(kGraphMask + 1);
};

}  // namespace wavekit::profile
