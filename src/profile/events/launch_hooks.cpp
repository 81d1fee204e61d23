// Launch hooks without CUPTI. The CUDA runtime (and PyTorch, Triton) open libcuda.so.1 with
// dlopen and take cuGetProcAddress from it with dlsym; every driver entry point the runtime
// calls later comes from cuGetProcAddress. A handle-scoped dlsym cannot be interposed by
// symbol preemption, so this library, when preloaded, defines `dlsym` itself: it forwards
// every lookup and, once the event backend is configured, answers cuGetProcAddress (both
// versions), the kernel and graph launch functions (each with its `_ptsz` flavour),
// cuGraphExecDestroy and the module/library unloads with wrappers. Without the event backend the
// wrappers are never handed out, and `dlsym` only forwards (RTLD_NEXT lookups are resolved from the
// caller's position in the link map, as the C library would).
#include "launch_hooks.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <link.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

#include "launch_event_timer.h"
#include "profiler.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

using DlsymFn = void* (*)(void*, const char*);

DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    auto f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (!f) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    return f;
  }();
  return fn;
}

link_map* owner_of(const void* address) {
  Dl_info info;
  link_map* map = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) return nullptr;
  return map;
}

// What dlsym(RTLD_NEXT, name) gives the object holding `caller`. The C library searches the
// scope the caller was loaded in (for a library opened with dlopen: it and its dependencies,
// some loaded before it), after the caller. Two steps come close without its internals: the
// caller's own scope, unless the definition found there is the caller's own (an interposer
// asking for what it wraps); then the objects loaded after the caller, in load order.
void* next_definition(const void* caller, const char* name) {
  link_map* map = owner_of(caller);
  if (!map) return nullptr;
  // The main program's scope is the global one (dlopen(nullptr)).
  void* scope = dlopen(map->l_prev ? map->l_name : nullptr, RTLD_LAZY | RTLD_NOLOAD);
  if (scope) {
    void* found = real_dlsym()(scope, name);
    dlclose(scope);
    if (found && owner_of(found) != map) return found;
  }
  for (link_map* object = map->l_next; object; object = object->l_next) {
    void* handle = dlopen(object->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* found = real_dlsym()(handle, name);
    dlclose(handle);
    if (found && owner_of(found) == object) return found;
  }
  return nullptr;
}

// The driver functions the event backend calls, taken through the real cuGetProcAddress.
struct Driver {
  PFN_cuGetProcAddress_v12000 get_proc = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventRecord_v7000_ptsz event_record_ptsz = nullptr;
  PFN_cuEventQuery_v2000 event_query = nullptr;
  PFN_cuEventSynchronize_v2000 event_synchronize = nullptr;
  PFN_cuEventElapsedTime_v2000 event_elapsed = nullptr;
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing = nullptr;
  PFN_cuStreamIsCapturing_v10000_ptsz stream_is_capturing_ptsz = nullptr;
  PFN_cuStreamQuery_v2000 stream_query = nullptr;
  PFN_cuStreamQuery_v7000_ptsz stream_query_ptsz = nullptr;
  PFN_cuThreadExchangeStreamCaptureMode_v10010 exchange_capture_mode = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  // Optional (CUDA 12.3): without them kernels are named "<unknown kernel>".
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;
  PFN_cuKernelGetName_v12030 kernel_get_name = nullptr;

  // Each function is asked for at the version of its typedef: the same name at a later version
  // can be another ABI (cuCtxGetDevice at 13000 is cuCtxGetDevice_v2, which takes a context).
  template <typename Fn>
  bool take(const char* name, Fn& fn, int version, bool per_thread_stream = false) {
    CUdriverProcAddressQueryResult status{};
    void* p = nullptr;
    cuuint64_t flags = per_thread_stream ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                         : CU_GET_PROC_ADDRESS_DEFAULT;
    if (get_proc(name, &p, version, flags, &status) != CUDA_SUCCESS || !p) return false;
    fn = reinterpret_cast<Fn>(p);
    return true;
  }

  bool load(PFN_cuGetProcAddress_v12000 real_get_proc) {
    get_proc = real_get_proc;
    take("cuFuncGetName", func_get_name, 12030);
    take("cuKernelGetName", kernel_get_name, 12030);
    return take("cuCtxGetCurrent", ctx_get_current, 4000) &&
           take("cuCtxSetCurrent", ctx_set_current, 4000) &&
           take("cuCtxGetDevice", ctx_get_device, 2000) &&
           take("cuEventCreate", event_create, 2000) &&
           take("cuEventDestroy", event_destroy, 4000) &&
           take("cuEventRecord", event_record, 2000) &&
           take("cuEventRecord", event_record_ptsz, 7000, true) &&
           take("cuEventQuery", event_query, 2000) &&
           take("cuEventSynchronize", event_synchronize, 2000) &&
           take("cuEventElapsedTime", event_elapsed, 2000) &&
           take("cuStreamIsCapturing", stream_is_capturing, 10000) &&
           take("cuStreamIsCapturing", stream_is_capturing_ptsz, 10000, true) &&
           take("cuStreamQuery", stream_query, 2000) &&
           take("cuStreamQuery", stream_query_ptsz, 7000, true) &&
           take("cuThreadExchangeStreamCaptureMode", exchange_capture_mode, 10010) &&
           take("cuDeviceGetName", device_get_name, 2000) &&
           take("cuDeviceGetAttribute", device_get_attribute, 2000);
  }

  // The name of a launched function. The runtime launches context-independent kernels
  // (CUkernel, cast to CUfunction), which cuFuncGetName may not know; cuKernelGetName does.
  const char* kernel_name(CUfunction function) const {
    const char* name = nullptr;
    if (func_get_name && func_get_name(&name, function) == CUDA_SUCCESS && name) return name;
    if (kernel_get_name &&
        kernel_get_name(&name, reinterpret_cast<CUkernel>(function)) == CUDA_SUCCESS && name)
      return name;
    return nullptr;
  }

  // Event queries, creation and waits are "potentially unsafe" while another thread captures a
  // graph in global mode, and such a call would invalidate that capture. The profiler's threads
  // therefore run in relaxed capture mode, as PyTorch's allocator does for its event queries.
  void relax_this_thread() const {
    thread_local bool relaxed = false;
    if (relaxed) return;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    exchange_capture_mode(&mode);
    relaxed = true;
  }

  // Runs `call` on an application thread in relaxed capture mode, then restores the thread's
  // own mode (which the program may rely on, so it is not left relaxed as on our threads).
  template <typename Call>
  auto in_relaxed_capture_mode(Call&& call) const {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    exchange_capture_mode(&mode);
    auto result = call();
    exchange_capture_mode(&mode);
    return result;
  }

  // Whether `stream` has no work left. Like event queries, a stream query is "potentially
  // unsafe" while another thread captures in global mode.
  bool stream_idle(CUstream stream, bool per_thread_stream) const {
    return in_relaxed_capture_mode([&] {
             return (per_thread_stream ? stream_query_ptsz : stream_query)(stream);
           }) == CUDA_SUCCESS;
  }

  void make_current(void* context) const {
    CUcontext current = nullptr;
    if (ctx_get_current(&current) == CUDA_SUCCESS && current == context) return;
    ctx_set_current(static_cast<CUcontext>(context));
  }
};

std::uint64_t host_clock_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

class DriverEvents final : public EventApi {
 public:
  explicit DriverEvents(const Driver& driver) : driver_(driver) {}

  bool create(void* context, EventPair& pair) override {
    // On the launching thread.
    CUevent start = nullptr, end = nullptr;
    const bool ok = driver_.in_relaxed_capture_mode([&] {
      driver_.make_current(context);
      return driver_.event_create(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
             driver_.event_create(&end, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    });
    if (!ok) {
      if (start) driver_.event_destroy(start);
      return false;
    }
    pair = {start, end};
    return true;
  }
  void destroy(void*, const EventPair& pair) override {
    driver_.event_destroy(static_cast<CUevent>(pair.start));
    driver_.event_destroy(static_cast<CUevent>(pair.end));
  }
  bool record(void* event, void* stream, bool per_thread_stream) override {
    auto record = per_thread_stream ? driver_.event_record_ptsz : driver_.event_record;
    return record(static_cast<CUevent>(event), static_cast<CUstream>(stream)) == CUDA_SUCCESS;
  }
  State query(void* context, void* event) override {
    driver_.relax_this_thread();
    driver_.make_current(context);
    CUresult r = driver_.event_query(static_cast<CUevent>(event));
    if (r == CUDA_ERROR_NOT_READY) return State::pending;
    return r == CUDA_SUCCESS ? State::done : State::failed;
  }
  std::optional<std::uint64_t> elapsed_ns(void* context, const EventPair& pair) override {
    driver_.make_current(context);
    float ms = 0;
    // Negative when the second event ran first (events of two threads' launches on one stream):
    // no duration to report.
    if (driver_.event_elapsed(&ms, static_cast<CUevent>(pair.start),
                              static_cast<CUevent>(pair.end)) != CUDA_SUCCESS ||
        ms < 0)
      return std::nullopt;
    // Rounded: a float of milliseconds is a few ns off the time it stands for.
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
  }
  void wait(void* context, void* event) override {
    driver_.relax_this_thread();
    driver_.make_current(context);
    driver_.event_synchronize(static_cast<CUevent>(event));
  }
  std::uint64_t host_now_ns() override { return host_clock_ns(); }

 private:
  const Driver& driver_;
};

// 4096 launches in flight at most: far more than a launch queue holds.
constexpr std::size_t kMaxEventPairs = 4096;
// Untimed launches waiting for the consumer (--time-every): it polls every 10 ms at most, in
// which one thread makes a few thousand launches.
constexpr std::size_t kCountedLaunches = std::size_t{1} << 16;

class EventBackend final : public Backend {
 public:
  // Hooks answer from now on (hook_symbol), and the session starts at CUDA initialisation.
  void configure(SessionConfig& config) override;
  // From now on launches are timed for `session` while it collects.
  void start(Session& session) override;
  const char* records() const override {
    return time_every_ > 1 ? "launches (some timed, --time-every)" : "launches timed";
  }
  void decode(const RawBuffer&, RecordSink&) override {}
  void release(const RawBuffer&) override {}

  // At the first hooked launch, when the runtime has loaded the driver.
  bool load() {
    std::call_once(loaded_, [&] {
      void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
      auto get_proc = cuda ? reinterpret_cast<PFN_cuGetProcAddress_v12000>(
                                 real_dlsym()(cuda, "cuGetProcAddress_v2"))
                           : nullptr;
      if (cuda) dlclose(cuda);  // still loaded: the runtime holds it
      if (get_proc && driver_.load(get_proc)) {
        events_ = std::make_unique<DriverEvents>(driver_);
        timer_ = std::make_unique<LaunchEventTimer>(*events_, kMaxEventPairs,
                                                    time_every_ > 1 ? kCountedLaunches : 0);
        ready_.store(true, std::memory_order_release);
      }
    });
    return ready_.load(std::memory_order_acquire);
  }
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  const Driver& driver() const { return driver_; }
  LaunchEventTimer& timer() { return *timer_; }
  std::uint32_t time_every() const { return time_every_; }
  void saw_device(int device) {
    if (device < 0 || device >= 64) return;
    const std::uint64_t bit = std::uint64_t{1} << device;
    // Read first: a read-modify-write on every launch would bounce the line between threads.
    if (!(devices_seen_.load(std::memory_order_relaxed) & bit))
      devices_seen_.fetch_or(bit, std::memory_order_relaxed);
  }

  void poll(RecordSink& sink, bool final) override {
    if (!ready()) return;
    describe_new_devices(sink);
    timer_->poll(sink, final);
  }

 private:
  void describe_new_devices(RecordSink& sink) {
    std::uint64_t fresh = devices_seen_.load(std::memory_order_relaxed) & ~described_;
    for (int device = 0; fresh; ++device, fresh >>= 1) {
      if (!(fresh & 1)) continue;
      described_ |= std::uint64_t{1} << device;
      DeviceInfo info;
      char name[256] = {};
      if (driver_.device_get_name(name, sizeof name, device) == CUDA_SUCCESS) info.model = name;
      int major = 0, minor = 0, sms = 0, clock_khz = 0;
      driver_.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
      driver_.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
      driver_.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
      driver_.device_get_attribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device);
      info.arch = "sm_" + std::to_string(major) + std::to_string(minor);
      info.num_sms = static_cast<std::uint32_t>(sms);
      info.clock_khz = static_cast<std::uint32_t>(clock_khz);
      sink.device(static_cast<std::uint32_t>(device), info);
    }
  }

  std::uint32_t time_every_ = 1;
  std::once_flag loaded_;
  std::atomic<bool> ready_{false};
  Driver driver_;
  std::unique_ptr<DriverEvents> events_;
  std::unique_ptr<LaunchEventTimer> timer_;
  std::atomic<std::uint64_t> devices_seen_{0};
  std::uint64_t described_ = 0;  // consumer thread
};

// Set once the backend is configured: until then the hooks only forward.
EventBackend* events_backend = nullptr;

// The session starts when the program first takes a hooked driver function (CUDA
// initialisation), so that the processes a program runs without CUDA start nothing and write
// nothing.
void start_session() { Profiler::process().start(); }
std::atomic<Session*> hooked_session{nullptr};
std::atomic<std::uint64_t> next_correlation{1};

// The driver functions that are wrapped, each in its default-stream ([0]) and per-thread
// default-stream ([1], the `_ptsz` names) flavour; the real functions are kept here.
enum Hooked { kLaunchKernel, kLaunchKernelEx, kLaunchCooperative, kGraphLaunch, kHookedCount };
std::atomic<void*> real_functions[kHookedCount][2] = {};
std::atomic<PFN_cuGetProcAddress_v12000> real_get_proc_v2{nullptr};
std::atomic<PFN_cuGetProcAddress_v11030> real_get_proc_v1{nullptr};
std::atomic<PFN_cuGraphExecDestroy_v10000> real_exec_destroy{nullptr};
std::atomic<PFN_cuModuleUnload_v2000> real_module_unload{nullptr};
std::atomic<PFN_cuLibraryUnload_v12000> real_library_unload{nullptr};
// Bumped before any module or library is unloaded: a function handle may then name another
// kernel, so the per-thread name caches start over.
std::atomic<std::uint64_t> unload_generation{0};

template <typename Fn>
Fn real_function(Hooked hooked, int per_thread_stream) {
  return reinterpret_cast<Fn>(
      real_functions[hooked][per_thread_stream].load(std::memory_order_relaxed));
}

// The timer's name of `function`, cached per thread: the driver is asked and the name interned
// (under the timer's mutex) only the first time a thread launches a function, and again after
// a module was unloaded or when the function fell out of the cache; `first` says so.
const std::string* cached_kernel_name(CUfunction function, bool& first) {
  struct Entry {
    CUfunction function = nullptr;
    std::uint64_t generation = 0;
    const std::string* name = nullptr;
  };
  // Four ways per set, so that kernels launched in turn rarely evict each other.
  constexpr std::size_t kSets = 256, kWays = 4;
  thread_local std::array<std::array<Entry, kWays>, kSets> cache{};
  thread_local std::array<std::uint8_t, kSets> next_victim{};
  const std::uint64_t generation = unload_generation.load(std::memory_order_acquire);
  const std::size_t set = (reinterpret_cast<std::uintptr_t>(function) >> 4) % kSets;
  for (const Entry& entry : cache[set])
    if (entry.function == function && entry.generation == generation && entry.name) {
      first = false;
      return entry.name;
    }
  first = true;
  const std::string* name =
      events_backend->timer().kernel_name(events_backend->driver().kernel_name(function));
  cache[set][next_victim[set]++ % kWays] = {function, generation, name};
  return name;
}

// Which kernel launches are timed under --time-every N: each thread's first launch of each
// kernel (so every kernel has a time to scale), then launches a geometric number apart with
// mean N, drawn per thread. A fixed stride would alias with a program's loop (every 32nd
// launch of a 4-kernel loop is always the same kernel); a random one cannot.
bool sample_this_launch(std::uint32_t time_every, bool first_of_kernel) {
  if (time_every <= 1) return true;
  thread_local std::uint64_t state = 0;
  thread_local std::uint64_t countdown = 0;
  if (state == 0)  // seeded per thread from its address and the clock; never 0 again
    state = (reinterpret_cast<std::uintptr_t>(&state) ^ host_clock_ns()) | 1;
  if (first_of_kernel) return true;
  if (countdown > 1) {
    --countdown;
    return false;
  }
  // xorshift64*, then the next gap: 1 + floor(ln(u) / ln(1 - 1/N)) for u uniform in (0, 1].
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  const double u = static_cast<double>((state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
  const double gap = std::log1p(-u) / std::log1p(-1.0 / time_every);
  countdown = 1 + static_cast<std::uint64_t>(std::min(gap, 1e9));
  return true;
}

// A launch of `function` (a kernel) or `exec` (a graph) on `stream`, done by `launch`; timed
// with an event pair when the session collects (under --time-every N, a kernel launch is timed
// when sampled and otherwise only counted). Outside sampling windows (or with collection off)
// this is two loads and the real call.
template <typename LaunchFn>
CUresult timed_launch(CUstream stream, bool per_thread_stream, CUfunction function,
                      CUgraphExec exec, LaunchFn&& launch) {
  Session* session = hooked_session.load(std::memory_order_acquire);
  if (!session || !session->collecting()) [[likely]]
    return launch();
  if (!events_backend->load()) return launch();
  const Driver& driver = events_backend->driver();
  // A launch into a capturing stream becomes part of a graph: recording events there would
  // change the program's graph, so it is left alone.
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  auto is_capturing =
      per_thread_stream ? driver.stream_is_capturing_ptsz : driver.stream_is_capturing;
  if (is_capturing(stream, &capturing) != CUDA_SUCCESS ||
      capturing != CU_STREAM_CAPTURE_STATUS_NONE)
    return launch();
  CUcontext context = nullptr;
  CUdevice device = 0;
  if (driver.ctx_get_current(&context) != CUDA_SUCCESS || !context ||
      driver.ctx_get_device(&device) != CUDA_SUCCESS)
    return launch();
  LaunchEventTimer& timer = events_backend->timer();
  LaunchEventTimer::Launch what;
  what.correlation = next_correlation.fetch_add(1, std::memory_order_relaxed);
  what.device = static_cast<std::uint32_t>(device);
  const std::uint32_t time_every = events_backend->time_every();
  bool timed = true;
  try {
    events_backend->saw_device(device);
    if (exec) {
      what.graph_number = timer.graph_number(exec);
    } else {
      bool first = false;
      what.kernel_name = cached_kernel_name(function, first);
      timed = sample_this_launch(time_every, first);
    }
  } catch (...) {
    return launch();  // out of memory naming it: the launch goes unprofiled
  }
  if (!timed) {
    // Counted only: its context and phase travel with it, and no clock is read.
    what.info = session->launch_info(what.correlation);
    if (!what.info) return launch();
    const CUresult result = launch();
    if (result == CUDA_SUCCESS) timer.count(what);
    return result;
  }
  if (!session->on_kernel_launch(what.correlation)) return launch();
  // A sampled launch's stream had launches that were not timed, so whether the GPU waited for
  // this one is asked rather than inferred (LaunchEventTimer::poll).
  if (time_every > 1) what.stream_was_idle = driver.stream_idle(stream, per_thread_stream);
  std::optional<LaunchEventTimer::Ticket> ticket;
  try {
    ticket = timer.begin(context, stream, per_thread_stream);
  } catch (...) {
    // Out of memory in the pool: the launch goes untimed.
  }
  what.host_ns = host_clock_ns();
  CUresult result = launch();
  what.launched_ns = host_clock_ns();
  if (!ticket) return result;
  if (result != CUDA_SUCCESS) {
    timer.cancel(*ticket);
    return result;
  }
  try {
    timer.end(*ticket, stream, per_thread_stream, what);
  } catch (...) {
    // The launch itself succeeded; only its timing is lost.
  }
  return result;
}

template <int kPerThreadStream>
CUresult CUDAAPI timed_launch_kernel(CUfunction f, unsigned grid_x, unsigned grid_y,
                                     unsigned grid_z, unsigned block_x, unsigned block_y,
                                     unsigned block_z, unsigned shared_bytes, CUstream stream,
                                     void** params, void** extra) {
  auto real = real_function<PFN_cuLaunchKernel_v4000>(kLaunchKernel, kPerThreadStream);
  return timed_launch(stream, kPerThreadStream, f, nullptr, [&] {
    return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream, params,
                extra);
  });
}

template <int kPerThreadStream>
CUresult CUDAAPI timed_launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params,
                                        void** extra) {
  auto real = real_function<PFN_cuLaunchKernelEx_v11060>(kLaunchKernelEx, kPerThreadStream);
  CUstream stream = config ? config->hStream : nullptr;
  return timed_launch(stream, kPerThreadStream, f, nullptr,
                      [&] { return real(config, f, params, extra); });
}

template <int kPerThreadStream>
CUresult CUDAAPI timed_launch_cooperative(CUfunction f, unsigned grid_x, unsigned grid_y,
                                          unsigned grid_z, unsigned block_x, unsigned block_y,
                                          unsigned block_z, unsigned shared_bytes, CUstream stream,
                                          void** params) {
  auto real =
      real_function<PFN_cuLaunchCooperativeKernel_v9000>(kLaunchCooperative, kPerThreadStream);
  return timed_launch(stream, kPerThreadStream, f, nullptr, [&] {
    return real(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream, params);
  });
}

template <int kPerThreadStream>
CUresult CUDAAPI timed_graph_launch(CUgraphExec exec, CUstream stream) {
  auto real = real_function<PFN_cuGraphLaunch_v10000>(kGraphLaunch, kPerThreadStream);
  return timed_launch(stream, kPerThreadStream, nullptr, exec, [&] { return real(exec, stream); });
}

CUresult CUDAAPI forgetting_exec_destroy(CUgraphExec exec) {
  if (events_backend && events_backend->ready()) {
    try {
      events_backend->timer().forget(exec);
    } catch (...) {
    }
  }
  return real_exec_destroy.load(std::memory_order_relaxed)(exec);
}

CUresult CUDAAPI forgetting_module_unload(CUmodule module) {
  unload_generation.fetch_add(1, std::memory_order_acq_rel);
  return real_module_unload.load(std::memory_order_relaxed)(module);
}

CUresult CUDAAPI forgetting_library_unload(CUlibrary library) {
  unload_generation.fetch_add(1, std::memory_order_acq_rel);
  return real_library_unload.load(std::memory_order_relaxed)(library);
}

// The other wrapped functions (no `_ptsz` flavours): destructions the backend must hear of.
void* wrap_destruction(std::string_view name, void* found) {
  if (name == "cuGraphExecDestroy") {
    real_exec_destroy.store(reinterpret_cast<PFN_cuGraphExecDestroy_v10000>(found));
    return reinterpret_cast<void*>(&forgetting_exec_destroy);
  }
  if (name == "cuModuleUnload") {
    real_module_unload.store(reinterpret_cast<PFN_cuModuleUnload_v2000>(found));
    return reinterpret_cast<void*>(&forgetting_module_unload);
  }
  if (name == "cuLibraryUnload") {
    real_library_unload.store(reinterpret_cast<PFN_cuLibraryUnload_v12000>(found));
    return reinterpret_cast<void*>(&forgetting_library_unload);
  }
  return nullptr;
}

CUresult CUDAAPI hooked_get_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult* status);
CUresult CUDAAPI hooked_get_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags);

// The launch functions wrapped, by driver name (without `_ptsz`), with their wrappers for
// both default-stream flavours.
struct LaunchHook {
  const char* name;
  Hooked hooked;
  void* wrappers[2];
};
const LaunchHook kLaunchHooks[] = {
    {"cuLaunchKernel",
     kLaunchKernel,
     {reinterpret_cast<void*>(&timed_launch_kernel<0>),
      reinterpret_cast<void*>(&timed_launch_kernel<1>)}},
    {"cuLaunchKernelEx",
     kLaunchKernelEx,
     {reinterpret_cast<void*>(&timed_launch_kernel_ex<0>),
      reinterpret_cast<void*>(&timed_launch_kernel_ex<1>)}},
    {"cuLaunchCooperativeKernel",
     kLaunchCooperative,
     {reinterpret_cast<void*>(&timed_launch_cooperative<0>),
      reinterpret_cast<void*>(&timed_launch_cooperative<1>)}},
    {"cuGraphLaunch",
     kGraphLaunch,
     {reinterpret_cast<void*>(&timed_graph_launch<0>),
      reinterpret_cast<void*>(&timed_graph_launch<1>)}},
};

// The wrapper for `found`, the real function named `name` in the given flavour, or null when
// `name` is not a launch function.
void* wrap_launch(std::string_view name, bool per_thread_stream, void* found) {
  for (const LaunchHook& hook : kLaunchHooks)
    if (name == hook.name) {
      real_functions[hook.hooked][per_thread_stream].store(found);
      return hook.wrappers[per_thread_stream];
    }
  return nullptr;
}

// Swaps a driver function the runtime asked for by name for its wrapper, keeping the real one.
void wrap_driver_function(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (!symbol || !pfn || !*pfn) return;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (void* wrapper = wrap_launch(symbol, per_thread, *pfn)) {
    *pfn = wrapper;
  } else if (void* destruction = wrap_destruction(symbol, *pfn)) {
    *pfn = destruction;
  } else if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    // Asked through itself: the answer must keep going through the hook.
    if (version >= 12000) {
      real_get_proc_v2.store(reinterpret_cast<PFN_cuGetProcAddress_v12000>(*pfn));
      *pfn = reinterpret_cast<void*>(&hooked_get_proc_v2);
    } else {
      real_get_proc_v1.store(reinterpret_cast<PFN_cuGetProcAddress_v11030>(*pfn));
      *pfn = reinterpret_cast<void*>(&hooked_get_proc_v1);
    }
  }
}

CUresult CUDAAPI hooked_get_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult* status) {
  CUresult r =
      real_get_proc_v2.load(std::memory_order_relaxed)(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS) wrap_driver_function(symbol, pfn, version, flags);
  return r;
}

CUresult CUDAAPI hooked_get_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  CUresult r = real_get_proc_v1.load(std::memory_order_relaxed)(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS) wrap_driver_function(symbol, pfn, version, flags);
  return r;
}

// The answer of `dlsym` for `name`, hooked when the event backend is in the process: the
// runtime's cuGetProcAddress, and launch functions a library takes by name (Triton's launcher
// takes cuLaunchKernelEx this way).
void* hook_symbol(const char* name, void* found) {
  if (!found || !name || !events_backend || name[0] != 'c' || name[1] != 'u') return found;
  std::string_view symbol(name);
  const bool per_thread = symbol.ends_with("_ptsz");
  if (per_thread) symbol.remove_suffix(5);
  const bool get_proc = symbol == "cuGetProcAddress_v2" || symbol == "cuGetProcAddress";
  void* launch_wrapper = wrap_launch(symbol, per_thread, found);
  void* destruction = per_thread ? nullptr : wrap_destruction(symbol, found);
  if (get_proc || destruction || launch_wrapper) start_session();
  if (symbol == "cuGetProcAddress_v2") {
    real_get_proc_v2.store(reinterpret_cast<PFN_cuGetProcAddress_v12000>(found));
    return reinterpret_cast<void*>(&hooked_get_proc_v2);
  }
  if (symbol == "cuGetProcAddress") {
    real_get_proc_v1.store(reinterpret_cast<PFN_cuGetProcAddress_v11030>(found));
    return reinterpret_cast<void*>(&hooked_get_proc_v1);
  }
  if (destruction) return destruction;
  return launch_wrapper ? launch_wrapper : found;
}

void EventBackend::configure(SessionConfig& config) {
  // Only a preloaded library's dlsym is the one the runtime calls. (Comparing with &::dlsym
  // would not do: inside this library that address resolves to the global one too.)
  void* global = real_dlsym() ? real_dlsym()(RTLD_DEFAULT, "dlsym") : nullptr;
  Dl_info global_info, own_info;
  const bool preloaded = global && dladdr(global, &global_info) &&
                         dladdr(reinterpret_cast<void*>(&next_definition), &own_info) &&
                         global_info.dli_fbase == own_info.dli_fbase;
  if (!preloaded)
    throw Error(
        "the event backend needs the library preloaded (LD_PRELOAD; 'wavekit profile "
        "--backend events' does that), not loaded through CUDA_INJECTION64_PATH");
  config.display_name = demangle_kernel_name;
  time_every_ = config.time_every;
  events_backend = this;
}

void EventBackend::start(Session& session) {
  hooked_session.store(&session, std::memory_order_release);
}

}  // namespace

Backend& event_backend() {
  static EventBackend* const backend = new EventBackend;  // never destroyed: hooks run at exit
  return *backend;
}

}  // namespace wavekit::profile

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  using namespace wavekit::profile;
  if (!real_dlsym()) return nullptr;
  void* found = handle == RTLD_NEXT ? next_definition(__builtin_return_address(0), name)
                                    : real_dlsym()(handle, name);
  return hook_symbol(name, found);
}
