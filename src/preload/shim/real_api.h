// The HSA runtime functions the shim forwards to: the next definition after the shim's own
// (RTLD_NEXT), i.e. ROCm's libhsa-runtime64 or the emulator's stand-in. The shim calls HSA only
// through these pointers, so its own calls never re-enter its interposed definitions.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "wavekit/hsa/emulator_extensions.h"
#include "wavekit/rewrite/launcher.h"

namespace wavekit::preload {

// Beyond the functions the launcher calls (WAVEKIT_LAUNCHER_HSA_FUNCTIONS, wavekit/rewrite/
// launcher.h), the shim forwards these.
#define WAVEKIT_SHIM_HSA_FUNCTIONS(X)            \
  X(hsa_code_object_reader_create_from_file)     \
  X(hsa_executable_agent_global_variable_define) \
  X(hsa_executable_freeze)                       \
  X(hsa_executable_get_info)                     \
  X(hsa_executable_create_alt)                   \
  X(hsa_queue_create)                            \
  X(hsa_queue_destroy)                           \
  X(hsa_queue_add_write_index_screlease)         \
  X(hsa_queue_load_read_index_scacquire)         \
  X(hsa_signal_create)                           \
  X(hsa_signal_destroy)                          \
  X(hsa_signal_store_relaxed)                    \
  X(hsa_signal_store_screlease)                  \
  X(hsa_signal_subtract_screlease)               \
  X(hsa_signal_wait_scacquire)                   \
  X(hsa_shut_down)

// The launcher's functions (and the emulator's extensions, which it also takes), then the
// shim's own: the launcher is given the first part as it is.
struct RealApi : rewrite::HsaFunctions {
#define WAVEKIT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  WAVEKIT_SHIM_HSA_FUNCTIONS(WAVEKIT_DECLARE_POINTER)
#undef WAVEKIT_DECLARE_POINTER
  // Deprecated alias some programs still call; absent from some runtimes.
  void (*hsa_signal_store_release)(hsa_signal_t, hsa_signal_value_t) = nullptr;
};

// Resolved once; aborts with a message naming the function when the runtime lacks one the
// shim cannot work without.
const RealApi& real();

}  // namespace wavekit::preload
