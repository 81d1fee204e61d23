#include "queues.h"

#include <elf.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ven_amd_aqlprofile.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace wavekit::kfd {

namespace {

constexpr uint64_t kPacketBytes = 64;
// The vendor-specific packet's format (its bytes 2-3) for a PM4 indirect buffer: ROCr's
// AMD_AQL_FORMAT_PM4_IB (core/inc/amd_aql_queue.h), which no public header exports.
constexpr unsigned kAmdAqlFormatPm4Ib = 1;

uint16_t load_header(const void* packet) {
  return __atomic_load_n(static_cast<const uint16_t*>(packet), __ATOMIC_ACQUIRE);
}

unsigned packet_type(uint16_t header) {
  return (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%llx", (unsigned long long)value);
  return text;
}

int64_t signal_value(uint64_t handle) {
  return __atomic_load_n(&reinterpret_cast<amd_signal_t*>(handle)->value, __ATOMIC_ACQUIRE);
}

// The amd_queue_t whose write_dispatch_id is the write pointer user space gave CREATE_QUEUE
// (ROCr's; a program of its own lays one out the same way).
const amd_queue_t* amd_queue(const Queue& queue) {
  return reinterpret_cast<const amd_queue_t*>(queue.write_pointer -
                                              offsetof(amd_queue_t, write_dispatch_id));
}

}  // namespace

uint64_t gpu_clock() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

CommandProcessor::CommandProcessor(emu::Processor processor, emu::MemoryMap& memory,
                                   std::function<void(uint32_t)> signal_event,
                                   std::function<void(const char*)> log)
    : processor_(processor),
      memory_(memory),
      signal_event_(std::move(signal_event)),
      log_(std::move(log)),
      thread_([this] { run(); }) {}

CommandProcessor::~CommandProcessor() {
  stop_ = true;
  thread_.join();
}

void CommandProcessor::add(uint32_t id, const Queue& queue) {
  std::lock_guard lock(mutex_);
  queues_[id] = queue;
}

void CommandProcessor::remove(uint32_t id) {
  std::lock_guard lock(mutex_);
  queues_.erase(id);
}

void CommandProcessor::forget_code(uint64_t base) {
  std::lock_guard lock(mutex_);
  if (code_objects_.erase(base)) code_.remove_object(reinterpret_cast<const void*>(base));
}

void CommandProcessor::run() {
  // A real command processor is woken by the doorbell write; here the write indices are polled,
  // backing off to a millisecond while every queue is idle.
  auto idle = std::chrono::microseconds(20);
  while (!stop_) {
    bool worked = false;
    {
      std::lock_guard lock(mutex_);
      for (auto& [id, queue] : queues_) {
        auto* read = reinterpret_cast<uint64_t*>(queue.read_pointer);
        auto* write = reinterpret_cast<uint64_t*>(queue.write_pointer);
        uint64_t index = __atomic_load_n(read, __ATOMIC_ACQUIRE);
        while (index < __atomic_load_n(write, __ATOMIC_ACQUIRE) && process(queue, index)) {
          ++index;  // process has published it
          worked = true;
        }
      }
    }
    if (worked)
      idle = std::chrono::microseconds(20);
    else {
      std::this_thread::sleep_for(idle);
      idle = std::min<std::chrono::microseconds>(idle * 2, std::chrono::milliseconds(1));
    }
  }
}

bool CommandProcessor::process(Queue& queue, uint64_t index) {
  uint64_t slots = queue.ring_bytes / kPacketBytes;
  auto* packet = reinterpret_cast<unsigned char*>(queue.ring + (index % slots) * kPacketBytes);
  uint16_t header = load_header(packet);
  unsigned type = packet_type(header);
  if (type == HSA_PACKET_TYPE_INVALID)
    return false;  // the producer has reserved the slot but not published the packet yet
  uint64_t completion = 0;
  // A packet starts when it is processed: for a barrier, the call that finds it ready.
  const uint64_t start_ns = gpu_clock();
  switch (type) {
    case HSA_PACKET_TYPE_KERNEL_DISPATCH: {
      auto* p = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(packet);
      completion = p->completion_signal.handle;
      dispatch(p, queue, index);
      break;
    }
    case HSA_PACKET_TYPE_BARRIER_AND:
    case HSA_PACKET_TYPE_BARRIER_OR: {
      auto* p = reinterpret_cast<hsa_barrier_and_packet_t*>(packet);
      unsigned met = 0, named = 0;
      for (const hsa_signal_t& dep : p->dep_signal)
        if (dep.handle) {
          ++named;
          met += signal_value(dep.handle) == 0;
        }
      bool ready = type == HSA_PACKET_TYPE_BARRIER_AND ? met == named : (named == 0 || met > 0);
      if (!ready) return false;
      completion = p->completion_signal.handle;
      log_(type == HSA_PACKET_TYPE_BARRIER_AND ? "queue: barrier-and" : "queue: barrier-or");
      break;
    }
    case HSA_PACKET_TYPE_VENDOR_SPECIFIC:
      if ((packet[2] | packet[3] << 8) == kAmdAqlFormatPm4Ib) {
        // ROCr sends PM4 indirect buffers for cache maintenance (its code-cache invalidation
        // after loading an executable). The emulated GPU has no caches between it and host
        // memory, so the IB is not decoded; only the completion is signalled.
        completion =
            reinterpret_cast<hsa_ext_amd_aql_pm4_packet_t*>(packet)->completion_signal.handle;
        log_("queue: PM4 indirect buffer (not decoded: cache maintenance)");
        break;
      }
      [[fallthrough]];
    default:
      // Vendor-specific and agent-dispatch packets: a real GPU would raise a queue error; ROCr
      // then aborts the process. Say so and stop here rather than leave the waiter hanging.
      std::fprintf(stderr,
                   "wavekit: kfd: AQL packet type %u (header 0x%x, format 0x%x) at index %llu is "
                   "not emulated\n",
                   type, header, unsigned(packet[2] | packet[3] << 8), (unsigned long long)index);
      std::abort();
  }
  // The slot and the read index go back to the producer before the completion is signalled,
  // as the packet processor's contract has it: a waiter woken by the signal sees both.
  __atomic_store_n(reinterpret_cast<uint16_t*>(packet),
                   uint16_t(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE), __ATOMIC_RELEASE);
  __atomic_store_n(reinterpret_cast<uint64_t*>(queue.read_pointer), index + 1, __ATOMIC_RELEASE);
  complete(completion, queue, start_ns);
  return true;
}

void CommandProcessor::register_code(const emu::MemoryMap::Range& range) {
  try {
    code_.add_object(processor_, reinterpret_cast<const void*>(range.base), range.size, 0);
    code_objects_[range.base] = range.size;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavekit: kfd: cannot register the code at 0x%llx: %s\n",
                 (unsigned long long)range.base, e.what());
  }
}

void CommandProcessor::register_code_objects() {
  // ROCr's loader places each code object of an executable in a buffer of its own, the image
  // from virtual address 0 and so its ELF header first; a kernel may call into another one (a
  // tool's probe library loaded beside the instrumented object). Every buffer that holds an
  // AMDGPU image by now is registered. The header is read with process_vm_readv: a buffer user
  // space mapped PROT_NONE on the host gives EFAULT instead of a crash.
  for (const emu::MemoryMap::Range& range : memory_.ranges()) {
    if (code_objects_.count(range.base) || range.host_base != range.base ||
        range.size < sizeof(Elf64_Ehdr))
      continue;
    Elf64_Ehdr header{};
    iovec local{&header, sizeof header};
    iovec remote{reinterpret_cast<void*>(range.base), sizeof header};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(sizeof header) &&
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_machine == EM_AMDGPU)
      register_code(range);
  }
}

void CommandProcessor::dispatch(const void* packet, const Queue& queue, uint64_t index) {
  const auto& p = *static_cast<const hsa_kernel_dispatch_packet_t*>(packet);
  register_code_objects();
  // The kernel's own code object is the allocation holding its descriptor, registered whole
  // whatever its first bytes (a loader of its own may leave the ELF header out).
  if (auto range = memory_.find(p.kernel_object); range && !code_objects_.count(range->base))
    register_code(*range);
  unsigned dimensions = (p.setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3;
  emu::DispatchParams params;
  params.processor = processor_;
  params.kernel_descriptor = reinterpret_cast<const void*>(p.kernel_object);
  params.kernarg = p.kernarg_address;
  params.grid[0] = p.grid_size_x;
  params.grid[1] = dimensions >= 2 ? p.grid_size_y : 1;
  params.grid[2] = dimensions >= 3 ? p.grid_size_z : 1;
  params.workgroup[0] = p.workgroup_size_x;
  params.workgroup[1] = dimensions >= 2 ? p.workgroup_size_y : 1;
  params.workgroup[2] = dimensions >= 3 ? p.workgroup_size_z : 1;
  params.private_segment_size = p.private_segment_size;
  params.group_segment_size = p.group_segment_size;
  params.dispatch_packet = packet;
  // The queue-ptr SGPRs point at ROCr's amd_queue_t, whose write_dispatch_id is the write
  // pointer user space gave CREATE_QUEUE.
  params.queue = amd_queue(queue);
  params.dispatch_id = index;
  emu::DispatchResult result = emu::dispatch(params, memory_, code_);
  std::string line = "queue: dispatch kernel_object 0x" + hex(p.kernel_object) + " grid " +
                     std::to_string(params.grid[0]) + "x" + std::to_string(params.grid[1]) + "x" +
                     std::to_string(params.grid[2]) + " -> " +
                     std::string(emu::error_kind_name(result.error)) + ", " +
                     std::to_string(result.total_waves) + " waves";
  log_(line.c_str());
  if (!result.ok()) {
    // As a GPU fault under ROCr does: the process ends with the reason.
    std::fprintf(stderr, "wavekit: kfd: dispatch failed on the emulated GPU: %s: %s\n",
                 std::string(emu::error_kind_name(result.error)).c_str(), result.message.c_str());
    std::abort();
  }
}

void CommandProcessor::complete(uint64_t handle, const Queue& queue, uint64_t start_ns) {
  if (!handle) return;
  auto* signal = reinterpret_cast<amd_signal_t*>(handle);
  // What the CP firmware does for a queue ROCr created with profiling on (hipEventElapsedTime,
  // hsa_amd_profiling_get_dispatch_time read these): the stamps land before the value changes.
  if (amd_queue(queue)->queue_properties & AMD_QUEUE_PROPERTIES_ENABLE_PROFILING) {
    signal->start_ts = start_ns;
    signal->end_ts = gpu_clock();
  }
  int64_t before = __atomic_fetch_sub(&signal->value, 1, __ATOMIC_ACQ_REL);
  std::string line = "queue: completion signal 0x" + hex(handle) + " " + std::to_string(before) +
                     " -> " + std::to_string(before - 1) + ", mailbox 0x" +
                     hex(signal->event_mailbox_ptr) + " event " + std::to_string(signal->event_id);
  log_(line.c_str());
  // An interrupt signal: the CP's end-of-pipe write interrupts with the signal's event ID as
  // context, and the driver raises the event of that ID (whether or not the signal names a
  // mailbox; ROCr 5.2's signals name none). Event IDs start at 1: 0 is a signal without one.
  if (signal->event_mailbox_ptr)
    __atomic_store_n(reinterpret_cast<uint64_t*>(signal->event_mailbox_ptr),
                     uint64_t(signal->event_id), __ATOMIC_RELEASE);
  if (signal->event_id) signal_event_(signal->event_id);
}

}  // namespace wavekit::kfd
