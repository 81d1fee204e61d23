#include "session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::profile {

thread_local Session::PendingWork Session::pending_work_;

namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno || *end || text[0] == '-')
    fail(name, std::string("'") + text + "' is not an unsigned integer");
  return value;
}

std::string env_text(const char* name) {
  const char* text = std::getenv(name);
  return text ? text : "";
}

}  // namespace

SessionConfig SessionConfig::from_environment() {
  SessionConfig c;
  c.output_dir = env_text("WAVEKIT_PROFILE_OUTPUT");
  c.phase_period = std::chrono::milliseconds(env_number("WAVEKIT_PROFILE_PHASE_MS", 0));
  c.launch_slots = env_number("WAVEKIT_PROFILE_SLOTS", c.launch_slots);
  c.table_capacity = env_number("WAVEKIT_PROFILE_TABLE", c.table_capacity);
  c.include_kernels = env_text("WAVEKIT_PROFILE_INCLUDE");
  c.exclude_kernels = env_text("WAVEKIT_PROFILE_EXCLUDE");
  c.trace_events = env_number("WAVEKIT_PROFILE_TRACE", 0);
  c.start_enabled = env_text("WAVEKIT_PROFILE_START_DISABLED").empty();
  if (std::string graphs = env_text("WAVEKIT_PROFILE_GRAPHS"); graphs == "graph") {
    c.graph_level = true;
  } else if (!graphs.empty() && graphs != "kernel") {
    fail("WAVEKIT_PROFILE_GRAPHS", "'" + graphs + "' is neither 'kernel' nor 'graph'");
  }
  if (std::string backend = env_text("WAVEKIT_PROFILE_BACKEND"); backend == "events") {
    c.events_backend = true;
  } else if (!backend.empty() && backend != "cupti") {
    fail("WAVEKIT_PROFILE_BACKEND", "'" + backend + "' is neither 'cupti' nor 'events'");
  }
  if (std::string duty = env_text("WAVEKIT_PROFILE_DUTY"); !duty.empty()) {
    unsigned long on = 0, period = 0;
    char tail = 0;
    if (std::sscanf(duty.c_str(), "%lu/%lu%c", &on, &period, &tail) != 2 || on == 0 || period < on)
      fail("WAVEKIT_PROFILE_DUTY",
           "'" + duty + "' is not ON_MS/PERIOD_MS with 0 < ON_MS <= PERIOD_MS (e.g. 50/1000)");
    c.duty_on = std::chrono::milliseconds(on);
    c.duty_period = std::chrono::milliseconds(period);
  }
  const std::uint64_t time_every = env_number("WAVEKIT_PROFILE_TIME_EVERY", 1);
  if (time_every < 1 || time_every > 1000000)
    fail("WAVEKIT_PROFILE_TIME_EVERY", "must be between 1 and 1000000");
  if (time_every > 1 && !c.events_backend)
    fail("WAVEKIT_PROFILE_TIME_EVERY",
         "needs WAVEKIT_PROFILE_BACKEND=events (CUPTI times every kernel anyway)");
  c.time_every = static_cast<std::uint32_t>(time_every);
  if (c.launch_slots < 1024 || c.launch_slots > (std::size_t{1} << 26))
    fail("WAVEKIT_PROFILE_SLOTS", "must be between 1024 and 2^26");
  if (c.table_capacity < 64 || c.table_capacity > (std::size_t{1} << 24))
    fail("WAVEKIT_PROFILE_TABLE", "must be between 64 and 2^24");
  return c;
}

std::uint64_t Backend::now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

SampleWindows::SampleWindows(std::chrono::nanoseconds on, std::chrono::nanoseconds period,
                             std::chrono::steady_clock::time_point epoch)
    : on_(on), period_(period), epoch_(epoch) {}

SampleWindows::Action SampleWindows::step(std::chrono::steady_clock::time_point now, bool enabled) {
  bool in_window = enabled && now >= epoch_ && (now - epoch_) % period_ < on_;
  if (in_window == collecting_) return Action::none;
  collecting_ = in_window;
  return in_window ? Action::collect_on : Action::collect_off;
}

std::chrono::steady_clock::time_point SampleWindows::next_edge(
    std::chrono::steady_clock::time_point now) const {
  if (now < epoch_) return epoch_;
  const auto into_period = (now - epoch_) % period_;
  const auto period_start = now - into_period;
  if (into_period < on_) return period_start + on_;
  return period_start + period_;
}

Session::Session(SessionConfig config, Backend* backend)
    : config_(std::move(config)),
      backend_(backend),
      launches_(config_.launch_slots),
      graphs_(&tree_),
      enabled_(config_.start_enabled),
      // Sampled mode starts between windows: its first window turns collection on.
      collecting_(config_.start_enabled && config_.duty_period.count() == 0) {
  AggregatorConfig ac;
  ac.table_capacity = config_.table_capacity;
  ac.include_kernels = config_.include_kernels;
  ac.exclude_kernels = config_.exclude_kernels;
  ac.display_name = config_.display_name;
  ac.untimed_launches = config_.time_every > 1;
  aggregator_ = std::make_unique<Aggregator>(
      tree_, launches_, &graphs_, ac,
      [this](const PhaseTable& table, const SelfMetrics& self) { on_export(table, self); });
  trace_.reserve(config_.trace_events);
  if (!config_.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config_.output_dir, ec);
    if (ec) fail(config_.output_dir, "cannot create the output directory: " + ec.message());
  }
}

Session::~Session() { stop(); }

void Session::start() {
  if (started_) return;
  started_ = true;
  last_phase_advance_ = std::chrono::steady_clock::now();
  if (config_.duty_period.count())
    windows_ =
        std::make_unique<SampleWindows>(config_.duty_on, config_.duty_period, last_phase_advance_);
  // Sampled mode turns collection on at its first window (duty_cycle).
  if (backend_ && collecting()) backend_->set_collecting(true);
  consumer_ = std::thread([this] { consumer_loop(); });
}

void Session::advance_phase() {
  phase_.fetch_add(1, std::memory_order_relaxed);
  flush_requested_.store(true, std::memory_order_relaxed);
  wake_consumer();
}

void Session::wake_consumer() {
  {
    std::lock_guard lock(queue_mutex_);
    wake_requested_ = true;
  }
  queue_cv_.notify_one();
}

void Session::set_enabled(bool enabled) {
  enabled_.store(enabled, std::memory_order_relaxed);
  // In sampled mode the consumer's duty-cycle step applies the switch; it is woken for it now.
  if (config_.duty_period.count()) {
    wake_consumer();
    return;
  }
  collecting_.store(enabled, std::memory_order_relaxed);
  if (backend_) backend_->set_collecting(enabled);
}

void Session::submit(const RawBuffer& buffer) {
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(buffer);
  }
  queue_cv_.notify_one();
}

void Session::device(std::uint32_t id, const DeviceInfo& info) {
  std::lock_guard lock(results_mutex_);
  devices_[id] = info;
}

void Session::kernel(const KernelActivity& record) {
  aggregator_->consume(record, batch_now_ns_);
  // An untimed launch (--time-every) has no interval to draw.
  if (config_.trace_events && record.timed)
    add_trace_event({std::string(record.kernel_name), "", record.start_ns, record.end_ns,
                     record.device, record.stream},
                    record.correlation);
}

void Session::graph(const GraphActivity& record) {
  aggregator_->consume_graph(record, batch_now_ns_);
  if (config_.trace_events)
    add_trace_event({graph_leaf_name(record.graph_id), "", record.start_ns, record.end_ns,
                     record.device, record.stream},
                    record.correlation);
}

void Session::add_trace_event(TraceEvent event, std::uint64_t correlation) {
  if (auto launch = launches_.lookup(correlation)) {
    auto path = tree_.path(launch->context);
    for (const auto& p : path) event.context += (event.context.empty() ? "" : " / ") + p;
  }
  if (trace_.size() < config_.trace_events) {
    trace_.push_back(std::move(event));
  } else {
    trace_[trace_next_] = std::move(event);
    trace_next_ = (trace_next_ + 1) % config_.trace_events;
  }
}

void Session::dropped(std::uint64_t count) { aggregator_->add_dropped(count); }

void Session::drain() {
  for (;;) {
    RawBuffer buffer;
    {
      std::lock_guard lock(queue_mutex_);
      if (queue_.empty()) return;
      buffer = queue_.front();
      queue_.pop_front();
    }
    aggregator_->begin_batch();
    batch_now_ns_ = backend_ ? backend_->now_ns() : 0;
    if (backend_) {
      backend_->decode(buffer, *this);
      backend_->release(buffer);
    }
  }
}

void Session::poll_backend(bool final) {
  if (!backend_) return;
  aggregator_->begin_batch();
  batch_now_ns_ = backend_->now_ns();
  backend_->poll(*this, final);
}

void Session::duty_cycle(std::chrono::steady_clock::time_point now) {
  if (!windows_) return;
  SampleWindows::Action action = windows_->step(now, enabled_.load(std::memory_order_relaxed));
  if (action == SampleWindows::Action::none) return;
  bool on = action == SampleWindows::Action::collect_on;
  collecting_.store(on, std::memory_order_relaxed);
  if (backend_) backend_->set_collecting(on);
}

void Session::consumer_loop() {
  using namespace std::chrono_literals;
  for (;;) {
    bool stopping;
    {
      auto wake = std::chrono::steady_clock::now() + 10ms;
      if (windows_) wake = std::min(wake, windows_->next_edge(std::chrono::steady_clock::now()));
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait_until(lock, wake,
                           [this] { return stopping_ || wake_requested_ || !queue_.empty(); });
      wake_requested_ = false;
      stopping = stopping_;
    }
    if (flush_requested_.exchange(false, std::memory_order_relaxed) && backend_)
      backend_->flush(false);  // records of the ended phase, without waiting for the GPU
    drain();
    poll_backend(false);
    auto now = std::chrono::steady_clock::now();
    if (config_.phase_period.count() && now - last_phase_advance_ >= config_.phase_period) {
      last_phase_advance_ = now;
      advance_phase();
    }
    duty_cycle(now);
    aggregator_->maybe_close_phases(phase_.load(std::memory_order_relaxed), now);
    if (stopping) return;
  }
}

void Session::on_export(const PhaseTable& table, const SelfMetrics& self) {
  if (table.size() == 0 && self.records == 0 && self.dropped == 0) return;  // idle phase
  Profile profile = build_profile(table, tree_, self);
  {
    std::lock_guard lock(results_mutex_);
    profile.devices = devices_;
  }
  if (!config_.output_dir.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "phase-%06u.wkp", table.phase);
    write_file((std::filesystem::path(config_.output_dir) / name).string(), to_binary(profile));
  }
  std::lock_guard lock(results_mutex_);
  merged_.merge(profile);
  ++exported_phases_;
}

void Session::stop() {
  if (!started_) return;
  if (backend_) backend_->flush(true);
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_one();
  consumer_.join();
  started_ = false;
  drain();
  poll_backend(true);
  aggregator_->finish();
  if (config_.output_dir.empty()) return;
  std::filesystem::path dir(config_.output_dir);
  {
    std::lock_guard lock(results_mutex_);
    merged_.devices = devices_;
    write_file((dir / "profile.hatchet").string(), to_hatchet_json(merged_));
  }
  if (config_.trace_events) {
    // The ring holds the last N events; oldest first.
    std::vector<TraceEvent> ordered(trace_.begin() + static_cast<long>(trace_next_), trace_.end());
    ordered.insert(ordered.end(), trace_.begin(), trace_.begin() + static_cast<long>(trace_next_));
    write_file((dir / "trace.json").string(), to_chrome_trace(ordered));
  }
}

Profile Session::merged_profile() const {
  std::lock_guard lock(results_mutex_);
  Profile copy;
  copy.merge(merged_);
  copy.devices = devices_;
  return copy;
}

SelfMetrics Session::totals() const {
  std::lock_guard lock(results_mutex_);
  return merged_.self;
}

std::size_t Session::exported_phases() const {
  std::lock_guard lock(results_mutex_);
  return exported_phases_;
}

}  // namespace wavekit::profile
