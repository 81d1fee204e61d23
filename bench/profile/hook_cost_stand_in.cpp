// The events backend's own CPU cost per kernel launch, without a GPU: launches go through the
// hooked cuLaunchKernel into the stand-in libcuda.so.1 of the tests (whose driver calls cost a
// few ns), with the profiler switched on and off in alternating blocks of one process (ABBA),
// so what is left between the two is the hook's code, the lock-free hand-over and the consumer
// thread competing. Run with the events library preloaded and the stand-in on the library path
// (bench/profile/hook_cost_stand_in.sh does), WAVEKIT_PROFILE_TIME_EVERY choosing the mode.
// Prints one JSON line: medians of the blocks, ns per launch.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fake_cuda.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  auto set_enabled =
      reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "wavekit_profile_set_enabled"));
  if (!cuda || !set_enabled) {
    std::fprintf(stderr,
                 "hook_cost_stand_in: needs the stand-in libcuda.so.1 and the events "
                 "library preloaded\n");
    return 1;
  }
  // As the CUDA runtime does: cuGetProcAddress by dlsym, then cuLaunchKernel through it.
  auto bootstrap =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(cuda, "cuGetProcAddress_v2"));
  void* found = nullptr;
  CUdriverProcAddressQueryResult status{};
  bootstrap("cuGetProcAddress", &found, 12000, 0, &status);
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(found);
  get_proc("cuLaunchKernel", &found, 12000, 0, &status);
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(found);

  // Four kernels launched in turn, as a model's step launches several.
  FakeKernel kernels[4] = {
      {"_Z1av", 1, false}, {"_Z1bv", 1, false}, {"_Z1cv", 1, false}, {"_Z1dv", 1, false}};
  // 200,000 launches a block: ~20 ms, a few consumer polls, far from filling the hand-over ring.
  constexpr int kLaunches = 200'000, kPairs = 10;
  std::vector<double> on, off;
  for (int pair = 0; pair < kPairs; ++pair) {
    for (int half = 0; half < 2; ++half) {
      const bool enabled = (pair % 2 == 0) == (half == 0);
      set_enabled(enabled);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kLaunches; ++i)
        launch(reinterpret_cast<CUfunction>(&kernels[i % 4]), 1, 1, 1, 32, 1, 1, 0, nullptr,
               nullptr, nullptr);
      const double ns =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          kLaunches;
      (enabled ? on : off).push_back(ns);
    }
  }
  const char* every = std::getenv("WAVEKIT_PROFILE_TIME_EVERY");
  std::printf("{\"time_every\": %s, \"off_ns\": %.1f, \"on_ns\": %.1f, \"hook_ns\": %.1f}\n",
              every ? every : "1", median(off), median(on), median(on) - median(off));
  return 0;
}
