// The host side of hostcall: the ring's memory and the service threads that answer requests.
//
//   wavekit::hostcall::RingBuffer ring({.slots = 1024, .lanes = 64});
//   wavekit::hostcall::Runtime runtime(ring, {.service_threads = 2});
//   runtime.register_handler(100, [](wavekit::hostcall::Request& request) { ... });
//   runtime.start();
//   ... producers call protocol::call(ring.descriptor(), ...) ...
//   runtime.stop();   // services every request already published, then joins
//
// docs/hostcall.md is the user's guide.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "wavekit/hostcall/protocol.h"

namespace wavekit::hostcall {

struct RingConfig {
  uint32_t slots = 1024;         // power of two; at least the number of resident waves
  uint32_t lanes = 64;           // 64 for AMDGPU waves, 32 for CUDA warps, any for host threads
  uint32_t words_per_lane = 8;   // 64-bit payload words per lane (>= protocol::kReplyWords)
  uint32_t uniform_bytes = 256;  // wave-uniform bytes per slot (multiple of 8)
};

// The symbol through which a code object's probes reach the ring (a protocol::Ring*;
// protocol.h declares it for device code). A launcher binds it after loading: it stores the
// ring's address in it when a loaded object defines it (the probe SDK, wavekit/probe/hostcall.h,
// does), or binds an undefined reference to a cell holding that address; then it serves the
// ring while the kernel runs.
inline constexpr const char* kRingSymbol = "wavekit_hostcall_ring";

// The ring launchers give probes: as many slots as the emulator's default resident waves, 8
// words per lane (print: 7 arguments; file write: 48 bytes per lane), 256 uniform bytes (format
// strings, paths and uniform file chunks up to that).
inline constexpr RingConfig kProbeRingConfig{
    .slots = 1024, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 256};

// The ring's slots and ticket counter. By default it owns zeroed host memory; a GPU runtime
// passes memory it allocated (host-coherent for the slots) and the producers' addresses of it.
class RingBuffer {
 public:
  // Throws wavekit::Error naming the bad field.
  explicit RingBuffer(const RingConfig& config);
  // External memory: `slots` (host view, `bytes_for(config)` long, zeroed by this constructor),
  // `slots_device_address` the producers' address of the same bytes, and the producers' address
  // of a zeroed 64-bit ticket counter.
  RingBuffer(const RingConfig& config, void* slots, uint64_t slots_device_address,
             uint64_t ticket_device_address);
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  static uint64_t bytes_for(const RingConfig& config);

  const RingConfig& config() const { return config_; }
  // The descriptor the producers use (their addresses).
  const protocol::Ring& descriptor() const { return device_view_; }
  // The same ring as the host sees it (host addresses; its ticket is null for external memory).
  const protocol::Ring& host_view() const { return host_view_; }

 private:
  RingConfig config_;
  std::unique_ptr<uint8_t, void (*)(uint8_t*)> owned_{nullptr, nullptr};
  protocol::Ring host_view_{};
  protocol::Ring device_view_{};
};

// One request as a handler sees it. Lane words may be overwritten with the reply: lane l's
// first protocol::kReplyWords words go back to lane l of a blocking caller.
class Request {
 public:
  Request(const protocol::Ring& ring, protocol::SlotHeader* slot) : ring_(ring), slot_(slot) {}

  uint32_t service() const { return slot_->service; }
  uint64_t wave_id() const { return slot_->wave_id; }
  uint64_t active_mask() const { return slot_->active_mask; }
  bool blocking() const { return (slot_->flags & protocol::kFlagBlocking) != 0; }
  uint32_t lanes() const { return ring_.lanes; }
  bool lane_active(uint32_t lane) const { return lane < 64 && (slot_->active_mask >> lane & 1); }
  std::span<const uint8_t> uniform() const;
  std::span<uint64_t> lane_words(uint32_t lane);
  // Sets the reply status (protocol::Status); kOk unless changed.
  void set_status(uint32_t status) { slot_->status = status; }

 private:
  const protocol::Ring& ring_;
  protocol::SlotHeader* slot_;
};

// Handlers run on service threads, several at once when there are several threads: they must
// be thread-safe. A handler that throws marks the request kHandlerFailed (and is counted).
using Handler = std::function<void(Request&)>;

struct RuntimeOptions {
  unsigned service_threads = 1;
  // Idle service threads back off from spinning to sleeping up to this long between scans.
  uint32_t max_idle_sleep_us = 50;
};

struct Statistics {
  uint64_t calls = 0;           // requests serviced
  uint64_t blocking_calls = 0;  // of which the caller waited for a reply
  uint64_t bytes = 0;           // request bytes read: uniform bytes + active lanes' words
  uint64_t failed = 0;          // unknown service, handler threw or refused
  uint64_t peak_occupancy = 0;  // most requests found ready in one scan of the ring
  // Service latency: from the scan that found a request ready to its reply being published,
  // in nanoseconds (so it includes waiting behind other requests in the same scan).
  uint64_t latency_p50_ns = 0;
  uint64_t latency_p99_ns = 0;
  uint64_t latency_max_ns = 0;
  std::string to_json() const;
};

// Latency histogram with buckets of 1/16 of a power of two (error under 7%): constant memory,
// no allocation while recording.
class LatencyHistogram {
 public:
  void record(uint64_t nanoseconds);
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 when empty.
  uint64_t quantile(double q) const;

 private:
  static constexpr int kSubBuckets = 16;
  static constexpr int kBuckets = 64 * kSubBuckets;
  static int bucket_of(uint64_t value);
  static uint64_t upper_bound_of(int bucket);
  uint64_t counts_[kBuckets] = {};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

class Runtime {
 public:
  Runtime(RingBuffer& ring, RuntimeOptions options = {});
  ~Runtime();  // stops
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Before start(); throws wavekit::Error for id 0 or an id already taken.
  void register_handler(uint32_t service, Handler handler);

  void start();
  // Services every request published before the call, then joins the threads. Producers must
  // have stopped publishing (a request published after stop() returns waits for the next start).
  void stop();
  bool running() const { return running_; }

  Statistics statistics() const;

  // True when a request was serviced since the previous call, or a published request is not
  // answered yet: producers that spin on the ring are then waiting on the host (however slow
  // it is), not on each other. A deadlock detector asks this before blaming the producers
  // (emu::DispatchOptions::outside_progress). Thread-safe; scans the ring when nothing moved.
  bool made_progress();

 private:
  struct ThreadState;
  void service_loop(ThreadState& state, unsigned index);
  bool service_one(protocol::SlotHeader* slot, uint64_t seq, ThreadState& state);

  RingBuffer& ring_;
  RuntimeOptions options_;
  std::unordered_map<uint32_t, Handler> handlers_;
  std::vector<std::unique_ptr<ThreadState>> states_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_requested_{false};
  // Requests serviced (summed over the threads' statistics) when made_progress() last looked.
  std::atomic<uint64_t> last_asked_{0};
  bool running_ = false;
};

}  // namespace wavekit::hostcall
