// The device functions a kernel calls, as the rewriter needs them: every register they may
// touch, through everything they call in turn, from the analysis library's call graph
// (resolved s_getpc_b64 / s_add_u32 / s_addc_u32 / s_swappc_b64 shapes). The instrumentation's
// reserved SGPRs must lie outside this set, since the callees do not know they are there
// (rewriting.md §8: transitive clobbers), whether they run at their original addresses or as
// instrumented copies (Engine::relocate_callees). A function that never returns (it ends in
// `s_trap`, as `__assert_fail` does) and what it calls are left out: they run as they are, and
// nothing the kernel does after the call matters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wavekit/analysis/analysis.h"
#include "wavekit/isa/isa.h"

namespace wavekit::rewrite::detail {

struct CalleeFootprint {
  isa::RegisterSet used;               // read or written by some callee, transitively
  std::vector<std::uint64_t> callees;  // entry addresses, ascending
};

// `self_contained`: the object imports no symbols (no GOT slot is relocated against one), so a
// call whose target is computed at run time can only reach one of its own device functions,
// and counts as reaching all of them. Throws wavekit::Error naming `object_name`, the kernel, the
// call's address and the reason for a call the footprint cannot cover (a computed target in
// an object that imports symbols, a call through the GOT to another object, undecodable callee
// code).
CalleeFootprint callee_footprint(const analysis::Program& program, bool self_contained,
                                 std::uint64_t kernel_entry, const std::string& kernel,
                                 const std::string& object_name);

}  // namespace wavekit::rewrite::detail
