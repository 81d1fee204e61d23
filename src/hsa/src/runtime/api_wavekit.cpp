// The emulated runtime's own entry points (wavekit/hsa/emulator_extensions.h).
#include "runtime.h"
#include "wavekit/hsa/emulator_extensions.h"

using namespace wavekit::hsa::runtime;

extern "C" {

hsa_status_t wavekit_emu_mark_tool_memory(void* pointer) {
  if (!pointer) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return runtime().memory.mark_tool_memory(pointer) ? HSA_STATUS_SUCCESS
                                                    : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t wavekit_emu_set_outside_progress(int (*made_progress)(void* data), void* data) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  rt.outside_progress = made_progress;
  rt.outside_progress_data = made_progress ? data : nullptr;
  return HSA_STATUS_SUCCESS;
}

}  // extern "C"
