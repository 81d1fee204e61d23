// The emulated command processor: a thread that watches the AQL queues user space created,
// runs their kernel dispatches on the emulator and signals their completion.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "wavekit/emu/emu.h"

namespace wavekit::kfd {

struct Queue {
  uint64_t ring = 0;        // host address of the ring buffer
  uint64_t ring_bytes = 0;  // its size
  uint64_t read_pointer = 0;
  uint64_t write_pointer = 0;  // where user space publishes its write index
};

// The emulated GPU's clock: nanoseconds of CLOCK_MONOTONIC_RAW. GET_CLOCK_COUNTERS reports it
// as the GPU counter and the command processor stamps profiled signals with it, so that ROCr's
// translation of GPU ticks to system time (from pairs of counters) holds for both.
uint64_t gpu_clock();

class CommandProcessor {
 public:
  // signal_event(id): what the device does when a completion signal names a KFD event.
  CommandProcessor(emu::Processor processor, emu::MemoryMap& memory,
                   std::function<void(uint32_t)> signal_event,
                   std::function<void(const char*)> log);
  ~CommandProcessor();
  CommandProcessor(const CommandProcessor&) = delete;
  CommandProcessor& operator=(const CommandProcessor&) = delete;

  void add(uint32_t id, const Queue& queue);
  void remove(uint32_t id);
  // Forgets a code object whose memory is freed (its range starts at base).
  void forget_code(uint64_t base);

 private:
  void run();
  // Processes the packet at the queue's read index; false when it cannot be yet (not written,
  // or a barrier whose dependencies are not met).
  bool process(Queue& queue, uint64_t index);
  void dispatch(const void* packet, const Queue& queue, uint64_t index);
  // Registers the buffers that hold AMDGPU code objects (ELF images from vaddr 0) as code.
  void register_code_objects();
  void register_code(const emu::MemoryMap::Range& range);
  // Decrements the completion signal and raises its event; on a queue with profiling enabled,
  // first stamps the signal with the packet's start (start_ns) and end (now).
  void complete(uint64_t signal, const Queue& queue, uint64_t start_ns);

  emu::Processor processor_;
  emu::MemoryMap& memory_;
  emu::CodeCache code_;
  std::map<uint64_t, uint64_t> code_objects_;  // registered code ranges: base -> size
  std::function<void(uint32_t)> signal_event_;
  std::function<void(const char*)> log_;
  std::mutex mutex_;
  std::map<uint32_t, Queue> queues_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace wavekit::kfd
