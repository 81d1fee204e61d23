#include "callees.h"

#include <set>
#include <sstream>

#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite::detail {

namespace {

// No path through `function` returns, jumps on or ends the wave: each ends in an `s_trap` (or
// a call that does not return) at the end of its code, as `__assert_fail`'s does.
bool never_returns(const analysis::Function& function) {
  for (const isa::Instruction& inst : function.instructions)
    if (inst.flow == isa::ControlFlow::indirect || inst.flow == isa::ControlFlow::end_program)
      return false;
  return true;
}

}  // namespace

CalleeFootprint callee_footprint(const analysis::Program& program, bool self_contained,
                                 std::uint64_t kernel_entry, const std::string& kernel,
                                 const std::string& object_name) {
  auto function_at = [&](std::uint64_t entry) -> const analysis::Function* {
    for (const analysis::Function& function : program.functions)
      if (function.start == entry) return &function;
    return nullptr;
  };
  const analysis::Function* root = function_at(kernel_entry);
  if (!root)
    fail(object_name, "kernel '" + kernel + "': the analysis found no function at its entry " +
                          hex(kernel_entry));

  CalleeFootprint footprint;
  std::set<std::uint64_t> seen;
  std::vector<const analysis::Function*> work{root};
  auto reach = [&](const analysis::Function& callee, const std::string& where) {
    if (!callee.decode_errors.empty())
      fail(object_name, where + " reaches '" + callee.name + "', whose code does not decode (" +
                            callee.decode_errors.front().message + ")");
    // Nothing the kernel does after such a call matters: it runs as it is, at its address.
    if (never_returns(callee)) return;
    if (!seen.insert(callee.start).second) return;
    for (const isa::Instruction& inst : callee.instructions) {
      footprint.used |= inst.reads;
      footprint.used |= inst.writes;
    }
    work.push_back(&callee);
  };
  while (!work.empty()) {
    const analysis::Function* caller = work.back();
    work.pop_back();
    for (const analysis::CallSite& call : caller->calls) {
      const std::string where = "kernel '" + kernel + "': the call at " + hex(call.address) +
                                (caller == root ? "" : " in '" + caller->name + "'");
      if (call.resolution == analysis::CallSite::Resolution::unresolved && self_contained) {
        // A target computed at run time (unoptimised code keeps it in a VGPR lane) can only be
        // a device function of this object, which imports none (a kernel is not callable):
        // count every one of them.
        for (const analysis::Function& function : program.functions)
          if (function.kind == analysis::Function::Kind::device) reach(function, where);
        continue;
      }
      if (call.resolution != analysis::CallSite::Resolution::pc_relative || !call.target)
        fail(object_name, where +
                              " has a target computed at run time (or taken from another "
                              "object): the registers it clobbers are unknown");
      const analysis::Function* callee = function_at(*call.target);
      if (!callee)
        fail(object_name, where + " reaches " + hex(*call.target) + ", which is not a function");
      reach(*callee, where);
    }
  }
  footprint.callees.assign(seen.begin(), seen.end());
  return footprint;
}

}  // namespace wavekit::rewrite::detail
