// libwavekit-preload.so: makes instrumentation transparent to unmodified HSA programs.
//
// It interposes on the HSA API (LD_PRELOAD) and
//   - rewrites only what runs: the program loads its original objects, and a kernel is
//     rewritten alone (or taken from the cache) at its first selected dispatch and loaded, with
//     the probe library, into an executable of its own; its selected dispatches run that, with
//     a kernarg segment of the shim's (the program's has no room for the arena's address);
//   - for objects it cannot treat so (global variables the kernels share, a whole-object rewrite
//     in the cache, an object already instrumented, --rewrite-at-load), substitutes the
//     instrumented code object when the program creates a code-object reader, loads the probe
//     library into the same executable and, at freeze, a shadow executable with the original
//     object, so that any dispatch that cannot be instrumented correctly still runs the
//     original kernel (fail-safe),
//   - hands the program proxy queues: packets the program writes are forwarded to the real
//     queue when it rings the doorbell, and on the way each dispatch of an instrumented kernel
//     chooses its variant by the run-time selection (control.h): selected, it gets its per-wave
//     arena (size from the rewritten object's own note) written into the appended kernel
//     argument and a completion signal of the shim's, after which the tool's reporter runs and
//     the program's own signal is decremented; not selected, it runs the original kernel from
//     the shadow executable with the program's packet otherwise untouched,
//   - runs the hostcall service for the process's lifetime once an instrumented executable's
//     probes use the ring (the probe library defines `wavekit_hostcall_ring`, or the WAVEKIT note
//     says needs_hostcall): the ring in host-coherent memory, its address stored in that variable
//     after freezing, print to stdout, per-wave files under --tool-out, statistics in the report.
// What docs/rewrite.md asks of any launcher (the probe library, the ring, the arena, the report)
// is rewrite::Launcher's (wavekit/rewrite/launcher.h), given the runtime's functions behind the
// shim's; the shim adds what only interposition needs: substitution, the shadow executable and
// its fallbacks, proxy queues, the reporter thread, result names and the run's summary.
// Nothing here throws across the C ABI: every failure becomes a fallback and one message.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "control.h"
#include "real_api.h"
#include "wavekit/hsa/emulator_extensions.h"
#include "wavekit/preload/config.h"
#include "wavekit/preload/substitution.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/launcher.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {

const RealApi& real() {
  static const RealApi api = [] {
    RealApi resolved;
#define WAVEKIT_RESOLVE(name)                                                             \
  resolved.name = reinterpret_cast<decltype(resolved.name)>(dlsym(RTLD_NEXT, #name));     \
  if (!resolved.name) {                                                                   \
    std::fprintf(stderr, "wavekit: the HSA runtime has no %s; cannot continue\n", #name); \
    std::abort();                                                                         \
  }
    WAVEKIT_LAUNCHER_HSA_FUNCTIONS(WAVEKIT_RESOLVE)
    WAVEKIT_SHIM_HSA_FUNCTIONS(WAVEKIT_RESOLVE)
#undef WAVEKIT_RESOLVE
    resolved.hsa_signal_store_release =
        reinterpret_cast<decltype(resolved.hsa_signal_store_release)>(
            dlsym(RTLD_NEXT, "hsa_signal_store_release"));
    resolved.wavekit_emu_mark_tool_memory =
        reinterpret_cast<decltype(resolved.wavekit_emu_mark_tool_memory)>(
            dlsym(RTLD_NEXT, hsa::kMarkToolMemorySymbol));
    resolved.wavekit_emu_set_outside_progress =
        reinterpret_cast<decltype(resolved.wavekit_emu_set_outside_progress)>(
            dlsym(RTLD_NEXT, hsa::kSetOutsideProgressSymbol));
    return resolved;
  }();
  return api;
}

namespace {

constexpr std::size_t kPacketBytes = 64;

// A code object the program loaded, with what the shim made of it.
struct LoadedObject {
  std::vector<std::uint8_t> original;
  std::optional<Substitution> substitution;  // empty: the original runs
  std::optional<Deferred> deferred;  // its kernels are rewritten at their first selected dispatch
  std::string no_original;           // why the original kernels cannot run (no shadow executable)
};

// What happened to the dispatches of one kernel (by name: executables that load the same
// object share it, and its result files are named by it).
struct KernelTally {
  std::uint64_t dispatches = 0;  // every dispatch, instrumented or not
  // A child of fork() goes on numbering where its parent was; this many were the parent's.
  std::uint64_t inherited = 0;
  std::uint64_t instrumented = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> instrumented_ranges;  // inclusive

  void count_instrumented(std::uint64_t dispatch) {
    ++instrumented;
    if (!instrumented_ranges.empty() && instrumented_ranges.back().second + 1 == dispatch)
      instrumented_ranges.back().second = dispatch;
    else
      instrumented_ranges.emplace_back(dispatch, dispatch);
  }
  std::string ranges_text() const {
    std::string text;
    for (const auto& [first, last] : instrumented_ranges)
      text += (text.empty() ? "" : ",") + std::to_string(first) +
              (last == first ? "" : "-" + std::to_string(last));
    return text;
  }
};

// A kernel of a Deferred object, which the program's executable holds as the original (its
// kernel object is the record's key): rewritten alone at its first selected dispatch, into an
// executable of its own.
struct Deferral {
  hsa_executable_t program_executable{};
  std::string descriptor_symbol;
  bool attempted = false;
  std::uint64_t instrumented_kernel_object = 0;
  std::unique_ptr<Substitution> substitution;  // owns KernelRecord::note_kernel
  // The original's kernarg segment size (the program's packets point at one of that size), and
  // what the instrumented kernel needs beyond the original's private and group segments.
  std::uint32_t kernarg_bytes = 0;
  std::uint32_t private_bytes_added = 0;
  std::uint32_t group_bytes_added = 0;
  double rewrite_ms = 0;  // of the first-dispatch work, the rewrite (or cache read) alone
};

// A kernel of a frozen executable that the shim instruments.
struct KernelRecord {
  std::string name;
  const rewrite::InstrumentedKernel* note_kernel = nullptr;  // null until a Deferral's rewrite
  hsa_agent_t agent{};  // the GPU its executable was loaded for (arena access is granted to it)
  std::shared_ptr<LoadedObject> object;
  std::uint64_t original_kernel_object = 0;  // in the shadow executable; 0: no fallback
  KernelTally* tally = nullptr;
  // Whether the selection of generation `selection_generation` takes this kernel's dispatches.
  std::uint64_t selection_generation = UINT64_MAX;
  bool matches_selection = false;
  // Why every dispatch must run the original kernel (its probes' ring could not be set up, or
  // its deferred rewrite failed); empty: instrument.
  std::string unusable;
  std::unique_ptr<Deferral> deferral;  // null: the executable holds the instrumented kernel
};

struct ExecutableRecord {
  hsa_agent_t agent{};
  std::vector<std::shared_ptr<LoadedObject>> objects;
};

// What the program sees as its queue. `view` must come first: the program holds &view.
struct ProxyQueue {
  hsa_queue_t view{};
  hsa_queue_t* real_queue = nullptr;
  std::atomic<std::uint64_t> write_index{0};
  std::atomic<std::uint64_t> read_index{0};
  std::mutex forwarding;
  void* ring = nullptr;
  // The shim's own host time per forwarded packet (taking it from the program's ring, choosing
  // and preparing the dispatch; not the real queue's submission, which a plain run pays too),
  // in ns, under `forwarding`; the first kMaxTimedPackets of the queue.
  std::vector<std::uint32_t> shim_ns;
};

constexpr std::size_t kMaxTimedPackets = std::size_t{1} << 20;

struct PendingReport {
  hsa_signal_t done{};
  hsa_signal_t program_signal{};
  rewrite::PreparedDispatch prepared;
  std::uint64_t dispatch = 0;
};

class Shim {
 public:
  static Shim& get() {
    static Shim* shim = new Shim();  // never destroyed: threads of the program may outlive exit
    return *shim;
  }

  bool enabled() const { return substituter_ != nullptr; }

  void warn_once(const std::string& message) {
    std::lock_guard lock(mutex_);
    warn_once_locked(message);
  }

  // --- code objects ---------------------------------------------------------------------
  std::shared_ptr<LoadedObject> consider(std::span<const std::uint8_t> bytes) {
    auto object = std::make_shared<LoadedObject>();
    object->original.assign(bytes.begin(), bytes.end());
    auto outcome = substituter_->substitute(object->original);
    if (auto* substitution = std::get_if<Substitution>(&outcome)) {
      object->substitution = std::move(*substitution);
      // An adopted object is already the instrumented one: the shadow executable needs the
      // original, which only a substitution made in this process knows (none: no shadow).
      if (object->substitution->adopted)
        object->original = std::move(object->substitution->adopted_original);
      if (object->substitution->global_variables) {
        object->original.clear();
        object->no_original =
            "its object has global variables, which the original kernels in an executable of "
            "their own would not share";
      } else if (object->original.empty()) {
        object->no_original = "the original object was never seen in this process";
      }
      nlohmann::json entry = {{"origin", object->substitution->origin},
                              {"original_sha256", object->substitution->note.original_sha256}};
      for (const auto& kernel : object->substitution->note.kernels)
        entry["kernels"].push_back(kernel.name);
      if (object->substitution->global_variables) entry["global_variables"] = true;
      if (!object->substitution->kept.empty())
        entry["kept"] = object->substitution->kept;
      else if (!config_.keep_objects.empty())
        warn_once("could not keep a copy of the original object in " + config_.keep_objects);
      std::lock_guard lock(mutex_);
      summary_["objects"].push_back(entry);
    } else if (auto* deferred = std::get_if<Deferred>(&outcome)) {
      object->deferred = std::move(*deferred);
      std::lock_guard lock(mutex_);
      for (const Deferred::Kernel& kernel : object->deferred->kernels)
        summary_["kernels_deferred"].push_back(kernel.name);
    } else {
      const Declined& declined = std::get<Declined>(outcome);
      {
        // What the application loaded but nobody selected: `wavekit run` names a selected
        // kernel that is in none of its objects.
        std::lock_guard lock(mutex_);
        for (const std::string& name : declined.kernels)
          summary_["kernels_not_selected"].push_back(name);
      }
      if (!declined.quiet) warn_once("running the original code object: " + declined.reason);
    }
    return object;
  }

  void remember_reader(hsa_code_object_reader_t reader, std::shared_ptr<LoadedObject> object) {
    std::lock_guard lock(mutex_);
    readers_[reader.handle] = std::move(object);
  }

  std::shared_ptr<LoadedObject> reader_object(hsa_code_object_reader_t reader) {
    std::lock_guard lock(mutex_);
    auto it = readers_.find(reader.handle);
    return it == readers_.end() ? nullptr : it->second;
  }

  hsa_status_t load(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                    const char* options, hsa_loaded_code_object_t* loaded) {
    std::shared_ptr<LoadedObject> object = reader_object(reader);
    // A substitution's probe library goes in first: ROCr's loader resolves the instrumented
    // object's calls into it when the object is loaded (load_beside).
    if (object && object->substitution && !object->substitution->probe_library.empty()) {
      std::lock_guard lock(mutex_);
      hsa_status_t probe_status =
          launcher_->load_probe_library(executable, agent, object->substitution->probe_library);
      if (probe_status != HSA_STATUS_SUCCESS) return probe_status;
    }
    hsa_status_t status =
        real().hsa_executable_load_agent_code_object(executable, agent, reader, options, loaded);
    if (status != HSA_STATUS_SUCCESS || !object || (!object->substitution && !object->deferred))
      return status;
    std::lock_guard lock(mutex_);
    ExecutableRecord& record = executables_[executable.handle];
    record.agent = agent;
    record.objects.push_back(object);
    return status;
  }

  hsa_status_t freeze(hsa_executable_t executable, const char* options) {
    hsa_status_t status = real().hsa_executable_freeze(executable, options);
    if (status != HSA_STATUS_SUCCESS) return status;
    std::lock_guard lock(mutex_);
    auto it = executables_.find(executable.handle);
    if (it == executables_.end()) return status;
    ExecutableRecord& record = it->second;
    bool needs_hostcall = false;
    for (const auto& object : record.objects)
      needs_hostcall |= object->substitution && object->substitution->note.needs_hostcall;
    const std::string ring_failure = launcher_->bind(executable, record.agent, needs_hostcall);
    if (!ring_failure.empty()) warn_once_locked(ring_failure + "; running the original kernels");
    for (const auto& object : record.objects) {
      if (object->deferred) {
        defer_kernels(executable, record.agent, object);
        continue;
      }
      std::uint64_t shadow = load_shadow(executable, record.agent, object->original);
      for (const auto& kernel : object->substitution->note.kernels) {
        std::uint64_t kernel_object =
            kernel_object_of(executable.handle, record.agent, kernel.descriptor_symbol);
        if (!kernel_object) {
          warn_once_locked("instrumented kernel " + kernel.name + " not found after freeze");
          continue;
        }
        KernelRecord& kernel_record = kernels_[kernel_object];
        kernel_record.name = kernel.name;
        kernel_record.tally = &tallies_[kernel.name];
        kernel_record.unusable = ring_failure;
        kernel_record.note_kernel = &kernel;
        kernel_record.agent = record.agent;
        kernel_record.object = object;
        kernel_record.original_kernel_object =
            shadow ? kernel_object_of(shadow, record.agent, kernel.descriptor_symbol) : 0;
      }
    }
    return status;
  }

  // --- queues -----------------------------------------------------------------------------
  hsa_status_t create_queue(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                            void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                            uint32_t private_segment_size, uint32_t group_segment_size,
                            hsa_queue_t** queue) {
    hsa_queue_t* real_queue = nullptr;
    hsa_status_t status = real().hsa_queue_create(
        agent, size, type, callback, data, private_segment_size, group_segment_size, &real_queue);
    if (status != HSA_STATUS_SUCCESS) return status;
    auto proxy = std::make_unique<ProxyQueue>();
    proxy->real_queue = real_queue;
    proxy->view = *real_queue;
    proxy->ring = std::aligned_alloc(kPacketBytes, std::size_t{real_queue->size} * kPacketBytes);
    hsa_signal_t doorbell{};
    if (!proxy->ring || real().hsa_signal_create(0, 0, nullptr, &doorbell) != HSA_STATUS_SUCCESS) {
      std::free(proxy->ring);
      warn_once("could not set up queue interception; dispatches run uninstrumented");
      *queue = real_queue;
      return status;
    }
    for (std::uint32_t i = 0; i < real_queue->size; ++i)
      packet_header(proxy->ring, i) = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
    proxy->view.base_address = proxy->ring;
    proxy->view.doorbell_signal = doorbell;
    *queue = &proxy->view;
    std::unique_lock lock(queues_mutex_);
    doorbells_[doorbell.handle] = proxy.get();
    queues_[&proxy->view] = std::move(proxy);
    return status;
  }

  ProxyQueue* proxy_of(const hsa_queue_t* queue) {
    if (!queues_active_) return nullptr;
    std::shared_lock lock(queues_mutex_);
    auto it = queues_.find(queue);
    return it == queues_.end() ? nullptr : it->second.get();
  }

  ProxyQueue* proxy_of_doorbell(hsa_signal_t signal) {
    if (!queues_active_) return nullptr;
    std::shared_lock lock(queues_mutex_);
    auto it = doorbells_.find(signal.handle);
    return it == doorbells_.end() ? nullptr : it->second;
  }

  hsa_status_t destroy_queue(hsa_queue_t* queue) {
    std::unique_ptr<ProxyQueue> proxy;
    {
      std::unique_lock lock(queues_mutex_);
      auto it = queues_.find(queue);
      if (it == queues_.end()) return real().hsa_queue_destroy(queue);
      proxy = std::move(it->second);
      queues_.erase(it);
      doorbells_.erase(proxy->view.doorbell_signal.handle);
    }
    {
      std::scoped_lock lock(proxy->forwarding, retired_mutex_);
      retired_shim_ns_.insert(retired_shim_ns_.end(), proxy->shim_ns.begin(), proxy->shim_ns.end());
    }
    hsa_status_t status = real().hsa_queue_destroy(proxy->real_queue);
    real().hsa_signal_destroy(proxy->view.doorbell_signal);
    std::free(proxy->ring);
    return status;
  }

  // Forwards every packet the program has published on `proxy`, in order.
  void forward(ProxyQueue& proxy) {
    std::lock_guard lock(proxy.forwarding);
    const std::uint32_t size = proxy.view.size;
    for (;;) {
      std::uint64_t index = proxy.read_index.load(std::memory_order_relaxed);
      if (index >= proxy.write_index.load(std::memory_order_acquire)) return;
      std::uint8_t* slot = static_cast<std::uint8_t*>(proxy.ring) + (index % size) * kPacketBytes;
      std::uint32_t header_word =
          __atomic_load_n(reinterpret_cast<std::uint32_t*>(slot), __ATOMIC_ACQUIRE);
      if (((header_word >> HSA_PACKET_HEADER_TYPE) & 0xff) == HSA_PACKET_TYPE_INVALID) return;
      const auto taken = std::chrono::steady_clock::now();
      alignas(kPacketBytes) std::uint8_t packet[kPacketBytes];
      std::memcpy(packet, slot, kPacketBytes);
      std::memcpy(packet, &header_word, sizeof header_word);
      if (((header_word >> HSA_PACKET_HEADER_TYPE) & 0xff) == HSA_PACKET_TYPE_KERNEL_DISPATCH)
        instrument(*reinterpret_cast<hsa_kernel_dispatch_packet_t*>(packet));
      if (proxy.shim_ns.size() < kMaxTimedPackets)
        proxy.shim_ns.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                 taken)
                .count(),
            UINT32_MAX)));
      submit(*proxy.real_queue, packet);
      __atomic_store_n(reinterpret_cast<std::uint16_t*>(slot),
                       std::uint16_t{HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE},
                       __ATOMIC_RELAXED);
      proxy.read_index.store(index + 1, std::memory_order_release);
    }
  }

  // --- reports ------------------------------------------------------------------------------
  void shut_down() {
    {
      std::lock_guard lock(reports_mutex_);
      stopping_ = true;
    }
    reports_changed_.notify_all();
    if (reporter_.joinable()) reporter_.join();
    {
      std::lock_guard lock(mutex_);
      if (const auto statistics = launcher_ ? launcher_->stop_hostcall() : std::nullopt)
        summary_["hostcall"] = nlohmann::json::parse(statistics->to_json());
    }
    write_summary();
  }

  void write_summary() {
    // Before mutex_: forward() takes a queue's lock, then mutex_.
    nlohmann::json proxy_queue = proxy_queue_statistics();
    std::lock_guard lock(mutex_);
    if (summary_written_ || config_.report_directory.empty()) return;
    summary_written_ = true;
    try {
      // One file per process: an application that forks, or runs several processes, reports
      // each of them (`wavekit run` merges them).
      summary_["pid"] = static_cast<std::int64_t>(getpid());
      summary_["proxy_queue"] = std::move(proxy_queue);
      summary_["kernels"] = nlohmann::json::object();
      for (const auto& [name, tally] : tallies_)
        summary_["kernels"][name] = {{"dispatches", tally.dispatches - tally.inherited},
                                     {"instrumented", tally.instrumented},
                                     {"instrumented_dispatches", tally.ranges_text()}};
      write_file(config_.report_directory + "/" + std::to_string(getpid()) + ".json",
                 summary_.dump(2) + "\n");
    } catch (const std::exception& error) {
      std::fprintf(stderr, "wavekit: %s\n", error.what());
    }
  }

 private:
  Shim() {
    try {
      config_ = config_from_environment();
      if (!config_.enabled()) return;
      substituter_ = std::make_unique<Substituter>(config_);
      const rewrite::HsaFunctions& functions = real();
      launcher_ = std::make_unique<rewrite::Launcher>(
          functions,
          rewrite::LauncherOptions{
              .tool = config_.tool,
              .file_root = config_.tool_out,
              .fail_arena_allocation = config_.fault == InjectedFault::arena_allocation});
      summary_ = {{"tool", config_.tool},
                  {"objects", nlohmann::json::array()},
                  {"dispatches", nlohmann::json::array()},
                  {"control", nlohmann::json::array()},
                  {"messages", nlohmann::json::array()}};
      queues_active_ = true;
      Control::get();  // the selection and the control file hold from the first dispatch on
      std::atexit([] { Shim::get().shut_down(); });
      pthread_atfork(nullptr, nullptr, [] { Shim::get().after_fork_in_child(); });
    } catch (const std::exception& error) {
      std::fprintf(stderr, "wavekit: instrumentation is off: %s\n", error.what());
      substituter_.reset();
    }
  }

  // fork(): the child has copies of this object's state but none of its threads. Its locks are
  // made anew (a thread of the parent may have held one), its report lists only its own
  // dispatches, the reporter starts again for the dispatches it inherited, and a hostcall
  // service (whose threads are gone, and whose ring the probes of its executables are bound
  // to) is left behind: those kernels run uninstrumented in the child, with a message.
  void after_fork_in_child() {
    new (&mutex_) std::mutex();
    new (&reports_mutex_) std::mutex();
    new (&reports_changed_) std::condition_variable();
    new (&queues_mutex_) std::shared_mutex();
    new (&retired_mutex_) std::mutex();
    summary_["dispatches"] = nlohmann::json::array();
    summary_["messages"] = nlohmann::json::array();
    summary_["control"] = nlohmann::json::array();
    summary_.erase("hostcall");
    for (auto& [name, tally] : tallies_) {
      tally.inherited = tally.dispatches;
      tally.instrumented = 0;
      tally.instrumented_ranges.clear();
    }
    retired_shim_ns_.clear();
    for (auto& [view, proxy] : queues_) {
      new (&proxy->forwarding) std::mutex();
      proxy->shim_ns.clear();
    }
    Control::get().restart_watcher_after_fork();
    summary_written_ = false;
    warned_.clear();
    if (launcher_->abandon_hostcall_after_fork()) {
      for (auto& [object, kernel] : kernels_)
        if (kernel.unusable.empty() &&
            (!kernel.deferral || kernel.deferral->instrumented_kernel_object))
          kernel.unusable = "its probes' hostcall service did not survive fork() into process " +
                            std::to_string(getpid());
    }
    if (reporter_.joinable()) new (&reporter_) std::thread([this] { report_loop(); });
  }

  // The shim's host time per forwarded packet over every queue (ProxyQueue::shim_ns).
  nlohmann::json proxy_queue_statistics() {
    std::vector<std::uint32_t> samples;
    {
      std::lock_guard retired(retired_mutex_);
      samples = retired_shim_ns_;
    }
    {
      std::shared_lock queues_lock(queues_mutex_);
      for (const auto& [view, proxy] : queues_) {
        std::lock_guard forwarding(proxy->forwarding);
        samples.insert(samples.end(), proxy->shim_ns.begin(), proxy->shim_ns.end());
      }
    }
    nlohmann::json statistics = {{"packets_timed", samples.size()}};
    if (samples.empty()) return statistics;
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double quantile) {
      return samples[static_cast<std::size_t>(quantile * static_cast<double>(samples.size() - 1))];
    };
    statistics["shim_host_ns"] = {
        {"median", at(0.5)}, {"p90", at(0.9)}, {"p99", at(0.99)}, {"max", samples.back()}};
    return statistics;
  }

  // KERNEL.N, or KERNEL.pidP.N in a process other than the one `wavekit run` started, so that
  // processes never write the same file.
  std::string result_stem(const std::string& kernel, std::uint64_t dispatch) const {
    const bool root = config_.root_pid == 0 || config_.root_pid == getpid();
    return config_.tool_out + "/" + kernel + (root ? "" : ".pid" + std::to_string(getpid())) + "." +
           std::to_string(dispatch);
  }

  static std::uint16_t& packet_header(void* ring, std::uint64_t index) {
    return *reinterpret_cast<std::uint16_t*>(static_cast<std::uint8_t*>(ring) +
                                             index * kPacketBytes);
  }

  void warn_once_locked(const std::string& message) {
    if (!warned_.insert(message).second) return;
    std::fprintf(stderr, "wavekit: %s\n", message.c_str());
    summary_["messages"].push_back(message);
  }

  static std::uint64_t kernel_object_of(std::uint64_t executable, hsa_agent_t agent,
                                        const std::string& symbol_name) {
    hsa_executable_symbol_t symbol{};
    if (real().hsa_executable_get_symbol_by_name(hsa_executable_t{executable}, symbol_name.c_str(),
                                                 &agent, &symbol) != HSA_STATUS_SUCCESS)
      return 0;
    std::uint64_t kernel_object = 0;
    if (real().hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                              &kernel_object) != HSA_STATUS_SUCCESS)
      return 0;
    return kernel_object;
  }

  // The original object in an executable of its own, for dispatches that must fall back (0
  // without one: an adopted object whose original this process never saw).
  // An executable of the shim's beside the program's `executable` (its profile and rounding
  // mode), holding `object` and, if given, the probe library; frozen. Empty when the runtime
  // refused a step (under mutex_).
  std::optional<hsa_executable_t> load_beside(hsa_executable_t executable, hsa_agent_t agent,
                                              const std::vector<std::uint8_t>& object,
                                              const std::vector<std::uint8_t>& probe_library = {}) {
    hsa_profile_t profile{};
    hsa_default_float_rounding_mode_t rounding{};
    hsa_executable_t beside{};
    hsa_code_object_reader_t reader{};
    const bool ok =
        real().hsa_executable_get_info(executable, HSA_EXECUTABLE_INFO_PROFILE, &profile) ==
            HSA_STATUS_SUCCESS &&
        real().hsa_executable_get_info(executable, HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE,
                                       &rounding) == HSA_STATUS_SUCCESS &&
        real().hsa_executable_create_alt(profile, rounding, nullptr, &beside) ==
            HSA_STATUS_SUCCESS &&
        // The probe library first: ROCr's loader resolves an object's relocations when it is
        // loaded, against what the executable already defines (an instrumented object loaded
        // before the probes it calls fails with HSA_STATUS_ERROR_VARIABLE_UNDEFINED).
        (probe_library.empty() ||
         launcher_->load_probe_library(beside, agent, probe_library) == HSA_STATUS_SUCCESS) &&
        real().hsa_code_object_reader_create_from_memory(object.data(), object.size(), &reader) ==
            HSA_STATUS_SUCCESS &&
        real().hsa_executable_load_agent_code_object(beside, agent, reader, nullptr, nullptr) ==
            HSA_STATUS_SUCCESS &&
        real().hsa_executable_freeze(beside, nullptr) == HSA_STATUS_SUCCESS;
    if (!ok) return std::nullopt;
    return beside;
  }

  std::uint64_t load_shadow(hsa_executable_t executable, hsa_agent_t agent,
                            const std::vector<std::uint8_t>& original) {
    if (original.empty()) return 0;
    const std::optional<hsa_executable_t> shadow = load_beside(executable, agent, original);
    if (!shadow) {
      warn_once_locked(
          "could not load the original object beside the instrumented one; "
          "dispatches that cannot be instrumented will fail");
      return 0;
    }
    return shadow->handle;
  }

  struct SegmentSizes {
    std::uint32_t kernarg = 0, private_bytes = 0, group = 0;
  };
  static std::optional<SegmentSizes> segment_sizes(std::uint64_t executable, hsa_agent_t agent,
                                                   const std::string& symbol_name) {
    hsa_executable_symbol_t symbol{};
    SegmentSizes sizes;
    const auto info = [&](hsa_executable_symbol_info_t attribute, std::uint32_t* value) {
      return real().hsa_executable_symbol_get_info(symbol, attribute, value) == HSA_STATUS_SUCCESS;
    };
    if (real().hsa_executable_get_symbol_by_name(hsa_executable_t{executable}, symbol_name.c_str(),
                                                 &agent, &symbol) != HSA_STATUS_SUCCESS ||
        !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &sizes.kernarg) ||
        !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &sizes.private_bytes) ||
        !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &sizes.group))
      return std::nullopt;
    return sizes;
  }

  // At freeze: the kernels of a Deferred object, found in the program's executable (under
  // mutex_).
  void defer_kernels(hsa_executable_t executable, hsa_agent_t agent,
                     const std::shared_ptr<LoadedObject>& object) {
    for (const Deferred::Kernel& kernel : object->deferred->kernels) {
      const std::uint64_t kernel_object =
          kernel_object_of(executable.handle, agent, kernel.descriptor_symbol);
      if (!kernel_object) {
        warn_once_locked("kernel " + kernel.name + " not found after freeze");
        continue;
      }
      KernelRecord& record = kernels_[kernel_object];
      record.name = kernel.name;
      record.tally = &tallies_[kernel.name];
      record.agent = agent;
      record.object = object;
      record.original_kernel_object = kernel_object;
      record.deferral = std::make_unique<Deferral>();
      record.deferral->program_executable = executable;
      record.deferral->descriptor_symbol = kernel.descriptor_symbol;
    }
  }

  // At the first selected dispatch of a deferred kernel (under mutex_): its object rewritten for
  // it alone (or taken from the cache) and loaded, with the probe library, into an executable of
  // its own, whose hostcall ring is bound. On failure the kernel is `unusable`, with one message,
  // and its dispatches run the original.
  void rewrite_deferred(KernelRecord& kernel, std::uint64_t dispatch) {
    Deferral& deferral = *kernel.deferral;
    deferral.attempted = true;
    const auto started = std::chrono::steady_clock::now();
    const std::string failure = load_deferred(kernel);
    if (!failure.empty()) {
      kernel.unusable = failure;
      warn_once_locked("running the original code object of " + kernel.name + ": " + failure);
      return;
    }
    const Substitution& substitution = *deferral.substitution;
    nlohmann::json entry = {{"origin", substitution.origin},
                            {"original_sha256", substitution.note.original_sha256},
                            {"kernels", {kernel.name}},
                            {"first_dispatch", dispatch},
                            {"rewrite_ms", deferral.rewrite_ms},
                            {"load_ms", std::chrono::duration<double, std::milli>(
                                            std::chrono::steady_clock::now() - started)
                                                .count() -
                                            deferral.rewrite_ms}};
    if (!kernel.object->deferred->kept.empty()) entry["kept"] = kernel.object->deferred->kept;
    summary_["objects"].push_back(entry);
  }

  // rewrite_deferred's work; "" or why it failed.
  std::string load_deferred(KernelRecord& kernel) {
    Deferral& deferral = *kernel.deferral;
    const auto started = std::chrono::steady_clock::now();
    auto outcome = substituter_->substitute_kernel(kernel.object->original, kernel.name);
    deferral.rewrite_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    if (auto* declined = std::get_if<Declined>(&outcome)) return declined->reason;
    deferral.substitution =
        std::make_unique<Substitution>(std::move(std::get<Substitution>(outcome)));
    const Substitution& substitution = *deferral.substitution;
    for (const auto& instrumented : substitution.note.kernels)
      if (instrumented.name == kernel.name) kernel.note_kernel = &instrumented;
    if (!kernel.note_kernel) return "its rewrite did not instrument it";

    const hsa_executable_t program = deferral.program_executable;
    const std::optional<hsa_executable_t> loaded =
        load_beside(program, kernel.agent, substitution.bytes, substitution.probe_library);
    if (!loaded) return "the runtime refused its instrumented object or the probe library";
    const hsa_executable_t executable = *loaded;
    if (std::string ring =
            launcher_->bind(executable, kernel.agent, substitution.note.needs_hostcall);
        !ring.empty())
      return ring;
    deferral.instrumented_kernel_object =
        kernel_object_of(executable.handle, kernel.agent, deferral.descriptor_symbol);
    const auto original = segment_sizes(program.handle, kernel.agent, deferral.descriptor_symbol);
    const auto instrumented =
        segment_sizes(executable.handle, kernel.agent, deferral.descriptor_symbol);
    if (!deferral.instrumented_kernel_object || !original || !instrumented)
      return "its instrumented kernel was not found after freeze";
    deferral.kernarg_bytes = original->kernarg;
    deferral.private_bytes_added = instrumented->private_bytes > original->private_bytes
                                       ? instrumented->private_bytes - original->private_bytes
                                       : 0;
    deferral.group_bytes_added =
        instrumented->group > original->group ? instrumented->group - original->group : 0;
    return "";
  }

  // Whether this dispatch of `kernel` runs instrumented, by the selection in force (under
  // mutex_). A selection or switch that changed since the last dispatch takes effect here and
  // is recorded in the summary with the dispatch it starts at.
  bool selected(KernelRecord& kernel) {
    Control& control = Control::get();
    if (const std::uint64_t generation = control.generation();
        generation != selection_generation_) {
      InstalledSelection installed = control.installed();
      selection_ = std::move(installed.selection);
      selection_generation_ = generation;
      selection_since_ = DispatchSelection::Clock::now();
      selection_position_ = 0;
      if (installed.source != "default")
        summary_["control"].push_back(
            {{"selection", selection_->text().empty() ? "all" : selection_->text()},
             {"source", installed.source},
             {"from_dispatch", dispatches_seen_}});
    }
    const bool enabled = control.enabled();
    if (enabled != enabled_seen_) {
      enabled_seen_ = enabled;
      summary_["control"].push_back({{"enabled", enabled}, {"from_dispatch", dispatches_seen_}});
    }
    ++dispatches_seen_;
    if (!enabled) return false;
    if (kernel.selection_generation != selection_generation_) {
      kernel.matches_selection = selection_->matches_kernel(kernel.name);
      kernel.selection_generation = selection_generation_;
    }
    if (!kernel.matches_selection) return false;
    return selection_->chooses(selection_position_++,
                               DispatchSelection::Clock::now() - selection_since_);
  }

  void instrument(hsa_kernel_dispatch_packet_t& packet) {
    std::unique_lock lock(mutex_);
    auto it = kernels_.find(packet.kernel_object);
    if (it == kernels_.end()) return;
    KernelRecord& kernel = it->second;
    const std::uint64_t dispatch = kernel.tally->dispatches++;
    if (kernel.deferral) {
      // The packet runs the original unless this dispatch is selected and the kernel's rewrite
      // can be loaded.
      if (!kernel.unusable.empty() || !selected(kernel)) return;
      if (!kernel.deferral->attempted) rewrite_deferred(kernel, dispatch);
      if (!kernel.unusable.empty()) return;
      instrument_selected(kernel, dispatch, packet, lock);
      return;
    }
    const rewrite::InstrumentedKernel& note_kernel = *kernel.note_kernel;
    if (!kernel.unusable.empty()) {
      // The reason was reported once at freeze; the original kernel runs.
      if (kernel.original_kernel_object)
        packet.kernel_object = kernel.original_kernel_object;
      else
        warn_once_locked(kernel.unusable + " for " + note_kernel.name +
                         " and no original to fall back to");
      return;
    }
    if (!selected(kernel)) {
      if (kernel.original_kernel_object) {
        packet.kernel_object = kernel.original_kernel_object;
        return;
      }
      warn_once_locked("the original of " + note_kernel.name + " cannot run (" +
                       (kernel.object->no_original.empty() ? "it could not be loaded"
                                                           : kernel.object->no_original) +
                       "); its dispatches run instrumented whatever the selection");
    }
    instrument_selected(kernel, dispatch, packet, lock);
  }

  // The dispatch runs instrumented: its arena prepared (for a deferred kernel, with a kernarg
  // segment of its own and the instrumented kernel's object and segment sizes in the packet)
  // and its report queued for the reporter. Falls back to the original kernel, with a message,
  // when the arena cannot be had.
  void instrument_selected(KernelRecord& kernel, std::uint64_t dispatch,
                           hsa_kernel_dispatch_packet_t& packet,
                           std::unique_lock<std::mutex>& lock) {
    const rewrite::InstrumentedKernel& note_kernel = *kernel.note_kernel;
    Deferral* deferral = kernel.deferral.get();
    // A file-writing tool's probes name a dispatch's directory by its kernarg address. A
    // runtime that reuses a kernarg segment as soon as the kernel is done (HIP's kernarg pool)
    // would start this dispatch's files there before the previous dispatch's report moved its
    // directory away, and the two would mix: wait for that report first (not under mutex_,
    // which the reporter takes; kernels_ and its records stay where they are meanwhile).
    if (!deferral && rewrite::tool_writes_files(config_.tool)) {
      lock.unlock();
      const std::uint64_t kernarg = reinterpret_cast<std::uint64_t>(packet.kernarg_address);
      {
        std::unique_lock reports_lock(reports_mutex_);
        reports_changed_.wait(reports_lock, [&] { return !kernargs_in_flight_.count(kernarg); });
      }
      lock.lock();
    }
    PendingReport report;
    report.prepared = launcher_->prepare(
        note_kernel, kernel.agent, packet,
        deferral ? std::optional<std::uint64_t>(deferral->kernarg_bytes) : std::nullopt);
    if (!report.prepared.arena) {
      const std::string& failure = report.prepared.failure;
      if (deferral) {
        warn_once_locked(failure + " for " + note_kernel.name + "; running the original kernel");
      } else if (kernel.original_kernel_object) {
        packet.kernel_object = kernel.original_kernel_object;
        warn_once_locked(failure + " for " + note_kernel.name + "; running the original kernel");
      } else {
        warn_once_locked(failure + " for " + note_kernel.name + " and no original to fall back to");
      }
      return;
    }
    if (deferral) {
      packet.kernel_object = deferral->instrumented_kernel_object;
      packet.private_segment_size += deferral->private_bytes_added;
      packet.group_segment_size += deferral->group_bytes_added;
    }
    report.program_signal = packet.completion_signal;
    report.dispatch = dispatch;
    kernel.tally->count_instrumented(dispatch);
    lock.unlock();
    if (real().hsa_signal_create(1, 0, nullptr, &report.done) != HSA_STATUS_SUCCESS) {
      warn_once("could not create a completion signal; the report of " + note_kernel.name +
                " dispatch " + std::to_string(report.dispatch) + " is lost");
      return;
    }
    packet.completion_signal = report.done;
    {
      std::lock_guard reports_lock(reports_mutex_);
      pending_.push_back(report);
      kernargs_in_flight_.insert(report.prepared.kernarg);
      if (!reporter_.joinable()) reporter_ = std::thread([this] { report_loop(); });
    }
    reports_changed_.notify_all();
  }

  static void submit(hsa_queue_t& queue, const std::uint8_t* packet) {
    std::uint64_t index = real().hsa_queue_add_write_index_screlease(&queue, 1);
    while (index - real().hsa_queue_load_read_index_scacquire(&queue) >= queue.size)
      std::this_thread::yield();
    std::uint8_t* slot =
        static_cast<std::uint8_t*>(queue.base_address) + (index % queue.size) * kPacketBytes;
    std::memcpy(slot + 4, packet + 4, kPacketBytes - 4);
    std::uint32_t header_word = 0;
    std::memcpy(&header_word, packet, sizeof header_word);
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(slot), header_word, __ATOMIC_RELEASE);
    real().hsa_signal_store_screlease(queue.doorbell_signal,
                                      static_cast<hsa_signal_value_t>(index));
  }

  void report_loop() {
    for (;;) {
      PendingReport report;
      {
        std::unique_lock lock(reports_mutex_);
        reports_changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
        if (pending_.empty()) return;
        report = pending_.front();
        pending_.pop_front();
      }
      real().hsa_signal_wait_scacquire(report.done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                       HSA_WAIT_STATE_BLOCKED);
      deliver(report);
      real().hsa_signal_destroy(report.done);
      {
        std::lock_guard lock(reports_mutex_);
        kernargs_in_flight_.erase(kernargs_in_flight_.find(report.prepared.kernarg));
      }
      reports_changed_.notify_all();
      if (report.program_signal.handle)
        real().hsa_signal_subtract_screlease(report.program_signal, 1);
    }
  }

  // Completes the dispatch's report (its arena freed) and writes its result under --tool-out.
  void deliver(PendingReport& report) {
    const std::string& kernel = report.prepared.kernel->name;
    nlohmann::json entry = {{"kernel", kernel}, {"dispatch", report.dispatch}};
    const bool files = !config_.tool_out.empty() && rewrite::tool_writes_files(config_.tool);
    const std::string stem = result_stem(kernel, report.dispatch);
    rewrite::CompletedDispatch completed = launcher_->complete(report.prepared, files ? stem : "");
    const nlohmann::json& result = completed.report;
    if (!result.is_null()) entry["waves"] = result.contains("waves") ? result["waves"].size() : 0;
    std::string error = std::move(completed.error);
    if (error.empty() && files) {
      entry["directory"] = stem;
    } else if (error.empty() && !config_.tool_out.empty()) {
      try {
        std::filesystem::create_directories(config_.tool_out);
        std::string path = stem + ".json";
        write_file(path, result.dump() + "\n");
        entry["file"] = path;
      } catch (const std::exception& failure) {
        error = failure.what();
      }
    }
    if (!error.empty()) {
      entry["error"] = error;
      warn_once("report of " + kernel + " failed: " + error);
    }
    std::lock_guard lock(mutex_);
    summary_["dispatches"].push_back(entry);
  }

  ShimConfig config_;
  std::unique_ptr<Substituter> substituter_;

  // The launcher's calls other than complete() are made under mutex_ (it is not thread-safe).
  std::unique_ptr<rewrite::Launcher> launcher_;  // never freed: see get()

  std::mutex mutex_;  // readers_ ... dispatches_seen_ below, summary_, warned_, launcher_
  std::unordered_map<std::uint64_t, std::shared_ptr<LoadedObject>> readers_;
  std::unordered_map<std::uint64_t, ExecutableRecord> executables_;
  std::unordered_map<std::uint64_t, KernelRecord> kernels_;
  std::unordered_map<std::string, KernelTally> tallies_;  // KernelRecord::tally points here
  std::mutex retired_mutex_;
  std::vector<std::uint32_t> retired_shim_ns_;  // of destroyed queues, under retired_mutex_
  // The selection in force, as the proxy queue last took it from Control.
  std::shared_ptr<const DispatchSelection> selection_;
  std::uint64_t selection_generation_ = UINT64_MAX;
  DispatchSelection::Clock::time_point selection_since_{};
  std::uint64_t selection_position_ = 0;  // dispatches it has counted
  bool enabled_seen_ = true;
  std::uint64_t dispatches_seen_ = 0;  // of instrumented kernels, selected or not
  std::set<std::string> warned_;
  nlohmann::json summary_;
  bool summary_written_ = false;

  std::atomic<bool> queues_active_{false};
  std::shared_mutex queues_mutex_;
  std::unordered_map<const hsa_queue_t*, std::unique_ptr<ProxyQueue>> queues_;
  std::unordered_map<std::uint64_t, ProxyQueue*> doorbells_;

  std::mutex reports_mutex_;
  std::condition_variable reports_changed_;
  std::deque<PendingReport> pending_;
  // The kernarg addresses of the dispatches whose reports are not delivered yet (see
  // instrument()).
  std::multiset<std::uint64_t> kernargs_in_flight_;
  std::thread reporter_;
  bool stopping_ = false;
};

}  // namespace
}  // namespace wavekit::preload

using wavekit::preload::real;
using wavekit::preload::Shim;

extern "C" {

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* reader) {
  Shim& shim = Shim::get();
  if (!shim.enabled() || !code_object || !reader)
    return real().hsa_code_object_reader_create_from_memory(code_object, size, reader);
  auto object = shim.consider(std::span(static_cast<const std::uint8_t*>(code_object), size));
  if (object->substitution) {
    const auto& bytes = object->substitution->bytes;
    hsa_status_t status =
        real().hsa_code_object_reader_create_from_memory(bytes.data(), bytes.size(), reader);
    if (status == HSA_STATUS_SUCCESS) {
      shim.remember_reader(*reader, std::move(object));
      return status;
    }
    shim.warn_once("the runtime refused the instrumented object; running the original");
    return real().hsa_code_object_reader_create_from_memory(code_object, size, reader);
  }
  hsa_status_t status = real().hsa_code_object_reader_create_from_memory(code_object, size, reader);
  if (status == HSA_STATUS_SUCCESS && object->deferred)
    shim.remember_reader(*reader, std::move(object));
  return status;
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file,
                                                     hsa_code_object_reader_t* reader) {
  Shim& shim = Shim::get();
  if (!shim.enabled() || !reader)
    return real().hsa_code_object_reader_create_from_file(file, reader);
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  for (off_t offset = 0;;) {
    ssize_t got = pread(file, buffer, sizeof buffer, offset);
    if (got < 0) return real().hsa_code_object_reader_create_from_file(file, reader);
    if (got == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + got);
    offset += got;
  }
  auto object = shim.consider(bytes);
  const auto& chosen = object->substitution ? object->substitution->bytes : object->original;
  hsa_status_t status =
      real().hsa_code_object_reader_create_from_memory(chosen.data(), chosen.size(), reader);
  if (status == HSA_STATUS_SUCCESS) shim.remember_reader(*reader, std::move(object));
  return status;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t reader,
                                                   const char* options,
                                                   hsa_loaded_code_object_t* loaded) {
  Shim& shim = Shim::get();
  if (!shim.enabled())
    return real().hsa_executable_load_agent_code_object(executable, agent, reader, options, loaded);
  return shim.load(executable, agent, reader, options, loaded);
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options) {
  Shim& shim = Shim::get();
  if (!shim.enabled()) return real().hsa_executable_freeze(executable, options);
  return shim.freeze(executable, options);
}

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                              uint32_t private_segment_size, uint32_t group_segment_size,
                              hsa_queue_t** queue) {
  Shim& shim = Shim::get();
  if (!shim.enabled() || !queue)
    return real().hsa_queue_create(agent, size, type, callback, data, private_segment_size,
                                   group_segment_size, queue);
  return shim.create_queue(agent, size, type, callback, data, private_segment_size,
                           group_segment_size, queue);
}

hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) { return Shim::get().destroy_queue(queue); }

hsa_status_t hsa_shut_down() {
  Shim::get().shut_down();
  return real().hsa_shut_down();
}

// Doorbells: a store to a proxy queue's doorbell forwards the packets published so far.
#define WAVEKIT_DOORBELL(name)                                 \
  void name(hsa_signal_t signal, hsa_signal_value_t value) {   \
    if (auto* proxy = Shim::get().proxy_of_doorbell(signal)) { \
      Shim::get().forward(*proxy);                             \
      return;                                                  \
    }                                                          \
    if (real().name) real().name(signal, value);               \
  }
WAVEKIT_DOORBELL(hsa_signal_store_relaxed)
WAVEKIT_DOORBELL(hsa_signal_store_screlease)
WAVEKIT_DOORBELL(hsa_signal_store_release)
#undef WAVEKIT_DOORBELL

// Queue indices: a proxy queue keeps its own; any other queue is the runtime's business.
#define WAVEKIT_NEXT(name) \
  static const auto next = reinterpret_cast<decltype(&::name)>(dlsym(RTLD_NEXT, #name))
uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.load(std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_load_read_index_scacquire);
  return next(queue);
}

uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.load(std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_load_write_index_scacquire);
  return next(queue);
}

uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.load(std::memory_order_relaxed);
  WAVEKIT_NEXT(hsa_queue_load_read_index_relaxed);
  return next(queue);
}

uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.load(std::memory_order_relaxed);
  WAVEKIT_NEXT(hsa_queue_load_write_index_relaxed);
  return next(queue);
}

uint64_t hsa_queue_load_read_index_acquire(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.load(std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_load_read_index_acquire);
  return next(queue);
}

uint64_t hsa_queue_load_write_index_acquire(const hsa_queue_t* queue) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.load(std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_load_write_index_acquire);
  return next(queue);
}

void hsa_queue_store_write_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.store(value, std::memory_order_relaxed);
  WAVEKIT_NEXT(hsa_queue_store_write_index_relaxed);
  next(queue, value);
}

void hsa_queue_store_read_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.store(value, std::memory_order_relaxed);
  WAVEKIT_NEXT(hsa_queue_store_read_index_relaxed);
  next(queue, value);
}

void hsa_queue_store_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.store(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_store_write_index_screlease);
  next(queue, value);
}

void hsa_queue_store_read_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.store(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_store_read_index_screlease);
  next(queue, value);
}

void hsa_queue_store_write_index_release(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.store(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_store_write_index_release);
  next(queue, value);
}

void hsa_queue_store_read_index_release(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->read_index.store(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_store_read_index_release);
  next(queue, value);
}

uint64_t hsa_queue_cas_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t expected,
                                               uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_acq_rel);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_scacq_screl);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_acq_rel);
  WAVEKIT_NEXT(hsa_queue_add_write_index_scacq_screl);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_scacquire(const hsa_queue_t* queue, uint64_t expected,
                                             uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_acquire);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_scacquire);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_scacquire(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_add_write_index_scacquire);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_relaxed(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_relaxed);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_relaxed);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_relaxed);
  WAVEKIT_NEXT(hsa_queue_add_write_index_relaxed);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_screlease(const hsa_queue_t* queue, uint64_t expected,
                                             uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_release);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_screlease);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_add_write_index_screlease);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_acq_rel(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_acq_rel);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_acq_rel);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_acq_rel(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_acq_rel);
  WAVEKIT_NEXT(hsa_queue_add_write_index_acq_rel);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_acquire(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_acquire);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_acquire);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_acquire(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_acquire);
  WAVEKIT_NEXT(hsa_queue_add_write_index_acquire);
  return next(queue, value);
}

uint64_t hsa_queue_cas_write_index_release(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue)) {
    proxy->write_index.compare_exchange_strong(expected, value, std::memory_order_release);
    return expected;
  }
  WAVEKIT_NEXT(hsa_queue_cas_write_index_release);
  return next(queue, expected, value);
}

uint64_t hsa_queue_add_write_index_release(const hsa_queue_t* queue, uint64_t value) {
  if (auto* proxy = Shim::get().proxy_of(queue))
    return proxy->write_index.fetch_add(value, std::memory_order_release);
  WAVEKIT_NEXT(hsa_queue_add_write_index_release);
  return next(queue, value);
}

// What else names a queue: the program's is the proxy view, the runtime knows the real queue
// (CLR sets every stream's priority, and turns profiling on for queues whose events it times).
hsa_status_t hsa_queue_inactivate(hsa_queue_t* queue) {
  WAVEKIT_NEXT(hsa_queue_inactivate);
  auto* proxy = Shim::get().proxy_of(queue);
  return next(proxy ? proxy->real_queue : queue);
}

hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
  WAVEKIT_NEXT(hsa_amd_queue_set_priority);
  auto* proxy = Shim::get().proxy_of(queue);
  return next(proxy ? proxy->real_queue : queue, priority);
}

hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t* queue, uint32_t count,
                                       const uint32_t* mask) {
  WAVEKIT_NEXT(hsa_amd_queue_cu_set_mask);
  auto* proxy = Shim::get().proxy_of(queue);
  return next(proxy ? proxy->real_queue : queue, count, mask);
}

hsa_status_t hsa_amd_queue_cu_get_mask(const hsa_queue_t* queue, uint32_t count, uint32_t* mask) {
  WAVEKIT_NEXT(hsa_amd_queue_cu_get_mask);
  auto* proxy = Shim::get().proxy_of(queue);
  return next(proxy ? proxy->real_queue : queue, count, mask);
}

hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable) {
  WAVEKIT_NEXT(hsa_amd_profiling_set_profiler_enabled);
  auto* proxy = Shim::get().proxy_of(queue);
  return next(proxy ? proxy->real_queue : queue, enable);
}
#undef WAVEKIT_NEXT

}  // extern "C"
