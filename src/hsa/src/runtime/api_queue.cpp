// HSA API: user-mode AQL queues and the packet processor. Each queue has a host thread that
// plays the command processor: it takes packets in order from the ring once their header is no
// longer INVALID, runs kernel dispatches through emu::dispatch with the packet's sizes, waits on
// barrier-AND/OR dependencies, decrements completion signals, resets the header to INVALID and
// advances the read index. Packets run one after another, so the header's barrier bit always
// holds; acquire/release fences are full host fences (host memory is the device's memory).
//
// A dispatch that fails in the emulator (memory fault, illegal/unimplemented instruction, trap,
// no progress, invalid kernel object) is reported on stderr with the waves, PCs and addresses.
// Then, as ROCr: with a queue error callback, the callback gets the status and the queue turns
// inactive; without one, the process ends (exit status 1; ROCr aborts). Unlike ROCr, the
// completion signals of the failed packet and of every later packet of an inactive queue are
// still decremented (the packets are discarded), so that a program waiting on them ends
// instead of hanging.
//
// With WAVEKIT_EMU_TRACE_BLOCKS / WAVEKIT_EMU_TRACE_SEQUENCE set, every dispatch that completes
// also leaves the emulator's ground truth (block counts, block sequences per wave) in those
// directories, in the files `wavekit launch --trace-blocks` / `--trace-sequence` writes. With
// WAVEKIT_EMU_INJECT, the dispatch it names gets its bit flipped (wavekit/hsa/fault_injection.h)
// and a line on stderr saying what changed. With WAVEKIT_EMU_STATS, every dispatch appends a
// line of figures to that file (append_stats). With WAVEKIT_EMU_OBSERVER, the module it names
// sees every dispatch (wavekit/hsa/dispatch_observer.h).
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "../dispatch_report.h"
#include "runtime.h"
#include "wavekit/hsa/ground_truth.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

using namespace wavekit::hsa::runtime;
namespace emu = wavekit::emu;
using wavekit::hex;

namespace {

constexpr auto kIdlePoll = std::chrono::milliseconds(1);

Queue* queue_of(const hsa_queue_t* queue) {
  queue = running_queue(queue);  // an intercept queue's settings are its wrapped queue's
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  auto it = rt.queues.find(queue);
  return it == rt.queues.end() ? nullptr : it->second.get();
}

std::uint64_t* write_index(const hsa_queue_t* queue) {
  return const_cast<std::uint64_t*>(
      &reinterpret_cast<const amd_queue_t*>(queue)->write_dispatch_id);
}
std::uint64_t* read_index(const hsa_queue_t* queue) {
  return const_cast<std::uint64_t*>(&reinterpret_cast<const amd_queue_t*>(queue)->read_dispatch_id);
}

void complete(hsa_signal_t completion_signal) {
  if (!completion_signal.handle) return;
  __atomic_fetch_sub(const_cast<std::int64_t*>(&signal_of(completion_signal)->value), 1,
                     __ATOMIC_RELEASE);
  notify_signal_change();
}

hsa_status_t status_for(emu::ErrorKind kind) {
  switch (kind) {
    case emu::ErrorKind::none:
      return HSA_STATUS_SUCCESS;
    case emu::ErrorKind::invalid_dispatch:
      return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    case emu::ErrorKind::memory_fault:
      return static_cast<hsa_status_t>(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
    case emu::ErrorKind::illegal_instruction:
    case emu::ErrorKind::unimplemented_instruction:
      return static_cast<hsa_status_t>(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION);
    case emu::ErrorKind::trap:
      return HSA_STATUS_ERROR_EXCEPTION;
    case emu::ErrorKind::no_progress:
    case emu::ErrorKind::budget_exceeded:
      return HSA_STATUS_ERROR_FATAL;
  }
  return HSA_STATUS_ERROR;
}

std::string kernel_name_at(std::uint64_t descriptor) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  for (auto& [key, executable] : rt.executables)
    if (const auto* kernel = executable->loader.kernel_at(descriptor)) return kernel->name;
  return "at kernel object " + hex(descriptor);
}

// Reports a failed packet and applies the queue-error semantics described at the top.
void fail_packet(Queue& queue, hsa_status_t status, const std::string& report) {
  std::fprintf(stderr, "wavekit emulator: queue %llu: %s\n",
               static_cast<unsigned long long>(queue.amd->hsa_queue.id), report.c_str());
  queue.inactive = true;
  if (queue.callback) {
    queue.callback(status, &queue.amd->hsa_queue, queue.callback_data);
    return;
  }
  std::fprintf(
      stderr, "wavekit emulator: no queue error callback; terminating the process as ROCr would\n");
  std::fflush(nullptr);
  _exit(1);
}

// WAVEKIT_EMU_TRACE_BLOCKS / _SEQUENCE: the dispatch's ground truth under `name`, in place of
// any an earlier run left there. A failure to write is reported and the program goes on: the
// program's own results do not depend on it.
void write_ground_truth(const std::string& name, const std::string& kernel,
                        emu::DispatchResult& result) {
  Runtime& rt = runtime();
  try {
    if (!rt.trace_blocks_directory.empty())
      wavekit::write_file(rt.trace_blocks_directory + "/" + name + ".json",
                          wavekit::hsa::block_counts_document(kernel, result.waves).dump(1) + "\n");
    if (!rt.trace_sequence_directory.empty()) {
      const std::string directory = rt.trace_sequence_directory + "/" + name;
      std::filesystem::remove_all(directory);
      wavekit::hsa::write_block_sequences(directory,
                                          wavekit::hsa::take_block_sequences(result.waves));
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "wavekit emulator: the ground truth of %s is lost: %s\n", name.c_str(),
                 error.what());
  }
}

std::uint64_t clock_ns(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

// WAVEKIT_EMU_STATS: one tab-separated line per dispatch, `kernel waves wave-instructions
// wall-ns cpu-ns threads status`, appended with one write() to a file opened O_APPEND, so
// the dispatches of several queues, and of forked processes, interleave whole lines. CPU time
// is the process's (every thread) over the dispatch: on a shared machine it says what the
// dispatch cost where wall time says how long it waited. Failing to write loses the line, not
// the program.
void append_stats(const std::string& kernel, const emu::DispatchResult& result,
                  std::uint64_t wall_ns, std::uint64_t cpu_ns, unsigned threads) {
  Runtime& rt = runtime();
  char figures[160];
  std::snprintf(figures, sizeof figures, "\t%llu\t%llu\t%llu\t%llu\t%u\t%s\n",
                static_cast<unsigned long long>(result.total_waves),
                static_cast<unsigned long long>(result.total_instructions),
                static_cast<unsigned long long>(wall_ns), static_cast<unsigned long long>(cpu_ns),
                threads, result.ok() ? "ok" : "failed");
  const std::string line = kernel + figures;
  const int fd = open(rt.stats_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t written = write(fd, line.data(), line.size());
  close(fd);
}

// WAVEKIT_EMU_OBSERVER: the observer its module makes, opened at the first dispatch; null when
// none is set. A module that gives no observer ends the process (dispatch_observer.h says why).
wavekit::hsa::DispatchObserver* observer() {
  Runtime& rt = runtime();
  if (rt.observer_module.empty()) return nullptr;
  std::call_once(rt.observer_opened, [&rt] {
    std::string problem;
    if (void* module = dlopen(rt.observer_module.c_str(), RTLD_NOW | RTLD_LOCAL); !module) {
      problem = dlerror();
    } else if (auto make = reinterpret_cast<wavekit::hsa::MakeDispatchObserver>(
                   dlsym(module, wavekit::hsa::kMakeDispatchObserverSymbol));
               !make) {
      problem = std::string("the module has no ") + wavekit::hsa::kMakeDispatchObserverSymbol;
    } else {
      try {
        rt.observer = make();
        if (!rt.observer) problem = "the module made no observer";
      } catch (const std::exception& error) {
        problem = error.what();
      }
    }
    if (rt.observer) return;
    std::fprintf(stderr, "wavekit emulator: %s=%s: %s\n", wavekit::hsa::kObserverVariable,
                 rt.observer_module.c_str(), problem.c_str());
    std::fflush(nullptr);
    _exit(1);
  });
  return rt.observer;
}

// The load base and ELF image of the code object that holds a kernel descriptor (kept for the
// observer at load); a null image when none holds it.
std::pair<std::uint64_t, std::shared_ptr<const std::vector<std::uint8_t>>> image_at(
    std::uint64_t descriptor) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  for (auto& [key, executable] : rt.executables)
    for (const auto& object : executable->loader.objects())
      if (descriptor >= object.load_base && descriptor < object.load_base + object.load_size) {
        auto image = executable->images.find(object.load_base);
        if (image != executable->images.end()) return {object.load_base, image->second};
      }
  return {0, nullptr};
}

// An observer's exception loses its observation of the dispatch, not the program.
void report_observer_failure(const std::string& kernel, const std::exception& error) {
  std::fprintf(stderr, "wavekit emulator: the observer failed on %s: %s\n", kernel.c_str(),
               error.what());
}

// Gives the observer a dispatch that completed. Its failure is reported and the program goes
// on, as a lost ground truth is: the program's own results do not depend on it.
void observe(wavekit::hsa::DispatchObserver& watcher, const std::string& kernel,
             const emu::DispatchParams& params, emu::DispatchResult& result) {
  auto [base, image] = image_at(reinterpret_cast<std::uint64_t>(params.kernel_descriptor));
  if (!image) {
    std::fprintf(stderr, "wavekit emulator: the observer misses %s: its code object is unknown\n",
                 kernel.c_str());
    return;
  }
  wavekit::hsa::ObservedDispatch dispatch;
  dispatch.kernel = kernel;
  for (int axis = 0; axis < 3; ++axis) {
    dispatch.grid[axis] = params.grid[axis];
    dispatch.workgroup[axis] = params.workgroup[axis];
  }
  dispatch.group_segment_size = params.group_segment_size;
  dispatch.object_base = base;
  dispatch.code_object = *image;
  dispatch.result = &result;
  try {
    watcher.completed(dispatch);
  } catch (const std::exception& error) {
    report_observer_failure(kernel, error);
  }
}

void run_dispatch(Queue& queue, const hsa_kernel_dispatch_packet_t& packet,
                  std::uint64_t dispatch_id) {
  Runtime& rt = runtime();
  const std::string kernel = kernel_name_at(packet.kernel_object);
  if (!rt.memory.contains(packet.kernel_object, 64, emu::MemoryMap::kRead)) {
    fail_packet(queue, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                "kernel_object " + hex(packet.kernel_object) +
                    " is not a kernel descriptor of a loaded executable");
    return;
  }
  emu::DispatchParams params;
  params.processor = queue.agent->processor;
  params.kernel_descriptor = reinterpret_cast<const void*>(packet.kernel_object);
  params.kernarg = packet.kernarg_address;
  unsigned dimensions = (packet.setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3;
  params.grid[0] = packet.grid_size_x;
  params.grid[1] = dimensions >= 2 ? packet.grid_size_y : 1;
  params.grid[2] = dimensions >= 3 ? packet.grid_size_z : 1;
  params.workgroup[0] = packet.workgroup_size_x;
  params.workgroup[1] = dimensions >= 2 ? packet.workgroup_size_y : 1;
  params.workgroup[2] = dimensions >= 3 ? packet.workgroup_size_z : 1;
  params.private_segment_size = packet.private_segment_size;
  params.group_segment_size = packet.group_segment_size;
  params.dispatch_packet = &packet;
  params.queue = queue.amd;
  params.dispatch_id = dispatch_id;
  params.options.host_threads = rt.host_threads;
  params.options.max_resident_waves = rt.max_resident_waves;
  if (rt.no_progress_instructions)
    params.options.no_progress_instructions = rt.no_progress_instructions;
  params.options.no_progress_work_per_wave = rt.no_progress_work_per_wave;
  params.options.max_instructions = rt.max_instructions;
  params.options.max_seconds = rt.max_seconds;
  params.options.record_block_counts = !rt.trace_blocks_directory.empty();
  params.options.record_block_sequence = !rt.trace_sequence_directory.empty();
  const bool ground_truth =
      params.options.record_block_counts || params.options.record_block_sequence;
  std::uint64_t number = 0;
  bool injecting = false;  // WAVEKIT_EMU_INJECT names this dispatch
  {
    std::lock_guard lock(rt.mutex);
    if (auto* made_progress = rt.outside_progress) {
      void* data = rt.outside_progress_data;
      params.options.outside_progress = [made_progress, data] { return made_progress(data) != 0; };
    }
    if (ground_truth) number = rt.dispatches_of_kernel[kernel]++;
    injecting = rt.injection && rt.injection->kernel == kernel &&
                rt.dispatches_of_injected_kernel++ == rt.injection->dispatch;
  }
  if (injecting) params.options.inject = rt.injection->fault;
  wavekit::hsa::DispatchObserver* watcher = observer();
  if (watcher) {
    try {
      if (!watcher->prepare(kernel, params.options)) watcher = nullptr;
    } catch (const std::exception& error) {
      report_observer_failure(kernel, error);
      watcher = nullptr;
    }
  }
  const bool stats = !rt.stats_file.empty();
  const std::uint64_t wall_start = stats ? clock_ns(CLOCK_MONOTONIC) : 0;
  const std::uint64_t cpu_start = stats ? clock_ns(CLOCK_PROCESS_CPUTIME_ID) : 0;
  emu::DispatchResult result = emu::dispatch(params, rt.memory, rt.code);
  if (stats) {
    const unsigned threads =
        rt.host_threads ? rt.host_threads : std::max(1u, std::thread::hardware_concurrency());
    append_stats(kernel, result, clock_ns(CLOCK_MONOTONIC) - wall_start,
                 clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start, threads);
  }
  if (injecting)
    std::fprintf(stderr, "wavekit emulator: fault injection in %s dispatch %llu: %s\n",
                 kernel.c_str(), static_cast<unsigned long long>(rt.injection->dispatch),
                 wavekit::hsa::describe(*rt.injection, result.injected).c_str());
  if (!result.ok()) {
    fail_packet(queue, status_for(result.error), wavekit::hsa::describe_failure(result, kernel));
    return;
  }
  if (ground_truth) write_ground_truth(kernel + "." + std::to_string(number), kernel, result);
  if (watcher) observe(*watcher, kernel, params, result);
}

bool barrier_satisfied(const hsa_signal_t* dependencies, bool any) {
  bool all_done = true;
  bool any_done = false;
  for (int i = 0; i < 5; ++i) {
    if (!dependencies[i].handle) continue;  // a null dependency counts as satisfied
    bool done = __atomic_load_n(&signal_of(dependencies[i])->value, __ATOMIC_ACQUIRE) == 0;
    all_done = all_done && done;
    any_done = any_done || done;
  }
  bool no_dependency =
      std::all_of(dependencies, dependencies + 5, [](hsa_signal_t s) { return s.handle == 0; });
  return any ? (any_done || no_dependency) : all_done;
}

void packet_processor(Queue* queue) {
  Runtime& rt = runtime();
  auto* ring = static_cast<hsa_kernel_dispatch_packet_t*>(queue->ring);
  const std::uint32_t size = queue->amd->hsa_queue.size;
  const hsa_queue_t* hsa_queue = &queue->amd->hsa_queue;
  while (!queue->stop.load()) {
    std::uint64_t read = __atomic_load_n(read_index(hsa_queue), __ATOMIC_ACQUIRE);
    auto* slot = &ring[read % size];
    std::uint16_t header = __atomic_load_n(&slot->header, __ATOMIC_ACQUIRE);
    unsigned type = (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
    if (read >= __atomic_load_n(write_index(hsa_queue), __ATOMIC_ACQUIRE) ||
        type == HSA_PACKET_TYPE_INVALID) {
      std::unique_lock lock(rt.signal_mutex);
      rt.signal_changed.wait_for(lock, kIdlePoll);
      continue;
    }
    hsa_signal_t completion{};
    std::unique_lock in_packet(queue->packet_mutex, std::defer_lock);
    if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) {
      const auto* barrier = reinterpret_cast<const hsa_barrier_and_packet_t*>(slot);
      completion = barrier->completion_signal;
      bool any = type == HSA_PACKET_TYPE_BARRIER_OR;
      while (!queue->inactive && !queue->stop.load() &&
             !barrier_satisfied(barrier->dep_signal, any)) {
        std::unique_lock lock(rt.signal_mutex);
        rt.signal_changed.wait_for(lock, std::chrono::microseconds(200));
      }
      in_packet.lock();  // not while waiting: a fork may be what releases the barrier
    } else if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      in_packet.lock();
      completion = slot->completion_signal;
      if (queue->inactive) {
        std::fprintf(
            stderr, "wavekit emulator: queue %llu is inactive after an error; dispatch discarded\n",
            static_cast<unsigned long long>(hsa_queue->id));
      } else {
        const bool timed = queue->profiling.load(std::memory_order_relaxed) && completion.handle;
        const std::uint64_t start = timed ? system_timestamp() : 0;
        std::atomic_thread_fence(std::memory_order_seq_cst);  // acquire fence of the packet
        run_dispatch(*queue, *slot, read);
        std::atomic_thread_fence(std::memory_order_seq_cst);  // release fence of the packet
        if (timed) {  // before the completion signal changes, so its waiters see the times
          signal_of(completion)->start_ts = start;
          signal_of(completion)->end_ts = system_timestamp();
        }
      }
    } else {
      in_packet.lock();
      completion = slot->completion_signal;
      if (!queue->inactive)
        fail_packet(*queue, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                    "packet " + std::to_string(read) + " has type " + std::to_string(type) +
                        ", which the emulated GPU does not process (kernel dispatch and barrier "
                        "packets only)");
    }
    complete(completion);
    __atomic_store_n(&slot->header,
                     static_cast<std::uint16_t>(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE),
                     __ATOMIC_RELEASE);
    __atomic_store_n(read_index(hsa_queue), read + 1, __ATOMIC_RELEASE);
  }
}

}  // namespace

namespace wavekit::hsa::runtime {

namespace {
std::vector<Queue*> queues_locked_for_fork;
}  // namespace

void lock_queue_packets() {
  Runtime& rt = runtime();
  {
    std::lock_guard lock(rt.mutex);
    for (auto& [hsa_queue, queue] : rt.queues) queues_locked_for_fork.push_back(queue.get());
  }
  for (Queue* queue : queues_locked_for_fork) queue->packet_mutex.lock();
}

void unlock_queue_packets() {
  for (Queue* queue : queues_locked_for_fork) queue->packet_mutex.unlock();
  queues_locked_for_fork.clear();
}

void restart_queue_processors_in_child() {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  // No packet was in flight at the fork (lock_queue_packets): each processor starts at its
  // queue's read index. The handles name the parent's threads: forgotten, not joined.
  for (auto& [hsa_queue, queue] : rt.queues)
    if (queue->processor.joinable())
      new (&queue->processor) std::thread(packet_processor, queue.get());
}

hsa_status_t destroy_queue(hsa_queue_t* hsa_queue) {
  Runtime& rt = runtime();
  std::unique_ptr<Queue> queue;
  {
    std::lock_guard lock(rt.mutex);
    auto it = rt.queues.find(hsa_queue);
    if (it == rt.queues.end()) return HSA_STATUS_ERROR_INVALID_QUEUE;
    queue = std::move(it->second);
    rt.queues.erase(it);
  }
  queue->stop = true;
  notify_signal_change();
  queue->processor.join();
  {
    std::lock_guard lock(rt.mutex);
    rt.signals.erase(signal_of(queue->amd->hsa_queue.doorbell_signal));
  }
  release(signal_of(queue->amd->hsa_queue.doorbell_signal));
  release(queue->ring);
  release(queue->amd);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t create_queue(hsa_agent_t agent_handle, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data),
                          void* data, uint32_t, uint32_t, hsa_queue_t** queue_out) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  Runtime& rt = runtime();
  if (agent_handle.handle == reinterpret_cast<std::uint64_t>(&rt.cpu))
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  if (agent_handle.handle != reinterpret_cast<std::uint64_t>(&rt.gpu))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!queue_out || size < 64 || size > 131072 || (size & (size - 1)) != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE)
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;

  auto queue = std::make_unique<Queue>();
  queue->agent = &rt.gpu;
  queue->callback = callback;
  queue->callback_data = data;
  queue->amd = static_cast<amd_queue_t*>(allocate(sizeof(amd_queue_t), 64, "amd_queue_t"));
  queue->ring = allocate(std::size_t(size) * 64, 64, "AQL ring");
  hsa_signal_t doorbell{};
  if (!queue->amd || !queue->ring ||
      hsa_signal_create(0, 0, nullptr, &doorbell) != HSA_STATUS_SUCCESS) {
    release(queue->amd);
    release(queue->ring);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  auto* packets = static_cast<hsa_kernel_dispatch_packet_t*>(queue->ring);
  for (std::uint32_t i = 0; i < size; ++i)
    packets[i].header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  amd_queue_t& amd = *queue->amd;
  amd.hsa_queue.type = type;
  amd.hsa_queue.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
  amd.hsa_queue.base_address = queue->ring;
  amd.hsa_queue.doorbell_signal = doorbell;
  amd.hsa_queue.size = size;
  // Device code of code-object v4 finds the LDS and scratch apertures here.
  amd.group_segment_aperture_base_hi = static_cast<std::uint32_t>(emu::kSharedApertureBase >> 32);
  amd.private_segment_aperture_base_hi =
      static_cast<std::uint32_t>(emu::kPrivateApertureBase >> 32);
  amd.max_wave_id = 31;
  amd.queue_properties = AMD_QUEUE_PROPERTIES_IS_PTR64;
  {
    std::lock_guard lock(rt.mutex);
    amd.hsa_queue.id = rt.next_queue_id++;
    amd.max_cu_id = 0;
  }
  Queue* raw = queue.get();
  {
    std::lock_guard lock(rt.mutex);
    rt.queues[&amd.hsa_queue] = std::move(queue);
  }
  raw->processor = std::thread(packet_processor, raw);
  *queue_out = &amd.hsa_queue;
  return HSA_STATUS_SUCCESS;
}

}  // namespace wavekit::hsa::runtime

extern "C" {

hsa_status_t hsa_queue_destroy(hsa_queue_t* hsa_queue) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (running_queue(hsa_queue) != hsa_queue) return destroy_intercept_queue(hsa_queue);
  return destroy_queue(hsa_queue);
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t* hsa_queue) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  Queue* queue = queue_of(hsa_queue);
  if (!queue) return HSA_STATUS_ERROR_INVALID_QUEUE;
  queue->inactive = true;
  return HSA_STATUS_SUCCESS;
}

#define WAVEKIT_QUEUE_LOAD(which, suffix, order)                               \
  uint64_t hsa_queue_load_##which##_index_##suffix(const hsa_queue_t* queue) { \
    return __atomic_load_n(which##_index(queue), order);                       \
  }
WAVEKIT_QUEUE_LOAD(read, scacquire, __ATOMIC_ACQUIRE)
WAVEKIT_QUEUE_LOAD(read, acquire, __ATOMIC_ACQUIRE)
WAVEKIT_QUEUE_LOAD(read, relaxed, __ATOMIC_RELAXED)
WAVEKIT_QUEUE_LOAD(write, scacquire, __ATOMIC_ACQUIRE)
WAVEKIT_QUEUE_LOAD(write, acquire, __ATOMIC_ACQUIRE)
WAVEKIT_QUEUE_LOAD(write, relaxed, __ATOMIC_RELAXED)

#define WAVEKIT_QUEUE_STORE(which, suffix, order)                                           \
  void hsa_queue_store_##which##_index_##suffix(const hsa_queue_t* queue, uint64_t value) { \
    __atomic_store_n(which##_index(queue), value, order);                                   \
    notify_signal_change();                                                                 \
  }
WAVEKIT_QUEUE_STORE(write, relaxed, __ATOMIC_RELAXED)
WAVEKIT_QUEUE_STORE(write, screlease, __ATOMIC_RELEASE)
WAVEKIT_QUEUE_STORE(write, release, __ATOMIC_RELEASE)
WAVEKIT_QUEUE_STORE(read, relaxed, __ATOMIC_RELAXED)
WAVEKIT_QUEUE_STORE(read, screlease, __ATOMIC_RELEASE)
WAVEKIT_QUEUE_STORE(read, release, __ATOMIC_RELEASE)

#define WAVEKIT_QUEUE_WRITE_INDEX_ORDERS(MACRO) \
  MACRO(acq_rel, __ATOMIC_ACQ_REL)              \
  MACRO(scacq_screl, __ATOMIC_ACQ_REL)          \
  MACRO(acquire, __ATOMIC_ACQUIRE)              \
  MACRO(scacquire, __ATOMIC_ACQUIRE)            \
  MACRO(relaxed, __ATOMIC_RELAXED)              \
  MACRO(release, __ATOMIC_RELEASE)              \
  MACRO(screlease, __ATOMIC_RELEASE)

#define WAVEKIT_QUEUE_ADD(suffix, order)                                                  \
  uint64_t hsa_queue_add_write_index_##suffix(const hsa_queue_t* queue, uint64_t value) { \
    return __atomic_fetch_add(write_index(queue), value, order);                          \
  }
WAVEKIT_QUEUE_WRITE_INDEX_ORDERS(WAVEKIT_QUEUE_ADD)

#define WAVEKIT_QUEUE_CAS(suffix, order)                                                   \
  uint64_t hsa_queue_cas_write_index_##suffix(const hsa_queue_t* queue, uint64_t expected, \
                                              uint64_t value) {                            \
    uint64_t observed = expected;                                                          \
    __atomic_compare_exchange_n(write_index(queue), &observed, value, false, order,        \
                                order == __ATOMIC_RELEASE   ? __ATOMIC_RELAXED             \
                                : order == __ATOMIC_ACQ_REL ? __ATOMIC_ACQUIRE             \
                                                            : order);                      \
    return observed;                                                                       \
  }
WAVEKIT_QUEUE_WRITE_INDEX_ORDERS(WAVEKIT_QUEUE_CAS)

hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t* queue, uint32_t, const uint32_t*) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return queue_of(queue) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_QUEUE;
}

hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return queue_of(queue) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_QUEUE;
}

hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* hsa_queue, int enable) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  Queue* queue = queue_of(hsa_queue);
  if (!queue) return HSA_STATUS_ERROR_INVALID_QUEUE;
  queue->profiling.store(enable != 0, std::memory_order_relaxed);
  return HSA_STATUS_SUCCESS;
}

}  // extern "C"
