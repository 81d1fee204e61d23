// The HSA tools-library entry points: HSA_TOOLS_LIB=libwavekit_profile_hsa.so makes the
// runtime call OnLoad with its API table before the application's first HSA call.
#include <cstdio>
#include <cstdlib>

#include "hsa_backend.h"
#include "wavekit/profile/c_api.h"

namespace {
wavekit::profile::Session* session = nullptr;

// Runs once: at the last hsa_shut_down (OnUnload) or at exit, whichever comes first.
void stop_at_exit() {
  if (!session) return;
  session->stop();
  if (!std::getenv("WAVEKIT_PROFILE_QUIET"))
    std::fprintf(stderr, "wavekit profile: %llu kernels, %llu unattributed (HSA)\n",
                 static_cast<unsigned long long>(session->totals().records),
                 static_cast<unsigned long long>(session->totals().unattributed));
  session = nullptr;  // stopped; the global session still points at it, and it stays allocated
}
}  // namespace

extern "C" __attribute__((visibility("default"))) bool OnLoad(HsaApiTable* table, uint64_t,
                                                              uint64_t, const char* const*) {
  try {
    using namespace wavekit::profile;
    session = new Session(SessionConfig::from_environment(), &hsa_backend());
    hsa_backend().install(table, session);
    set_global_session(session);
    session->start();
    std::atexit(stop_at_exit);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavekit profile: not attached to HSA: %s\n", e.what());
    return false;
  }
}

extern "C" __attribute__((visibility("default"))) void OnUnload() { stop_at_exit(); }
