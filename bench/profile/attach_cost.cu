// What being attached with CUPTI costs, piece by piece. One process per configuration
// (CUPTI allows one subscriber per process); the configuration is a string of letters in
// argv[1], each turning one CUPTI feature on before any CUDA work:
//   S  cuptiSubscribe_v2 with no callback enabled
//   R  + the six graph resource callbacks wavekit takes (needs S)
//   N  + the three NVTX callbacks (needs S)
//   L  + the eight launch callback ids (needs S)
//   B  cuptiActivityRegisterCallbacks, per-thread buffers, flush period 200 ms
//   D  DEVICE activity (needs B)
//   K  CONCURRENT_KERNEL activity for the whole run (needs B)
//   G  GRAPH_TRACE activity for the whole run (needs B)
//   X  CONCURRENT_KERNEL enabled before any CUDA work, disabled before the graph is captured
//   Y  CONCURRENT_KERNEL enabled while the graph is captured and instantiated, disabled
//      before the replays and the eager loop
//   Z  CONCURRENT_KERNEL enabled only around the timed replays and the eager loop (the graph
//      was instantiated with it off): does enabling reach an existing executable graph?
//   U  cuptiUnsubscribe after setup, before the graph is captured (needs S)
//   P  the driver launch entry points are taken through cuGetProcAddress and called through
//      a forwarding function (an interposer's cost, without CUPTI)
//   E  graph launches bracketed by an event pair each (cuEventRecord before and after)
// Prints one JSON line: GPU time per replay of a 1000-node graph (median of timed replays,
// CUDA events), host ns per eager launch (enqueue time only), host ns per graph launch, and
// the kernel and graph records CUPTI delivered.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

__global__ void tiny(float* x) { x[threadIdx.x] += 1.0f; }

std::atomic<unsigned long long> kernel_records{0}, graph_records{0}, callbacks{0};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void checkc(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    std::fprintf(stderr, "%s: %s\n", what, text ? text : "?");
    std::exit(1);
  }
}

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 4 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernel_records;
    if (record->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) ++graph_records;
  }
  std::free(buffer);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  callbacks.fetch_add(1, std::memory_order_relaxed);
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);
LaunchFn real_launch = nullptr;
// What an interposer's wrapper costs at least: one indirect call and a counter.
__attribute__((noinline)) CUresult forwarding_launch(CUfunction f, unsigned gx, unsigned gy,
                                                     unsigned gz, unsigned bx, unsigned by,
                                                     unsigned bz, unsigned shared, CUstream s,
                                                     void** params, void** extra) {
  callbacks.fetch_add(1, std::memory_order_relaxed);
  return real_launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

bool has(const std::string& config, char c) { return config.find(c) != std::string::npos; }

void kernel_activity(bool on) {
  checkc(on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
         "kernel activity");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string config = argc > 1 ? argv[1] : "";
  constexpr int kNodes = 1000, kReplays = 60, kEager = 20000, kBatch = 500;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (has(config, 'S')) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "attach-cost";
    checkc(cuptiSubscribe_v2(&subscriber, on_callback, nullptr, &params), "subscribe");
  }
  if (has(config, 'R'))
    for (auto id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING,
                    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
                    CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
                    CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING})
      checkc(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, id), "resource cb");
  if (has(config, 'N'))
    for (auto id : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
                    CUPTI_CBID_NVTX_nvtxRangePop})
      checkc(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, id), "nvtx cb");
  if (has(config, 'L'))
    for (auto id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz})
      checkc(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "launch cb");
  if (has(config, 'B')) {
    checkc(cuptiActivityRegisterCallbacks(requested, completed), "register buffers");
    size_t one = 1, size = sizeof one;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &one);
    cuptiActivityFlushPeriod(200);
  }
  if (has(config, 'D')) checkc(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), "device");
  if (has(config, 'K') || has(config, 'X') || has(config, 'Y')) kernel_activity(true);
  if (has(config, 'G')) checkc(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE), "graph");

  check(cudaFree(nullptr), "init");
  if (has(config, 'X')) kernel_activity(false);
  if (has(config, 'U')) checkc(cuptiUnsubscribe(subscriber), "unsubscribe");
  if (has(config, 'P')) {
    CUdriverProcAddressQueryResult found{};
    if (cuGetProcAddress("cuLaunchKernel", reinterpret_cast<void**>(&real_launch), 12000,
                         CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS)
      return 1;
  }
  const bool events = has(config, 'E');

  float* x = nullptr;
  check(cudaMalloc(&x, 256 * sizeof(float)), "malloc");
  check(cudaMemset(x, 0, 256 * sizeof(float)), "memset");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  CUfunction function = nullptr;
  check(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(tiny)), "function");
  void* args[] = {&x};
  auto launch = [&] {
    if (real_launch)
      forwarding_launch(function, 1, 1, 1, 256, 1, 1, 0, stream, args, nullptr);
    else
      tiny<<<1, 256, 0, stream>>>(x);
  };

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  for (int i = 0; i < kNodes; ++i) tiny<<<1, 256, 0, stream>>>(x);
  check(cudaStreamEndCapture(stream, &graph), "end capture");
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  if (has(config, 'Y')) kernel_activity(false);
  if (has(config, 'Z')) kernel_activity(true);

  // Warm-up, then replays timed one by one on the GPU and all together on the host.
  for (int i = 0; i < 5; ++i) check(cudaGraphLaunch(exec, stream), "warm replay");
  check(cudaStreamSynchronize(stream), "sync");
  std::vector<cudaEvent_t> marks(2 * kReplays);
  for (auto& e : marks) check(cudaEventCreate(&e), "event");
  std::vector<cudaEvent_t> pair(2);
  for (auto& e : pair) check(cudaEventCreate(&e), "event");
  double graph_host_ns = 0;
  for (int i = 0; i < kReplays; ++i) {
    check(cudaEventRecord(marks[2 * i], stream), "mark");
    auto t0 = std::chrono::steady_clock::now();
    if (events) cudaEventRecord(pair[0], stream);
    check(cudaGraphLaunch(exec, stream), "replay");
    if (events) cudaEventRecord(pair[1], stream);
    graph_host_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                         .count();
    check(cudaEventRecord(marks[2 * i + 1], stream), "mark");
  }
  check(cudaStreamSynchronize(stream), "sync");
  std::vector<float> replay_ms(kReplays);
  for (int i = 0; i < kReplays; ++i)
    check(cudaEventElapsedTime(&replay_ms[i], marks[2 * i], marks[2 * i + 1]), "elapsed");
  std::sort(replay_ms.begin(), replay_ms.end());

  // Eager: enqueue time of batches of launches, the queue drained between batches so the
  // host never waits for a full launch queue inside the timed part.
  for (int i = 0; i < 1000; ++i) launch();
  check(cudaStreamSynchronize(stream), "sync");
  double eager_ns = 0;
  for (int done = 0; done < kEager; done += kBatch) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) launch();
    eager_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                    .count();
    check(cudaStreamSynchronize(stream), "sync");
  }
  if (has(config, 'Z')) kernel_activity(false);
  if (has(config, 'B')) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf(
      "{\"config\": \"%s\", \"replay_ms\": %.4f, \"replay_ms_min\": %.4f, \"graph_launch_ns\": "
      "%.0f, \"eager_launch_ns\": %.1f, \"kernel_records\": %llu, \"graph_records\": %llu, "
      "\"callbacks\": %llu}\n",
      config.c_str(), replay_ms[kReplays / 2], replay_ms[0], graph_host_ns / kReplays,
      eager_ns / kEager, kernel_records.load(), graph_records.load(), callbacks.load());
  return 0;
}
