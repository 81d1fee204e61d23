// The AMD backend over the HSA API, as an HSA tools library (HSA_TOOLS_LIB loads it and the
// runtime calls OnLoad with its API table). Queues the application creates become intercept
// queues; for every kernel dispatch packet the submitting thread records its calling context
// (one launch-table slot, as on NVIDIA) and the packet's completion signal is swapped for one
// of ours, whose async handler reads the dispatch's start/end time, forwards completion to the
// application's signal and hands the record to the session's consumer thread. Barrier and
// other packets pass through untouched. Devices are described when the application creates
// its first queue on them, and reach the session through the sink (poll).
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "session.h"

namespace wavekit::profile {

class HsaBackend final : public Backend {
 public:
  // The runtime's table (OnLoad's), which start() installs into.
  void use_table(HsaApiTable* table) { table_ = table; }
  // Replaces entries of `table` (the runtime's or a test's); the originals are kept and called.
  // Throws wavekit::Error naming the missing function when the table lacks what it needs, and
  // then replaces nothing.
  void install(HsaApiTable* table, Session* session);

  // Backend: records are fixed-size structs in our own buffers.
  void start(Session& session) override { install(table_, &session); }
  void decode(const RawBuffer& buffer, RecordSink& sink) override;
  void release(const RawBuffer& buffer) override;
  void flush(bool forced) override;
  void poll(RecordSink& sink, bool final) override;

  std::uint64_t dispatches_seen() const { return dispatches_.load(std::memory_order_relaxed); }
  // Completion signals created so far (the pool's size: it grows only with dispatches in flight).
  std::size_t signals_created() const;

  // The interposed functions (static so they fit the table's function pointers).
  static hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                   void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                   uint32_t private_segment_size, uint32_t group_segment_size,
                                   hsa_queue_t** queue);
  static hsa_status_t executable_freeze(hsa_executable_t executable, const char* options);

 private:
  // One in-flight dispatch: our completion signal and what its handler needs. Slots are pooled
  // with their signals, so a dispatch allocates nothing once the pool is warm.
  struct Slot {
    hsa_signal_t ours{};
    hsa_signal_t original{};
    hsa_agent_t agent{};
    std::uint64_t correlation = 0;
    std::uint32_t kernel = 0;
    std::uint32_t device = 0;
  };
  struct Record {
    std::uint64_t correlation, start_ns, end_ns;
    std::uint32_t kernel, device;
  };

  static void on_submit(const void* packets, uint64_t count, uint64_t user_index, void* data,
                        hsa_amd_queue_intercept_packet_writer writer);
  static bool on_complete(hsa_signal_value_t value, void* arg);
  // A pooled slot filled with the dispatch's kernel and device (one lock), or nullptr.
  Slot* take_slot(std::uint64_t kernel_object, hsa_agent_t agent);
  void give_slot(Slot* slot);
  // The agent's name, product, CUs, clocks and bus width as device `device`, for the sink.
  void describe_device(hsa_agent_t agent, std::uint32_t device);
  void deliver_devices(RecordSink& sink);
  void append(const Record& record);
  void submit_open_buffer();  // with mutex_ held

  HsaApiTable* table_ = nullptr;
  CoreApiTable original_core_{};
  AmdExtTable original_amd_{};
  Session* session_ = nullptr;
  double ns_per_tick_ = 1.0;
  std::atomic<std::uint64_t> next_correlation_{1};
  std::atomic<std::uint64_t> dispatches_{0};

  mutable std::mutex mutex_;  // names, queues, the slot pool and the open buffer
  std::unordered_map<std::uint64_t, std::uint32_t> kernel_by_object_;
  std::deque<std::string> names_{"<unknown kernel>"};  // deque: elements never move
  std::deque<hsa_agent_t> queue_agents_;               // each intercept queue's handler data
  std::unordered_map<std::uint64_t, std::uint32_t> device_by_agent_;
  std::vector<std::pair<std::uint32_t, DeviceInfo>> undelivered_devices_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_slots_;
  std::vector<std::unique_ptr<std::uint8_t[]>> buffers_;
  std::vector<std::uint8_t*> free_buffers_;
  RawBuffer open_{};
};

// The one instance the interposed functions use.
HsaBackend& hsa_backend();

}  // namespace wavekit::profile
