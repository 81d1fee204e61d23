// Probes that do live host I/O through the probe SDK's hostcall client
// (wavekit/probe/hostcall.h), and kernels that run the probes' bodies the way rewritten kernels
// calls them: with the calling wave's arena slot first. The kernels stand in for a rewritten
// kernel so that the SDK, the probe-library build and the launchers' ring binding are tested
// end to end on the emulator without depending on a plan. (They use the static bodies:
// a call to an exported probe from inside its own shared library goes through the GOT, an
// indirect call `wavekit probe-lib` rightly refuses to bound.) Slot layout: the capture region,
// then at offset 64 the wave's file handle (a per-wave variable).
#include "wavekit/probe/hostcall.h"

namespace probe = wavekit::probe;

static WAVEKIT_DEVICE void trace_open_body(probe::Slot slot) {
  probe::Wave wave(slot);
  const uint64_t handle = probe::file_open(wave, "trace/wave-{wave}.txt");
  if (wave.is_first_active_lane()) *wave.variable<uint64_t>(64) = handle;
}

// One line per call: "v<value>:" then every active lane's "<lane>," in lane order.
static WAVEKIT_DEVICE void trace_value_body(probe::Slot slot, uint32_t value) {
  probe::Wave wave(slot);
  char head[8] = {'v', static_cast<char>('0' + value % 10), ':', 0};
  const uint32_t lane = probe::Wave::lane();
  char mine[4] = {static_cast<char>('0' + lane / 10), static_cast<char>('0' + lane % 10), ',', 0};
  probe::file_write(wave, *wave.variable<uint64_t>(64), head, 3, mine, 3);
}

static WAVEKIT_DEVICE void trace_close_body(probe::Slot slot) {
  probe::Wave wave(slot);
  probe::file_close(wave, *wave.variable<uint64_t>(64));
}

static WAVEKIT_DEVICE void say_body(probe::Slot slot, uint32_t value) {
  probe::Wave wave(slot);
  probe::print(wave, "wave %u lane %u value %u\n", static_cast<uint32_t>(wave.wave_id()),
               probe::Wave::lane(), value);
}

WAVEKIT_PROBE void trace_open(probe::Slot slot) { trace_open_body(slot); }
WAVEKIT_PROBE void trace_value(probe::Slot slot, uint32_t value) { trace_value_body(slot, value); }
WAVEKIT_PROBE void trace_close(probe::Slot slot) { trace_close_body(slot); }
WAVEKIT_PROBE void say(probe::Slot slot, uint32_t value) { say_body(slot, value); }

// What the rewriter's entry prologue does for these kernels: fill the capture region of the
// wave's slot (arena: 64-byte header, then 128-byte slots), from which Wave derives the wave id.
static __attribute__((device)) probe::Slot enter(uint8_t* arena) {
  const uint32_t item = __builtin_amdgcn_workitem_id_x();
  const uint64_t wave = (__builtin_amdgcn_workgroup_id_x() * 256 + item) / 64;
  probe::Slot slot = reinterpret_cast<probe::Slot>(arena + 64 + wave * 128);
  slot->dispatch_ptr = reinterpret_cast<uint64_t>(__builtin_amdgcn_dispatch_ptr());
  slot->workgroup_id[0] = __builtin_amdgcn_workgroup_id_x();
  slot->workgroup_id[1] = 0;
  slot->workgroup_id[2] = 0;
  slot->first_workitem = item / 64 * 64;
  return slot;
}

// Every wave: open its file, `lines` lines, close (lines + 2 calls per wave).
extern "C" __attribute__((global)) void drive_wave_files(uint8_t* arena, uint32_t lines) {
  const probe::Slot slot = enter(arena);
  trace_open_body(slot);
  for (uint32_t i = 0; i < lines; ++i) trace_value_body(slot, i);
  trace_close_body(slot);
}

// A diverged wave prints: only the lanes whose work-item id has bit 1 set.
extern "C" __attribute__((global)) void drive_print(uint8_t* arena) {
  const probe::Slot slot = enter(arena);
  if (__builtin_amdgcn_workitem_id_x() & 2) say_body(slot, 7);
}
