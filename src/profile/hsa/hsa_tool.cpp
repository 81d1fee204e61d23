// The HSA tools-library entry points: HSA_TOOLS_LIB=libwavekit_profile_hsa.so makes the
// runtime call OnLoad with its API table before the application's first HSA call; the
// profiler's lifecycle (profiler.h) does the rest.
#include "hsa_backend.h"
#include "profiler.h"

extern "C" __attribute__((visibility("default"))) bool OnLoad(HsaApiTable* table, uint64_t,
                                                              uint64_t, const char* const*) {
  using namespace wavekit::profile;
  hsa_backend().use_table(table);
  Profiler& profiler = Profiler::process();
  return profiler.configure(hsa_backend()) && profiler.start();
}

// At the last hsa_shut_down; the exit handler stops it otherwise.
extern "C" __attribute__((visibility("default"))) void OnUnload() {
  wavekit::profile::Profiler::process().stop();
}
