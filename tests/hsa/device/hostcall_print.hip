// A probe-style kernel that prints through hostcall: the ring comes from the undefined
// `wavekit_hostcall_ring`, which `wavekit launch` binds to a ring it serves. Linked like an
// instrumented kernel (the symbol stays undefined in the code object).
#include "wavekit/hostcall/protocol.h"
#include "wavekit_corpus/hip_dialect.h"

namespace protocol = wavekit::hostcall::protocol;

extern "C" __global__ void hostcall_print(int* out, int base) {
  unsigned lane = WK_THREAD_X;
  // A blocking print returns this lane's character count once the host has printed.
  out[lane] = static_cast<int>(protocol::print(*protocol::wavekit_hostcall_ring, WK_BLOCK_X, true,
                                               "lane %u says %d\n", lane, base + static_cast<int>(lane)));
}
