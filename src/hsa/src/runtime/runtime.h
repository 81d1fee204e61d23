// Internal state of the HSA runtime over the emulator (not a public header). One process-wide
// Runtime holds the agents, the memory the emulated GPU may touch (emu::MemoryMap), the decoded
// code (emu::CodeCache), and the live queues, signals, readers and executables. Handles given
// to the application are addresses of these objects, as in ROCr (an hsa_signal_t is the
// address of its amd_signal_t, which device code such as hostcall also uses).
#pragma once

#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wavekit/emu/emu.h"
#include "wavekit/hsa/dispatch_observer.h"
#include "wavekit/hsa/fault_injection.h"
#include "wavekit/hsa/loader.h"

namespace wavekit::hsa::runtime {

// The page the emulated GPU's memory is mapped in (and locked, and allocated by).
inline constexpr std::uint64_t kPage = 4096;

struct Agent;

// A region and an AMD memory pool are the same thing seen through two APIs.
struct Region {
  Agent* owner = nullptr;
  hsa_region_segment_t segment = HSA_REGION_SEGMENT_GLOBAL;
  std::uint32_t global_flags = 0;  // HSA_REGION_GLOBAL_FLAG_*
  bool listed_as_pool = true;      // reported by hsa_amd_agent_iterate_memory_pools
};

struct Agent {
  hsa_device_type_t type = HSA_DEVICE_TYPE_CPU;
  std::string name;  // "gfx90a" for the GPU, the CPU's model name otherwise
  emu::Processor processor = emu::Processor::gfx90a;
  std::uint32_t node = 0;
  std::vector<Region*> regions;  // hsa_agent_iterate_regions
  std::vector<Region*> pools;    // hsa_amd_agent_iterate_memory_pools
};

struct Isa {
  std::string name;  // "amdgcn-amd-amdhsa--gfx90a"
  emu::Processor processor = emu::Processor::gfx90a;
};

struct Queue {
  amd_queue_t* amd = nullptr;  // what the application and device code see (hsa_queue_t first)
  void* ring = nullptr;
  Agent* agent = nullptr;
  void (*callback)(hsa_status_t, hsa_queue_t*, void*) = nullptr;
  void* callback_data = nullptr;
  std::thread processor;
  std::atomic<bool> stop{false};
  std::atomic<bool> inactive{false};
  // hsa_amd_profiling_set_profiler_enabled: the packet processor writes each dispatch's start
  // and end time (system_timestamp()) into its completion signal's start_ts/end_ts, as the
  // command processor does on real hardware.
  std::atomic<bool> profiling{false};
  // Held by the packet processor while it runs a packet and until the read index is past it,
  // so that fork() (which takes it) never copies a queue in the middle of a packet: a child
  // would run that packet again, with buffers its parent had already freed.
  std::mutex packet_mutex;
};

struct CodeObjectReader {
  std::vector<std::uint8_t> bytes;
  std::string name;
};

struct ExecutableSymbol;

struct ExecutableState {
  Executable loader;
  hsa_executable_state_t state = HSA_EXECUTABLE_STATE_UNFROZEN;
  std::vector<std::unique_ptr<ExecutableSymbol>> symbols;  // built at freeze
  std::vector<std::uint64_t> registered_code;              // load bases given to CodeCache
  std::vector<std::uint64_t> registered_memory;            // load bases given to MemoryMap
  // With a dispatch observer (Runtime::observer_module): each loaded object's ELF image by its
  // load base, which the observer reads the kernel's code from. Shared, so that a dispatch in
  // flight keeps the image it is given while the executable is destroyed.
  std::map<std::uint64_t, std::shared_ptr<const std::vector<std::uint8_t>>> images;
};

struct ExecutableSymbol {
  ExecutableState* executable = nullptr;
  const KernelInfo* kernel = nullptr;      // a kernel symbol
  const VariableInfo* variable = nullptr;  // or a variable symbol
  std::string name() const;
};

struct Runtime {
  std::mutex mutex;  // guards everything below that is not atomic or internally synchronised
  int init_count = 0;

  Agent cpu;
  Agent gpu;
  Isa isa;
  // System memory (both agents can reach it) and the GPU's "device-local" memory, which on
  // the emulator is host memory too.
  Region system_fine_grained;  // kernarg + fine-grained, like ROCr's system kernarg pool
  Region system_coarse_grained;
  Region gpu_local;  // coarse-grained, owned by the GPU agent
  // The GPU's group segment (LDS), a pool as in ROCr (HSA_AMD_SEGMENT_GROUP, no allocation):
  // CLR sizes shared memory by it.
  Region gpu_group;
  // HSA_AMD_AGENT_INFO_HDP_FLUSH: on ROCr the GPU's memory-mapped HDP flush registers, which
  // CLR writes after host writes into device memory. Here two registered host words that
  // nothing reads (the emulated GPU's memory is coherent with the host). A page of its own, so
  // that no page the application locks (hsa_amd_memory_lock registers whole pages) meets it.
  alignas(4096) std::uint32_t hdp_flush_registers[1024] = {};

  emu::MemoryMap memory;
  emu::CodeCache code;

  std::map<std::uint64_t, std::size_t> allocations;  // host base -> size
  // hsa_amd_memory_lock: host base -> the locked range, how often it is locked, and whether
  // the lock registered it with the memory map (memory the GPU already reaches is not).
  // Registered memory also gets an address of its own for the GPU, as ROCr maps user pages at
  // a GPU virtual address: `alias` (0 for memory the GPU already reaches) is a reserved,
  // inaccessible host range of `alias_size` bytes that the memory map translates to the locked
  // pages, the agent pointer being alias + (host pointer - its page). CLR files a registered
  // buffer under both addresses and hipHostUnregister removes both, so they must differ.
  struct Locked {
    std::size_t size = 0;
    unsigned count = 0;
    bool registered = false;
    std::uint64_t alias = 0;
    std::uint64_t alias_size = 0;
    std::uint64_t agent_address(std::uint64_t host) const {
      return alias ? alias + host % kPage : host;
    }
  };
  std::mutex locked_mutex;  // guards locked, locked_pages, locked_runs
  std::map<std::uint64_t, Locked> locked;
  // Locked host memory is registered by pages: locks of neighbouring buffers share pages, and
  // CLR may keep a pin past the application's free(), so a later allocation or lock can reuse
  // the addresses. Pages count their locks; each maximal run of locked pages is one range of
  // the memory map (base -> size), so an access that crosses pages stays in one range.
  std::map<std::uint64_t, unsigned> locked_pages;
  std::map<std::uint64_t, std::uint64_t> locked_runs;
  // The pool each pool/region allocation came from (hsa_amd_pointer_info's owner and flags).
  std::map<std::uint64_t, const Region*> allocation_pools;
  std::set<const amd_signal_t*> signals;
  std::map<const hsa_queue_t*, std::unique_ptr<Queue>> queues;
  std::map<const CodeObjectReader*, std::unique_ptr<CodeObjectReader>> readers;
  std::map<const ExecutableState*, std::unique_ptr<ExecutableState>> executables;
  std::uint64_t next_queue_id = 0;

  unsigned host_threads = 0;        // WAVEKIT_EMU_THREADS, 0: every core
  unsigned max_resident_waves = 0;  // WAVEKIT_EMU_MAX_RESIDENT_WAVES, 0: emulator default
  // WAVEKIT_EMU_NO_PROGRESS_INSTRUCTIONS, 0: emulator default (emu::DispatchOptions).
  unsigned no_progress_instructions = 0;
  // WAVEKIT_EMU_NO_PROGRESS_WORK_PER_WAVE (emu::DispatchOptions::no_progress_work_per_wave):
  // 2^30 unless set; 0 turns the state-repeat check off.
  unsigned no_progress_work_per_wave = 1u << 30;
  // WAVEKIT_EMU_MAX_INSTRUCTIONS and WAVEKIT_EMU_TIMEOUT: every dispatch's budget
  // (emu::DispatchOptions::max_instructions / max_seconds); 0: none.
  std::uint64_t max_instructions = 0;
  double max_seconds = 0;
  // wavekit_emu_set_outside_progress (the preload shim's hostcall service); null: none.
  int (*outside_progress)(void* data) = nullptr;
  void* outside_progress_data = nullptr;

  // The emulator's ground truth of every dispatch, written as `wavekit launch` writes it
  // (--trace-blocks into WAVEKIT_EMU_TRACE_BLOCKS/<kernel>.<n>.json, --trace-sequence into
  // WAVEKIT_EMU_TRACE_SEQUENCE/<kernel>.<n>/); empty: not recorded.
  std::string trace_blocks_directory;
  std::string trace_sequence_directory;
  // WAVEKIT_EMU_STATS: a file every dispatch appends one line to (its kernel, waves,
  // wave-instructions, wall and process CPU time); empty: none. Measuring the emulator on
  // programs it does not own (HIP applications) needs the counts from the runtime itself.
  std::string stats_file;
  // Dispatches run so far per kernel name: the <n> of the ground truth's file names, counted
  // as the preload shim counts the dispatches whose results it names the same way.
  std::map<std::string, std::uint64_t> dispatches_of_kernel;
  // WAVEKIT_EMU_INJECT (fault_injection.h): one bit flipped in one dispatch; the dispatches of
  // its kernel so far.
  std::optional<KernelFaultInjection> injection;
  std::uint64_t dispatches_of_injected_kernel = 0;
  // WAVEKIT_EMU_OBSERVER (wavekit/hsa/dispatch_observer.h): the module's path, and the observer
  // it made at the first dispatch.
  std::string observer_module;
  std::once_flag observer_opened;
  wavekit::hsa::DispatchObserver* observer = nullptr;

  // Host-side signal changes bump this and notify; waiters also poll, because device code
  // changes signal values without telling anyone.
  std::mutex signal_mutex;
  std::condition_variable signal_changed;

  Runtime();
};

Runtime& runtime();
bool initialized();

// Registers/unregisters a host allocation with the emulated GPU's memory map.
// Locked-page bookkeeping (runtime.cpp; the caller holds locked_mutex): lock_pages/unlock_pages
// count the pages of [base, base + size) and re-register the runs they change;
// forget_locked_pages drops the pages of a range the host allocator has just handed out again
// (a pin the application outlived).
void lock_pages(std::uint64_t base, std::uint64_t size);
void unlock_pages(std::uint64_t base, std::uint64_t size);
void forget_locked_pages(std::uint64_t base, std::uint64_t size);
// Memory the emulated GPU reaches, allocated in whole pages as KFD allocates: a page the
// application locks never shares one with the runtime's queues, rings, signals or pools.
// `alignment` beyond a page is honoured; the requested size is what --check-bounds checks.
void* allocate(std::size_t size, std::size_t alignment, const std::string& label);
bool release(void* pointer);
// The host address of `pointer` as the emulated GPU reaches it: the locked pages behind an
// agent address of locked memory (Runtime::Locked::alias), else the pointer itself. The
// runtime's host-side copies and fills go through it, as ROCr's copy engines read GPU addresses.
void* host_view(const void* pointer);

// Wakes every waiter on any signal (and the packet processors).
void notify_signal_change();
amd_signal_t* signal_of(hsa_signal_t signal);

// Stops a queue's packet processor and frees the queue (hsa_queue_destroy, and hsa_shut_down
// for the queues the application left behind).
hsa_status_t destroy_queue(hsa_queue_t* queue);

// The clock of HSA_SYSTEM_INFO_TIMESTAMP (nanoseconds; TIMESTAMP_FREQUENCY is 1 GHz), which is
// also the clock of dispatch times, so no conversion between domains is needed.
std::uint64_t system_timestamp();

// An HSA enum argument's value as an int. HSA passes its extensions' values (hsa_amd_agent_info_t
// through hsa_agent_info_t, HSA_AMD_SYSTEM_INFO_* through hsa_system_info_t) in the core enums'
// types, outside their declared enumerators; loading such a value as the enum type is undefined
// (UBSan's -fsanitize=enum stops CLR's first hsa_agent_get_info), so its bytes are read instead.
template <typename Enum>
int enum_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Whether a signal value satisfies a wait condition (hsa_signal_wait_*, async handlers).
inline bool condition_met(std::int64_t value, hsa_signal_condition_t condition,
                          std::int64_t compare) {
  switch (condition) {
    case HSA_SIGNAL_CONDITION_EQ:
      return value == compare;
    case HSA_SIGNAL_CONDITION_NE:
      return value != compare;
    case HSA_SIGNAL_CONDITION_LT:
      return value < compare;
    case HSA_SIGNAL_CONDITION_GTE:
      return value >= compare;
  }
  return true;
}

// The implementations behind the exported functions that tools may replace (api_tools.cpp):
// the exported hsa_queue_create and hsa_executable_freeze call through the tools API table,
// whose entries start as these.
hsa_status_t create_queue(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                          uint32_t private_segment_size, uint32_t group_segment_size,
                          hsa_queue_t** queue);
hsa_status_t freeze_executable(hsa_executable_t executable, const char* options);

// HSA_TOOLS_LIB (api_tools.cpp): loaded at the first hsa_init, OnUnload at the last
// hsa_shut_down.
void load_tools();
void unload_tools();

// Intercept queues (api_intercept.cpp). An intercept queue is what the application sees; its
// packets go through the registered interceptors, in the thread that rings its doorbell, into
// an ordinary queue (the wrapped queue) that runs them.
hsa_status_t intercept_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                    void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                    uint32_t private_segment_size, uint32_t group_segment_size,
                                    hsa_queue_t** queue);
hsa_status_t intercept_queue_register(
    hsa_queue_t* queue,
    void (*handler)(const void* packets, uint64_t count, uint64_t user_index, void* data,
                    void (*writer)(const void* packets, uint64_t count)),
    void* data);
// The queue that runs `queue`'s packets: the wrapped queue of an intercept queue, else itself.
const hsa_queue_t* running_queue(const hsa_queue_t* queue);
// Called by the signal stores: a store to an intercept queue's doorbell (its amd_signal_t kind
// is AMD_SIGNAL_KIND_DOORBELL, which no other signal here has) submits its new packets.
void intercept_doorbell_rung(hsa_signal_t doorbell);
// hsa_queue_destroy of an intercept queue; HSA_STATUS_ERROR_INVALID_QUEUE when it is not one.
hsa_status_t destroy_intercept_queue(hsa_queue_t* queue);
void destroy_intercept_queues();  // hsa_shut_down

// hsa_amd_signal_async_handler's thread (api_async.cpp); hsa_shut_down stops it, waiting for a
// handler that is running, and drops the handlers not yet called (as ROCr does).
void stop_async_handlers();

// fork(): the child gets its own working copy of the emulated GPU, as its memory is a copy of
// the parent's (runtime.cpp registers these with pthread_atfork). Before the fork the runtime's
// locks are taken so that the child's copies are consistent and free; in the child the threads
// that did not survive the fork (packet processors, the async-handler thread) start again.
void lock_async_handlers();
void unlock_async_handlers();
void restart_async_handlers_in_child();
void restart_queue_processors_in_child();
// fork(): every queue's packet_mutex, taken before the runtime's own locks (a processor that
// holds its packet_mutex takes rt.mutex) and released after.
void lock_queue_packets();
void unlock_queue_packets();

// The status the C API returns for a loader failure.
hsa_status_t status_of(const LoaderError& error);

// Reads a directory from the environment and creates it; "" when unset; exits the process with
// a message naming the variable when it cannot be created.
std::string environment_directory(const char* variable);

// Reads an unsigned integer (at most `maximum`) from the environment; `fallback` when unset;
// exits the process with a message naming the variable when it is not such a number (a
// misconfigured run should stop, not silently use a default).
unsigned environment_unsigned(const char* variable, unsigned fallback, unsigned maximum = 1u << 20);
// A count up to 2^64 - 1 (0 when unset).
std::uint64_t environment_count(const char* variable);
// Seconds, a positive decimal number (0 when unset).
double environment_seconds(const char* variable);

}  // namespace wavekit::hsa::runtime
