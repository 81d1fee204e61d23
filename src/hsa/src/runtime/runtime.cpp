#include "runtime.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace wavekit::hsa::runtime {

namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "host CPU";
}

}  // namespace

unsigned environment_unsigned(const char* variable, unsigned fallback, unsigned maximum) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  unsigned long value = std::strtoul(text, &end, 10);
  if (*end != '\0' || value > maximum) {
    std::fprintf(stderr, "wavekit emulator: %s='%s' is not a number\n", variable, text);
    std::exit(1);
  }
  return static_cast<unsigned>(value);
}

std::uint64_t environment_count(const char* variable) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return 0;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || text[0] == '-') {
    std::fprintf(stderr, "wavekit emulator: %s='%s' is not a count\n", variable, text);
    std::exit(1);
  }
  return value;
}

double environment_seconds(const char* variable) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return 0;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !(value > 0) || !std::isfinite(value)) {
    std::fprintf(stderr, "wavekit emulator: %s='%s' is not a positive number of seconds\n",
                 variable, text);
    std::exit(1);
  }
  return value;
}

std::string environment_directory(const char* variable) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return "";
  std::error_code error;
  std::filesystem::create_directories(text, error);
  if (error) {
    std::fprintf(stderr, "wavekit emulator: %s: cannot create %s: %s\n", variable, text,
                 error.message().c_str());
    std::exit(1);
  }
  return text;
}

Runtime::Runtime() {
  const char* target = std::getenv("WAVEKIT_EMU_TARGET");
  std::string target_name = target && *target ? target : "gfx90a";
  try {
    gpu.processor = emu::parse_processor(target_name);
  } catch (const std::exception& error) {
    // Without a valid target there is no GPU to offer; say so once and stop, as a
    // misconfigured driver would.
    std::fprintf(stderr, "wavekit emulator: WAVEKIT_EMU_TARGET: %s\n", error.what());
    std::exit(1);
  }
  gpu.type = HSA_DEVICE_TYPE_GPU;
  gpu.name = std::string(emu::processor_name(gpu.processor));
  gpu.node = 1;
  cpu.type = HSA_DEVICE_TYPE_CPU;
  cpu.name = cpu_model_name();
  cpu.node = 0;
  isa.processor = gpu.processor;
  isa.name = "amdgcn-amd-amdhsa--" + gpu.name;

  system_fine_grained.owner = &cpu;
  system_fine_grained.global_flags =
      HSA_REGION_GLOBAL_FLAG_KERNARG | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED;
  system_coarse_grained.owner = &cpu;
  system_coarse_grained.global_flags = HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED;
  gpu_local.owner = &gpu;
  gpu_local.global_flags = HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED;
  // As in ROCr: the system regions are listed under every agent, the pools under their owner.
  cpu.regions = {&system_fine_grained, &system_coarse_grained};
  cpu.pools = {&system_fine_grained, &system_coarse_grained};
  gpu.regions = {&gpu_local, &system_fine_grained, &system_coarse_grained};
  gpu_group.owner = &gpu;
  gpu_group.segment = HSA_REGION_SEGMENT_GROUP;
  gpu.pools = {&gpu_local, &gpu_group};
  memory.add(hdp_flush_registers, sizeof hdp_flush_registers, emu::MemoryMap::kReadWrite,
             "HDP flush registers");

  host_threads = environment_unsigned("WAVEKIT_EMU_THREADS", 0);
  max_resident_waves = environment_unsigned("WAVEKIT_EMU_MAX_RESIDENT_WAVES", 0);
  no_progress_instructions =
      environment_unsigned("WAVEKIT_EMU_NO_PROGRESS_INSTRUCTIONS", 0, 0xffffffffu);
  no_progress_work_per_wave =
      environment_unsigned("WAVEKIT_EMU_NO_PROGRESS_WORK_PER_WAVE", 1u << 30, 0xffffffffu);
  max_instructions = environment_count("WAVEKIT_EMU_MAX_INSTRUCTIONS");
  max_seconds = environment_seconds("WAVEKIT_EMU_TIMEOUT");
  trace_blocks_directory = environment_directory("WAVEKIT_EMU_TRACE_BLOCKS");
  trace_sequence_directory = environment_directory("WAVEKIT_EMU_TRACE_SEQUENCE");
  if (const char* text = std::getenv("WAVEKIT_EMU_STATS"); text && *text) stats_file = text;
  if (const char* text = std::getenv(wavekit::hsa::kObserverVariable); text && *text)
    observer_module = text;
  if (const char* text = std::getenv("WAVEKIT_EMU_INJECT"); text && *text) {
    try {
      injection = parse_fault_injection(text);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "wavekit emulator: WAVEKIT_EMU_INJECT: %s\n", error.what());
      std::exit(1);
    }
  }
}

namespace {

void prepare_fork() {
  Runtime& rt = runtime();
  lock_queue_packets();
  lock_async_handlers();
  rt.mutex.lock();
  rt.signal_mutex.lock();
}

void parent_after_fork() {
  Runtime& rt = runtime();
  rt.signal_mutex.unlock();
  rt.mutex.unlock();
  unlock_async_handlers();
  unlock_queue_packets();
}

void child_after_fork() {
  Runtime& rt = runtime();
  rt.signal_mutex.unlock();
  rt.mutex.unlock();
  unlock_async_handlers();
  unlock_queue_packets();
  // The parent's waiters are registered in the condition variable's state and will never
  // wake (a broadcast could wait for them): the child starts with a fresh one.
  new (&rt.signal_changed) std::condition_variable();
  restart_queue_processors_in_child();
  restart_async_handlers_in_child();
}

}  // namespace

Runtime& runtime() {
  static Runtime* instance = [] {
    auto* created = new Runtime();  // never destroyed: queues may outlive static dtors
    pthread_atfork(prepare_fork, parent_after_fork, child_after_fork);
    return created;
  }();
  return *instance;
}

bool initialized() {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  return rt.init_count > 0;
}

namespace {

// Re-registers the locked runs that meet [first, last) (page addresses): the old runs there
// are removed, the maximal runs of locked pages through the range are added.
void update_locked_runs(std::uint64_t first, std::uint64_t last) {
  Runtime& rt = runtime();
  // Widen to the runs that touch the range, so that neighbours merge or split correctly.
  auto it = rt.locked_runs.upper_bound(first);
  if (it != rt.locked_runs.begin() && std::prev(it)->first + std::prev(it)->second >= first) --it;
  while (it != rt.locked_runs.end() && it->first <= last) {
    first = std::min(first, it->first);
    last = std::max(last, it->first + it->second);
    rt.memory.remove(reinterpret_cast<const void*>(it->first));
    it = rt.locked_runs.erase(it);
  }
  // Pages next to the range that are still locked join its runs.
  while (first >= kPage && rt.locked_pages.count(first - kPage)) first -= kPage;
  while (rt.locked_pages.count(last)) last += kPage;
  std::uint64_t run = 0;
  bool in_run = false;
  for (std::uint64_t page = first; page <= last; page += kPage) {
    const bool locked = page < last && rt.locked_pages.count(page);
    if (locked && !in_run) {
      run = page;
      in_run = true;
    } else if (!locked && in_run) {
      in_run = false;
      try {
        rt.memory.add(reinterpret_cast<const void*>(run), page - run, emu::MemoryMap::kReadWrite,
                      "hsa_amd_memory_lock");
        rt.locked_runs[run] = page - run;
      } catch (const std::exception& error) {
        // Pages that overlap an allocation of the runtime's own stay as they are.
        std::fprintf(stderr, "wavekit emulator: locked memory not registered: %s\n", error.what());
      }
    }
  }
}

}  // namespace

void lock_pages(std::uint64_t base, std::uint64_t size) {
  Runtime& rt = runtime();
  const std::uint64_t first = base / kPage * kPage;
  const std::uint64_t last = (base + size + kPage - 1) / kPage * kPage;
  for (std::uint64_t page = first; page < last; page += kPage) ++rt.locked_pages[page];
  update_locked_runs(first, last);
}

void unlock_pages(std::uint64_t base, std::uint64_t size) {
  Runtime& rt = runtime();
  const std::uint64_t first = base / kPage * kPage;
  const std::uint64_t last = (base + size + kPage - 1) / kPage * kPage;
  for (std::uint64_t page = first; page < last; page += kPage) {
    auto it = rt.locked_pages.find(page);
    if (it != rt.locked_pages.end() && --it->second == 0) rt.locked_pages.erase(it);
  }
  update_locked_runs(first, last);
}

void forget_locked_pages(std::uint64_t base, std::uint64_t size) {
  Runtime& rt = runtime();
  const std::uint64_t first = base / kPage * kPage;
  const std::uint64_t last = (base + size + kPage - 1) / kPage * kPage;
  bool any = false;
  for (std::uint64_t page = first; page < last; page += kPage) any |= rt.locked_pages.erase(page);
  if (any) update_locked_runs(first, last);
}

void* allocate(std::size_t size, std::size_t alignment, const std::string& label) {
  if (size == 0) return nullptr;
  alignment = std::max<std::size_t>(alignment, kPage);
  std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* pointer = std::aligned_alloc(alignment, rounded);
  if (!pointer) return nullptr;
  std::memset(pointer, 0, rounded);
  Runtime& rt = runtime();
  {
    // Pins of memory the application freed while CLR still held them give way.
    std::lock_guard lock(rt.locked_mutex);
    forget_locked_pages(reinterpret_cast<std::uint64_t>(pointer), rounded);
  }
  rt.memory.add(pointer, rounded, emu::MemoryMap::kReadWrite, label, size);
  std::lock_guard lock(rt.mutex);
  rt.allocations[reinterpret_cast<std::uint64_t>(pointer)] = rounded;
  return pointer;
}

void* host_view(const void* pointer) {
  const auto address = reinterpret_cast<std::uint64_t>(pointer);
  const std::optional<emu::MemoryMap::Range> range = runtime().memory.find(address);
  if (!range || range->host_base == range->base) return const_cast<void*>(pointer);
  return reinterpret_cast<void*>(range->host_base + (address - range->base));
}

bool release(void* pointer) {
  Runtime& rt = runtime();
  {
    std::lock_guard lock(rt.mutex);
    auto it = rt.allocations.find(reinterpret_cast<std::uint64_t>(pointer));
    if (it == rt.allocations.end()) return false;
    rt.allocations.erase(it);
  }
  rt.memory.remove(pointer);
  std::free(pointer);
  return true;
}

void notify_signal_change() {
  Runtime& rt = runtime();
  { std::lock_guard lock(rt.signal_mutex); }
  rt.signal_changed.notify_all();
}

amd_signal_t* signal_of(hsa_signal_t signal) {
  return reinterpret_cast<amd_signal_t*>(signal.handle);
}

hsa_status_t status_of(const LoaderError& error) {
  switch (error.kind()) {
    case LoaderErrorKind::invalid_code_object:
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    case LoaderErrorKind::incompatible_code_object:
      return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
    case LoaderErrorKind::variable_undefined:
      return HSA_STATUS_ERROR_VARIABLE_UNDEFINED;
    case LoaderErrorKind::variable_already_defined:
      return HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED;
    case LoaderErrorKind::frozen_executable:
      return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  }
  return HSA_STATUS_ERROR;
}

std::string ExecutableSymbol::name() const { return kernel ? kernel->symbol : variable->name; }

}  // namespace wavekit::hsa::runtime
