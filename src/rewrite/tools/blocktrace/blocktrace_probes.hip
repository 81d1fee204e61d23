// blocktrace's probes: each wave appends the original address of every block it enters to a
// text buffer in its arena slot (State below, laid out as blocktrace.cpp declares it) and
// streams the buffer to its own file, k<kernarg>/wave_<id>.txt, through the hostcall file service
// when it fills and at the kernel's end. The lines are `wavekit launch --trace-sequence`'s:
// "0x<hex>\n".
//
// Both probes are called uniformly (EXEC all ones), so that a block entered with EXEC = 0 is
// recorded too (the emulator's ground truth records it) and a hostcall request always has an
// active lane. Every lane computes the same uniform values and stores them: the lanes' stores
// of one value to one address are harmless, and no lane has to wait for another's.
#include "wavekit/probe/hostcall.h"

namespace probe = wavekit::probe;
namespace hc = wavekit::hostcall::protocol;

namespace {

constexpr uint32_t kTextBytes = 256;   // the ring's uniform bytes: one buffer is one write
constexpr uint32_t kLongestLine = 19;  // "0x" + 16 hex digits + "\n"

struct State {
  uint64_t file;    // the wave's handle, 0 before the first block
  uint32_t used;    // bytes of text not yet written
  uint32_t failed;  // the first failure: 1 open, 2 short write, 3 close
  uint64_t blocks;  // blocks recorded
  char text[kTextBytes];
};

// `value` in lowercase hex without leading zeros (at least one digit); returns the digits.
__attribute__((device)) uint32_t write_hex(char* out, uint64_t value) {
  uint32_t digits = 1;
  while (digits < 16 && (value >> (4 * digits)) != 0) ++digits;
  for (uint32_t d = 0; d < digits; ++d) {
    const uint32_t nibble = static_cast<uint32_t>(value >> (4 * (digits - 1 - d))) & 15;
    out[d] = static_cast<char>(nibble < 10 ? '0' + nibble : 'a' + nibble - 10);
  }
  return digits;
}

// The file write without per-lane bytes, through the protocol directly: the SDK's file_write
// gathers per-lane bytes in a 64-word local array, which docs/rewrite.md measures as an
// unbounded stack (refused by the rewriter); two words are all a uniform write needs.
__attribute__((device)) void flush(const probe::Wave& wave, State* state) {
  if (state->file == 0) {  // the open failed (recorded): the text has nowhere to go
    state->used = 0;
    return;
  }
  if (state->used == 0) return;
  uint64_t words[2] = {state->file, 0};
  uint64_t reply[hc::kReplyWords] = {0, 0};
  hc::call(*wavekit_hostcall_ring, hc::kServiceFileWrite, hc::kFlagBlocking, wave.wave_id(), words,
           2, state->text, state->used, reply);
  if (reply[0] != state->used && state->failed == 0) state->failed = 2;
  state->used = 0;
}

}  // namespace

WAVEKIT_PROBE void blocktrace_block(probe::Slot slot, State* state, uint64_t address) {
  const probe::Wave wave(slot);
  if (state->file == 0 && state->failed == 0) {
    // "k<kernarg address>/wave_{wave}.txt": a directory per dispatch in flight, which the
    // launcher renames (wavekit launch: its files move up into --tool-out; the preload shim:
    // <kernel>.<dispatch>). Built in the still empty text buffer: a local array written at a
    // computed position would give the probe an unbounded stack.
    char* path = state->text;
    path[0] = 'k';
    const uint32_t at = 1 + write_hex(path + 1, reinterpret_cast<uint64_t>(wave.kernarg_ptr()));
    constexpr char kName[] = "/wave_{wave}.txt";
    for (uint32_t i = 0; i < sizeof kName; ++i) path[at + i] = kName[i];
    // The open through the protocol with the length known: the SDK's file_open measures the
    // path with a loop that tests each char for 0, which compiles to v_cmp_eq_u16 for a path
    // in memory, an instruction the emulator does not implement.
    uint64_t words[1] = {hc::kFileTruncate};
    uint64_t reply[hc::kReplyWords] = {0, 0};
    hc::call(*wavekit_hostcall_ring, hc::kServiceFileOpen, hc::kFlagBlocking, wave.wave_id(), words,
             1, path, at + sizeof kName, reply);
    state->file = reply[0];
    if (state->file == 0) state->failed = 1;
  }
  if (state->used + kLongestLine > kTextBytes) flush(wave, state);
  char* line = state->text + state->used;
  line[0] = '0';
  line[1] = 'x';
  const uint32_t digits = write_hex(line + 2, address);
  line[2 + digits] = '\n';
  state->used += 3 + digits;
  state->blocks += 1;
}

WAVEKIT_PROBE void blocktrace_exit(probe::Slot slot, State* state) {
  const probe::Wave wave(slot);
  if (state->file == 0) return;
  flush(wave, state);
  if (probe::file_close(wave, state->file) != 0 && state->failed == 0) state->failed = 3;
  state->file = 0;
}
