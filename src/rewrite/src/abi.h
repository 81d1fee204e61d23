// The gfx9 register-file and function-ABI numbers the rewriter's parts share (the engine, the
// call envelope, the probe-library post-processor): declared once here.
#pragma once

namespace wavekit::rewrite::detail {

// Numbered SGPRs on gfx9: s0..s101. VCC, FLAT_SCRATCH and XNACK_MASK come out of the same
// allocation, so a grant must leave room for them above the numbered ones (amdgpu-codeobject.md
// §3).
inline constexpr unsigned kNumberedSgprs = 102;
inline constexpr unsigned kSpecialSgprs = 6;
inline constexpr unsigned kLinkPair = 30;      // s[30:31]: the return address of s_swappc_b64
inline constexpr unsigned kStackPointer = 32;  // s32 in the fixed function ABI

}  // namespace wavekit::rewrite::detail
