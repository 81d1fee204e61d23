// The NVIDIA backend: CUPTI callbacks on the launching threads (API enter only; one slot
// write), CONCURRENT_KERNEL activity records (plus GRAPH_TRACE records in graph-level mode)
// decoded on the session's consumer thread, and graph lifecycle callbacks for capture-site
// attribution. (WAVEKIT_PROFILE_BACKEND=events, which calls no CUPTI, is another library:
// events/.) Loads three ways, each starting the one lifecycle (profiler.h): as a CUDA injection
// library (CUDA_INJECTION64_PATH calls InitializeInjection), by LD_PRELOAD (a constructor starts
// it when WAVEKIT_PROFILE_OUTPUT is set), or through wavekit_profile_cupti_start(). Nothing here
// synchronises with the GPU, and no exception crosses into CUDA.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "profiler.h"
#include "session.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

std::string failure(const char* what, CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string(what) + " failed: " + (text ? text : "unknown error");
}

void warn(const char* what, CUptiResult result) {
  std::fprintf(stderr, "wavekit profile: %s\n", failure(what, result).c_str());
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data);
void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t size, std::size_t valid);

Session* session = nullptr;  // set before CUPTI calls back (CuptiBackend::start)

class CuptiBackend final : public Backend {
 public:
  // 4 MiB buffers, at most 64 (256 MiB): the configuration whose RSS stayed flat over a
  // 10^7-kernel soak on the H200 (docs/benchmarks/profile.md); with 1 MiB buffers RSS crept up
  // by 7.7 MiB. Beyond the cap CUPTI drops (and counts) records instead of growing memory.
  static constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
  static constexpr std::size_t kMaxBuffers = 64;

  std::uint8_t* acquire() {
    std::lock_guard lock(pool_mutex_);
    if (!free_.empty()) {
      std::uint8_t* b = free_.back();
      free_.pop_back();
      return b;
    }
    if (allocated_ >= kMaxBuffers) return nullptr;
    ++allocated_;
    return static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  }

  void decode(const RawBuffer& buffer, RecordSink& sink) override {
    CUpti_Activity* record = nullptr;
    for (;;) {
      CUptiResult r = cuptiActivityGetNextRecord(buffer.data, buffer.valid_bytes, &record);
      if (r != CUPTI_SUCCESS) break;  // CUPTI_ERROR_MAX_LIMIT_REACHED: end of buffer
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        KernelActivity a;
        a.correlation = k->correlationId;
        a.start_ns = k->start;
        a.end_ns = k->end;
        a.device = k->deviceId;
        a.stream = k->streamId;
        a.kernel_name = k->name ? std::string_view(k->name) : std::string_view("<unnamed>");
        a.graph_node_id = k->graphId != 0 ? k->graphNodeId : 0;
        sink.kernel(a);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) {
        auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
        GraphActivity a;
        a.correlation = g->correlationId;
        a.start_ns = g->start;
        a.end_ns = g->end;
        a.device = g->deviceId;
        a.stream = g->streamId;
        a.graph_id = g->graphId;
        sink.graph(a);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
        auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
        DeviceInfo info;
        info.model = d->name ? d->name : "";
        info.arch = "sm_" + std::to_string(d->computeCapabilityMajor) +
                    std::to_string(d->computeCapabilityMinor);
        info.num_sms = d->numMultiprocessors;
        info.clock_khz = d->coreClockRate;
        sink.device(d->id, info);
      }
    }
    sink.dropped(dropped_.exchange(0, std::memory_order_relaxed));
  }

  void release(const RawBuffer& buffer) override {
    std::lock_guard lock(pool_mutex_);
    free_.push_back(buffer.data);
  }

  void configure(SessionConfig& config) override {
    // That backend never calls CUPTI, and lives in its own library (events/launch_hooks.h).
    if (config.events_backend)
      throw Error(
          "WAVEKIT_PROFILE_BACKEND=events is served by libwavekit_profile_events.so, preloaded "
          "('wavekit profile --backend events' does that)");
    config.display_name = demangle_kernel_name;
    graph_level_ = config.graph_level;
  }

  // Subscribes, registers the buffers and the lifecycle callbacks; collection is switched on
  // by the session (set_collecting).
  void start(Session& started) override {
    session = &started;
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "wavekit-profile";
    CUptiResult r = cuptiSubscribe_v2(
        &subscriber_, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr, &params);
    if (r != CUPTI_SUCCESS) {
      session = nullptr;
      throw Error(failure(
          "cuptiSubscribe_v2 (is another CUPTI profiler such as Proton, Kineto or nsys active "
          "in this process?)",
          r));
    }
    cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    std::size_t one = 1;
    std::size_t attr_size = sizeof one;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &attr_size, &one);
    cuptiActivityFlushPeriod(200);
    if ((r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE)) != CUPTI_SUCCESS)
      warn("enabling device records", r);
    for (auto cbid :
         {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
          CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
          CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
          CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING})
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    for (auto cbid : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
                      CUPTI_CBID_NVTX_nvtxRangePop})
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, cbid);
  }

  // Sampled mode: outside a window neither callbacks nor kernel records cost anything.
  void set_collecting(bool on) override {
    // Callbacks before records when turning on, records before callbacks when turning off, so
    // that no record arrives for a launch whose callback was skipped.
    if (on) set_launch_callbacks(true);
    for (CUpti_ActivityKind kind : kinds()) {
      CUptiResult r = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
      if (r != CUPTI_SUCCESS && on) warn("enabling kernel or graph records", r);
    }
    if (!on) set_launch_callbacks(false);
  }

  void flush(bool forced) override {
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  }

  std::uint64_t now_ns() override {
    std::uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  }

  void add_dropped(std::uint64_t n) { dropped_.fetch_add(n, std::memory_order_relaxed); }

  static bool is_graph_launch(CUpti_CallbackId cbid) {
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
  }

  static bool is_launch(CUpti_CallbackId cbid) {
    for (auto launch : kLaunches)
      if (cbid == static_cast<CUpti_CallbackId>(launch)) return true;
    return false;
  }

 private:
  // Per callback id, not cuptiEnableDomain: enabling the whole driver domain would call us
  // for every driver API (the first version did, and sampled mode cost 10 % on the H200).
  void set_launch_callbacks(bool on) {
    for (auto cbid : kLaunches)
      cuptiEnableCallback(on ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  std::vector<CUpti_ActivityKind> kinds() const {
    // With GRAPH_TRACE enabled CUPTI reports a graph launch as one record, not its nodes.
    if (graph_level_)
      return {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_GRAPH_TRACE};
    return {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  }

  static constexpr CUpti_driver_api_trace_cbid kLaunches[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
  };
  std::mutex pool_mutex_;
  std::vector<std::uint8_t*> free_;
  std::size_t allocated_ = 0;
  std::atomic<std::uint64_t> dropped_{0};
  bool graph_level_ = false;
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

// Never destroyed: CUPTI may hand back buffers while the process exits. Made on first use, so
// that the constructor below, which may run before this file's other initialisers, finds it.
CuptiBackend& cupti_backend() {
  static CuptiBackend* const backend = new CuptiBackend;
  return *backend;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = cupti_backend().acquire();
  *size = *buffer ? CuptiBackend::kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t size, std::size_t valid) {
  if (!buffer) return;
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped)
    cupti_backend().add_dropped(dropped);
  if (valid == 0 || !session) {
    cupti_backend().release({buffer, 0, size});
    return;
  }
  session->submit({buffer, valid, size});
}

std::uint64_t node_id(CUgraphNode node) {
  std::uint64_t id = 0;
  return node && cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS ? id : 0;
}

void on_resource(CUpti_CallbackId cbid, const void* data) {
  auto* g = static_cast<const CUpti_ResourceData*>(data);
  auto* graph = static_cast<const CUpti_GraphData*>(g->resourceDescriptor);
  GraphRegistry& graphs = session->graphs();
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      if (graph->nodeType != CU_GRAPH_NODE_TYPE_KERNEL) return;
      std::uint32_t graph_id = 0;
      cuptiGetGraphId(graph->graph, &graph_id);
      graphs.node_created(graph_id, node_id(graph->node), session->tree().current());
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
      graphs.node_cloned(node_id(graph->originalNode), node_id(graph->node));
      return;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING:
      graphs.exec_create_starting();
      return;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED: {
      std::uint32_t exec_id = 0, source_id = 0;
      cuptiGetGraphExecId(graph->graphExec, &exec_id);
      cuptiGetGraphId(graph->graph, &source_id);
      graphs.exec_created(exec_id, source_id);
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING: {
      std::uint32_t exec_id = 0;
      cuptiGetGraphExecId(graph->graphExec, &exec_id);
      graphs.exec_destroyed(exec_id);
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING: {
      std::uint32_t graph_id = 0;
      cuptiGetGraphId(graph->graph, &graph_id);
      graphs.graph_destroyed(graph_id);
      return;
    }
    default:
      return;
  }
}

void on_nvtx(CUpti_CallbackId cbid, const void* data) {
  auto* nvtx = static_cast<const CUpti_NvtxData*>(data);
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA) {
    auto* p = static_cast<const nvtxRangePushA_params*>(nvtx->functionParams);
    session->tree().enter(p->message ? p->message : "<nvtx>");
  } else if (cbid == CUPTI_CBID_NVTX_nvtxRangePushEx) {
    auto* p = static_cast<const nvtxRangePushEx_params*>(nvtx->functionParams);
    const char* message = "<nvtx>";
    if (p->eventAttrib && p->eventAttrib->messageType == NVTX_MESSAGE_TYPE_ASCII)
      message = p->eventAttrib->message.ascii;
    session->tree().enter(message);
  } else if (cbid == CUPTI_CBID_NVTX_nvtxRangePop) {
    session->tree().exit();
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (!session) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      auto* info = static_cast<const CUpti_CallbackData*>(data);
      // Only launch ids are enabled; the check keeps a stray enabled id from taking a slot.
      if (info->callbackSite == CUPTI_API_ENTER) {
        if (CuptiBackend::is_launch(cbid) && session->on_kernel_launch(info->correlationId) &&
            session->graph_level() && CuptiBackend::is_graph_launch(cbid)) {
          // Both launch variants take the executable graph first.
          auto* params = static_cast<const cuGraphLaunch_ptsz_params*>(info->functionParams);
          std::uint32_t exec_id = 0;
          if (cuptiGetGraphExecId(params->hGraphExec, &exec_id) == CUPTI_SUCCESS)
            session->on_graph_launch(info->correlationId, exec_id);
        }
      }
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      on_resource(cbid, data);
    } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
      on_nvtx(cbid, data);
    }
  } catch (...) {
    // A profiler failure must never unwind into the driver; the launch is simply unattributed.
  }
}

int start() {
  Profiler& profiler = Profiler::process();
  return profiler.configure(cupti_backend()) && profiler.start() ? 0 : 1;
}

// LD_PRELOAD: start when the launcher (or the user) configured an output.
__attribute__((constructor)) void start_if_preloaded() {
  if (std::getenv("WAVEKIT_PROFILE_OUTPUT") &&
      std::getenv("WAVEKIT_PROFILE_NO_AUTOSTART") == nullptr)
    start();
}

}  // namespace
}  // namespace wavekit::profile

extern "C" {
// CUDA_INJECTION64_PATH entry point: the driver calls it during cuInit.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  return wavekit::profile::start() == 0 ? 1 : 0;
}
__attribute__((visibility("default"))) int wavekit_profile_cupti_start(void) {
  return wavekit::profile::start();
}
__attribute__((visibility("default"))) void wavekit_profile_cupti_stop(void) {
  wavekit::profile::Profiler::process().stop();
}
}
