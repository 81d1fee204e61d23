// A probe-style call through the extern ring pointer, as rewritten kernels use it: the symbol
// stays undefined in the code object for the loader to bind.
#include "wavekit/hostcall/protocol.h"

namespace protocol = wavekit::hostcall::protocol;

extern "C" __attribute__((global)) void hostcall_extern_ring_print(int value) {
  protocol::print(*protocol::wavekit_hostcall_ring, 0, false, "value %d\n", value);
}
