// A stand-in for libcuda.so.1, enough for the CUPTI-free backend to run without a GPU: the
// driver entry points are handed out by cuGetProcAddress, as by the real driver, by version
// where the ABI changed, and the launch functions are exported by name too (Triton takes
// cuLaunchKernelEx with dlsym). Graph launches advance a fake GPU clock by the executable
// graph's "duration" (its handle's value, in µs), kernel launches by their FakeKernel's;
// events record that clock, so the elapsed time between a launch's events is known exactly.
#include "fake_cuda.h"

#include <cuda.h>

#include <atomic>
#include <cstring>

namespace {

std::atomic<unsigned long long> gpu_clock_ns{0};
std::atomic<int> graph_launches{0}, kernel_launches{0}, events_alive{0};
CUcontext const kContext = reinterpret_cast<CUcontext>(0xc0);

struct FakeEvent {
  unsigned long long ns = 0;
  bool recorded = false;
};

CUresult graph_launch(CUgraphExec exec, CUstream) {
  gpu_clock_ns += reinterpret_cast<unsigned long long>(exec) * 1000;
  ++graph_launches;
  return CUDA_SUCCESS;
}
CUresult graph_exec_destroy(CUgraphExec) { return CUDA_SUCCESS; }
CUresult run_kernel(CUfunction f) {
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  gpu_clock_ns += reinterpret_cast<const FakeKernel*>(f)->duration_us * 1000ull;
  ++kernel_launches;
  return CUDA_SUCCESS;
}
CUresult launch_kernel(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void**, void**) {
  return run_kernel(f);
}
CUresult launch_kernel_ex(const CUlaunchConfig*, CUfunction f, void**, void**) {
  return run_kernel(f);
}
CUresult module_unload(CUmodule) { return CUDA_SUCCESS; }
CUresult func_get_name(const char** name, CUfunction f) {
  const auto* kernel = reinterpret_cast<const FakeKernel*>(f);
  if (kernel->library_kernel) return CUDA_ERROR_INVALID_HANDLE;
  *name = kernel->mangled_name;
  return CUDA_SUCCESS;
}
CUresult kernel_get_name(const char** name, CUkernel k) {
  const auto* kernel = reinterpret_cast<const FakeKernel*>(k);
  if (!kernel->library_kernel) return CUDA_ERROR_INVALID_HANDLE;
  *name = kernel->mangled_name;
  return CUDA_SUCCESS;
}
CUresult ctx_get_current(CUcontext* c) {
  *c = kContext;
  return CUDA_SUCCESS;
}
CUresult ctx_set_current(CUcontext c) {
  return c == kContext ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult ctx_get_device(CUdevice* d) {
  *d = 0;
  return CUDA_SUCCESS;
}
// As the real driver: from version 13000 on, cuCtxGetDevice is cuCtxGetDevice_v2, which takes
// the context as a second argument. A caller that asks for the new version but calls it with the
// old signature passes garbage there, and gets an error (the real driver may crash).
CUresult ctx_get_device_v2(CUdevice* d, CUcontext context) {
  if (context != kContext) return CUDA_ERROR_INVALID_CONTEXT;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult event_create(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(new FakeEvent);
  ++events_alive;
  return CUDA_SUCCESS;
}
CUresult event_destroy(CUevent e) {
  delete reinterpret_cast<FakeEvent*>(e);
  --events_alive;
  return CUDA_SUCCESS;
}
CUresult event_record(CUevent e, CUstream) {
  auto* event = reinterpret_cast<FakeEvent*>(e);
  event->ns = gpu_clock_ns;
  event->recorded = true;
  return CUDA_SUCCESS;
}
CUresult event_query(CUevent e) {
  return reinterpret_cast<FakeEvent*>(e)->recorded ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult event_synchronize(CUevent e) { return event_query(e); }
CUresult event_elapsed(float* ms, CUevent start, CUevent end) {
  *ms = static_cast<float>(reinterpret_cast<FakeEvent*>(end)->ns -
                           reinterpret_cast<FakeEvent*>(start)->ns) /
        1e6f;
  return CUDA_SUCCESS;
}
CUresult stream_is_capturing(CUstream, CUstreamCaptureStatus* status) {
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
// The stand-in runs a launch's work at once, when it is made, so event pairs time kernels
// exactly; its streams are reported busy so that no launch call's host time is taken off them.
CUresult stream_query(CUstream) { return CUDA_ERROR_NOT_READY; }
CUresult exchange_capture_mode(CUstreamCaptureMode*) { return CUDA_SUCCESS; }
CUresult device_get_name(char* name, int length, CUdevice) {
  std::strncpy(name, "Fake GPU", static_cast<std::size_t>(length));
  return CUDA_SUCCESS;
}
CUresult device_get_attribute(int* value, CUdevice_attribute attribute, CUdevice) {
  *value = attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : 9;
  return CUDA_SUCCESS;
}

struct Entry {
  const char* name;
  void* function;
};
const Entry kEntries[] = {
    {"cuGraphLaunch", reinterpret_cast<void*>(&graph_launch)},
    {"cuLaunchKernel", reinterpret_cast<void*>(&launch_kernel)},
    {"cuLaunchKernelEx", reinterpret_cast<void*>(&launch_kernel_ex)},
    {"cuFuncGetName", reinterpret_cast<void*>(&func_get_name)},
    {"cuModuleUnload", reinterpret_cast<void*>(&module_unload)},
    {"cuKernelGetName", reinterpret_cast<void*>(&kernel_get_name)},
    {"cuGraphExecDestroy", reinterpret_cast<void*>(&graph_exec_destroy)},
    {"cuCtxGetCurrent", reinterpret_cast<void*>(&ctx_get_current)},
    {"cuCtxSetCurrent", reinterpret_cast<void*>(&ctx_set_current)},
    {"cuCtxGetDevice", reinterpret_cast<void*>(&ctx_get_device)},
    {"cuEventCreate", reinterpret_cast<void*>(&event_create)},
    {"cuEventDestroy", reinterpret_cast<void*>(&event_destroy)},
    {"cuEventRecord", reinterpret_cast<void*>(&event_record)},
    {"cuEventQuery", reinterpret_cast<void*>(&event_query)},
    {"cuEventSynchronize", reinterpret_cast<void*>(&event_synchronize)},
    {"cuEventElapsedTime", reinterpret_cast<void*>(&event_elapsed)},
    {"cuStreamIsCapturing", reinterpret_cast<void*>(&stream_is_capturing)},
    {"cuStreamQuery", reinterpret_cast<void*>(&stream_query)},
    {"cuThreadExchangeStreamCaptureMode", reinterpret_cast<void*>(&exchange_capture_mode)},
    {"cuDeviceGetName", reinterpret_cast<void*>(&device_get_name)},
    {"cuDeviceGetAttribute", reinterpret_cast<void*>(&device_get_attribute)},
};

}  // namespace

extern "C" {
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);

CUresult cuGetProcAddress_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    *pfn = version >= 12000 ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                            : reinterpret_cast<void*>(&cuGetProcAddress_v1);
    return CUDA_SUCCESS;
  }
  (void)flags;  // the stand-in has one function for both default-stream flavours
  if (std::strcmp(symbol, "cuCtxGetDevice") == 0 && version >= 13000) {
    *pfn = reinterpret_cast<void*>(&ctx_get_device_v2);
    return CUDA_SUCCESS;
  }
  for (const Entry& entry : kEntries)
    if (std::strcmp(symbol, entry.name) == 0) {
      *pfn = entry.function;
      return CUDA_SUCCESS;
    }
  *pfn = nullptr;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return launch_kernel_ex(config, f, params, extra);
}

// What the check program reads back to compare with the profile.
int fake_cuda_graph_launches() { return graph_launches; }
int fake_cuda_kernel_launches() { return kernel_launches; }
}
