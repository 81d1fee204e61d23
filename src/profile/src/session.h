// A profiling session: the context tree, the launch table and the graph registry shared with
// the application's threads, and the one consumer thread that decodes the backend's activity
// buffers, aggregates, advances phases (by time or API), runs the duty cycle of sampled mode,
// and exports each finished phase (compact binary) plus the merged profile (hatchet JSON) and,
// in trace mode, a Chrome trace of the last N kernels.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "aggregator.h"
#include "backend.h"
#include "context_tree.h"
#include "graph_registry.h"
#include "launch_table.h"
#include "wavekit/profile/profile_data.h"

namespace wavekit::profile {

struct SessionConfig {
  std::string output_dir;                     // empty: keep results in memory only
  std::chrono::milliseconds phase_period{0};  // 0: phases advance only through the API
  std::size_t launch_slots = std::size_t{1} << 20;
  std::size_t table_capacity = std::size_t{1} << 14;
  std::string include_kernels, exclude_kernels;
  std::chrono::milliseconds duty_on{0}, duty_period{0};  // sampled mode when both are set
  std::size_t trace_events = 0;                          // Chrome-trace ring size; 0: no trace
  bool start_enabled = true;
  // Graph launches as one record each (CUPTI GRAPH_TRACE) instead of one per kernel node.
  bool graph_level = false;
  // The CUPTI-free backend (libwavekit_profile_events.so): kernel and graph launches timed
  // with event pairs by launch hooks. The CUPTI library refuses to start when this is set.
  bool events_backend = false;
  // Events backend only: every kernel launch is counted and attributed, and about one in
  // `time_every` (chosen at random, plus each thread's first launch of each kernel) is timed;
  // the others' times are estimated from those (Metrics). 1: every launch timed.
  std::uint32_t time_every = 1;
  std::function<std::string(std::string_view)> display_name;  // see AggregatorConfig

  // WAVEKIT_PROFILE_OUTPUT, _PHASE_MS, _SLOTS, _TABLE, _INCLUDE, _EXCLUDE, _DUTY (on/period ms,
  // e.g. "50/1000"), _TRACE (events), _START_DISABLED, _GRAPHS ("kernel" or "graph"), _BACKEND
  // ("cupti" or "events"), _TIME_EVERY (N, events backend only). Bad values throw
  // wavekit::Error.
  static SessionConfig from_environment();
};

// The duty cycle of sampled mode, apart from the session so it can be tested without threads
// or clocks. A window opens at every multiple of `period` after the epoch and lasts `on`:
// launches made while it is open are profiled, each with all its kernels (their records
// arrive later, whenever the GPU runs them), and launches made outside it are not. A disabled
// session closes the window at once and opens none until enabled again.
class SampleWindows {
 public:
  enum class Action { none, collect_on, collect_off };
  SampleWindows(std::chrono::nanoseconds on, std::chrono::nanoseconds period,
                std::chrono::steady_clock::time_point epoch);
  Action step(std::chrono::steady_clock::time_point now, bool enabled);
  bool collecting() const { return collecting_; }
  // When the window state next changes (a window opens or closes) after `now`, so the
  // consumer can switch at the edge rather than up to one polling interval late.
  std::chrono::steady_clock::time_point next_edge(std::chrono::steady_clock::time_point now) const;

 private:
  std::chrono::nanoseconds on_, period_;
  std::chrono::steady_clock::time_point epoch_;
  bool collecting_ = false;
};

class Session final : private RecordSink {
 public:
  Session(SessionConfig config, Backend* backend);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the consumer thread (and the backend's collection, when collecting from the start).
  void start();
  // Flushes the backend, drains, exports the last phases and writes the outputs.
  void stop();

  // ---- application threads (hot path) ----
  // One slot write; no lock, no allocation. Returns false when not collecting.
  bool on_kernel_launch(std::uint64_t correlation) {
    const std::optional<LaunchInfo> info = launch_info(correlation);
    if (!info) return false;
    // With declared work, launch_info has written the slot already.
    if (!info->has_work) launches_.record(correlation, info->context, info->phase);
    return true;
  }
  // The calling thread's context and phase for a launch whose record will carry them (the
  // events backend's untimed launches go to the consumer with them), so that the launch table
  // is not written -- unless the thread declared work for this launch, which is stored under
  // `correlation` as for on_kernel_launch. Empty when not collecting.
  std::optional<LaunchInfo> launch_info(std::uint64_t correlation) {
    if (!collecting_.load(std::memory_order_relaxed)) return std::nullopt;
    LaunchInfo info{tree_.current(), phase_.load(std::memory_order_relaxed), false};
    if (pending_work_.armed) [[unlikely]] {
      launches_.record_with_work(correlation, info.context, info.phase, pending_work_.work);
      pending_work_.armed = false;
      info.has_work = true;
    }
    return info;
  }
  // Declares the FLOPs/bytes of the calling thread's next kernel launch.
  static void set_next_launch_work(const LaunchWork& work) {
    pending_work_.work = work;
    pending_work_.armed = true;
  }
  // A graph launch in graph-level tracing: which executable graph it ran.
  void on_graph_launch(std::uint64_t correlation, std::uint32_t exec_id) {
    launches_.record_graph_exec(correlation, exec_id);
  }
  bool graph_level() const { return config_.graph_level; }
  ContextTree& tree() { return tree_; }
  GraphRegistry& graphs() { return graphs_; }
  const LaunchTable& launches() const { return launches_; }
  std::uint32_t phase() const { return phase_.load(std::memory_order_relaxed); }
  void advance_phase();
  // User switch (selective profiling); sampled mode toggles collection within it.
  void set_enabled(bool enabled);
  bool collecting() const { return collecting_.load(std::memory_order_relaxed); }

  // ---- backend ----
  void submit(const RawBuffer& buffer);

  // ---- results ----
  // The merged profile of every phase exported so far (a copy, under the results lock).
  Profile merged_profile() const;
  SelfMetrics totals() const;
  std::size_t exported_phases() const;

 private:
  void kernel(const KernelActivity& record) override;
  void graph(const GraphActivity& record) override;
  void add_trace_event(TraceEvent event, std::uint64_t correlation);
  void dropped(std::uint64_t count) override;
  void device(std::uint32_t id, const DeviceInfo& info) override;
  void consumer_loop();
  // Runs the consumer's loop now rather than at its next poll (a phase ended, a switch).
  void wake_consumer();
  void drain();
  void poll_backend(bool final);
  void on_export(const PhaseTable& table, const SelfMetrics& self);
  void duty_cycle(std::chrono::steady_clock::time_point now);

  SessionConfig config_;
  Backend* backend_;
  ContextTree tree_;
  LaunchTable launches_;
  GraphRegistry graphs_;
  std::atomic<std::uint32_t> phase_{0};
  std::atomic<bool> enabled_{true};
  std::atomic<bool> collecting_{true};
  std::atomic<bool> flush_requested_{false};  // a phase ended: flush from the consumer thread

  struct PendingWork {
    bool armed = false;
    LaunchWork work;
  };
  static thread_local PendingWork pending_work_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<RawBuffer> queue_;
  bool stopping_ = false;
  bool wake_requested_ = false;
  std::thread consumer_;
  bool started_ = false;

  std::unique_ptr<Aggregator> aggregator_;  // consumer thread only
  std::uint64_t batch_now_ns_ = 0;
  std::vector<TraceEvent> trace_;  // ring, consumer thread only
  std::size_t trace_next_ = 0;
  std::chrono::steady_clock::time_point last_phase_advance_;
  std::unique_ptr<SampleWindows> windows_;  // sampled mode only; consumer thread

  mutable std::mutex results_mutex_;
  Profile merged_;
  std::map<std::uint32_t, DeviceInfo> devices_;
  std::size_t exported_phases_ = 0;
};

}  // namespace wavekit::profile
