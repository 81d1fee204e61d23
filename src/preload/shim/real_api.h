// The HSA runtime functions the shim forwards to: the next definition after the shim's own
// (RTLD_NEXT), i.e. ROCm's libhsa-runtime64 or the emulator's stand-in. The shim calls HSA only
// through these pointers, so its own calls never re-enter its interposed definitions.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "wavekit/hsa/emulator_extensions.h"

namespace wavekit::preload {

#define WAVEKIT_HSA_FORWARDED(X)                                                              \
  X(hsa_code_object_reader_create_from_memory)                                                \
  X(hsa_code_object_reader_create_from_file)                                                  \
  X(hsa_executable_load_agent_code_object)                                                    \
  X(hsa_executable_agent_global_variable_define)                                              \
  X(hsa_executable_freeze)                                                                    \
  X(hsa_executable_get_info)                                                                  \
  X(hsa_executable_create_alt)                                                                \
  X(hsa_executable_get_symbol_by_name)                                                        \
  X(hsa_executable_symbol_get_info)                                                           \
  X(hsa_queue_create)                                                                         \
  X(hsa_queue_destroy)                                                                        \
  X(hsa_queue_add_write_index_screlease)                                                      \
  X(hsa_queue_load_read_index_scacquire)                                                      \
  X(hsa_signal_create)                                                                        \
  X(hsa_signal_destroy)                                                                       \
  X(hsa_signal_store_relaxed)                                                                 \
  X(hsa_signal_store_screlease)                                                               \
  X(hsa_signal_subtract_screlease)                                                            \
  X(hsa_signal_wait_scacquire)                                                                \
  X(hsa_iterate_agents)                                                                       \
  X(hsa_agent_get_info)                                                                       \
  X(hsa_amd_agent_iterate_memory_pools)                                                       \
  X(hsa_amd_memory_pool_get_info)                                                             \
  X(hsa_amd_memory_pool_allocate)                                                             \
  X(hsa_amd_memory_pool_free)                                                                 \
  X(hsa_amd_agents_allow_access)                                                              \
  X(hsa_memory_copy)                                                                          \
  X(hsa_shut_down)

struct RealApi {
#define WAVEKIT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  WAVEKIT_HSA_FORWARDED(WAVEKIT_DECLARE_POINTER)
#undef WAVEKIT_DECLARE_POINTER
  // Deprecated alias some programs still call; absent from some runtimes.
  void (*hsa_signal_store_release)(hsa_signal_t, hsa_signal_value_t) = nullptr;
  // Only wavekit's emulated runtime has these (keeping its no-progress report working under
  // instrumentation); null on ROCr.
  decltype(&::wavekit_emu_mark_tool_memory) wavekit_emu_mark_tool_memory = nullptr;
  decltype(&::wavekit_emu_set_outside_progress) wavekit_emu_set_outside_progress = nullptr;
};

// Resolved once; aborts with a message naming the function when the runtime lacks one the
// shim cannot work without.
const RealApi& real();

}  // namespace wavekit::preload
