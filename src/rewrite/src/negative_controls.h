// Negative controls for the test suite, outside the public API: each disables one step the
// design requires, so that a test can prove the suite would notice its absence. The tests reach
// this header through the rewrite part's source directory; nothing else may use it.
#pragma once

#include "wavekit/rewrite/mutator.h"

namespace wavekit::rewrite {

struct NegativeControls {
  bool test_skip_prologue_sgpr_moves = false;
  // Drops the first register restore of every probe call's envelope (a VGPR reloaded from
  // scratch, or else an SGPR read back from its spill VGPR). VGPRs first: inside a device
  // function the first SGPR is s30, the return address, and losing it makes the function return
  // into the envelope's own restore, then run again, forever, rather than fail.
  bool test_skip_envelope_restore = false;
  // Leaves out the run-time translation before calls whose target is computed at run time:
  // such a call then runs the original, uninstrumented callee, whose blocks go uncounted.
  bool test_skip_call_translation = false;
  // Decodes a buffer V#'s element size and index stride for effective_address arguments as
  // 1 << field and 1 << field, leaving out the ISA's 2 << and 8 <<: the addresses of accesses
  // through a swizzled V# (the private segment buffer) come out wrong, linear ones stay right.
  bool test_misdecode_swizzle = false;
};

// rewrite() with some of the design's steps left out.
RewriteResult rewrite(const codeobj::CodeObject& object, const Plan& plan,
                      const NegativeControls& controls);

}  // namespace wavekit::rewrite
