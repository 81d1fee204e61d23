// Live host I/O from probes: print, a file per wave, and calls to user-registered host services,
// through the hostcall ring (wavekit/hostcall/protocol.h; docs/hostcall.md). HIP-dialect device
// C++ for clang-22 -nogpulib -nogpuinc, like the rest of the SDK.
//
//   #include "wavekit/probe/hostcall.h"
//   WAVEKIT_PROBE void on_block(wavekit::probe::Slot slot, uint64_t address) {
//     wavekit::probe::Wave wave(slot);
//     wavekit::probe::print(wave, "block %#lx\n", address);          // every active lane
//   }
//
// Every function is a whole-wave operation: all active lanes call it together (as a probe is
// called) and the wave makes one request, carrying each active lane's data. The wave is
// identified by its capture region's wave id, which is what "{wave}" in a file path becomes.
//
// How a probe finds the ring. Including this header defines the device variable
// `wavekit_hostcall_ring` (a protocol::Ring*, a weak STT_OBJECT in the probe library, so several
// translation units may include it). A launcher that loads a probe library looks the symbol up
// by name in the frozen executable (hsa_executable_get_symbol_by_name, then the symbol's
// VARIABLE_ADDRESS), runs the hostcall service and stores the address of the ring descriptor
// there before the dispatch; `wavekit launch`, rewrite::launch_instrumented and the preload shim
// do. The variable is externally initialised, so the compiler loads it at every call instead of
// assuming the null it starts with. A probe called where no launcher set it faults on address
// 0 (the emulator reports the probe's PC); hostcall_ring_ready() lets a probe check instead.
#pragma once

#include <stdint.h>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/probe/probe.h"

// The definition the launcher fills in (protocol.h declares it; same C name, same variable).
extern "C" __attribute__((device, weak, used, visibility("default")))
wavekit::hostcall::protocol::Ring* wavekit_hostcall_ring = nullptr;

namespace wavekit::probe {

namespace hostcall_protocol = wavekit::hostcall::protocol;

// True when a launcher bound the ring.
WAVEKIT_DEVICE inline bool hostcall_ring_ready() { return wavekit_hostcall_ring != nullptr; }

// printf from every active lane: the host formats each lane's line (in lane order) and writes
// the wave's lines at once. Up to 7 arguments (the ring's words per lane, less one);
// integers, floating point, pointers and chars; the format is the C library's. Blocking, so that
// one wave's prints reach the sink in program order. Returns this lane's character count.
template <typename... Args>
WAVEKIT_DEVICE int64_t print(const Wave& wave, const char* format, Args... args) {
  return hostcall_protocol::print(*wavekit_hostcall_ring, wave.wave_id(), true, format, args...);
}

// Per-wave files, under the directory the launcher's file service writes to (`wavekit launch
// --out DIR`, `wavekit run --tool-out DIR`). `path` is relative; "{wave}" becomes the wave id,
// so "trace/wave-{wave}.txt" gives every wave a file of its own. Returns the handle (0 when the
// host could not open it: bad path, no file service). A probe keeps the handle across calls in
// one of its per-wave variables.
WAVEKIT_DEVICE inline uint64_t file_open(const Wave& wave, const char* path,
                                         bool append = false) {
  return hostcall_protocol::file_open(
      *wavekit_hostcall_ring, wave.wave_id(), path,
      append ? hostcall_protocol::kFileAppend : hostcall_protocol::kFileTruncate);
}

// Appends `bytes` wave-uniform bytes, then each active lane's `lane_bytes` bytes (at most
// 48: the ring's words per lane less two, times 8) in lane order. Returns the bytes written.
WAVEKIT_DEVICE inline uint64_t file_write(const Wave& wave, uint64_t handle, const void* data,
                                          uint32_t bytes, const void* lane_data = nullptr,
                                          uint32_t lane_bytes = 0) {
  return hostcall_protocol::file_write(*wavekit_hostcall_ring, wave.wave_id(), handle, data,
                                       bytes, lane_data, lane_bytes);
}

// Returns 0, or the host's errno.
WAVEKIT_DEVICE inline uint64_t file_close(const Wave& wave, uint64_t handle) {
  return hostcall_protocol::file_close(*wavekit_hostcall_ring, wave.wave_id(), handle);
}

// A user-registered service (hostcall::Runtime::register_handler; ids from
// hostcall::protocol::kFirstUserService). Each lane sends `count` words (at most 8) and, from a
// blocking call, gets 2 reply words in `reply` (may be null). Returns the host's
// hostcall::protocol::Status.
WAVEKIT_DEVICE inline uint32_t call_service(const Wave& wave, uint32_t service,
                                            const uint64_t* words, uint32_t count,
                                            uint64_t* reply) {
  return hostcall_protocol::call(*wavekit_hostcall_ring, service, hostcall_protocol::kFlagBlocking,
                                 wave.wave_id(), words, count, nullptr, 0, reply);
}

// The same without waiting: returns once the request is published. The host may service two
// posts of one wave in either order.
WAVEKIT_DEVICE inline void post_service(const Wave& wave, uint32_t service, const uint64_t* words,
                                        uint32_t count) {
  hostcall_protocol::call(*wavekit_hostcall_ring, service, 0, wave.wave_id(), words, count,
                          nullptr, 0, nullptr);
}

}  // namespace wavekit::probe
