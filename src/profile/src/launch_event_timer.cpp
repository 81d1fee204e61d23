#include "launch_event_timer.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "backend.h"

namespace wavekit::profile {

namespace {
// The name of a launch whose kernel the driver could not name.
const std::string& unknown_kernel() {
  static const std::string name = "<unknown kernel>";
  return name;
}
}  // namespace

LaunchEventTimer::LaunchEventTimer(EventApi& api, std::size_t max_pairs,
                                   std::size_t counted_capacity)
    : api_(api), max_pairs_(max_pairs) {
  if (counted_capacity == 0) return;
  const std::size_t cells = std::bit_ceil(std::max<std::size_t>(counted_capacity, 2));
  counted_ = std::make_unique<CountedCell[]>(cells);
  counted_mask_ = cells - 1;
  for (std::size_t i = 0; i < cells; ++i) counted_[i].sequence.store(i, std::memory_order_relaxed);
}

LaunchEventTimer::~LaunchEventTimer() {
  for (const auto& [stream, launch] : last_reported_) recycle(launch.ticket);
  std::lock_guard lock(mutex_);
  for (auto& [context, pairs] : free_)
    for (const EventPair& pair : pairs) api_.destroy(context, pair);
}

std::optional<LaunchEventTimer::Ticket> LaunchEventTimer::begin(void* context, void* stream,
                                                                bool per_thread_stream) {
  Ticket ticket;
  ticket.context = context;
  bool need_new = false;
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(free_.begin(), free_.end(),
                           [&](const auto& entry) { return entry.first == context; });
    if (it != free_.end() && !it->second.empty()) {
      ticket.pair = it->second.back();
      it->second.pop_back();
    } else if (created_ < max_pairs_) {
      ++created_;  // reserved now, created outside the lock
      need_new = true;
    } else {
      ++dropped_;
      return std::nullopt;
    }
  }
  if (need_new && !api_.create(context, ticket.pair)) {
    std::lock_guard lock(mutex_);
    --created_;
    ++dropped_;
    return std::nullopt;
  }
  if (!api_.record(ticket.pair.start, stream, per_thread_stream)) {
    recycle(ticket);
    std::lock_guard lock(mutex_);
    ++dropped_;
    return std::nullopt;
  }
  return ticket;
}

void LaunchEventTimer::end(const Ticket& ticket, void* stream, bool per_thread_stream,
                           const Launch& launch) {
  if (!api_.record(ticket.pair.end, stream, per_thread_stream)) {
    recycle(ticket);
    std::lock_guard lock(mutex_);
    ++dropped_;
    return;
  }
  const std::string* name = launch.kernel_name ? launch.kernel_name : &unknown_kernel();
  const std::uint64_t ended_ns = api_.host_now_ns();
  std::lock_guard lock(mutex_);
  pending_.push_back({ticket, stream, per_thread_stream, launch.correlation, launch.host_ns,
                      launch.launched_ns, ended_ns, launch.device, launch.graph_number,
                      launch.graph_number ? nullptr : name, launch.stream_was_idle});
}

const std::string* LaunchEventTimer::kernel_name(const char* name) {
  if (!name) return nullptr;
  std::lock_guard lock(mutex_);
  auto known = names_by_pointer_.find(name);
  if (known != names_by_pointer_.end() && *known->second == name) return known->second;
  const std::string* interned = &*kernel_names_.emplace(name).first;
  names_by_pointer_[name] = interned;
  return interned;
}

void LaunchEventTimer::cancel(const Ticket& ticket) { recycle(ticket); }

void LaunchEventTimer::count(const Launch& launch) {
  if (!counted_) return;
  std::uint64_t position = counted_head_.load(std::memory_order_relaxed);
  CountedCell* cell;
  for (;;) {
    cell = &counted_[position & counted_mask_];
    const std::uint64_t sequence = cell->sequence.load(std::memory_order_acquire);
    const auto lead = static_cast<std::int64_t>(sequence - position);
    if (lead == 0) {
      if (counted_head_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed))
        break;
    } else if (lead < 0) {
      // A whole ring ahead of the consumer: losing this launch beats waiting for it.
      counted_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    } else {
      position = counted_head_.load(std::memory_order_relaxed);
    }
  }
  cell->correlation = launch.correlation;
  cell->kernel_name = launch.kernel_name;
  cell->device = launch.device;
  cell->info = launch.info;
  cell->sequence.store(position + 1, std::memory_order_release);
}

void LaunchEventTimer::drain_counted(RecordSink& sink) {
  if (!counted_) return;
  for (;;) {
    CountedCell& cell = counted_[counted_tail_ & counted_mask_];
    if (cell.sequence.load(std::memory_order_acquire) != counted_tail_ + 1) break;
    KernelActivity a;
    a.correlation = cell.correlation;
    a.device = cell.device;
    a.kernel_name = cell.kernel_name ? *cell.kernel_name : unknown_kernel();
    a.timed = false;
    a.launch = cell.info;
    cell.sequence.store(counted_tail_ + counted_mask_ + 1, std::memory_order_release);
    ++counted_tail_;
    sink.kernel(a);
  }
  if (std::uint64_t lost = counted_dropped_.exchange(0, std::memory_order_relaxed))
    sink.dropped(lost);
}

void LaunchEventTimer::recycle(const Ticket& ticket) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(free_.begin(), free_.end(),
                         [&](const auto& entry) { return entry.first == ticket.context; });
  if (it == free_.end()) it = free_.insert(free_.end(), {ticket.context, {}});
  it->second.push_back(ticket.pair);
}

std::uint32_t LaunchEventTimer::graph_number(const void* exec) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = graph_numbers_.try_emplace(exec, next_graph_number_);
  if (inserted) ++next_graph_number_;
  return it->second;
}

void LaunchEventTimer::forget(const void* exec) {
  std::lock_guard lock(mutex_);
  graph_numbers_.erase(exec);
}

void LaunchEventTimer::poll(RecordSink& sink, bool wait) {
  drain_counted(sink);
  std::uint64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    // Taken whole so that application threads never wait for the driver queries below.
    polling_.insert(polling_.end(), pending_.begin(), pending_.end());
    pending_.clear();
    dropped = std::exchange(dropped_, 0);
  }
  std::size_t kept = 0;
  // Streams with a launch the GPU has not finished: their later launches are not finished
  // either, so they are not asked about (each question is a driver call).
  std::vector<std::pair<void*, bool>>& behind = behind_streams_;
  behind.clear();
  for (const Pending& p : polling_) {
    const std::pair<void*, bool> stream{p.stream, p.per_thread_stream};
    if (!wait && std::find(behind.begin(), behind.end(), stream) != behind.end()) {
      polling_[kept++] = p;
      continue;
    }
    if (wait) api_.wait(p.ticket.context, p.ticket.pair.end);
    EventApi::State state = api_.query(p.ticket.context, p.ticket.pair.end);
    if (state == EventApi::State::pending) {
      polling_[kept++] = p;  // the GPU has not got there yet; asked again next time
      behind.push_back(stream);
      continue;
    }
    std::optional<std::uint64_t> ns;
    if (state == EventApi::State::done) ns = api_.elapsed_ns(p.ticket.context, p.ticket.pair);
    if (ns) ns = kernel_time(p, *ns);
    if (ns && p.graph_number) {
      GraphActivity a;
      a.correlation = p.correlation;
      a.start_ns = p.host_ns;
      a.end_ns = p.host_ns + *ns;
      a.device = p.device;
      a.graph_id = p.graph_number;
      a.capture_tracked = false;
      sink.graph(a);
    } else if (ns) {
      KernelActivity a;
      a.correlation = p.correlation;
      a.start_ns = p.host_ns;
      a.end_ns = p.host_ns + *ns;
      a.device = p.device;
      a.kernel_name = *p.kernel_name;
      sink.kernel(a);
    } else {
      ++dropped;
    }
    if (!ns) recycle(p.ticket);
  }
  polling_.resize(kept);
  if (wait) {
    for (const auto& [stream, launch] : last_reported_) recycle(launch.ticket);
    last_reported_.clear();
  }
  if (dropped) sink.dropped(dropped);
}

std::uint64_t LaunchEventTimer::kernel_time(const Pending& launch,
                                            std::uint64_t between_events_ns) {
  const std::uint64_t launch_call =
      launch.launched_ns >= launch.host_ns ? launch.launched_ns - launch.host_ns : 0;
  if (launch.stream_was_idle) {
    // The hook knew; no earlier launch of the stream is needed to tell.
    recycle(launch.ticket);
    if (!*launch.stream_was_idle) return between_events_ns;
    return between_events_ns > launch_call ? between_events_ns - launch_call : 0;
  }
  const std::pair<void*, bool> stream{launch.stream, launch.per_thread_stream};
  auto last = std::find_if(last_reported_.begin(), last_reported_.end(),
                           [&](const auto& entry) { return entry.first == stream; });
  std::uint64_t result = between_events_ns;
  if (last != last_reported_.end()) {
    const Pending& previous = last->second;
    // A host gap of a few µs is needed to tell the two cases apart: on a busy stream the GPU
    // gap is about 0, on a starved one about the host gap. Event times have about 0.5 µs
    // resolution; the two gaps of a starved stream agree to that and to the jitter of
    // submitting a command.
    constexpr std::uint64_t kMinHostGapNs = 2000;
    const std::uint64_t host_gap =
        launch.host_ns > previous.ended_ns ? launch.host_ns - previous.ended_ns : 0;
    std::optional<std::uint64_t> gpu_gap;
    if (previous.ticket.context == launch.ticket.context && host_gap >= kMinHostGapNs)
      gpu_gap = api_.elapsed_ns(launch.ticket.context,
                                EventPair{previous.ticket.pair.end, launch.ticket.pair.start});
    if (gpu_gap) {
      const std::uint64_t difference =
          *gpu_gap > host_gap ? *gpu_gap - host_gap : host_gap - *gpu_gap;
      if (difference <= 500 + host_gap / 4 && launch.launched_ns >= launch.host_ns)
        result = between_events_ns > launch_call ? between_events_ns - launch_call : 0;
    }
    recycle(previous.ticket);
    last->second = launch;
  } else {
    // Each remembered stream holds an event pair: a program that launches into many streams
    // (made and destroyed) must not hold the whole pool, so the oldest is forgotten.
    if (last_reported_.size() >= std::clamp<std::size_t>(max_pairs_ / 4, 1, 128)) {
      recycle(last_reported_.front().second.ticket);
      last_reported_.erase(last_reported_.begin());
    }
    last_reported_.push_back({stream, launch});
  }
  return result;
}

std::size_t LaunchEventTimer::in_flight() const {
  std::lock_guard lock(mutex_);
  return pending_.size() + polling_.size();
}

}  // namespace wavekit::profile
