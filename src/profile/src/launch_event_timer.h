// Kernel and CUDA-graph launches timed with a pair of GPU events each, for the CUPTI-free
// backend (`--backend events`). On the H200 any CUPTI call at all puts the driver into a traced
// mode that costs about 0.1 µs of GPU time per graph node and 0.3 µs of host time per node per
// graph launch, even with no callback and no activity kind enabled (docs/benchmarks/profile.md,
// run E). This backend never calls CUPTI: a launch hook records an event before and after each
// launch it times, on the launch's stream, and the consumer thread later asks the driver,
// without waiting, whether the end event has completed and reads the elapsed time.
//
// With --time-every N most launches are not timed but counted (count()): those go to the
// consumer through a lock-free ring, so an untimed launch costs the hook a few stores.
//
// The driver is behind EventApi so that the bookkeeping is tested without a GPU. Application
// threads take one uncontended mutex twice per timed launch (pool and queue; tens of ns next
// to a launch's microseconds); no allocation once the pool and the kernel names are warm, and
// no synchronisation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "aggregator.h"

namespace wavekit::profile {

class RecordSink;

// Two timing events of one driver context, opaque to the timer.
struct EventPair {
  void* start = nullptr;
  void* end = nullptr;
};

class EventApi {
 public:
  enum class State { pending, done, failed };
  virtual ~EventApi() = default;
  // Both events of a pair in `context`, with timing enabled. false: the driver refused.
  virtual bool create(void* context, EventPair& pair) = 0;
  virtual void destroy(void* context, const EventPair& pair) = 0;
  // On the launching thread, on the launch's stream. false: not recorded.
  virtual bool record(void* event, void* stream, bool per_thread_stream) = 0;
  // Consumer thread; never waits.
  virtual State query(void* context, void* event) = 0;
  virtual std::optional<std::uint64_t> elapsed_ns(void* context, const EventPair& pair) = 0;
  // Only when the session stops: waits for the event.
  virtual void wait(void* context, void* event) = 0;
  // The host clock the launch times are taken with (steady clock, ns).
  virtual std::uint64_t host_now_ns() = 0;
};

class LaunchEventTimer {
 public:
  // At most `max_pairs` launches in flight; beyond that launches go untimed and are counted.
  // `counted_capacity`: how many untimed launches (count()) may wait for the consumer; 0 when
  // every launch is timed (rounded up to a power of two).
  LaunchEventTimer(EventApi& api, std::size_t max_pairs, std::size_t counted_capacity = 0);
  ~LaunchEventTimer();
  LaunchEventTimer(const LaunchEventTimer&) = delete;
  LaunchEventTimer& operator=(const LaunchEventTimer&) = delete;

  struct Ticket {
    EventPair pair;
    void* context = nullptr;
  };
  // Application thread, before the real launch: records the start event. Empty when the
  // launch cannot be timed (pool exhausted or the driver refused); it is counted as dropped.
  std::optional<Ticket> begin(void* context, void* stream, bool per_thread_stream);
  // What was launched between a ticket's events.
  struct Launch {
    std::uint64_t correlation = 0;  // the launch table's key of the launch's context
    std::uint64_t host_ns = 0;      // host clock after the start event was recorded
    std::uint64_t launched_ns = 0;  // host clock after the real launch returned
    std::uint32_t device = 0;
    std::uint32_t graph_number = 0;  // a graph launch: graph_number(exec); 0: a kernel launch
    const std::string* kernel_name = nullptr;  // a kernel launch: kernel_name(); null: unknown
    // Whether the stream had no work left when the start event was recorded, where the hook
    // asked the driver (a sampled launch, whose stream's previous launch was not timed): then
    // the kernel waited for its own launch, whose host time is taken off (see poll).
    std::optional<bool> stream_was_idle{};
    // count() only: the launch's context and phase (Session::launch_info), handed to the
    // consumer with the launch rather than through the launch table.
    std::optional<LaunchInfo> info{};
  };
  // After a successful real launch: records the end event and queues the launch.
  void end(const Ticket& ticket, void* stream, bool per_thread_stream, const Launch& launch);
  // After a failed real launch: the pair goes back to the pool.
  void cancel(const Ticket& ticket);
  // After a successful real launch that was not timed: it is counted and attributed (by
  // Launch::info where given, else through the launch table), with no time
  // (KernelActivity::timed false). Lock-free; when the consumer is `counted_capacity`
  // launches behind, the launch is counted as dropped.
  void count(const Launch& launch);

  // The timer's copy of a kernel name the driver gave (stable for the timer's life; one per
  // distinct name). The driver's pointer is remembered and checked by content on the next
  // call, since a pointer can be reused for another name once its module is unloaded; callers
  // cache the answer per function and drop their cache when a module is unloaded.
  const std::string* kernel_name(const char* driver_name);

  // A small number naming an executable graph (1, 2, ... in order of first launch), stable
  // until forget() (the executable graph was destroyed), so a later graph at the same address
  // gets a new number.
  std::uint32_t graph_number(const void* exec);
  void forget(const void* exec);

  // Consumer thread: hands every completed launch to `sink`, a graph launch as a GraphActivity
  // and a kernel launch as a KernelActivity (start at the host launch time, end = start + its
  // time on the GPU), and reports untimed launches as dropped. With `wait` (session stop) it
  // first waits for every queued launch.
  //
  // The time is the GPU time between the launch's events, except on a starved stream: when the
  // GPU reached the start event as soon as it was recorded (it had nothing before it), the
  // kernel could only start once its launch arrived, so the host time the launch call took is
  // not the kernel's and is taken off. A stream counts as starved at a launch when the hook
  // found it idle (Launch::stream_was_idle), else when the GPU time from the previous launch's
  // end event to this start event equals the host time between recording them (both ran when
  // recorded); otherwise (a busy stream, or no earlier launch of the stream to compare with)
  // the time is left as measured. Counted launches are handed over first, untimed.
  void poll(RecordSink& sink, bool wait);

  // Launches queued and not yet reported (consumer thread).
  std::size_t in_flight() const;

 private:
  struct Pending {
    Ticket ticket;
    void* stream = nullptr;  // launches of one stream complete in order
    bool per_thread_stream = false;
    std::uint64_t correlation = 0;
    std::uint64_t host_ns = 0, launched_ns = 0, ended_ns = 0;  // see Launch; end event recorded
    std::uint32_t device = 0;
    std::uint32_t graph_number = 0;
    const std::string* kernel_name = nullptr;  // into kernel_names_
    std::optional<bool> stream_was_idle{};
  };
  // One cell of the ring of counted launches (a bounded multi-producer queue after D. Vyukov:
  // a cell's sequence says whose turn it is, so producers claim cells with one compare-exchange
  // and the consumer never writes what a producer reads).
  struct CountedCell {
    std::atomic<std::uint64_t> sequence{0};
    std::uint64_t correlation = 0;
    const std::string* kernel_name = nullptr;
    std::uint32_t device = 0;
    std::optional<LaunchInfo> info;
  };
  void drain_counted(RecordSink& sink);
  void recycle(const Ticket& ticket);
  // The launch's GPU time, less the launch call's host time on a starved stream (see poll).
  std::uint64_t kernel_time(const Pending& launch, std::uint64_t between_events_ns);

  EventApi& api_;
  const std::size_t max_pairs_;
  mutable std::mutex mutex_;
  std::size_t created_ = 0;
  std::vector<std::pair<void*, std::vector<EventPair>>> free_;  // per context
  std::vector<Pending> pending_;
  std::vector<Pending> polling_;                        // consumer thread only, reused
  std::vector<std::pair<void*, bool>> behind_streams_;  // consumer thread only, reused
  // Per stream, the last reported launch, whose events are kept until the stream's next launch
  // is compared with it (consumer thread only; one pair per stream, for at most a quarter of
  // the pool's pairs and 128 streams, the oldest forgotten first).
  std::vector<std::pair<std::pair<void*, bool>, Pending>> last_reported_;
  std::uint64_t dropped_ = 0;
  std::unique_ptr<CountedCell[]> counted_;
  std::uint64_t counted_mask_ = 0;
  alignas(64) std::atomic<std::uint64_t> counted_head_{0};  // next cell producers claim
  alignas(64) std::atomic<std::uint64_t> counted_dropped_{0};
  std::uint64_t counted_tail_ = 0;  // next cell the consumer reads
  std::unordered_map<const void*, std::uint32_t> graph_numbers_;
  std::uint32_t next_graph_number_ = 1;
  // Kernel names, interned by content (never freed: one per distinct kernel), and the last
  // interned string for each of the driver's name pointers, checked by content on use because
  // a pointer can be reused for another name once its module is unloaded.
  std::unordered_set<std::string> kernel_names_;
  std::unordered_map<const char*, const std::string*> names_by_pointer_;
};

}  // namespace wavekit::profile
