#include "wavekit/kfd/device.h"

#include <linux/kfd_ioctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <exception>
#include <utility>

#include "queues.h"
#include "wavekit/emu/emu.h"

namespace wavekit::kfd {

namespace {

// The process apertures of a gfx9 device as the driver sets them (kfd_init_apertures_v9): LDS
// and scratch in their own 48-bit-high windows, the GPUVM range covering the user half of the
// host's address space, so that libhsakmt's SVM aperture can put GPU buffers at host addresses.
constexpr uint64_t kLdsBase = uint64_t(1) << 48;
constexpr uint64_t kScratchBase = uint64_t(2) << 48;
constexpr uint64_t kGpuvmBase = uint64_t(1) << 24;
constexpr uint64_t kGpuvmLimit = (uint64_t(1) << 47) - 1;
constexpr uint64_t window_limit(uint64_t base) {
  return (base & 0xFFFFFFFF00000000ull) | 0xFFFFFFFFull;
}

// Offsets handed out for mmap: one 4 GiB window per buffer handle, above anything a file offset
// of a real device would use, so that offset -> buffer is a division.
constexpr uint64_t kOffsetShift = 32;

void add_to_memory_map(emu::MemoryMap& memory, uint64_t va, uint64_t size, const char* label) {
  try {
    memory.add(reinterpret_cast<const void*>(va), size, emu::MemoryMap::kReadWrite, label);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavekit: kfd: the emulated GPU cannot reach 0x%llx: %s\n",
                 (unsigned long long)va, e.what());
  }
}

uint64_t nanoseconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

const char* ioctl_name(unsigned long request) {
  switch (request) {
#define WAVEKIT_KFD_NAME(name) \
  case name:                   \
    return #name;
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_VERSION)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_CREATE_QUEUE)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DESTROY_QUEUE)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_MEMORY_POLICY)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_CLOCK_COUNTERS)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_PROCESS_APERTURES)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_UPDATE_QUEUE)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_CREATE_EVENT)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DESTROY_EVENT)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_EVENT)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_RESET_EVENT)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_WAIT_EVENTS)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DBG_REGISTER_DEPRECATED)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_SCRATCH_BACKING_VA)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_TILE_CONFIG)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_TRAP_HANDLER)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_ACQUIRE_VM)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_FREE_MEMORY_OF_GPU)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_MAP_MEMORY_TO_GPU)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_CU_MASK)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_QUEUE_WAVE_STATE)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_GET_DMABUF_INFO)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_IMPORT_DMABUF)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_ALLOC_QUEUE_GWS)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SMI_EVENTS)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SVM)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_SET_XNACK_MODE)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_CRIU_OP)
    WAVEKIT_KFD_NAME(AMDKFD_IOC_AVAILABLE_MEMORY)
#undef WAVEKIT_KFD_NAME
    default:
      return nullptr;
  }
}

Device::Device(Target target, std::FILE* log)
    : target_(std::move(target)), log_(log), memory_(std::make_unique<emu::MemoryMap>()) {}

Device::~Device() {
  command_processor_.reset();
  for (auto& [handle, buffer] : buffers_)
    if (buffer.fd >= 0) close(buffer.fd);
}

void Device::log(const char* format, ...) {
  if (!log_) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(log_, format, args);
  va_end(args);
  std::fputc('\n', log_);
  std::fflush(log_);
}

int Device::fail(unsigned long request, int error, const char* why) {
  const char* name = ioctl_name(request);
  std::fprintf(stderr, "wavekit: kfd: %s (ioctl 0x%lx, nr 0x%lx) %s: %s\n",
               name ? name : "unknown ioctl", request, (unsigned long)_IOC_NR(request), why,
               std::strerror(error));
  log("%s 0x%lx -> -1 %s (%s)", name ? name : "?", request, std::strerror(error), why);
  errno = error;
  return -1;
}

int Device::kfd_ioctl(unsigned long request, void* arg) {
  switch (request) {
    case AMDKFD_IOC_GET_VERSION: {
      auto* a = static_cast<kfd_ioctl_get_version_args*>(arg);
      a->major_version = KFD_IOCTL_MAJOR_VERSION;
      a->minor_version = KFD_IOCTL_MINOR_VERSION;
      log("AMDKFD_IOC_GET_VERSION -> %u.%u", a->major_version, a->minor_version);
      return 0;
    }
    case AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: {
      auto* a = static_cast<kfd_ioctl_get_process_apertures_new_args*>(arg);
      if (a->num_of_nodes >= 1 && a->kfd_process_device_apertures_ptr) {
        auto* ap =
            reinterpret_cast<kfd_process_device_apertures*>(a->kfd_process_device_apertures_ptr);
        *ap = {};
        ap->lds_base = kLdsBase;
        ap->lds_limit = window_limit(kLdsBase);
        ap->scratch_base = kScratchBase;
        ap->scratch_limit = window_limit(kScratchBase);
        ap->gpuvm_base = kGpuvmBase;
        ap->gpuvm_limit = kGpuvmLimit;
        ap->gpu_id = kGpuId;
      }
      a->num_of_nodes = 1;
      log("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW -> 1 node, gpuvm [0x%llx, 0x%llx]",
          (unsigned long long)kGpuvmBase, (unsigned long long)kGpuvmLimit);
      return 0;
    }
    case AMDKFD_IOC_ACQUIRE_VM: {
      auto* a = static_cast<kfd_ioctl_acquire_vm_args*>(arg);
      if (a->gpu_id != kGpuId) return fail(request, EINVAL, "for an unknown gpu_id");
      log("AMDKFD_IOC_ACQUIRE_VM gpu_id 0x%x drm_fd %u", a->gpu_id, a->drm_fd);
      return 0;
    }
    case AMDKFD_IOC_SET_MEMORY_POLICY: {
      auto* a = static_cast<kfd_ioctl_set_memory_policy_args*>(arg);
      log("AMDKFD_IOC_SET_MEMORY_POLICY gpu_id 0x%x default %u alternate %u", a->gpu_id,
          a->default_policy, a->alternate_policy);
      return 0;
    }
    case AMDKFD_IOC_GET_CLOCK_COUNTERS: {
      auto* a = static_cast<kfd_ioctl_get_clock_counters_args*>(arg);
      // The emulated GPU's clock is the host's nanosecond clock.
      a->gpu_clock_counter = gpu_clock();
      a->cpu_clock_counter = nanoseconds(CLOCK_MONOTONIC_RAW);
      a->system_clock_counter = nanoseconds(CLOCK_BOOTTIME);
      a->system_clock_freq = 1000000000ull;
      log("AMDKFD_IOC_GET_CLOCK_COUNTERS gpu_id 0x%x", a->gpu_id);
      return 0;
    }
    case AMDKFD_IOC_GET_TILE_CONFIG: {
      auto* a = static_cast<kfd_ioctl_get_tile_config_args*>(arg);
      // gfx9 has no tile-mode tables; gb_addr_config of a gfx9 part (8 pipes, 256-byte groups).
      a->num_tile_configs = 0;
      a->num_macro_tile_configs = 0;
      a->gb_addr_config = 0x2a114042;
      a->num_banks = 0;
      a->num_ranks = 0;
      log("AMDKFD_IOC_GET_TILE_CONFIG gpu_id 0x%x", a->gpu_id);
      return 0;
    }
    case AMDKFD_IOC_SET_XNACK_MODE: {
      auto* a = static_cast<kfd_ioctl_set_xnack_mode_args*>(arg);
      // XNACK (retry on page fault) stays off: the emulator faults are not retried.
      int asked = a->xnack_enabled;
      if (asked > 0) return fail(request, EPERM, "asking XNACK on");
      a->xnack_enabled = 0;
      log("AMDKFD_IOC_SET_XNACK_MODE %d -> 0", asked);
      return 0;
    }
    case AMDKFD_IOC_SET_SCRATCH_BACKING_VA: {
      auto* a = static_cast<kfd_ioctl_set_scratch_backing_va_args*>(arg);
      log("AMDKFD_IOC_SET_SCRATCH_BACKING_VA gpu_id 0x%x va 0x%llx", a->gpu_id,
          (unsigned long long)a->va_addr);
      return 0;
    }
    case AMDKFD_IOC_SET_TRAP_HANDLER: {
      auto* a = static_cast<kfd_ioctl_set_trap_handler_args*>(arg);
      log("AMDKFD_IOC_SET_TRAP_HANDLER gpu_id 0x%x tba 0x%llx tma 0x%llx", a->gpu_id,
          (unsigned long long)a->tba_addr, (unsigned long long)a->tma_addr);
      return 0;
    }
    case AMDKFD_IOC_AVAILABLE_MEMORY: {
      auto* a = static_cast<kfd_ioctl_get_available_memory_args*>(arg);
      uint64_t used = 0;
      {
        std::lock_guard lock(mutex_);
        for (const auto& [handle, buffer] : buffers_)
          if (buffer.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) used += buffer.size;
      }
      a->available = target_.vram_bytes > used ? target_.vram_bytes - used : 0;
      log("AMDKFD_IOC_AVAILABLE_MEMORY gpu_id 0x%x -> %llu", a->gpu_id,
          (unsigned long long)a->available);
      return 0;
    }
    case AMDKFD_IOC_ALLOC_MEMORY_OF_GPU:
      return alloc_memory(arg);
    case AMDKFD_IOC_FREE_MEMORY_OF_GPU:
      return free_memory(arg);
    case AMDKFD_IOC_MAP_MEMORY_TO_GPU:
    case AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: {
      // The same layout for both. The GPU's page tables are the host's: nothing to map.
      auto* a = static_cast<kfd_ioctl_map_memory_to_gpu_args*>(arg);
      {
        std::lock_guard lock(mutex_);
        if (!buffers_.count(a->handle)) return fail(request, EINVAL, "for an unknown handle");
      }
      a->n_success = a->n_devices;
      log("%s handle 0x%llx n_devices %u", ioctl_name(request), (unsigned long long)a->handle,
          a->n_devices);
      return 0;
    }
    case AMDKFD_IOC_CREATE_EVENT:
      return create_event(arg);
    case AMDKFD_IOC_DESTROY_EVENT:
    case AMDKFD_IOC_SET_EVENT:
    case AMDKFD_IOC_RESET_EVENT: {
      // The three share the layout {event_id, pad}.
      auto* a = static_cast<kfd_ioctl_set_event_args*>(arg);
      {
        std::lock_guard lock(mutex_);
        auto it = events_.find(a->event_id);
        if (it == events_.end()) return fail(request, EINVAL, "for an unknown event");
        if (request == AMDKFD_IOC_DESTROY_EVENT)
          events_.erase(it);
        else
          it->second.signaled = request == AMDKFD_IOC_SET_EVENT;
      }
      events_changed_.notify_all();
      log("%s event %u", ioctl_name(request), a->event_id);
      return 0;
    }
    case AMDKFD_IOC_WAIT_EVENTS:
      return wait_events(arg);
    case AMDKFD_IOC_CREATE_QUEUE:
      return create_queue(arg);
    case AMDKFD_IOC_DESTROY_QUEUE:
      return destroy_queue(arg);
    case AMDKFD_IOC_UPDATE_QUEUE:
    case AMDKFD_IOC_SET_CU_MASK:
      // Ring resizing and CU masks change nothing the emulator's scheduling depends on. Both
      // argument structures have the queue ID where it is read here.
      log("%s queue %u", ioctl_name(request),
          request == AMDKFD_IOC_SET_CU_MASK
              ? static_cast<kfd_ioctl_set_cu_mask_args*>(arg)->queue_id
              : static_cast<kfd_ioctl_update_queue_args*>(arg)->queue_id);
      return 0;
    default:
      return fail(request, EINVAL, "is not emulated");
  }
}

int Device::render_ioctl(unsigned long request, void*) {
  std::fprintf(
      stderr,
      "wavekit: kfd: DRM ioctl 0x%lx (nr 0x%lx) on the emulated render node is not emulated\n",
      request, (unsigned long)_IOC_NR(request));
  log("DRM ioctl 0x%lx -> -1 EINVAL (not emulated)", request);
  errno = EINVAL;
  return -1;
}

int Device::alloc_memory(void* arg) {
  auto* a = static_cast<kfd_ioctl_alloc_memory_of_gpu_args*>(arg);
  constexpr unsigned long request = AMDKFD_IOC_ALLOC_MEMORY_OF_GPU;
  if (a->gpu_id != kGpuId) return fail(request, EINVAL, "for an unknown gpu_id");
  if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
    // User memory registered for the GPU: its host address comes in mmap_offset, the GPU
    // address user space chose in va_addr. libhsakmt keeps the two equal for the host memory it
    // allocates itself, and gives memory registered later (hsaKmtRegisterMemory*, ROCr's
    // hsa_amd_memory_lock: CLR's staging and pinned buffers) a new address in its SVM aperture,
    // which the GPU's page tables map to the user's pages. The emulated GPU's page table is
    // the memory map: such a range is translated (the pages are private anonymous memory, which
    // cannot be mapped a second time at the GPU address).
    if (a->size == 0 || a->va_addr % 4096 != 0 || a->mmap_offset % 4096 != 0)
      return fail(request, EINVAL, "of user memory with a zero size or an unaligned address");
    std::lock_guard lock(mutex_);
    uint64_t handle = next_handle_++;
    try {
      if (a->va_addr == a->mmap_offset)
        memory_->add(reinterpret_cast<const void*>(a->va_addr), a->size, emu::MemoryMap::kReadWrite,
                     "user memory");
      else
        memory_->add_translated(a->va_addr, reinterpret_cast<const void*>(a->mmap_offset), a->size,
                                emu::MemoryMap::kReadWrite, "registered user memory");
    } catch (const std::exception& e) {
      // Two buffers at one GPU address: a real driver's VA allocator would refuse it too.
      std::fprintf(stderr, "wavekit: kfd: %s\n", e.what());
      return fail(request, EINVAL, "of user memory at a GPU address already in use");
    }
    buffers_[handle] = Buffer{a->va_addr, a->size, a->flags, 0, -1};
    a->handle = handle;
    log("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU userptr 0x%llx at GPU address 0x%llx%s size 0x%llx "
        "flags 0x%x -> handle 0x%llx",
        (unsigned long long)a->mmap_offset, (unsigned long long)a->va_addr,
        a->va_addr == a->mmap_offset ? "" : " (translated)", (unsigned long long)a->size, a->flags,
        (unsigned long long)handle);
    return 0;
  }
  if (a->size == 0 || a->va_addr % 4096 != 0)
    return fail(request, EINVAL, "with a zero size or an unaligned address");
  // The pages live in a memfd, so that the buffer's GPU address and every CPU mapping of its
  // mmap offset (user space maps it again, at the same or another address) share them.
  int fd = memfd_create("wavekit-kfd-bo", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(a->size)) != 0) {
    int error = errno;
    if (fd >= 0) close(fd);
    return fail(request, error == EFBIG ? ENOMEM : error, "creating the buffer's pages");
  }
  // Doorbell and MMIO pages have no GPU virtual address of their own; everything else is
  // placed at the address user space reserved for it.
  bool placed =
      !(a->flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)) &&
      a->va_addr;
  if (placed && mmap(reinterpret_cast<void*>(a->va_addr), a->size, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    int error = errno;
    close(fd);
    return fail(request, error, "placing the buffer at its address");
  }
  std::lock_guard lock(mutex_);
  uint64_t handle = next_handle_++;
  Buffer buffer{a->va_addr, a->size, a->flags, handle << kOffsetShift, fd};
  buffers_[handle] = buffer;
  if (placed)
    add_to_memory_map(*memory_, a->va_addr, a->size,
                      (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) ? "VRAM buffer" : "GTT buffer");
  a->handle = handle;
  a->mmap_offset = buffer.offset;
  log("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU va 0x%llx size 0x%llx flags 0x%x -> handle 0x%llx offset "
      "0x%llx",
      (unsigned long long)a->va_addr, (unsigned long long)a->size, a->flags,
      (unsigned long long)handle, (unsigned long long)buffer.offset);
  return 0;
}

int Device::free_memory(void* arg) {
  auto* a = static_cast<kfd_ioctl_free_memory_of_gpu_args*>(arg);
  Buffer buffer;
  {
    std::lock_guard lock(mutex_);
    auto it = buffers_.find(a->handle);
    if (it == buffers_.end())
      return fail(AMDKFD_IOC_FREE_MEMORY_OF_GPU, EINVAL, "for an unknown handle");
    buffer = it->second;
    buffers_.erase(it);
  }
  if (buffer.va && (buffer.fd < 0 || !(buffer.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
                                                       KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)))) {
    memory_->remove(reinterpret_cast<const void*>(buffer.va));
    if (command_processor_) command_processor_->forget_code(buffer.va);
  }
  // Back to what the address was before: part of user space's PROT_NONE reservation.
  if (buffer.fd >= 0 && buffer.va &&
      !(buffer.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)))
    mmap(reinterpret_cast<void*>(buffer.va), buffer.size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (buffer.fd >= 0) close(buffer.fd);
  log("AMDKFD_IOC_FREE_MEMORY_OF_GPU handle 0x%llx", (unsigned long long)a->handle);
  return 0;
}

void* Device::map(void* addr, size_t length, int prot, int flags, off_t offset) {
  uint64_t handle = uint64_t(offset) >> kOffsetShift;
  // A doorbell offset carries its doorbell's place in the page in the low bits.
  uint64_t within = uint64_t(offset) & ((uint64_t(1) << kOffsetShift) - 1) & ~uint64_t(4095);
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    auto it = buffers_.find(handle);
    if (it != buffers_.end() && it->second.fd >= 0 &&
        within + length <= ((it->second.size + 4095) & ~uint64_t(4095)))
      fd = it->second.fd;
  }
  if (fd < 0) {
    std::fprintf(stderr, "wavekit: kfd: mmap of offset 0x%llx (length 0x%zx): no such buffer\n",
                 (unsigned long long)offset, length);
    log("mmap offset 0x%llx length 0x%zx -> EINVAL (no such buffer)", (unsigned long long)offset,
        length);
    errno = EINVAL;
    return MAP_FAILED;
  }
  void* mapped = mmap(addr, length, prot, (flags & ~MAP_PRIVATE) | MAP_SHARED, fd, off_t(within));
  log("mmap addr %p length 0x%zx prot 0x%x offset 0x%llx -> %p", addr, length, prot,
      (unsigned long long)offset, mapped);
  return mapped;
}

int Device::create_event(void* arg) {
  auto* a = static_cast<kfd_ioctl_create_event_args*>(arg);
  std::lock_guard lock(mutex_);
  if (next_event_ >= KFD_SIGNAL_EVENT_LIMIT)
    return fail(AMDKFD_IOC_CREATE_EVENT, ENOSPC, "beyond the driver's event limit");
  uint32_t id = next_event_++;
  events_[id] = Event{a->event_type, a->auto_reset != 0, false};
  // The event page user space passes first (a buffer handle) is where the driver's slots are;
  // the emulated device signals events through the table above instead.
  a->event_id = id;
  a->event_slot_index = id;
  a->event_trigger_data = id;
  log("AMDKFD_IOC_CREATE_EVENT type %u auto_reset %u page 0x%llx -> event %u", a->event_type,
      a->auto_reset, (unsigned long long)a->event_page_offset, id);
  return 0;
}

void Device::signal_event(uint32_t id) {
  {
    std::lock_guard lock(mutex_);
    auto it = events_.find(id);
    if (it == events_.end()) return;
    it->second.signaled = true;
  }
  events_changed_.notify_all();
}

int Device::create_queue(void* arg) {
  auto* a = static_cast<kfd_ioctl_create_queue_args*>(arg);
  constexpr unsigned long request = AMDKFD_IOC_CREATE_QUEUE;
  if (a->gpu_id != kGpuId) return fail(request, EINVAL, "for an unknown gpu_id");
  if (a->queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
    // SDMA queues run SDMA packets and PM4 compute queues PM4: neither is emulated.
    return fail(request, EINVAL, "of a queue type other than COMPUTE_AQL");
  if (a->ring_size < 64 || !a->ring_base_address || !a->read_pointer_address ||
      !a->write_pointer_address)
    return fail(request, EINVAL, "without a ring or read/write pointers");
  constexpr uint64_t kDoorbellPage = 8192;  // 1024 64-bit doorbells, gfx9's doorbell page
  // The command processor is called without mutex_ held: it takes mutex_ itself (to raise an
  // event) while holding its own lock.
  std::unique_lock lock(mutex_);
  if (next_queue_ >= kDoorbellPage / 8) return fail(request, ENOSPC, "beyond the doorbell page");
  if (!doorbell_handle_) {
    int fd = memfd_create("wavekit-kfd-doorbells", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, kDoorbellPage) != 0)
      return fail(request, ENOMEM, "creating the doorbell page");
    doorbell_handle_ = next_handle_++;
    buffers_[doorbell_handle_] = Buffer{0, kDoorbellPage, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
                                        doorbell_handle_ << kOffsetShift, fd};
  }
  if (!command_processor_)
    command_processor_ = std::make_unique<CommandProcessor>(
        emu::parse_processor(target_.gfx), *memory_, [this](uint32_t id) { signal_event(id); },
        [this](const char* line) { log("%s", line); });
  uint32_t id = next_queue_++;
  a->queue_id = id;
  // The doorbell's offset within the page in the low bits, the page's mmap offset above them.
  a->doorbell_offset = buffers_[doorbell_handle_].offset + uint64_t(id) * 8;
  CommandProcessor* processor = command_processor_.get();
  lock.unlock();
  processor->add(id, Queue{a->ring_base_address, a->ring_size, a->read_pointer_address,
                           a->write_pointer_address});
  log("AMDKFD_IOC_CREATE_QUEUE ring 0x%llx size 0x%x rptr 0x%llx wptr 0x%llx -> queue %u doorbell "
      "0x%llx",
      (unsigned long long)a->ring_base_address, a->ring_size,
      (unsigned long long)a->read_pointer_address, (unsigned long long)a->write_pointer_address, id,
      (unsigned long long)a->doorbell_offset);
  return 0;
}

int Device::destroy_queue(void* arg) {
  auto* a = static_cast<kfd_ioctl_destroy_queue_args*>(arg);
  std::unique_lock lock(mutex_);
  if (!command_processor_ || a->queue_id >= next_queue_)
    return fail(AMDKFD_IOC_DESTROY_QUEUE, EINVAL, "for an unknown queue");
  CommandProcessor* processor = command_processor_.get();
  lock.unlock();
  // Returns once the queue is no longer being read: user space frees the ring next.
  processor->remove(a->queue_id);
  log("AMDKFD_IOC_DESTROY_QUEUE queue %u", a->queue_id);
  return 0;
}

int Device::wait_events(void* arg) {
  auto* a = static_cast<kfd_ioctl_wait_events_args*>(arg);
  auto* data = reinterpret_cast<kfd_event_data*>(a->events_ptr);
  auto ready = [&] {
    uint32_t signaled = 0;
    for (uint32_t i = 0; i < a->num_events; ++i) {
      auto it = events_.find(data[i].event_id);
      signaled += it != events_.end() && it->second.signaled;
    }
    return a->wait_for_all ? signaled == a->num_events : signaled > 0;
  };
  std::unique_lock lock(mutex_);
  for (uint32_t i = 0; i < a->num_events; ++i)
    if (!events_.count(data[i].event_id))
      return fail(AMDKFD_IOC_WAIT_EVENTS, EINVAL, "for an unknown event");
  // timeout is in milliseconds; 0xffffffff waits forever, as KFD_INFINITE_TIMEOUT does.
  bool done = a->timeout == 0xffffffffu
                  ? (events_changed_.wait(lock, ready), true)
                  : events_changed_.wait_for(lock, std::chrono::milliseconds(a->timeout), ready);
  if (done)
    for (uint32_t i = 0; i < a->num_events; ++i) {
      auto& event = events_[data[i].event_id];
      if (event.signaled && event.auto_reset) event.signaled = false;
    }
  a->wait_result = done ? KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
  lock.unlock();
  log("AMDKFD_IOC_WAIT_EVENTS %u events all %u timeout %u -> %s", a->num_events, a->wait_for_all,
      a->timeout, done ? "complete" : "timeout");
  return 0;
}

}  // namespace wavekit::kfd
