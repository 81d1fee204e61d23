#include "wavekit/hostcall/runtime.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "wavekit/support/error.h"

namespace wavekit::hostcall {
namespace {

using protocol::kPhaseMask;
using protocol::SlotHeader;

void validate(const RingConfig& c) {
  auto bad = [](const std::string& what) { fail("hostcall ring", what); };
  if (c.slots == 0 || !std::has_single_bit(c.slots) || c.slots > (1u << 20))
    bad("slots must be a power of two between 1 and 2^20, got " + std::to_string(c.slots));
  if (c.lanes == 0 || c.lanes > protocol::kMaxLanes)
    bad("lanes must be between 1 and 64, got " + std::to_string(c.lanes));
  if (c.words_per_lane < protocol::kReplyWords || c.words_per_lane > 64)
    bad("words_per_lane must be between 2 and 64, got " + std::to_string(c.words_per_lane));
  if (c.uniform_bytes % 8 != 0 || c.uniform_bytes > 65536)
    bad("uniform_bytes must be a multiple of 8 up to 65536, got " +
        std::to_string(c.uniform_bytes));
}

protocol::Ring make_view(const RingConfig& c, uint8_t* slots, uint64_t* ticket) {
  protocol::Ring r{};
  r.magic = protocol::kMagic;
  r.version = protocol::kVersion;
  r.slot_count = c.slots;
  r.lanes = c.lanes;
  r.words_per_lane = c.words_per_lane;
  r.uniform_bytes = c.uniform_bytes;
  r.slot_stride = protocol::slot_stride_for(c.lanes, c.words_per_lane, c.uniform_bytes);
  r.ticket = ticket;
  r.slots = slots;
  return r;
}

// Service threads' shares of the ring are interleaved in groups of up to this many slots.
constexpr uint32_t kGroupSlots = 16;
// Ready requests serviced together after prefetching their lines, and the lines prefetched per
// request (its header and, for the usual payloads, all of its words).
constexpr size_t kBatch = 16;
constexpr uint64_t kPrefetchLines = 16;

// The owned layout: a 64-byte line for the ticket (alone, so that claims do not share a line
// with slot traffic), then the slots.
constexpr uint64_t kTicketLine = 64;

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

uint64_t RingBuffer::bytes_for(const RingConfig& config) {
  validate(config);
  return uint64_t{config.slots} *
         protocol::slot_stride_for(config.lanes, config.words_per_lane, config.uniform_bytes);
}

RingBuffer::RingBuffer(const RingConfig& config) : config_(config) {
  const uint64_t bytes = kTicketLine + bytes_for(config);
  auto* memory = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  if (!memory) fail("hostcall ring", "cannot allocate " + std::to_string(bytes) + " bytes");
  std::memset(memory, 0, bytes);
  owned_ = {memory, [](uint8_t* p) { std::free(p); }};
  host_view_ = make_view(config, memory + kTicketLine, reinterpret_cast<uint64_t*>(memory));
  device_view_ = host_view_;
}

RingBuffer::RingBuffer(const RingConfig& config, void* slots, uint64_t slots_device_address,
                       uint64_t ticket_device_address)
    : config_(config) {
  const uint64_t bytes = bytes_for(config);
  if (!slots || reinterpret_cast<uintptr_t>(slots) % 64 != 0 || slots_device_address % 64 != 0)
    fail("hostcall ring", "external slot memory must be non-null and 64-byte aligned");
  if (ticket_device_address == 0 || ticket_device_address % 8 != 0)
    fail("hostcall ring", "the ticket counter's address must be non-null and 8-byte aligned");
  std::memset(slots, 0, bytes);
  host_view_ = make_view(config, static_cast<uint8_t*>(slots), nullptr);
  device_view_ = make_view(config, reinterpret_cast<uint8_t*>(slots_device_address),
                           reinterpret_cast<uint64_t*>(ticket_device_address));
}

std::span<const uint8_t> Request::uniform() const {
  const uint32_t used = std::min(slot_->uniform_used, ring_.uniform_bytes);
  return {protocol::slot_uniform(ring_, slot_), used};
}

std::span<uint64_t> Request::lane_words(uint32_t lane) {
  if (lane >= ring_.lanes)
    fail("hostcall request", "lane " + std::to_string(lane) + " out of range");
  return {protocol::slot_lane_words(ring_, slot_, lane), ring_.words_per_lane};
}

// --- statistics -------------------------------------------------------------------------------

int LatencyHistogram::bucket_of(uint64_t value) {
  if (value < kSubBuckets) return static_cast<int>(value);
  const int exponent = 63 - std::countl_zero(value);  // >= 4
  const int sub = static_cast<int>((value >> (exponent - 4)) & (kSubBuckets - 1));
  return (exponent - 3) * kSubBuckets + sub;
}

uint64_t LatencyHistogram::upper_bound_of(int bucket) {
  if (bucket < kSubBuckets) return static_cast<uint64_t>(bucket);
  const int exponent = bucket / kSubBuckets + 3;
  const uint64_t sub = static_cast<uint64_t>(bucket % kSubBuckets);
  const uint64_t low = (uint64_t{1} << exponent) | (sub << (exponent - 4));
  return low + (uint64_t{1} << (exponent - 4)) - 1;
}

void LatencyHistogram::record(uint64_t nanoseconds) {
  ++counts_[bucket_of(nanoseconds)];
  ++count_;
  max_ = std::max(max_, nanoseconds);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (int b = 0; b < kBuckets; ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::max(1.0, q * static_cast<double>(count_) + 0.5));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) return std::min(upper_bound_of(b), max_);
  }
  return max_;
}

std::string Statistics::to_json() const {
  return "{\"calls\": " + std::to_string(calls) +
         ", \"blocking_calls\": " + std::to_string(blocking_calls) +
         ", \"bytes\": " + std::to_string(bytes) + ", \"failed\": " + std::to_string(failed) +
         ", \"peak_occupancy\": " + std::to_string(peak_occupancy) +
         ", \"latency_ns\": {\"p50\": " + std::to_string(latency_p50_ns) +
         ", \"p99\": " + std::to_string(latency_p99_ns) +
         ", \"max\": " + std::to_string(latency_max_ns) + "}}";
}

// --- runtime ----------------------------------------------------------------------------------

// Each service thread keeps its own statistics (no shared counters on the hot path); the
// mutex is only contended when statistics() or made_progress() reads them. Aligned so that two
// threads' states never share a cache line.
struct alignas(64) Runtime::ThreadState {
  std::mutex mutex;
  Statistics counts;
  LatencyHistogram latency;
};

Runtime::Runtime(RingBuffer& ring, RuntimeOptions options) : ring_(ring), options_(options) {
  if (options_.service_threads == 0 || options_.service_threads > 256)
    fail("hostcall runtime", "service_threads must be between 1 and 256, got " +
                                 std::to_string(options_.service_threads));
}

Runtime::~Runtime() { stop(); }

void Runtime::register_handler(uint32_t service, Handler handler) {
  if (running_) fail("hostcall runtime", "register handlers before start()");
  if (service == protocol::kServiceReserved) fail("hostcall runtime", "service id 0 is reserved");
  if (!handler) fail("hostcall runtime", "empty handler for service " + std::to_string(service));
  if (!handlers_.emplace(service, std::move(handler)).second)
    fail("hostcall runtime", "service " + std::to_string(service) + " already has a handler");
}

void Runtime::start() {
  if (running_) return;
  stop_requested_.store(false, std::memory_order_relaxed);
  // Statistics accumulate over the runtime's lifetime, across stop/start.
  if (states_.empty())
    for (unsigned i = 0; i < options_.service_threads; ++i)
      states_.push_back(std::make_unique<ThreadState>());
  for (unsigned i = 0; i < options_.service_threads; ++i)
    threads_.emplace_back([this, i] { service_loop(*states_[i], i); });
  running_ = true;
}

void Runtime::stop() {
  if (!running_) return;
  stop_requested_.store(true, std::memory_order_release);
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  running_ = false;
}

bool Runtime::service_one(SlotHeader* slot, uint64_t seq, ThreadState& state) {
  // Exactly one service thread wins the claim.
  uint64_t expected = seq;
  if (!__atomic_compare_exchange_n(&slot->seq, &expected, seq + 1, false, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED))
    return false;
  const uint64_t started = now_ns();
  const protocol::Ring& ring = ring_.host_view();
  Request request(ring, slot);
  const bool blocking = request.blocking();
  const uint64_t mask =
      request.active_mask() & (ring.lanes >= 64 ? ~uint64_t{0} : (uint64_t{1} << ring.lanes) - 1);
  const uint64_t bytes = request.uniform().size() +
                         uint64_t{protocol::host_ops::count_lanes(mask)} * ring.words_per_lane * 8;
  bool failed = false;
  auto handler = handlers_.find(request.service());
  if (handler == handlers_.end()) {
    request.set_status(protocol::kUnknownService);
    failed = true;
  } else {
    try {
      handler->second(request);
      failed = slot->status != protocol::kOk;
    } catch (...) {
      request.set_status(protocol::kHandlerFailed);
      failed = true;
    }
  }
  const uint64_t turn = seq >> protocol::kPhaseBits;
  protocol::host_ops::store_release(&slot->seq,
                                    blocking ? protocol::make_seq(turn, protocol::kReplied)
                                             : protocol::make_seq(turn + 1, protocol::kFree));
  const uint64_t finished = now_ns();
  std::lock_guard lock(state.mutex);
  ++state.counts.calls;
  state.counts.blocking_calls += blocking;
  state.counts.bytes += bytes;
  state.counts.failed += failed;
  state.latency.record(finished - started);
  return true;
}

void Runtime::service_loop(ThreadState& state, unsigned index) {
  const protocol::Ring& ring = ring_.host_view();
  const uint32_t n = ring.slot_count;
  const unsigned threads = options_.service_threads;
  // Thread k owns the groups of `group` consecutive slots whose number is k modulo the thread
  // count. Tickets go round the ring in order, so the requests in flight fill a window of
  // consecutive slots: interleaved shares give every thread its part of that window, where
  // contiguous shares (a quarter of the ring each) leave the threads outside the window idle and
  // stealing in the busy ones' shares, racing them for the same lines. A thread scans the whole
  // ring every 16th pass and whenever its share had nothing ready: a thread held up by a slow
  // handler delays the requests of its share by 16 passes of the others at most.
  const uint32_t group = std::clamp<uint32_t>(n / threads, 1, kGroupSlots);
  const uint32_t stride = group * threads;
  const uint32_t first = index * group;

  // The ready slots a scan finds are serviced in batches, their lines prefetched first: every
  // line of a request was written by the producer, so each is a cache miss, and a batch's
  // misses then overlap instead of following one another.
  std::array<std::pair<SlotHeader*, uint64_t>, kBatch> found;
  size_t found_count = 0;
  auto service_found = [&] {
    for (size_t i = 0; i < found_count; ++i) service_one(found[i].first, found[i].second, state);
    found_count = 0;
  };
  const uint64_t prefetch_bytes = std::min<uint64_t>(ring.slot_stride, kPrefetchLines * 64);
  auto consider = [&](uint32_t i) -> uint64_t {
    SlotHeader* slot = protocol::slot_header(ring, i);
    const uint64_t seq = protocol::host_ops::load_acquire(&slot->seq);
    if ((seq & kPhaseMask) != protocol::kReady) return 0;
    // For writing: the claim, the status and the reply words all go to these lines.
    const auto* bytes = reinterpret_cast<const uint8_t*>(slot);
    for (uint64_t offset = 0; offset < prefetch_bytes; offset += 64)
      __builtin_prefetch(bytes + offset, 1);
    found[found_count++] = {slot, seq};
    if (found_count == found.size()) service_found();
    return 1;
  };
  auto scan_share = [&] {
    uint64_t ready = 0;
    for (uint32_t g = first; g < n; g += stride)
      for (uint32_t i = g; i < g + group && i < n; ++i) ready += consider(i);
    service_found();
    return ready;
  };
  auto scan_whole = [&] {
    uint64_t ready = 0;
    for (uint32_t i = 0; i < n; ++i) ready += consider((first + i) & (n - 1));
    service_found();
    return ready;
  };
  uint32_t idle_passes = 0;
  for (uint64_t pass = 0;; ++pass) {
    const bool stopping = stop_requested_.load(std::memory_order_acquire);
    const bool whole = stopping || threads == 1 || pass % 16 == 0;
    uint64_t ready = whole ? scan_whole() : scan_share();
    if (ready == 0 && !whole) ready = scan_whole();
    if (ready > 0) {
      idle_passes = 0;
      std::lock_guard lock(state.mutex);
      state.counts.peak_occupancy = std::max(state.counts.peak_occupancy, ready);
      continue;
    }
    // A whole pass found nothing after stop was asked for: everything published before is done.
    if (stopping) return;
    ++idle_passes;
    if (idle_passes < 64) {
      std::this_thread::yield();
    } else {
      const uint32_t shift = std::min<uint32_t>(idle_passes - 64, 16);
      const uint32_t us =
          std::min<uint32_t>(1u << shift, std::max<uint32_t>(1, options_.max_idle_sleep_us));
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
  }
}

bool Runtime::made_progress() {
  uint64_t serviced = 0;
  for (const auto& state : states_) {
    std::lock_guard lock(state->mutex);
    serviced += state->counts.calls;
  }
  if (last_asked_.exchange(serviced, std::memory_order_relaxed) != serviced) return true;
  const protocol::Ring& ring = ring_.host_view();
  for (uint32_t i = 0; i < ring.slot_count; ++i) {
    const uint64_t phase =
        protocol::host_ops::load_acquire(&protocol::slot_header(ring, i)->seq) & kPhaseMask;
    if (phase == protocol::kReady || phase == protocol::kClaimed) return true;
  }
  return false;
}

Statistics Runtime::statistics() const {
  Statistics total;
  LatencyHistogram latency;
  for (const auto& state : states_) {
    std::lock_guard lock(state->mutex);
    total.calls += state->counts.calls;
    total.blocking_calls += state->counts.blocking_calls;
    total.bytes += state->counts.bytes;
    total.failed += state->counts.failed;
    total.peak_occupancy = std::max(total.peak_occupancy, state->counts.peak_occupancy);
    latency.merge(state->latency);
  }
  total.latency_p50_ns = latency.quantile(0.50);
  total.latency_p99_ns = latency.quantile(0.99);
  total.latency_max_ns = latency.max();
  return total;
}

}  // namespace wavekit::hostcall
