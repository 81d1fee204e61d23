// The consumer side: one thread turns kernel activity records into per-phase aggregates held
// in fixed-size open-addressing tables. A record costs one slot lookup, one graph-snapshot
// lookup when it came from a graph, and one table probe. Tables rotate: a phase's table is
// exported once records of a later phase have been arriving for a grace period, then cleared
// and reused, so memory is fixed however long the program runs.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "context_tree.h"
#include "graph_registry.h"
#include "launch_table.h"
#include "wavekit/profile/metrics.h"
#include "wavekit/profile/profile_data.h"

namespace wavekit::profile {

// A kernel execution as a backend reports it (CUPTI activity record, HSA completion signal).
struct KernelActivity {
  std::uint64_t correlation = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::string_view kernel_name;
  std::uint64_t graph_node_id = 0;  // 0: not launched from a graph
  // false: the launch was counted but not timed (events backend, --time-every N); start_ns and
  // end_ns mean nothing then.
  bool timed = true;
  // The launch's context and phase where the backend carries them with the record (untimed
  // launches); otherwise they are looked up in the launch table by correlation.
  std::optional<LaunchInfo> launch{};
};

// One execution of a whole CUDA graph, in graph-level tracing (CUPTI GRAPH_TRACE, or event
// pairs in the CUPTI-free mode): the graph's kernels are not reported one by one, so the launch
// is aggregated as one leaf.
struct GraphActivity {
  std::uint64_t correlation = 0;  // the graph launch's correlation id
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t graph_id = 0;  // CUPTI's id of the launched graph, for the leaf's name
  // false: the backend does not track capture sites (CUPTI-free mode), so the leaf hangs under
  // the launch context and is not counted as graph_unknown.
  bool capture_tracked = true;
};

// A C++ kernel name as people read it ("void at::native::foo<float>(...)"); other names as
// they are. For AggregatorConfig::display_name.
std::string demangle_kernel_name(std::string_view name);

struct EntryKey {
  NodeId context = kRootNode;          // the launching thread's context
  NodeId capture_context = kRootNode;  // where the graph node was captured (if captured)
  NameId kernel = 0;
  std::uint16_t device = 0;
  std::uint16_t captured = 0;  // 1: the path goes through <captured_at>
  bool operator==(const EntryKey&) const = default;
};

struct Entry {
  EntryKey key;
  Metrics metrics;
};

// Fixed-capacity open-addressing table (linear probing). Full tables reject new keys; the
// caller counts the loss.
class PhaseTable {
 public:
  explicit PhaseTable(std::size_t capacity);
  Entry* find_or_insert(const EntryKey& key);
  void clear();
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (used_[i]) fn(slots_[i]);
  }
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (used_[i]) fn(slots_[i]);
  }
  std::uint32_t phase = 0;
  std::uint64_t first_start_ns = ~std::uint64_t{0};
  std::uint64_t last_end_ns = 0;

 private:
  std::vector<Entry> slots_;
  std::vector<std::uint8_t> used_;
  std::size_t size_ = 0;
  std::size_t limit_;  // insertions stop at 7/8 load so probes stay short
};

struct AggregatorConfig {
  std::size_t table_capacity = std::size_t{1} << 14;
  std::chrono::nanoseconds phase_grace = std::chrono::milliseconds(500);
  std::string include_kernels;  // ECMAScript regex; empty: all
  std::string exclude_kernels;  // ECMAScript regex; empty: none
  std::size_t max_cached_kernel_names = 1 << 16;
  // Turns a backend's kernel name into the one shown (CUPTI: demangling); once per name.
  std::function<std::string(std::string_view)> display_name;
  // Some launches arrive untimed (KernelActivity::timed false): each kernel's mean time is
  // kept over the run, for the entries of a phase in which none of its launches was timed.
  bool untimed_launches = false;
};

class Aggregator {
 public:
  // Called on the consumer thread for each exported phase; the table is recycled afterwards.
  using ExportFn = std::function<void(const PhaseTable&, const SelfMetrics&)>;

  Aggregator(ContextTree& tree, const LaunchTable& launches, const GraphRegistry* graphs,
             AggregatorConfig config, ExportFn on_export);

  // `now_ns`: the consumer's clock, in the backend's timestamp base, for lag accounting.
  void consume(const KernelActivity& record, std::uint64_t now_ns);
  // A whole graph launch: launch context / <captured_at> / the graph's capture context /
  // graph leaf. The capture context is that of the executable graph the launch callback saw
  // (LaunchTable::record_graph_exec), else that of the source graph whose CUPTI id the record
  // carries; without either the leaf hangs under the launch context (graph_unknown).
  void consume_graph(const GraphActivity& record, std::uint64_t now_ns);
  // Refreshes the graph snapshot; call once per buffer so replays see new instantiations.
  void begin_batch();
  void add_dropped(std::uint64_t count) { self_.dropped += count; }
  // Rotates to `launch_phase` if the launching side has moved on, and exports the previous
  // phase once its grace period has passed. Call after each batch and periodically.
  void maybe_close_phases(std::uint32_t launch_phase, std::chrono::steady_clock::time_point now);
  // Exports everything (at shutdown).
  void finish();

  const SelfMetrics& totals() const { return totals_; }
  std::uint32_t current_phase() const { return current_->phase; }

 private:
  PhaseTable* table_for(std::uint32_t phase);
  void rotate_to(std::uint32_t phase, std::chrono::steady_clock::time_point now);
  void export_table(std::unique_ptr<PhaseTable>& table);
  std::optional<NameId> kernel_id(std::string_view name);
  void add(const EntryKey& key, std::uint32_t phase, std::uint64_t start_ns, std::uint64_t end_ns,
           bool timed, const std::optional<LaunchWork>& work, std::uint64_t now_ns);
  // Before a phase is exported: the time of each entry with untimed launches becomes an
  // estimate for all of them, from the entry's timed launches, else from the kernel's mean
  // over the run so far (else it stays 0: the kernel was never timed).
  void estimate_untimed(PhaseTable& table) const;

  ContextTree& tree_;
  const LaunchTable& launches_;
  const GraphRegistry* graphs_;
  AggregatorConfig config_;
  ExportFn on_export_;
  std::optional<std::regex> include_, exclude_;
  std::shared_ptr<const GraphRegistry::Snapshot> graph_snapshot_;

  std::unique_ptr<PhaseTable> current_, previous_, spare_;
  std::chrono::steady_clock::time_point rotated_at_{};
  SelfMetrics self_;    // since the last export
  SelfMetrics totals_;  // whole run

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct TimedSum {
    std::uint64_t time_ns = 0, launches = 0;
  };
  std::unordered_map<NameId, TimedSum> kernel_timed_;  // untimed_launches only

  // Kernel name -> name id, or nullopt when filtered out; decided once per name.
  std::unordered_map<std::string, std::optional<NameId>, Hash, std::equal_to<>> kernels_;
};

// Resident set size of this process, from /proc/self/statm (0 where unavailable).
std::uint64_t resident_set_bytes();

// Builds the tree for one phase table: launch ctx / [<captured_at> / capture ctx /] kernel.
Profile build_profile(const PhaseTable& table, const ContextTree& tree, const SelfMetrics& self);

}  // namespace wavekit::profile
