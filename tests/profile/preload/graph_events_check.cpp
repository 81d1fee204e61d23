// The CUPTI-free graph mode end to end, without a GPU: this program plays the CUDA runtime (it
// opens libcuda.so.1 -- the stand-in fake_cuda.cpp -- takes cuGetProcAddress with dlsym and
// every driver function through it) with the profiler preloaded and WAVEKIT_PROFILE_GRAPHS=
// events. It launches two executable graphs, destroys one and launches a new graph at the same
// address, stops the profiler and checks the written profile against what it
// launched and the stand-in's clock. Exit status 0: fine.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "wavekit/profile/profile_data.h"

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "graph_events_check: %s\n", what.c_str());
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
    std::fprintf(stderr, "graph_events_check: needs WAVEKIT_PROFILE_OUTPUT and libcuda.so.1\n");
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
  auto stop =
      reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "wavekit_profile_graph_events_stop"));
  auto launches = reinterpret_cast<int (*)()>(dlsym(cuda, "fake_cuda_graph_launches"));
  if (!get_proc || !launch || !launch_ptsz || !destroy || !stop || !launches) {
    std::fprintf(stderr,
                 "graph_events_check: an entry point is missing (is the profiler "
                 "preloaded?)\n");
    return 1;
  }
  // The stand-in runs an executable graph for (its handle's value) µs.
  auto* const decode_graph = reinterpret_cast<CUgraphExec>(250);
  auto* const prefill_graph = reinterpret_cast<CUgraphExec>(500);
  auto* const stream = reinterpret_cast<CUstream>(0x5);
  // (Scopes are tested in graph_event_timer_test; the launches here hang under the root.)
  for (int i = 0; i < 30; ++i) expect(launch(decode_graph, stream) == CUDA_SUCCESS, "launch");
  for (int i = 0; i < 20; ++i) launch_ptsz(prefill_graph, stream);
  destroy(decode_graph);  // a later graph at this address is another graph
  for (int i = 0; i < 5; ++i) launch(decode_graph, stream);
  stop();
  expect(launches() == 55, "the stand-in driver did not run every launch");

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
  expect(profile.root.metrics.count == 55, "the profile does not hold 55 graph launches");
  expect(profile.self.dropped == 0 && profile.self.graph_unknown == 0 &&
             profile.self.unattributed == 0,
         "dropped, graph_unknown or unattributed launches");
  expect(profile.devices.count(0) && profile.devices.at(0).model == "Fake GPU",
         "device 0 is not described");
  return failures == 0 ? 0 : 1;
}
