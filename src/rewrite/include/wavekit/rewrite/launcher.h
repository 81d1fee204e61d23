// The launcher of instrumented dispatches: what docs/rewrite.md, "What a launcher does", asks of
// whoever runs a rewritten object, written once against the HSA API. It binds an executable
// (the probe library loaded before freezing; the hostcall ring stored in the probes'
// `wavekit_hostcall_ring` after it, its service started on first use), prepares a dispatch (the
// per-wave arena allocated from host-coherent memory, its header filled, its address written
// into the packet's kernarg segment) and completes it (the tool's report from the arena, a
// file-writing tool's files moved out of the dispatch's directory). A tool author writes a plan,
// probes and a reporter (src/rewrite/tools/<tool>/) and none of this.
//
// It calls HSA only through the functions it is given, so that the preload shim, which
// interposes on the API, passes the runtime's own definitions behind its interposers.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "wavekit/hostcall/runtime.h"
#include "wavekit/rewrite/arena.h"

namespace wavekit::rewrite {

#define WAVEKIT_LAUNCHER_HSA_FUNCTIONS(X)      \
  X(hsa_code_object_reader_create_from_memory) \
  X(hsa_executable_load_agent_code_object)     \
  X(hsa_executable_get_symbol_by_name)         \
  X(hsa_executable_symbol_get_info)            \
  X(hsa_iterate_agents)                        \
  X(hsa_agent_get_info)                        \
  X(hsa_amd_agent_iterate_memory_pools)        \
  X(hsa_amd_memory_pool_get_info)              \
  X(hsa_amd_memory_pool_allocate)              \
  X(hsa_amd_memory_pool_free)                  \
  X(hsa_amd_agents_allow_access)               \
  X(hsa_memory_copy)

// The HSA functions the launcher calls; every one must be set.
struct HsaFunctions {
#define WAVEKIT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  WAVEKIT_LAUNCHER_HSA_FUNCTIONS(WAVEKIT_DECLARE_POINTER)
#undef WAVEKIT_DECLARE_POINTER
  // Only wavekit's emulated runtime has these (wavekit/hsa/emulator_extensions.h); null on ROCr.
  // They keep the emulator's no-progress report working while probes write their arenas and
  // the ring and wait on the hostcall service.
  hsa_status_t (*wavekit_emu_mark_tool_memory)(void* pointer) = nullptr;
  hsa_status_t (*wavekit_emu_set_outside_progress)(int (*made_progress)(void*),
                                                   void* data) = nullptr;
};

struct LauncherOptions {
  std::string tool;  // the tool whose reporter completes each dispatch (tool_report)
  // The hostcall file services' directory (a file-writing tool's probes write there); empty:
  // no file services.
  std::string file_root;
  // Every arena allocation fails (WAVEKIT_INJECT_FAULT=arena_allocation, for the fail-safe tests).
  bool fail_arena_allocation = false;
};

// One dispatch between prepare() and complete().
struct PreparedDispatch {
  const InstrumentedKernel* kernel = nullptr;
  void* arena = nullptr;  // null: not prepared, `failure` says why
  std::uint64_t arena_bytes = 0;
  std::uint64_t kernarg = 0;    // names the dispatch's files (tool_files_subdirectory)
  void* own_kernarg = nullptr;  // the dispatch's own kernarg segment, if prepare() made one
  std::string failure;
};

struct CompletedDispatch {
  nlohmann::json report;  // the tool's report; null when it could not be made
  std::string error;      // why the report, or moving a file-writing tool's files, failed
};

// Not thread-safe, except complete(), which may run beside the others (the shim calls the others
// under its lock, complete() from its reporter thread).
class Launcher {
 public:
  Launcher(const HsaFunctions& hsa, LauncherOptions options);
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;
  ~Launcher();

  // Before `executable` is frozen: loads the probe library there, once per executable (every
  // instrumented object of a tool brings its own copy of the same library, and loading it twice
  // would define its symbols twice).
  hsa_status_t load_probe_library(hsa_executable_t executable, hsa_agent_t agent,
                                  std::span<const std::uint8_t> library);

  // After `executable` is frozen: stores the ring's address in its `wavekit_hostcall_ring`, if a
  // loaded object defines it, starting the service on first use (the variable may live in device
  // memory: the address is copied with hsa_memory_copy) and granting `agent` access. Returns
  // why it could not, or why the ring is missing although `needs_hostcall`; "" otherwise.
  std::string bind(hsa_executable_t executable, hsa_agent_t agent, bool needs_hostcall);

  // The arena of one dispatch of `kernel` described by `packet`: allocated zeroed from a
  // fine-grained system pool `agent` may reach, its header filled, its address written at the
  // kernel's arena argument in the packet's kernarg segment. With `copy_kernarg_bytes` (a
  // program that dispatches the original kernel, whose kernarg segment is the original's size
  // and has no room for the arena's address), the dispatch gets a kernarg segment of its own:
  // the program's first copy_kernarg_bytes bytes, then the address, and the packet points
  // there. On failure (arena.failure) the packet is untouched.
  PreparedDispatch prepare(const InstrumentedKernel& kernel, hsa_agent_t agent,
                           hsa_kernel_dispatch_packet_t& packet,
                           std::optional<std::uint64_t> copy_kernarg_bytes = std::nullopt);

  // After the dispatch completed: the tool's report from the arena and, for a file-writing tool
  // given a `files_destination`, the dispatch's files (under file_root, in its
  // tool_files_subdirectory) moved there, replacing what was there (an empty directory for a
  // dispatch of no waves). Frees the arena and the dispatch's own kernarg segment.
  CompletedDispatch complete(PreparedDispatch& dispatch, const std::string& files_destination);

  // Stops the hostcall service (it first services every request already published) and gives
  // its statistics; nothing when it never started.
  std::optional<hostcall::Statistics> stop_hostcall();

  // In the child of fork(), which has none of the service's threads: forgets the service
  // without stopping or freeing it (the probes it was bound to still point at its ring). True
  // when there was one, whose executables' probes can no longer be served.
  bool abandon_hostcall_after_fork();

 private:
  struct HostcallService;
  std::string start_hostcall(hsa_agent_t agent);
  void find_pools();
  void mark_tool_memory(void* memory) const;

  HsaFunctions hsa_;
  LauncherOptions options_;
  hsa_amd_memory_pool_t system_pool_{};   // the arenas' and the ring's
  hsa_amd_memory_pool_t kernarg_pool_{};  // kernarg segments of the dispatches' own
  std::unique_ptr<HostcallService> hostcall_;
  // SHA-256 of each probe library loaded, by executable handle.
  std::map<std::uint64_t, std::set<std::string>> probe_libraries_;
};

}  // namespace wavekit::rewrite
