// AMDGPU device code that uses protocol.h, compiled for gfx908/gfx90a/gfx942. The disassembly
// test (device_code_test.cpp) checks the memory-ordering sequences in it; the kernels are also
// what an emulator run of the protocol launches (16,384 waves, per-wave files).
#include "wavekit/hostcall/protocol.h"

namespace protocol = wavekit::hostcall::protocol;

#define KERNEL extern "C" __attribute__((global))

// One blocking call from every active lane: the reply of each lane lands in out[thread].
KERNEL void hostcall_blocking_call(const protocol::Ring* ring, uint64_t* out) {
  const uint32_t thread = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  const uint64_t words[2] = {thread, ~uint64_t{thread}};
  uint64_t reply[protocol::kReplyWords] = {0, 0};
  protocol::call(*ring, protocol::kFirstUserService, protocol::kFlagBlocking, thread / 64, words, 2, nullptr,
                 0, reply);
  out[thread] = reply[0];
}

// Fire-and-forget: returns once the request is published.
KERNEL void hostcall_fire_and_forget(const protocol::Ring* ring) {
  const uint32_t thread = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  const uint64_t words[1] = {thread};
  protocol::call(*ring, protocol::kFirstUserService, 0, thread / 64, words, 1, nullptr, 0, nullptr);
}

// Every wave streams `calls` lines to its own file, then closes it: the emulator scenario.
KERNEL void hostcall_wave_files(const protocol::Ring* ring, uint32_t calls) {
  const uint32_t lane_in_group = __builtin_amdgcn_workitem_id_x();
  const uint64_t wave = (__builtin_amdgcn_workgroup_id_x() * 256 + lane_in_group) / 64;
  const uint64_t handle = protocol::file_open(*ring, wave, "waves/wave-{wave}.txt", protocol::kFileTruncate);
  for (uint32_t i = 0; i < calls; ++i) {
    const char lane_text[4] = {'a', static_cast<char>('0' + lane_in_group % 10), ' ', 0};
    protocol::file_write(*ring, wave, handle, "line:", 5, lane_text, 3);
  }
  protocol::file_close(*ring, wave, handle);
}

// The same scenario through the baseline the ring replaces: a single mailbox (a one-slot ring)
// that serves calls first come, first served in dispatch order, call by call: every wave's
// open, then every wave's first write, and so on (ticket = call * waves + wave). It works while
// every wave is resident; with fewer resident slots than waves, wave 0's first write waits for
// the open of a wave that cannot become resident until wave 0 ends: a deadlock.
KERNEL void hostcall_wave_files_dispatch_order(const protocol::Ring* ring, uint32_t calls, uint32_t waves) {
  const uint32_t lane_in_group = __builtin_amdgcn_workitem_id_x();
  const uint64_t wave = (__builtin_amdgcn_workgroup_id_x() * 256 + lane_in_group) / 64;
  const char path[] = "waves/wave-{wave}.txt";
  uint64_t words[8] = {protocol::kFileTruncate};
  uint64_t reply[protocol::kReplyWords] = {0, 0};
  protocol::call_with_ticket(*ring, wave, protocol::kServiceFileOpen, protocol::kFlagBlocking, wave, words, 1,
                             path, sizeof path, reply);
  const uint64_t handle = reply[0];
  for (uint32_t i = 0; i < calls; ++i) {
    const char lane_text[4] = {'a', static_cast<char>('0' + lane_in_group % 10), ' ', 0};
    const uint32_t used = protocol::encode_file_write(*ring, words, handle, lane_text, 3);
    protocol::call_with_ticket(*ring, uint64_t{1 + i} * waves + wave, protocol::kServiceFileWrite,
                               protocol::kFlagBlocking, wave, words, used, "line:", 5, reply);
  }
  words[0] = handle;
  protocol::call_with_ticket(*ring, uint64_t{1 + calls} * waves + wave, protocol::kServiceFileClose,
                             protocol::kFlagBlocking, wave, words, 1, nullptr, 0, reply);
}

// printf from a diverged wave: only the odd lanes are active.
KERNEL void hostcall_print_odd_lanes(const protocol::Ring* ring) {
  const uint32_t lane = __builtin_amdgcn_workitem_id_x();
  if (lane & 1) protocol::print(*ring, lane / 64, true, "lane %u: %f\n", lane, lane * 0.5);
}
