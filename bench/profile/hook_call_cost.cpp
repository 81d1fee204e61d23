// What the events backend's launch hook pays per launch for each driver call it makes
// (src/profile/events/launch_hooks.cpp), on a real GPU: every call is repeated in a tight loop
// on a stream that has work queued, alternating the calls in rounds, and the median per-call
// time is printed as JSON. An eager launch itself is timed the same way for scale.
// Build: g++ -O2 -std=c++20 hook_call_cost.cpp -I$CUDA/include -L$CUDA/lib64 -lcuda
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
    std::fprintf(stderr, "hook_call_cost: %s failed (%d)\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

// A kernel that spins for a while, so that the stream stays busy during the measurements.
const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 cycles)
{
  .reg .u64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [cycles];
  mov.u64 %rd2, %clock64;
loop:
  mov.u64 %rd3, %clock64;
  sub.u64 %rd3, %rd3, %rd2;
  setp.lt.u64 %p, %rd3, %rd1;
  @%p bra loop;
  ret;
}
)";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module;
  check(cuModuleLoadData(&module, kPtx), "cuModuleLoadData");
  CUfunction spin;
  check(cuModuleGetFunction(&spin, module, "spin"), "cuModuleGetFunction");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent event;
  check(cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");

  unsigned long long long_spin = 2'000'000'000ull;  // ~1 s at 1.98 GHz: the stream stays busy
  void* long_args[] = {&long_spin};
  unsigned long long no_spin = 0;
  void* short_args[] = {&no_spin};

  // Calls that enqueue work are repeated fewer times, so that the queue never fills (a full
  // queue would make a launch wait for the spinning kernel).
  struct Call {
    std::string name;
    std::function<void()> run;
    int repeats = 2000;
  };
  const std::vector<Call> calls = {
      {"cuStreamIsCapturing",
       [&] {
         CUstreamCaptureStatus s;
         check(cuStreamIsCapturing(stream, &s), "cuStreamIsCapturing");
       }},
      {"cuCtxGetCurrent",
       [&] {
         CUcontext c;
         check(cuCtxGetCurrent(&c), "cuCtxGetCurrent");
       }},
      {"cuCtxGetDevice",
       [&] {
         CUdevice d;
         check(cuCtxGetDevice(&d), "cuCtxGetDevice");
       }},
      {"cuStreamQuery", [&] { check(cuStreamQuery(stream), "cuStreamQuery"); }},
      {"cuThreadExchangeStreamCaptureMode x2",
       [&] {
         CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
         check(cuThreadExchangeStreamCaptureMode(&mode), "exchange");
         check(cuThreadExchangeStreamCaptureMode(&mode), "exchange");
       }},
      {"cuEventRecord", [&] { check(cuEventRecord(event, stream), "cuEventRecord"); }, 100},
      {"steady_clock::now", [] { (void)std::chrono::steady_clock::now(); }},
      {"cuLaunchKernel (queued behind a busy stream)",
       [&] {
         check(cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, stream, short_args, nullptr),
               "cuLaunchKernel");
       },
       100},
  };
  constexpr int kRounds = 7;
  std::vector<std::vector<double>> per_call(calls.size());
  for (int round = 0; round < kRounds; ++round) {
    check(cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, stream, long_args, nullptr), "busy");
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls[c].repeats; ++i) calls[c].run();
      const auto t1 = std::chrono::steady_clock::now();
      per_call[c].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                            calls[c].repeats);
    }
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  std::printf("{");
  for (std::size_t c = 0; c < calls.size(); ++c)
    std::printf("%s\"%s\": %.1f", c ? ", " : "", calls[c].name.c_str(), median(per_call[c]));
  std::printf("}\n");
  return 0;
}
