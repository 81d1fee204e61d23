// HSA API: initialisation, system and agent information, ISAs, regions, AMD memory pools and
// memory allocation. Agents: one CPU agent (node 0) and one emulated GPU agent (node 1) whose
// processor comes from WAVEKIT_EMU_TARGET (default gfx90a).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

#define WAVEKIT_REQUIRE_INIT() \
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED

template <typename T>
hsa_status_t put(void* value, const T& result) {
  std::memcpy(value, &result, sizeof(T));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t put_string(void* value, const std::string& text, std::size_t capacity) {
  char* out = static_cast<char*>(value);
  std::memset(out, 0, capacity);
  std::memcpy(out, text.data(), std::min(text.size(), capacity - 1));
  return HSA_STATUS_SUCCESS;
}

Agent* agent_of(hsa_agent_t agent) {
  Runtime& rt = runtime();
  if (agent.handle == reinterpret_cast<std::uint64_t>(&rt.gpu)) return &rt.gpu;
  if (agent.handle == reinterpret_cast<std::uint64_t>(&rt.cpu)) return &rt.cpu;
  return nullptr;
}

Region* region_of(std::uint64_t handle) {
  Runtime& rt = runtime();
  for (Region* region :
       {&rt.system_fine_grained, &rt.system_coarse_grained, &rt.gpu_local, &rt.gpu_group})
    if (handle == reinterpret_cast<std::uint64_t>(region)) return region;
  return nullptr;
}

std::size_t physical_memory() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

constexpr std::size_t kAllocationGranule = 4096;
constexpr std::size_t kGroupSegmentSize = 64 * 1024;  // LDS per workgroup, as on gfx9

// Figures of the real parts, so that programs that size work by them behave as on hardware.
struct GpuFigures {
  std::uint32_t chip_id, compute_units, clock_mhz;
  const char* product;
};
GpuFigures figures(wavekit::emu::Processor processor) {
  switch (processor) {
    case wavekit::emu::Processor::gfx908:
      return {0x738c, 120, 1502, "AMD Instinct MI100 (wavekit emulator)"};
    case wavekit::emu::Processor::gfx90a:
      return {0x740f, 110, 1700, "AMD Instinct MI250X (wavekit emulator)"};
    case wavekit::emu::Processor::gfx942:
      return {0x74a1, 304, 2100, "AMD Instinct MI300X (wavekit emulator)"};
  }
  return {0, 1, 1000, "wavekit emulator"};
}

void remember_pool(void* pointer, const Region* pool) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  rt.allocation_pools[reinterpret_cast<std::uint64_t>(pointer)] = pool;
}

void forget_pool(void* pointer) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  rt.allocation_pools.erase(reinterpret_cast<std::uint64_t>(pointer));
}

std::uint32_t pool_flags(const Region& pool) {
  std::uint32_t flags = 0;
  if (pool.global_flags & HSA_REGION_GLOBAL_FLAG_KERNARG)
    flags |= HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
  if (pool.global_flags & HSA_REGION_GLOBAL_FLAG_FINE_GRAINED)
    flags |= HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
  if (pool.global_flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED)
    flags |= HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
  return flags;
}

hsa_status_t isa_info(const Isa& isa, hsa_isa_info_t attribute, void* value) {
  switch (attribute) {
    case HSA_ISA_INFO_NAME_LENGTH:
      return put<std::uint32_t>(value, isa.name.size() + 1);
    case HSA_ISA_INFO_NAME:
      std::memcpy(value, isa.name.c_str(), isa.name.size() + 1);
      return HSA_STATUS_SUCCESS;
    case HSA_ISA_INFO_CALL_CONVENTION_COUNT:
      return put<std::uint32_t>(value, 1);
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE:
      return put<std::uint32_t>(value, 64);
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT:
      return put<std::uint32_t>(value, 32);
    case HSA_ISA_INFO_MACHINE_MODELS: {
      bool models[2] = {false, true};
      std::memcpy(value, models, sizeof models);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_ISA_INFO_PROFILES: {
      bool profiles[2] = {true, false};
      std::memcpy(value, profiles, sizeof profiles);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES:
    case HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
      bool modes[3] = {false, false, true};  // DEFAULT, ZERO, NEAR
      std::memcpy(value, modes, sizeof modes);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_ISA_INFO_FAST_F16_OPERATION:
      return put<bool>(value, false);
    case HSA_ISA_INFO_WORKGROUP_MAX_DIM: {
      std::uint16_t dims[3] = {1024, 1024, 1024};
      std::memcpy(value, dims, sizeof dims);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_ISA_INFO_WORKGROUP_MAX_SIZE:
      return put<std::uint32_t>(value, 1024);
    case HSA_ISA_INFO_GRID_MAX_DIM:
      return put(value, hsa_dim3_t{UINT32_MAX, UINT32_MAX, UINT32_MAX});
    case HSA_ISA_INFO_GRID_MAX_SIZE:
      return put<std::uint64_t>(value, UINT64_MAX);
    case HSA_ISA_INFO_FBARRIER_MAX_SIZE:
      return put<std::uint32_t>(value, 32);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

hsa_status_t hsa_init() {
  Runtime& rt = runtime();
  bool first;
  {
    std::lock_guard lock(rt.mutex);
    first = rt.init_count++ == 0;
  }
  // Outside the lock: a tool's OnLoad calls HSA functions.
  if (first) load_tools();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_shut_down() {
  Runtime& rt = runtime();
  std::vector<hsa_queue_t*> queues;
  {
    std::lock_guard lock(rt.mutex);
    if (rt.init_count == 0) return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (--rt.init_count > 0) return HSA_STATUS_SUCCESS;
    for (auto& [queue, state] : rt.queues) queues.push_back(&state->amd->hsa_queue);
  }
  // The last shut-down stops the async handlers (a running one finishes first), tells the tools
  // (so a profiler's last records are in), then releases the queues (their packet processors
  // stop), as ROCr does.
  stop_async_handlers();
  unload_tools();
  destroy_intercept_queues();
  for (hsa_queue_t* queue : queues) destroy_queue(queue);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_status_string(hsa_status_t status, const char** status_string) {
  if (!status_string) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const char* text = nullptr;
  switch (enum_value(status)) {
    case HSA_STATUS_SUCCESS:
      text = "HSA_STATUS_SUCCESS: The function has been executed successfully.";
      break;
    case HSA_STATUS_INFO_BREAK:
      text =
          "HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the "
          "application before completing.";
      break;
    case HSA_STATUS_ERROR:
      text =
          "HSA_STATUS_ERROR: A generic error has occurred (in the wavekit emulator: the function "
          "is not supported).";
      break;
    case HSA_STATUS_ERROR_INVALID_ARGUMENT:
      text =
          "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a "
          "precondition stated in the documentation of the corresponding formal argument.";
      break;
    case HSA_STATUS_ERROR_INVALID_QUEUE_CREATION:
      text = "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.";
      break;
    case HSA_STATUS_ERROR_INVALID_ALLOCATION:
      text = "HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.";
      break;
    case HSA_STATUS_ERROR_INVALID_AGENT:
      text = "HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_REGION:
      text = "HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_SIGNAL:
      text = "HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_QUEUE:
      text = "HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.";
      break;
    case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
      text =
          "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
          "resources.";
      break;
    case HSA_STATUS_ERROR_INVALID_PACKET_FORMAT:
      text = "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.";
      break;
    case HSA_STATUS_ERROR_RESOURCE_FREE:
      text =
          "HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.";
      break;
    case HSA_STATUS_ERROR_NOT_INITIALIZED:
      text =
          "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the "
          "reference count of the HSA runtime is zero.";
      break;
    case HSA_STATUS_ERROR_REFCOUNT_OVERFLOW:
      text =
          "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been "
          "reached.";
      break;
    case HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS:
      text =
          "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a functions are not "
          "compatible.";
      break;
    case HSA_STATUS_ERROR_INVALID_INDEX:
      text = "HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_ISA:
      text = "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_ISA_NAME:
      text = "HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT:
      text = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_EXECUTABLE:
      text = "HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.";
      break;
    case HSA_STATUS_ERROR_FROZEN_EXECUTABLE:
      text = "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.";
      break;
    case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME:
      text = "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.";
      break;
    case HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED:
      text = "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.";
      break;
    case HSA_STATUS_ERROR_VARIABLE_UNDEFINED:
      text = "HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.";
      break;
    case HSA_STATUS_ERROR_EXCEPTION:
      text = "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.";
      break;
    case HSA_STATUS_ERROR_INVALID_CODE_SYMBOL:
      text = "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL:
      text = "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_FILE:
      text = "HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER:
      text = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_CACHE:
      text = "HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_WAVEFRONT:
      text = "HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP:
      text = "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.";
      break;
    case HSA_STATUS_ERROR_INVALID_RUNTIME_STATE:
      text =
          "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configuration "
          "state.";
      break;
    case HSA_STATUS_ERROR_FATAL:
      text =
          "HSA_STATUS_ERROR_FATAL: The queue received an error that may require process "
          "termination.";
      break;
    case HSA_STATUS_ERROR_INVALID_MEMORY_POOL:
      text = "HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.";
      break;
    case HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION:
      text =
          "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond "
          "the largest legal address.";
      break;
    case HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION:
      text =
          "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent executed an instruction not supported "
          "by the agent.";
      break;
    case HSA_STATUS_ERROR_MEMORY_FAULT:
      text =
          "HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an inaccessible address.";
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  *status_string = text;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (enum_value(attribute)) {
    case HSA_SYSTEM_INFO_VERSION_MAJOR:
      return put<std::uint16_t>(value, 1);
    case HSA_SYSTEM_INFO_VERSION_MINOR:
      return put<std::uint16_t>(value, 1);
    case HSA_SYSTEM_INFO_TIMESTAMP:
      return put<std::uint64_t>(value, system_timestamp());
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
      return put<std::uint64_t>(value, 1'000'000'000);
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
      return put<std::uint64_t>(value, UINT64_MAX);
    case HSA_SYSTEM_INFO_ENDIANNESS:
      return put(value, HSA_ENDIANNESS_LITTLE);
    case HSA_SYSTEM_INFO_MACHINE_MODEL:
      return put(value, HSA_MACHINE_MODEL_LARGE);
    case HSA_SYSTEM_INFO_EXTENSIONS: {
      auto* mask = static_cast<std::uint8_t*>(value);  // one bit per extension id
      std::memset(mask, 0, 128);
      mask[HSA_EXTENSION_AMD_LOADER / 8] |= 1u << (HSA_EXTENSION_AMD_LOADER % 8);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_AMD_SYSTEM_INFO_BUILD_VERSION:
      *static_cast<const char**>(value) = "wavekit-emulator";
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED:
      return put<bool>(value, true);
    case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT:
      // As ROCr on a GPU without XNACK: the GPU reaches only memory it was given (allocated,
      // locked), so CLR pins or stages pageable host memory instead of reading it in place,
      // and the emulator's memory map still reports any other access.
      return put<bool>(value, false);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

// The one extension table offered is the AMD loader's, version 1.01 (api_executable.cpp); no
// finalizer, images or profiler tables.
constexpr std::uint16_t kLoaderMinor = 1;

hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t major, uint16_t minor,
                                            bool* result) {
  WAVEKIT_REQUIRE_INIT();
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = extension == HSA_EXTENSION_AMD_LOADER && major == 1 && minor <= kLoaderMinor;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t major,
                                                  uint16_t* minor, bool* result) {
  WAVEKIT_REQUIRE_INIT();
  if (!result || !minor) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = extension == HSA_EXTENSION_AMD_LOADER && major == 1;
  if (*result) *minor = kLoaderMinor;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_extension_supported(uint16_t, hsa_agent_t agent, uint16_t, uint16_t,
                                           bool* result) {
  WAVEKIT_REQUIRE_INIT();
  if (!agent_of(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = false;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_major_extension_supported(uint16_t, hsa_agent_t agent, uint16_t,
                                                 uint16_t* minor, bool* result) {
  WAVEKIT_REQUIRE_INIT();
  if (!agent_of(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!result || !minor) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = false;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data),
                                void* data) {
  WAVEKIT_REQUIRE_INIT();
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  Runtime& rt = runtime();
  for (Agent* agent : {&rt.cpu, &rt.gpu}) {
    hsa_status_t status = callback(hsa_agent_t{reinterpret_cast<std::uint64_t>(agent)}, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent_handle, hsa_agent_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  Agent* agent = agent_of(agent_handle);
  if (!agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const bool gpu = agent->type == HSA_DEVICE_TYPE_GPU;
  GpuFigures gpu_figures = figures(agent->processor);
  switch (enum_value(attribute)) {
    case HSA_AGENT_INFO_NAME:
      return put_string(value, agent->name, 64);
    case HSA_AGENT_INFO_VENDOR_NAME:
      return put_string(value, gpu ? "AMD" : "CPU", 64);
    case HSA_AGENT_INFO_FEATURE:
      return put(value, gpu ? HSA_AGENT_FEATURE_KERNEL_DISPATCH : HSA_AGENT_FEATURE_AGENT_DISPATCH);
    case HSA_AGENT_INFO_MACHINE_MODEL:
      return put(value, HSA_MACHINE_MODEL_LARGE);
    case HSA_AGENT_INFO_PROFILE:
      return put(value, gpu ? HSA_PROFILE_BASE : HSA_PROFILE_FULL);
    case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
      return put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
    case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
      return put<std::uint32_t>(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
    case HSA_AGENT_INFO_FAST_F16_OPERATION:
      return put<bool>(value, false);
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
      return put<std::uint32_t>(value, gpu ? 64 : 0);
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
      std::uint16_t dims[3] = {1024, 1024, 1024};
      if (!gpu) std::memset(dims, 0, sizeof dims);
      std::memcpy(value, dims, sizeof dims);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
      return put<std::uint32_t>(value, gpu ? 1024 : 0);
    case HSA_AGENT_INFO_GRID_MAX_DIM:
      return put(value, gpu ? hsa_dim3_t{UINT32_MAX, UINT32_MAX, UINT32_MAX} : hsa_dim3_t{0, 0, 0});
    case HSA_AGENT_INFO_GRID_MAX_SIZE:
      return put<std::uint32_t>(value, gpu ? UINT32_MAX : 0);
    case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
      return put<std::uint32_t>(value, gpu ? 32 : 0);
    case HSA_AGENT_INFO_QUEUES_MAX:
      return put<std::uint32_t>(value, gpu ? 128 : 0);
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      return put<std::uint32_t>(value, gpu ? 64 : 0);
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      return put<std::uint32_t>(value, gpu ? 131072 : 0);
    case HSA_AGENT_INFO_QUEUE_TYPE:
      return put(value, HSA_QUEUE_TYPE_MULTI);
    case HSA_AGENT_INFO_NODE:
      return put<std::uint32_t>(value, agent->node);
    case HSA_AGENT_INFO_DEVICE:
      return put(value, agent->type);
    case HSA_AGENT_INFO_CACHE_SIZE: {
      std::uint32_t sizes[4] = {16 * 1024, 8 * 1024 * 1024, 0, 0};
      std::memcpy(value, sizes, sizeof sizes);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_AGENT_INFO_ISA:
      if (!gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
      return put(value, hsa_isa_t{reinterpret_cast<std::uint64_t>(&runtime().isa)});
    case HSA_AGENT_INFO_EXTENSIONS:
      std::memset(value, 0, 128);
      return HSA_STATUS_SUCCESS;
    case HSA_AGENT_INFO_VERSION_MAJOR:
      return put<std::uint16_t>(value, 1);
    case HSA_AGENT_INFO_VERSION_MINOR:
      return put<std::uint16_t>(value, 1);
    case HSA_AMD_AGENT_INFO_CHIP_ID:
      return put<std::uint32_t>(value, gpu ? gpu_figures.chip_id : 0);
    case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
      return put<std::uint32_t>(value, gpu ? 128 : 64);
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      return put<std::uint32_t>(
          value, gpu ? gpu_figures.compute_units : std::thread::hardware_concurrency());
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
      return put<std::uint32_t>(value, gpu ? gpu_figures.clock_mhz : 2000);
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
      return put<std::uint32_t>(value, agent->node);
    case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS:
      return put<std::uint32_t>(value, gpu ? 4 : 0);
    case HSA_AMD_AGENT_INFO_BDFID:
      return put<std::uint32_t>(value, 0);
    case HSA_AMD_AGENT_INFO_MEMORY_WIDTH:
      return put<std::uint32_t>(value, gpu ? 4096 : 64);
    case HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY:
      return put<std::uint32_t>(value, gpu ? 1600 : 3200);
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      return put_string(value, gpu ? gpu_figures.product : agent->name, 64);
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
      return put<std::uint32_t>(value, gpu ? 32 : 0);
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
      return put<std::uint32_t>(value, gpu ? 4 : 0);
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES:
      return put<std::uint32_t>(value, gpu ? 8 : 0);
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
      return put<std::uint32_t>(value, gpu ? 1 : 0);
    case HSA_AMD_AGENT_INFO_DOMAIN:
      return put<std::uint32_t>(value, 0);
    case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES:
      return put<bool>(value, false);
    case HSA_AMD_AGENT_INFO_UUID:
      return put_string(value, gpu ? "GPU-wavekit0emulator" : "CPU-XX", 21);
    case HSA_AMD_AGENT_INFO_ASIC_REVISION:
      return put<std::uint32_t>(value, 0);
    case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS:
      return put<bool>(value, true);
    case HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT:
      return put<std::uint32_t>(value, gpu ? gpu_figures.compute_units : 0);
    case HSA_AMD_AGENT_INFO_HDP_FLUSH: {
      // ROCr gives the GPU's registers (and nulls for a CPU); CLR requires the query to succeed.
      std::uint32_t* registers = runtime().hdp_flush_registers;
      return put(value, gpu ? hsa_amd_hdp_flush_t{&registers[0], &registers[1]}
                            : hsa_amd_hdp_flush_t{nullptr, nullptr});
    }
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent_handle,
                                    hsa_status_t (*callback)(hsa_isa_t isa, void* data),
                                    void* data) {
  WAVEKIT_REQUIRE_INIT();
  Agent* agent = agent_of(agent_handle);
  if (!agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (agent->type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_SUCCESS;
  return callback(hsa_isa_t{reinterpret_cast<std::uint64_t>(&runtime().isa)}, data);
}

hsa_status_t hsa_isa_from_name(const char* name, hsa_isa_t* isa) {
  WAVEKIT_REQUIRE_INIT();
  if (!name || !isa) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  Runtime& rt = runtime();
  // Target features (":xnack-", ":sramecc+") do not change what the emulator runs.
  std::string requested = name;
  if (requested.substr(0, requested.find(':')) != rt.isa.name)
    return HSA_STATUS_ERROR_INVALID_ISA_NAME;
  isa->handle = reinterpret_cast<std::uint64_t>(&rt.isa);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  if (isa.handle != reinterpret_cast<std::uint64_t>(&runtime().isa))
    return HSA_STATUS_ERROR_INVALID_ISA;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return isa_info(runtime().isa, attribute, value);
}

hsa_status_t hsa_isa_get_info(hsa_isa_t isa, hsa_isa_info_t attribute, uint32_t index,
                              void* value) {
  if (index != 0) return HSA_STATUS_ERROR_INVALID_INDEX;
  return hsa_isa_get_info_alt(isa, attribute, value);
}

hsa_status_t hsa_isa_compatible(hsa_isa_t code_object_isa, hsa_isa_t agent_isa, bool* result) {
  WAVEKIT_REQUIRE_INIT();
  auto expected = reinterpret_cast<std::uint64_t>(&runtime().isa);
  if (code_object_isa.handle != expected || agent_isa.handle != expected)
    return HSA_STATUS_ERROR_INVALID_ISA;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = true;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent_handle,
                                       hsa_status_t (*callback)(hsa_region_t region, void* data),
                                       void* data) {
  WAVEKIT_REQUIRE_INIT();
  Agent* agent = agent_of(agent_handle);
  if (!agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (Region* region : agent->regions) {
    hsa_status_t status = callback(hsa_region_t{reinterpret_cast<std::uint64_t>(region)}, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_region_get_info(hsa_region_t region_handle, hsa_region_info_t attribute,
                                 void* value) {
  WAVEKIT_REQUIRE_INIT();
  Region* region = region_of(region_handle.handle);
  if (!region) return HSA_STATUS_ERROR_INVALID_REGION;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (enum_value(attribute)) {
    case HSA_REGION_INFO_SEGMENT:
      return put(value, region->segment);
    case HSA_REGION_INFO_GLOBAL_FLAGS:
      return put<std::uint32_t>(value, region->global_flags);
    case HSA_REGION_INFO_SIZE:
    case HSA_REGION_INFO_ALLOC_MAX_SIZE:
      return put<std::size_t>(value, physical_memory());
    case HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE:
      return put<std::uint32_t>(value, 0);
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
      return put<bool>(value, true);
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
      return put<std::size_t>(value, kAllocationGranule);
    case HSA_AMD_REGION_INFO_HOST_ACCESSIBLE:
      return put<bool>(value, true);
    case HSA_AMD_REGION_INFO_BASE:
      return put<void*>(value, nullptr);
    case HSA_AMD_REGION_INFO_BUS_WIDTH:
      return put<std::uint32_t>(value, 64);
    case HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY:
      return put<std::uint32_t>(value, 1600);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent_handle,
                                                hsa_status_t (*callback)(hsa_amd_memory_pool_t pool,
                                                                         void* data),
                                                void* data) {
  WAVEKIT_REQUIRE_INIT();
  Agent* agent = agent_of(agent_handle);
  if (!agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (Region* pool : agent->pools) {
    hsa_status_t status =
        callback(hsa_amd_memory_pool_t{reinterpret_cast<std::uint64_t>(pool)}, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool_handle,
                                          hsa_amd_memory_pool_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  Region* pool = region_of(pool_handle.handle);
  if (!pool) return static_cast<hsa_status_t>(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (pool->segment == HSA_REGION_SEGMENT_GROUP) {
    // As ROCr reports the LDS pool: its size per workgroup, no runtime allocation.
    switch (enum_value(attribute)) {
      case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
        return put(value, HSA_AMD_SEGMENT_GROUP);
      case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
        return put<std::uint32_t>(value, 0);
      case HSA_AMD_MEMORY_POOL_INFO_SIZE:
        return put<std::size_t>(value, kGroupSegmentSize);
      case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
      case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
        return put<bool>(value, false);
      case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
      case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
      case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
        return put<std::size_t>(value, 0);
    }
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  switch (enum_value(attribute)) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
      return put(value, HSA_AMD_SEGMENT_GLOBAL);
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
      return put(value, pool_flags(*pool));
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
      return put<std::size_t>(value, physical_memory());
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
      return put<bool>(value, true);
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
      return put<std::size_t>(value, kAllocationGranule);
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
      return put<bool>(value, pool->owner->type == HSA_DEVICE_TYPE_CPU);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent_handle,
                                                hsa_amd_memory_pool_t pool_handle,
                                                hsa_amd_agent_memory_pool_info_t attribute,
                                                void* value) {
  WAVEKIT_REQUIRE_INIT();
  Agent* agent = agent_of(agent_handle);
  if (!agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  Region* pool = region_of(pool_handle.handle);
  if (!pool) return static_cast<hsa_status_t>(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (enum_value(attribute)) {
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS:
      if (pool->segment == HSA_REGION_SEGMENT_GROUP)
        return put(value, pool->owner == agent ? HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
                                               : HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED);
      // As on a discrete GPU: system pools are open to all, device memory to its own GPU and
      // to others only after hsa_amd_agents_allow_access (which the emulator need not enforce).
      return put(value, pool->owner == agent || pool->owner->type == HSA_DEVICE_TYPE_CPU
                            ? HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
                            : HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS:
      return put<std::uint32_t>(value, pool->owner == agent ? 0 : 1);
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO: {
      // One hop, as ROCr describes a PCIe link between a GPU and system memory (nothing when
      // the agent owns the pool). Atomics and coherence are supported: the memory is the host's.
      hsa_amd_memory_pool_link_info_t link{};
      if (pool->owner != agent) {
        link.atomic_support_32bit = true;
        link.atomic_support_64bit = true;
        link.coherent_support = true;
        link.link_type = HSA_AMD_LINK_INFO_TYPE_PCIE;
        link.numa_distance = 20;
      }
      return put(value, link);
    }
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool_handle, size_t size,
                                          uint32_t /*flags: placement hints*/, void** pointer) {
  WAVEKIT_REQUIRE_INIT();
  Region* pool = region_of(pool_handle.handle);
  if (!pool) return static_cast<hsa_status_t>(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!pointer || size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (pool->segment == HSA_REGION_SEGMENT_GROUP) return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  *pointer = allocate(size, kAllocationGranule, "hsa_amd_memory_pool_allocate");
  if (!*pointer) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  remember_pool(*pointer, pool);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_free(void* pointer) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer) return HSA_STATUS_SUCCESS;
  forget_pool(pointer);
  return release(pointer) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t* agents,
                                         const uint32_t*, const void* pointer) {
  WAVEKIT_REQUIRE_INIT();
  if (num_agents == 0 || !agents || !pointer) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_agents; ++i)
    if (!agent_of(agents[i])) return HSA_STATUS_ERROR_INVALID_AGENT;
  return HSA_STATUS_SUCCESS;  // every allocation is host memory the emulated GPU already reaches
}

hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void** pointer) {
  WAVEKIT_REQUIRE_INIT();
  Region* pool = region_of(region.handle);
  if (!pool) return HSA_STATUS_ERROR_INVALID_REGION;
  if (!pointer || size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *pointer = allocate(size, kAllocationGranule, "hsa_memory_allocate");
  if (!*pointer) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  remember_pool(*pointer, pool);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_free(void* pointer) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer) return HSA_STATUS_SUCCESS;
  forget_pool(pointer);
  return release(pointer) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_memory_copy(void* destination, const void* source, size_t size) {
  WAVEKIT_REQUIRE_INIT();
  if (!destination || !source) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::memmove(host_view(destination), host_view(source), size);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_fill(void* pointer, uint32_t value, size_t count) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer || reinterpret_cast<std::uintptr_t>(pointer) % 4 != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto* words = static_cast<std::uint32_t*>(host_view(pointer));
  for (size_t i = 0; i < count; ++i) words[i] = value;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_register(void* pointer, size_t size) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer && size != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_SUCCESS;  // registration is a performance hint in HSA
}

hsa_status_t hsa_memory_deregister(void*, size_t) {
  WAVEKIT_REQUIRE_INIT();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_assign_agent(void* pointer, hsa_agent_t agent, hsa_access_permission_t) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return agent_of(agent) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_AGENT;
}

hsa_status_t hsa_amd_memory_lock(void* host_pointer, size_t size, hsa_agent_t* agents,
                                 int num_agents, void** agent_pointer) {
  WAVEKIT_REQUIRE_INIT();
  if (!host_pointer || size == 0 || !agent_pointer || (num_agents > 0 && !agents))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  Runtime& rt = runtime();
  std::lock_guard lock(rt.locked_mutex);
  auto address = reinterpret_cast<std::uint64_t>(host_pointer);
  if (auto it = rt.locked.find(address); it != rt.locked.end()) {
    // Locked again (CLR pins a host buffer once per transfer): counted, as ROCr counts.
    if (size > it->second.size) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    ++it->second.count;
    *agent_pointer = reinterpret_cast<void*>(it->second.agent_address(address));
    return HSA_STATUS_SUCCESS;
  }
  // Memory the emulated GPU already reaches (a pool allocation) needs no registration and is
  // reached at its own address.
  Runtime::Locked locked{size, 1, false};
  if (!rt.memory.contains(address, size, wavekit::emu::MemoryMap::kReadWrite)) {
    const std::uint64_t first = address / kPage * kPage;
    const std::uint64_t span = (address + size + kPage - 1) / kPage * kPage - first;
    void* alias =
        mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (alias == MAP_FAILED) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    locked.alias = reinterpret_cast<std::uint64_t>(alias);
    locked.alias_size = span;
    rt.memory.add_translated(locked.alias, reinterpret_cast<const void*>(first), span,
                             wavekit::emu::MemoryMap::kReadWrite, "hsa_amd_memory_lock");
    // The host address stays reachable too: a kernel given the host pointer of registered
    // memory reads it as a GPU with system-wide access would.
    lock_pages(address, size);
    locked.registered = true;
  }
  *agent_pointer = reinterpret_cast<void*>(locked.agent_address(address));
  rt.locked[address] = locked;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_unlock(void* host_pointer) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.locked_mutex);
  auto address = reinterpret_cast<std::uint64_t>(host_pointer);
  auto it = rt.locked.find(address);
  // ROCr: unlocking memory that is not locked is not an error.
  if (it == rt.locked.end()) return HSA_STATUS_SUCCESS;
  if (--it->second.count > 0) return HSA_STATUS_SUCCESS;
  if (it->second.registered) unlock_pages(address, it->second.size);
  if (it->second.alias) {
    rt.memory.remove(reinterpret_cast<const void*>(it->second.alias));
    munmap(reinterpret_cast<void*>(it->second.alias), it->second.alias_size);
  }
  rt.locked.erase(it);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_lock_to_pool(void* host_pointer, size_t size, hsa_agent_t* agents,
                                         int num_agents, hsa_amd_memory_pool_t pool, uint32_t flags,
                                         void** agent_pointer) {
  WAVEKIT_REQUIRE_INIT();
  Region* region = region_of(pool.handle);
  if (!region || region->owner->type != HSA_DEVICE_TYPE_CPU)
    return static_cast<hsa_status_t>(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (flags != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return hsa_amd_memory_lock(host_pointer, size, agents, num_agents, agent_pointer);
}

hsa_status_t hsa_amd_pointer_info(const void* pointer, hsa_amd_pointer_info_t* info,
                                  void* (*alloc)(size_t), uint32_t* num_agents_accessible,
                                  hsa_agent_t** accessible) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer || !info || info->size < offsetof(hsa_amd_pointer_info_t, userData))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (num_agents_accessible && (!accessible || !alloc)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  Runtime& rt = runtime();
  const auto address = reinterpret_cast<std::uint64_t>(pointer);
  hsa_amd_pointer_info_t result{};
  result.size = std::min<std::uint32_t>(info->size, sizeof result);
  result.type = HSA_EXT_POINTER_TYPE_UNKNOWN;
  {
    std::lock_guard lock(rt.mutex);
    auto it = rt.allocations.upper_bound(address);
    if (it != rt.allocations.begin() && address < std::prev(it)->first + std::prev(it)->second) {
      --it;
      result.type = HSA_EXT_POINTER_TYPE_HSA;
      result.agentBaseAddress = result.hostBaseAddress = reinterpret_cast<void*>(it->first);
      result.sizeInBytes = it->second;
      auto pool = rt.allocation_pools.find(it->first);
      const Region* region =
          pool == rt.allocation_pools.end() ? &rt.system_fine_grained : pool->second;
      result.agentOwner = hsa_agent_t{reinterpret_cast<std::uint64_t>(region->owner)};
      result.global_flags = pool_flags(*region);
    }
  }
  if (result.type == HSA_EXT_POINTER_TYPE_UNKNOWN) {
    std::lock_guard lock(rt.locked_mutex);
    // ROCr answers for the host address and for the agent address of locked memory.
    auto it = std::find_if(rt.locked.begin(), rt.locked.end(), [&](const auto& entry) {
      const std::uint64_t host = entry.first, agent = entry.second.agent_address(host);
      return (address >= host && address < host + entry.second.size) ||
             (address >= agent && address < agent + entry.second.size);
    });
    if (it != rt.locked.end()) {
      result.type = HSA_EXT_POINTER_TYPE_LOCKED;
      result.hostBaseAddress = reinterpret_cast<void*>(it->first);
      result.agentBaseAddress = reinterpret_cast<void*>(it->second.agent_address(it->first));
      result.sizeInBytes = it->second.size;
      result.agentOwner = hsa_agent_t{reinterpret_cast<std::uint64_t>(&rt.cpu)};
      result.global_flags = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    }
  }
  std::memcpy(info, &result, result.size);
  if (num_agents_accessible) {
    // Every allocation here is reachable by both agents.
    *num_agents_accessible = 0;
    *accessible = nullptr;
    if (result.type != HSA_EXT_POINTER_TYPE_UNKNOWN) {
      *accessible = static_cast<hsa_agent_t*>(alloc(2 * sizeof(hsa_agent_t)));
      if (!*accessible) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      (*accessible)[0] = hsa_agent_t{reinterpret_cast<std::uint64_t>(&rt.cpu)};
      (*accessible)[1] = hsa_agent_t{reinterpret_cast<std::uint64_t>(&rt.gpu)};
      *num_agents_accessible = 2;
    }
  }
  return HSA_STATUS_SUCCESS;
}

// Shared virtual memory (HIP's managed memory on an HMM system: CLR maps the memory itself,
// then gives it to the GPU with hsa_amd_svm_attributes_set). The first setting of a range makes
// it reachable by the emulated GPU, registered as locked pages are (so a later allocation at
// the same addresses, after the application freed it, takes its place).
hsa_status_t hsa_amd_svm_attributes_set(void* pointer, size_t size,
                                        hsa_amd_svm_attribute_pair_t* attributes,
                                        size_t attribute_count) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer || size == 0 || (attribute_count > 0 && !attributes))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < attribute_count; ++i) {
    const auto attribute = attributes[i].attribute;
    if (attribute == HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION ||
        attribute == HSA_AMD_SVM_ATTRIB_ACCESS_QUERY ||
        attribute > HSA_AMD_SVM_ATTRIB_ACCESS_QUERY ||
        (attribute > HSA_AMD_SVM_ATTRIB_READ_MOSTLY &&
         attribute < HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE))
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  Runtime& rt = runtime();
  const auto address = reinterpret_cast<std::uint64_t>(pointer);
  std::lock_guard lock(rt.locked_mutex);
  if (!rt.memory.contains(address, size, wavekit::emu::MemoryMap::kReadWrite))
    lock_pages(address, size);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_svm_attributes_get(void* pointer, size_t size,
                                        hsa_amd_svm_attribute_pair_t* attributes,
                                        size_t attribute_count) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer || size == 0 || (attribute_count > 0 && !attributes))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // One memory, coherent, reachable in place by every agent; no preferred or prefetch location.
  for (size_t i = 0; i < attribute_count; ++i) {
    switch (attributes[i].attribute) {
      case HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG:
        attributes[i].value = HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED;
        break;
      case HSA_AMD_SVM_ATTRIB_READ_ONLY:
      case HSA_AMD_SVM_ATTRIB_HIVE_LOCAL:
      case HSA_AMD_SVM_ATTRIB_READ_MOSTLY:
      case HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION:
      case HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION:
        attributes[i].value = 0;
        break;
      case HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY:
        attributes[i].value = 9;  // 2^9 pages, ROCr's default
        break;
      case HSA_AMD_SVM_ATTRIB_ACCESS_QUERY:
        if (!agent_of(hsa_agent_t{attributes[i].value})) return HSA_STATUS_ERROR_INVALID_AGENT;
        attributes[i].attribute = HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE;
        break;
      default:
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_svm_prefetch_async(void* pointer, size_t size, hsa_agent_t agent,
                                        uint32_t num_dep_signals, const hsa_signal_t* dep_signals,
                                        hsa_signal_t completion_signal) {
  WAVEKIT_REQUIRE_INIT();
  if (!pointer || size == 0 || (num_dep_signals > 0 && !dep_signals))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!agent_of(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  // Nothing moves: the memory is the host's. Dependencies are waited for, then completion.
  for (uint32_t i = 0; i < num_dep_signals; ++i)
    if (dep_signals[i].handle)
      hsa_signal_wait_scacquire(dep_signals[i], HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                HSA_WAIT_STATE_BLOCKED);
  if (completion_signal.handle) hsa_signal_subtract_screlease(completion_signal, 1);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_coherency_get_type(hsa_agent_t agent, hsa_amd_coherency_type_t* type) {
  WAVEKIT_REQUIRE_INIT();
  if (!agent_of(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!type) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *type = HSA_AMD_COHERENCY_TYPE_COHERENT;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_coherency_set_type(hsa_agent_t agent, hsa_amd_coherency_type_t) {
  WAVEKIT_REQUIRE_INIT();
  return agent_of(agent) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_AGENT;
}

hsa_status_t hsa_amd_memory_async_copy(void* destination, hsa_agent_t destination_agent,
                                       const void* source, hsa_agent_t source_agent, size_t size,
                                       uint32_t num_dep_signals, const hsa_signal_t* dep_signals,
                                       hsa_signal_t completion_signal) {
  WAVEKIT_REQUIRE_INIT();
  if (!destination || !source || (num_dep_signals > 0 && !dep_signals))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!agent_of(destination_agent) || !agent_of(source_agent))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  // The copy engine is the calling thread: wait for the dependencies, copy, signal.
  for (uint32_t i = 0; i < num_dep_signals; ++i)
    if (dep_signals[i].handle)
      hsa_signal_wait_scacquire(dep_signals[i], HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                HSA_WAIT_STATE_BLOCKED);
  const std::uint64_t start = system_timestamp();
  std::memmove(host_view(destination), host_view(source), size);
  if (completion_signal.handle) {
    // The copy's times, for hsa_amd_profiling_get_async_copy_time (as the copy engine writes them).
    amd_signal_t* signal = signal_of(completion_signal);
    signal->start_ts = start;
    signal->end_ts = system_timestamp();
    hsa_signal_subtract_screlease(completion_signal, 1);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_async_copy_enable(bool) {
  WAVEKIT_REQUIRE_INIT();
  return HSA_STATUS_SUCCESS;  // copies always record their times
}

hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal,
                                                   hsa_amd_profiling_async_copy_time_t* time) {
  WAVEKIT_REQUIRE_INIT();
  if (!signal.handle) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!time) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const amd_signal_t* amd = signal_of(signal);
  time->start = amd->start_ts;
  time->end = amd->end_ts;
  return HSA_STATUS_SUCCESS;
}

}  // extern "C"
