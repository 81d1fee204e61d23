#include "wavekit/profile/c_api.h"

#include <atomic>

#include "profiler.h"

namespace wavekit::profile {
namespace {
std::atomic<Session*> current{nullptr};
}
void set_global_session(Session* session) { current.store(session, std::memory_order_release); }
Session* global_session() { return current.load(std::memory_order_acquire); }
}  // namespace wavekit::profile

static_assert(wavekit::profile::kPrecisionCount == WAVEKIT_PROFILE_PRECISIONS);

using wavekit::profile::global_session;

extern "C" {

__attribute__((visibility("default"))) int wavekit_profile_active(void) {
  return global_session() != nullptr;
}

__attribute__((visibility("default"))) uint32_t wavekit_profile_intern(const char* name) {
  auto* s = global_session();
  return s && name ? s->tree().names().intern(name) : 0;
}

__attribute__((visibility("default"))) void wavekit_profile_scope_enter(const char* name) {
  if (auto* s = global_session(); s && name) s->tree().enter(name);
}

__attribute__((visibility("default"))) void wavekit_profile_scope_enter_id(uint32_t name_id) {
  if (auto* s = global_session()) s->tree().enter(name_id);
}

__attribute__((visibility("default"))) void wavekit_profile_scope_exit(void) {
  if (auto* s = global_session()) s->tree().exit();
}

__attribute__((visibility("default"))) void wavekit_profile_advance_phase(void) {
  if (auto* s = global_session()) s->advance_phase();
}

__attribute__((visibility("default"))) uint32_t wavekit_profile_phase(void) {
  auto* s = global_session();
  return s ? s->phase() : 0;
}

__attribute__((visibility("default"))) void wavekit_profile_set_enabled(int enabled) {
  if (auto* s = global_session()) s->set_enabled(enabled != 0);
}

__attribute__((visibility("default"))) void wavekit_profile_set_next_launch_work(
    const double* flops, double bytes) {
  if (!global_session()) return;
  wavekit::profile::LaunchWork work;
  if (flops)
    for (int p = 0; p < WAVEKIT_PROFILE_PRECISIONS; ++p) work.flops[p] = flops[p];
  work.bytes = bytes;
  wavekit::profile::Session::set_next_launch_work(work);
}

}  // extern "C"
