// The CUPTI-free backend end to end, without a GPU: this program plays the CUDA runtime (it
// opens libcuda.so.1 -- the stand-in fake_cuda.cpp -- takes cuGetProcAddress with dlsym and
// every driver function through it) and Triton (cuLaunchKernelEx by dlsym), with the profiler
// preloaded. It launches two executable graphs, destroys one and launches a new graph at the
// same address, launches kernels through each hooked launch function inside scopes, some while
// the profiler is disabled, stops the profiler and checks the written profile against what it
// launched and the stand-in's clock. Exit status 0: fine.
//
// With WAVEKIT_PROFILE_TIME_EVERY=N the same launches must be counted and attributed alike, with
// only some kernel launches timed; every launch of a stand-in kernel takes the same time, so
// the estimated times must equal the true ones exactly.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fake_cuda.h"
#include "wavekit/profile/profile_data.h"

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "events_check: %s\n", what.c_str());
    ++failures;
  }
}

template <typename Fn>
Fn take(PFN_cuGetProcAddress_v12000 get_proc, const char* name, cuuint64_t flags) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  get_proc(name, &p, 12000, flags, &status);
  return reinterpret_cast<Fn>(p);
}

}  // namespace

int main() {
  using namespace wavekit::profile;
  const char* out = std::getenv("WAVEKIT_PROFILE_OUTPUT");
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!out || !cuda) {
    std::fprintf(stderr, "events_check: needs WAVEKIT_PROFILE_OUTPUT and libcuda.so.1\n");
    return 1;
  }
  // As the runtime does: cuGetProcAddress by dlsym, then through itself.
  auto bootstrap =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(cuda, "cuGetProcAddress_v2"));
  auto get_proc = take<PFN_cuGetProcAddress_v12000>(bootstrap, "cuGetProcAddress", 0);
  auto launch = take<PFN_cuGraphLaunch_v10000>(get_proc, "cuGraphLaunch", 0);
  auto launch_ptsz = take<PFN_cuGraphLaunch_v10000>(get_proc, "cuGraphLaunch",
                                                    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  auto destroy = take<PFN_cuGraphExecDestroy_v10000>(get_proc, "cuGraphExecDestroy", 0);
  auto launch_kernel = take<PFN_cuLaunchKernel_v4000>(get_proc, "cuLaunchKernel", 0);
  auto module_unload = take<PFN_cuModuleUnload_v2000>(get_proc, "cuModuleUnload", 0);
  auto launch_kernel_ptsz = take<PFN_cuLaunchKernel_v4000>(
      get_proc, "cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  // As Triton's launcher does: by name from the driver library.
  auto launch_kernel_ex =
      reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(dlsym(cuda, "cuLaunchKernelEx"));
  // The profiler's C API and stop function, from the preloaded library.
  auto stop = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "wavekit_profile_events_stop"));
  auto scope_enter =
      reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "wavekit_profile_scope_enter"));
  auto scope_exit = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "wavekit_profile_scope_exit"));
  auto set_enabled =
      reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "wavekit_profile_set_enabled"));
  auto launches = reinterpret_cast<int (*)()>(dlsym(cuda, "fake_cuda_graph_launches"));
  auto kernel_launches = reinterpret_cast<int (*)()>(dlsym(cuda, "fake_cuda_kernel_launches"));
  if (!get_proc || !launch || !launch_ptsz || !destroy || !launch_kernel || !module_unload ||
      !launch_kernel_ptsz || !launch_kernel_ex || !stop || !scope_enter || !scope_exit ||
      !set_enabled || !launches || !kernel_launches) {
    std::fprintf(stderr,
                 "events_check: an entry point is missing (is the profiler "
                 "preloaded?)\n");
    return 1;
  }
  // The stand-in runs an executable graph for (its handle's value) µs.
  auto* const decode_graph = reinterpret_cast<CUgraphExec>(250);
  auto* const prefill_graph = reinterpret_cast<CUgraphExec>(500);
  auto* const stream = reinterpret_cast<CUstream>(0x5);
  // Graph launches hang under the root.
  for (int i = 0; i < 30; ++i) expect(launch(decode_graph, stream) == CUDA_SUCCESS, "launch");
  for (int i = 0; i < 20; ++i) launch_ptsz(prefill_graph, stream);
  destroy(decode_graph);  // a later graph at this address is another graph
  for (int i = 0; i < 5; ++i) launch(decode_graph, stream);

  FakeKernel attention{"_Z9attentionPfi", 40, false};
  FakeKernel matmul{"_Z6matmulv", 7, false};
  FakeKernel triton_add{"add_kernel", 3, false};
  FakeKernel library{"_Z7softmaxv", 11, true};
  auto kernel = [](FakeKernel& k) { return reinterpret_cast<CUfunction>(&k); };
  scope_enter("decode");
  for (int i = 0; i < 10; ++i)
    expect(launch_kernel(kernel(attention), 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr) ==
               CUDA_SUCCESS,
           "cuLaunchKernel");
  for (int i = 0; i < 4; ++i)
    launch_kernel_ptsz(kernel(matmul), 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  launch_kernel(kernel(library), 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  // After an unload the same handle may be another kernel: the hook must ask the driver again.
  FakeKernel reused = matmul;
  module_unload(nullptr);
  reused.mangled_name = "_Z4gemmv";
  matmul = reused;
  launch_kernel(kernel(matmul), 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  scope_exit();
  scope_enter("triton");
  CUlaunchConfig config{};
  config.hStream = stream;
  for (int i = 0; i < 6; ++i) launch_kernel_ex(&config, kernel(triton_add), nullptr, nullptr);
  // Launches while the profiler is disabled go untimed: the hook only forwards them.
  set_enabled(0);
  for (int i = 0; i < 100; ++i) launch_kernel_ex(&config, kernel(triton_add), nullptr, nullptr);
  set_enabled(1);
  scope_exit();
  // Enough launches of one kernel for --time-every to leave most of them untimed.
  FakeKernel busy{"_Z4busyv", 5, false};
  scope_enter("many");
  for (int i = 0; i < 300; ++i)
    launch_kernel(kernel(busy), 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  scope_exit();
  stop();
  expect(launches() == 55, "the stand-in driver did not run every graph launch");
  expect(kernel_launches() == 422, "the stand-in driver did not run every kernel launch");

  std::ifstream file(std::string(out) + "/profile.hatchet");
  std::stringstream text;
  text << file.rdbuf();
  Profile profile = from_hatchet_json(text.str(), "profile.hatchet");
  const ProfileNode* first = profile.root.find(graph_leaf_name(1));
  const ProfileNode* second = profile.root.find(graph_leaf_name(2));
  const ProfileNode* third = profile.root.find(graph_leaf_name(3));
  expect(first && first->metrics.count == 30, "<cuda graph 1> is not 30 launches");
  expect(first && first->metrics.time_ns == 30 * 250'000u, "graph 1's time is not 30 x 250 us");
  expect(second && second->metrics.count == 20, "<cuda graph 2> is not 20 launches");
  expect(second && second->metrics.time_ns == 20 * 500'000u, "graph 2's time is not 20 x 500 us");
  expect(third && third->metrics.count == 5, "the graph after the destroy is not graph 3");
  const ProfileNode* decode = profile.root.find("decode");
  const ProfileNode* triton = profile.root.find("triton");
  const ProfileNode* attention_leaf = decode ? decode->find("attention(float*, int)") : nullptr;
  const ProfileNode* matmul_leaf = decode ? decode->find("matmul()") : nullptr;
  const ProfileNode* library_leaf = decode ? decode->find("softmax()") : nullptr;
  const ProfileNode* triton_leaf = triton ? triton->find("add_kernel") : nullptr;
  expect(attention_leaf && attention_leaf->metrics.count == 10 &&
             attention_leaf->metrics.time_ns == 10 * 40'000u,
         "decode / attention(float*, int) is not 10 launches of 40 us");
  expect(matmul_leaf && matmul_leaf->metrics.count == 4 && matmul_leaf->metrics.time_ns == 28'000u,
         "decode / matmul() (per-thread stream) is not 4 launches of 7 us");
  expect(library_leaf && library_leaf->metrics.count == 1,
         "a library kernel is not named through cuKernelGetName");
  const ProfileNode* reused_leaf = decode ? decode->find("gemm()") : nullptr;
  expect(reused_leaf && reused_leaf->metrics.count == 1,
         "a handle launched after a module unload kept its old kernel's name");
  expect(triton_leaf && triton_leaf->metrics.count == 6 && triton_leaf->metrics.time_ns == 18'000u,
         "triton / add_kernel (cuLaunchKernelEx by dlsym) is not the 6 enabled launches of 3 us");
  const ProfileNode* many = profile.root.find("many");
  const ProfileNode* busy_leaf = many ? many->find("busy()") : nullptr;
  expect(busy_leaf && busy_leaf->metrics.count == 300 && busy_leaf->metrics.time_ns == 1'500'000u,
         "many / busy() is not 300 launches of 5 us");
  expect(profile.root.metrics.count == 55 + 322,
         "the profile does not hold 55 graph and 322 kernel launches");
  const char* time_every = std::getenv("WAVEKIT_PROFILE_TIME_EVERY");
  if (time_every && std::atoi(time_every) > 1) {
    // About one in N of the 300, and the first; graph launches are all timed.
    const std::uint64_t timed = busy_leaf ? busy_leaf->metrics.timed : 0;
    const std::uint64_t expected = 300 / static_cast<std::uint64_t>(std::atoi(time_every));
    expect(timed > expected / 3 && timed < expected * 3,
           "many / busy() has " + std::to_string(timed) + " timed launches, not about " +
               std::to_string(expected));
    expect(first && first->metrics.timed == first->metrics.count, "a graph launch went untimed");
  } else {
    expect(profile.root.metrics.timed == profile.root.metrics.count, "an untimed launch");
  }
  expect(profile.self.dropped == 0 && profile.self.graph_unknown == 0 &&
             profile.self.unattributed == 0,
         "dropped, graph_unknown or unattributed launches");
  expect(profile.devices.count(0) && profile.devices.at(0).model == "Fake GPU",
         "device 0 is not described");
  return failures == 0 ? 0 : 1;
}
