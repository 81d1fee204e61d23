// What a backend (CUPTI, CUDA events, HSA) implements: how it is configured, attached and
// started (driven by Profiler, profiler.h, the one lifecycle every backend library goes
// through), and what the session's consumer thread asks of it: its buffers decoded into the
// sink, collection switched on and off, completed records flushed, records polled.
#pragma once

#include <cstddef>
#include <cstdint>

#include "aggregator.h"
#include "wavekit/profile/profile_data.h"

namespace wavekit::profile {

class Session;
struct SessionConfig;

// A finished buffer of backend records, decoded on the consumer thread.
struct RawBuffer {
  std::uint8_t* data = nullptr;
  std::size_t valid_bytes = 0;
  std::size_t capacity = 0;
};

// Where a backend's records go, on the consumer thread: kernels, whole graphs, what it lost,
// and the devices they ran on (described once each, before or with the device's first record).
class RecordSink {
 public:
  virtual void kernel(const KernelActivity& record) = 0;
  virtual void graph(const GraphActivity& record) = 0;
  virtual void dropped(std::uint64_t count) = 0;
  virtual void device(std::uint32_t id, const DeviceInfo& info) = 0;

 protected:
  ~RecordSink() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- lifecycle (Profiler), in this order ----
  // Checks and completes the configuration read from the environment (how kernel names are
  // shown, what the backend needs), before anything is attached. Throws wavekit::Error, with
  // the reason, when this backend cannot serve it.
  virtual void configure(SessionConfig& /*config*/) {}
  // Attaches to the runtime for `session` (which outlives the process): from now on launches
  // are reported to it. Throws wavekit::Error, having attached nothing, when it cannot.
  virtual void start(Session& session) = 0;
  // What one of its records is, for the report at stop ("kernels", "launches timed").
  virtual const char* records() const { return "kernels"; }

  // ---- consumer thread ----
  virtual void decode(const RawBuffer& buffer, RecordSink& sink) = 0;
  virtual void release(const RawBuffer& buffer) = 0;
  // Collection on or off: at start, when collecting from the beginning, and in sampled mode
  // between windows (CUPTI: activity and callbacks).
  virtual void set_collecting(bool) {}
  // Asks for completed buffers without waiting for the GPU (never a synchronisation); forced
  // at stop.
  virtual void flush(bool /*forced*/) {}
  // Consumer thread, every loop (at most 10 ms apart) and once more at stop (`final`): a
  // backend that has no buffers to submit hands its records to the sink here.
  virtual void poll(RecordSink& /*sink*/, bool /*final*/) {}
  // Now, in the timebase of KernelActivity timestamps (for consumer-lag accounting).
  virtual std::uint64_t now_ns();
};

}  // namespace wavekit::profile
