#include "wavekit/rewrite/launcher.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>

#include "wavekit/hostcall/services.h"
#include "wavekit/rewrite/tools.h"

namespace wavekit::rewrite {

// One ring for every executable the launcher binds. Memory layout, host-coherent and reachable
// by the GPUs: [ticket line: 64][descriptor: 64][slots].
struct Launcher::HostcallService {
  void* memory = nullptr;
  std::unique_ptr<hostcall::RingBuffer> ring;
  std::unique_ptr<hostcall::FileEgress> egress;
  std::unique_ptr<hostcall::Runtime> runtime;  // last: stops before the egress goes
  std::uint64_t descriptor_address() const { return reinterpret_cast<std::uint64_t>(memory) + 64; }
};
static_assert(sizeof(hostcall::protocol::Ring) <= 64);

Launcher::Launcher(const HsaFunctions& hsa, LauncherOptions options)
    : hsa_(hsa), options_(std::move(options)) {}

Launcher::~Launcher() {
  if (!hostcall_) return;
  void* memory = hostcall_->memory;
  hostcall_.reset();  // joins the service threads, which read the ring
  hsa_.hsa_amd_memory_pool_free(memory);
}

hsa_status_t Launcher::load_probe_library(hsa_executable_t executable, hsa_agent_t agent,
                                          std::span<const std::uint8_t> library) {
  if (!probe_libraries_[executable.handle].insert(sha256_hex(library)).second)
    return HSA_STATUS_SUCCESS;
  hsa_code_object_reader_t reader{};
  hsa_status_t status =
      hsa_.hsa_code_object_reader_create_from_memory(library.data(), library.size(), &reader);
  if (status == HSA_STATUS_SUCCESS)
    status =
        hsa_.hsa_executable_load_agent_code_object(executable, agent, reader, nullptr, nullptr);
  return status;
}

std::string Launcher::bind(hsa_executable_t executable, hsa_agent_t agent, bool needs_hostcall) {
  hsa_executable_symbol_t symbol{};
  const bool found =
      hsa_.hsa_executable_get_symbol_by_name(executable, hostcall::kRingSymbol, &agent, &symbol) ==
          HSA_STATUS_SUCCESS ||
      hsa_.hsa_executable_get_symbol_by_name(executable, hostcall::kRingSymbol, nullptr, &symbol) ==
          HSA_STATUS_SUCCESS;
  if (!found)
    return needs_hostcall ? std::string(
                                "the instrumented object needs the hostcall service but no "
                                "loaded object defines ") +
                                hostcall::kRingSymbol
                          : "";
  hsa_symbol_kind_t kind{};
  std::uint64_t address = 0;
  std::uint32_t size = 0;
  if (hsa_.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) !=
          HSA_STATUS_SUCCESS ||
      kind != HSA_SYMBOL_KIND_VARIABLE ||
      hsa_.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                          &address) != HSA_STATUS_SUCCESS ||
      hsa_.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE,
                                          &size) != HSA_STATUS_SUCCESS ||
      !address || (size != 0 && size != 8))
    return std::string(hostcall::kRingSymbol) + " is not an 8-byte variable";
  if (std::string failure = start_hostcall(agent); !failure.empty()) return failure;
  // The variable may live in device memory: copy through the runtime, as hipMemcpyToSymbol does.
  const std::uint64_t descriptor = hostcall_->descriptor_address();
  if (hsa_.hsa_memory_copy(reinterpret_cast<void*>(address), &descriptor, 8) != HSA_STATUS_SUCCESS)
    return std::string("could not store the ring's address in ") + hostcall::kRingSymbol;
  return "";
}

// Starts the service on first use and lets `gpu` reach the ring; returns why it could not.
std::string Launcher::start_hostcall(hsa_agent_t gpu) {
  if (!hostcall_) {
    const hostcall::RingConfig config = hostcall::kProbeRingConfig;
    const std::uint64_t bytes = 128 + hostcall::RingBuffer::bytes_for(config);
    if (!system_pool_.handle) find_pools();
    void* memory = nullptr;
    if (!system_pool_.handle ||
        hsa_.hsa_amd_memory_pool_allocate(system_pool_, bytes, 0, &memory) != HSA_STATUS_SUCCESS)
      return "could not allocate " + std::to_string(bytes) + " bytes for the hostcall ring";
    auto service = std::make_unique<HostcallService>();
    service->memory = memory;
    std::memset(memory, 0, bytes);
    auto* base = static_cast<std::uint8_t*>(memory);
    // System memory has the same address on the host and the GPUs.
    try {
      service->ring = std::make_unique<hostcall::RingBuffer>(
          config, base + 128, reinterpret_cast<std::uint64_t>(base + 128),
          reinterpret_cast<std::uint64_t>(base));
      std::memcpy(base + 64, &service->ring->descriptor(), sizeof(hostcall::protocol::Ring));
      service->runtime = std::make_unique<hostcall::Runtime>(
          *service->ring, hostcall::RuntimeOptions{.service_threads = 1});
      hostcall::register_print_service(*service->runtime);
      if (!options_.file_root.empty()) {
        service->egress = std::make_unique<hostcall::FileEgress>(options_.file_root);
        service->egress->register_services(*service->runtime);
      }
      service->runtime->start();
    } catch (const std::exception& error) {
      service.reset();
      hsa_.hsa_amd_memory_pool_free(memory);
      return std::string("could not start the hostcall service: ") + error.what();
    }
    // On the emulator: the waves' writes into the ring are not the program's progress, and
    // waves waiting on the service wait on the host, not on each other.
    mark_tool_memory(memory);
    if (hsa_.wavekit_emu_set_outside_progress)
      hsa_.wavekit_emu_set_outside_progress(
          [](void* runtime) {
            return static_cast<hostcall::Runtime*>(runtime)->made_progress() ? 1 : 0;
          },
          service->runtime.get());
    hostcall_ = std::move(service);
  }
  if (hsa_.hsa_amd_agents_allow_access(1, &gpu, nullptr, hostcall_->memory) != HSA_STATUS_SUCCESS)
    return "could not grant the GPU access to the hostcall ring";
  return "";
}

PreparedDispatch Launcher::prepare(const InstrumentedKernel& kernel, hsa_agent_t agent,
                                   hsa_kernel_dispatch_packet_t& packet,
                                   std::optional<std::uint64_t> copy_kernarg_bytes) {
  PreparedDispatch dispatch;
  dispatch.kernel = &kernel;
  dispatch.kernarg = reinterpret_cast<std::uint64_t>(packet.kernarg_address);
  const std::uint32_t grid[3] = {packet.grid_size_x, packet.grid_size_y, packet.grid_size_z};
  const std::uint16_t workgroup[3] = {packet.workgroup_size_x, packet.workgroup_size_y,
                                      packet.workgroup_size_z};
  try {
    dispatch.arena_bytes = arena_size(kernel, grid, workgroup);
  } catch (const std::exception& error) {
    dispatch.failure = error.what();
    return dispatch;
  }
  void* memory = nullptr;
  if (!options_.fail_arena_allocation) {
    if (!system_pool_.handle) find_pools();
    if (system_pool_.handle &&
        hsa_.hsa_amd_memory_pool_allocate(system_pool_, dispatch.arena_bytes, 0, &memory) ==
            HSA_STATUS_SUCCESS &&
        hsa_.hsa_amd_agents_allow_access(1, &agent, nullptr, memory) != HSA_STATUS_SUCCESS) {
      hsa_.hsa_amd_memory_pool_free(memory);
      memory = nullptr;
    }
  }
  if (!memory) {
    dispatch.failure =
        "could not allocate " + std::to_string(dispatch.arena_bytes) + " bytes of per-wave memory";
    return dispatch;
  }
  void* kernarg = packet.kernarg_address;
  if (copy_kernarg_bytes) {
    const std::uint64_t bytes = std::max(*copy_kernarg_bytes, kernel.arena_arg_offset + 8);
    kernarg = nullptr;
    const hsa_amd_memory_pool_t pool = kernarg_pool_.handle ? kernarg_pool_ : system_pool_;
    if (hsa_.hsa_amd_memory_pool_allocate(pool, bytes, 0, &kernarg) != HSA_STATUS_SUCCESS ||
        hsa_.hsa_amd_agents_allow_access(1, &agent, nullptr, kernarg) != HSA_STATUS_SUCCESS) {
      if (kernarg) hsa_.hsa_amd_memory_pool_free(kernarg);
      hsa_.hsa_amd_memory_pool_free(memory);
      dispatch.failure =
          "could not allocate a kernarg segment of " + std::to_string(bytes) + " bytes";
      return dispatch;
    }
    std::memset(kernarg, 0, bytes);
    if (*copy_kernarg_bytes) std::memcpy(kernarg, packet.kernarg_address, *copy_kernarg_bytes);
    dispatch.own_kernarg = kernarg;
    dispatch.kernarg = reinterpret_cast<std::uint64_t>(kernarg);
    packet.kernarg_address = kernarg;
  }
  mark_tool_memory(memory);
  std::memset(memory, 0, dispatch.arena_bytes);
  fill_arena_header(std::span(static_cast<std::uint8_t*>(memory), dispatch.arena_bytes), kernel,
                    grid, workgroup);
  std::memcpy(static_cast<std::uint8_t*>(kernarg) + kernel.arena_arg_offset, &memory,
              sizeof memory);
  dispatch.arena = memory;
  return dispatch;
}

CompletedDispatch Launcher::complete(PreparedDispatch& dispatch,
                                     const std::string& files_destination) {
  CompletedDispatch completed;
  try {
    completed.report = tool_report(
        options_.tool, *dispatch.kernel,
        std::span(static_cast<const std::uint8_t*>(dispatch.arena), dispatch.arena_bytes));
    if (!files_destination.empty() && tool_writes_files(options_.tool)) {
      // The probes wrote the files during the dispatch (blocking closes: all are closed by
      // now), under a name only the dispatch's kernarg segment gave them.
      const std::filesystem::path written =
          std::filesystem::path(options_.file_root) / tool_files_subdirectory(dispatch.kernarg);
      std::filesystem::remove_all(files_destination);
      if (std::filesystem::exists(written))
        std::filesystem::rename(written, files_destination);
      else
        std::filesystem::create_directories(files_destination);
    }
  } catch (const std::exception& error) {
    completed.error = error.what();
  }
  hsa_.hsa_amd_memory_pool_free(dispatch.arena);
  dispatch.arena = nullptr;
  if (dispatch.own_kernarg) hsa_.hsa_amd_memory_pool_free(dispatch.own_kernarg);
  dispatch.own_kernarg = nullptr;
  return completed;
}

std::optional<hostcall::Statistics> Launcher::stop_hostcall() {
  if (!hostcall_) return std::nullopt;
  hostcall_->runtime->stop();  // services every request already published
  return hostcall_->runtime->statistics();
}

bool Launcher::abandon_hostcall_after_fork() {
  return hostcall_.release() != nullptr;  // its threads were the parent's
}

// On the emulated runtime: probes write their memory on every pass of a loop that may be
// stuck; those writes must not hide a deadlock from the emulator's no-progress report.
void Launcher::mark_tool_memory(void* memory) const {
  if (hsa_.wavekit_emu_mark_tool_memory) hsa_.wavekit_emu_mark_tool_memory(memory);
}

// Host-coherent memory the GPU can reach: a fine-grained global pool of a CPU agent.
void Launcher::find_pools() {
  struct Search {
    const HsaFunctions* hsa;
    hsa_amd_memory_pool_t* pool;
    hsa_amd_memory_pool_t* kernarg_pool;
  } search{&hsa_, &system_pool_, &kernarg_pool_};
  hsa_.hsa_iterate_agents(
      [](hsa_agent_t agent, void* data) {
        const Search& search = *static_cast<Search*>(data);
        hsa_device_type_t type{};
        search.hsa->hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
        if (type != HSA_DEVICE_TYPE_CPU) return HSA_STATUS_SUCCESS;
        return search.hsa->hsa_amd_agent_iterate_memory_pools(
            agent,
            [](hsa_amd_memory_pool_t pool, void* data) {
              const Search& search = *static_cast<Search*>(data);
              hsa_amd_segment_t segment{};
              std::uint32_t flags = 0;
              bool allocatable = false;
              search.hsa->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                                       &segment);
              search.hsa->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                                                       &flags);
              search.hsa->hsa_amd_memory_pool_get_info(
                  pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allocatable);
              if (segment != HSA_AMD_SEGMENT_GLOBAL || !allocatable) return HSA_STATUS_SUCCESS;
              if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) &&
                  !search.kernarg_pool->handle)
                *search.kernarg_pool = pool;
              if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !search.pool->handle)
                *search.pool = pool;
              return search.pool->handle && search.kernarg_pool->handle ? HSA_STATUS_INFO_BREAK
                                                                        : HSA_STATUS_SUCCESS;
            },
            data);
      },
      &search);
}

}  // namespace wavekit::rewrite
