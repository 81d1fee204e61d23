// The emulated /dev/kfd (and the render node it is paired with): the ioctls libhsakmt and ROCr
// issue, and the mmap of the offsets they return. Memory is host memory at the virtual address
// user space chooses, so a GPU virtual address is a host address, as the emulator expects.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "wavekit/kfd/topology.h"

namespace wavekit::emu {
class MemoryMap;
}

namespace wavekit::kfd {

class CommandProcessor;

class Device {
 public:
  // log: where every call is recorded (one line each), or null.
  Device(Target target, std::FILE* log);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Target& target() const { return target_; }

  // An ioctl on the /dev/kfd fd: the driver's return value (0, or -1 with errno set).
  int kfd_ioctl(unsigned long request, void* arg);
  // An ioctl on the render node: libdrm's calls are interposed above the ioctl level, so any
  // DRM ioctl that reaches here is one no emulated path answers.
  int render_ioctl(unsigned long request, void* arg);
  // mmap of the kfd or render fd at a file offset an allocation returned: the allocation's
  // pages mapped at addr (MAP_FIXED as user space asks), or MAP_FAILED with errno.
  void* map(void* addr, size_t length, int prot, int flags, off_t offset);

  // Records a line in the log (printf-style), if there is one.
  void log(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  struct Buffer {
    uint64_t va = 0;
    uint64_t size = 0;
    uint32_t flags = 0;
    uint64_t offset = 0;  // the mmap offset handed out
    int fd = -1;          // the pages (a memfd), shared by every mapping of the buffer
  };
  struct Event {
    uint32_t type = 0;
    bool auto_reset = false;
    bool signaled = false;
  };

  int alloc_memory(void* arg);
  int free_memory(void* arg);
  int create_event(void* arg);
  int wait_events(void* arg);
  int create_queue(void* arg);
  int destroy_queue(void* arg);
  void signal_event(uint32_t id);
  int fail(unsigned long request, int error, const char* why);

  Target target_;
  std::FILE* log_;
  std::mutex mutex_;
  std::condition_variable events_changed_;
  std::map<uint64_t, Buffer> buffers_;  // by handle
  std::map<uint32_t, Event> events_;    // by event ID
  uint64_t next_handle_ = 1;
  uint32_t next_event_ = 1;
  // What the emulated GPU may touch: every buffer at its GPU (= host) address.
  std::unique_ptr<emu::MemoryMap> memory_;
  // The process's doorbell page (one 8-byte doorbell per queue), a buffer of its own.
  uint64_t doorbell_handle_ = 0;
  uint32_t next_queue_ = 0;
  // Started with the first queue.
  std::unique_ptr<CommandProcessor> command_processor_;
};

// The name of a KFD ioctl request ("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), or null.
const char* ioctl_name(unsigned long request);

}  // namespace wavekit::kfd
