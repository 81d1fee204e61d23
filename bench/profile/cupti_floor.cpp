// The CUPTI floor: the least any CUPTI-based kernel profiler must do. It counts kernel
// activity records and (unless WAVEKIT_FLOOR_CALLBACKS=0) takes the same launch callbacks as
// wavekit's backend, doing nothing in them but a relaxed increment. Loaded with
// CUDA_INJECTION64_PATH; at exit writes {"kernels":N,"launch_callbacks":M,"dropped":D} to
// $WAVEKIT_FLOOR_OUTPUT.
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <vector>

namespace {

std::atomic<unsigned long long> kernels{0}, callbacks{0}, dropped{0};
CUpti_SubscriberHandle subscriber;
constexpr size_t kBufferBytes = 1 << 20;
// Buffers are recycled, as any long-running profiler must: a fresh allocation per buffer
// would add page faults that are not CUPTI's cost.
std::mutex pool_mutex;
std::vector<uint8_t*> pool;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  {
    std::lock_guard lock(pool_mutex);
    if (!pool.empty()) {
      *buffer = pool.back();
      pool.pop_back();
    } else {
      *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    }
  }
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      kernels.fetch_add(1, std::memory_order_relaxed);
  size_t lost = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS) dropped += lost;
  std::lock_guard lock(pool_mutex);
  pool.push_back(buffer);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER)
    callbacks.fetch_add(1, std::memory_order_relaxed);
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const char* path = std::getenv("WAVEKIT_FLOOR_OUTPUT");
  FILE* f = path ? std::fopen(path, "w") : stderr;
  if (!f) return;
  std::fprintf(f, "{\"kernels\": %llu, \"launch_callbacks\": %llu, \"dropped\": %llu}\n",
               kernels.load(), callbacks.load(), dropped.load());
  if (f != stderr) std::fclose(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  cuptiActivityRegisterCallbacks(requested, completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const char* cb = std::getenv("WAVEKIT_FLOOR_CALLBACKS");
  if (!cb || cb[0] != '0') {
    cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr);
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz})
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  }
  std::atexit(at_exit);
  return 1;
}
