// A backend that plays CUPTI's part for CPU-side tests: fixed-size buffers from a bounded
// pool (so a producer that outruns the consumer blocks, as CUPTI drops or waits), holding
// packed synthetic kernel records that decode into KernelActivity.
#pragma once

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "session.h"

namespace wavekit::profile::testing {

struct SyntheticRecord {
  std::uint64_t correlation;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t graph_node_id;
  std::uint32_t device;
  std::uint32_t kernel;  // index into SyntheticBackend::kernel_names
};

class SyntheticBackend final : public Backend {
 public:
  SyntheticBackend(std::vector<std::string> names, std::size_t records_per_buffer,
                   std::size_t pool_buffers)
      : kernel_names(std::move(names)), records_per_buffer_(records_per_buffer) {
    storage_.resize(pool_buffers);
    for (auto& s : storage_) {
      s.resize(records_per_buffer * sizeof(SyntheticRecord));
      free_.push_back(s.data());
    }
  }

  // Blocks until a buffer is free.
  RawBuffer acquire() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return !free_.empty(); });
    RawBuffer b{free_.back(), 0, records_per_buffer_ * sizeof(SyntheticRecord)};
    free_.pop_back();
    return b;
  }
  static void append(RawBuffer& buffer, const SyntheticRecord& record) {
    std::memcpy(buffer.data + buffer.valid_bytes, &record, sizeof record);
    buffer.valid_bytes += sizeof record;
  }
  bool full(const RawBuffer& buffer) const {
    return buffer.valid_bytes + sizeof(SyntheticRecord) > buffer.capacity;
  }

  void decode(const RawBuffer& buffer, RecordSink& sink) override {
    for (std::size_t off = 0; off + sizeof(SyntheticRecord) <= buffer.valid_bytes;
         off += sizeof(SyntheticRecord)) {
      SyntheticRecord r;
      std::memcpy(&r, buffer.data + off, sizeof r);
      KernelActivity a;
      a.correlation = r.correlation;
      a.start_ns = r.start_ns;
      a.end_ns = r.end_ns;
      a.device = r.device;
      a.kernel_name = kernel_names.at(r.kernel);
      a.graph_node_id = r.graph_node_id;
      sink.kernel(a);
    }
    sink.dropped(dropped_to_report);
    dropped_to_report = 0;
  }
  void release(const RawBuffer& buffer) override {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(buffer.data);
    }
    cv_.notify_one();
  }
  void start(Session&) override {}  // the test plays the records itself
  void flush(bool) override { ++flushes; }
  std::uint64_t now_ns() override { return 0; }

  std::vector<std::string> kernel_names;
  std::uint64_t dropped_to_report = 0;
  std::atomic<int> flushes{0};

 private:
  std::size_t records_per_buffer_;
  std::vector<std::vector<std::uint8_t>> storage_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::uint8_t*> free_;
};

}  // namespace wavekit::profile::testing
