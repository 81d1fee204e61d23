// Where the hardware puts each entry value at wave launch, for a given kernel descriptor
// (AMDGPUUsage "Initial Kernel Execution State"; amdgpu-codeobject.md §4), and the entry
// prologue that an instrumented kernel runs once per wave.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/codeobj/kernel_descriptor.h"

namespace wavekit::rewrite::detail {

enum class EntryValue {
  private_segment_buffer,
  dispatch_ptr,
  queue_ptr,
  kernarg_ptr,
  dispatch_id,
  flat_scratch_init,
  private_segment_size,
  workgroup_id_x,
  workgroup_id_y,
  workgroup_id_z,
  workgroup_info,
  private_segment_wave_offset,
};

struct EntrySgpr {
  EntryValue value;
  unsigned first = 0;  // s<first>
  unsigned count = 0;
};

// The user and system SGPRs a descriptor asks the hardware to initialise, in launch order.
// Throws wavekit::Error for what the rewriter does not model (preloaded kernel arguments).
std::vector<EntrySgpr> entry_sgprs(const codeobj::KernelDescriptor& kd,
                                   const codeobj::Target& target, const std::string& kernel);
const EntrySgpr* find_entry(const std::vector<EntrySgpr>& layout, EntryValue value);

// SGPRs the instrumentation keeps for itself: 8, or 12 where a call's target is computed at run
// time. Where the kernel leaves room they are one block from a multiple of 4 above every SGPR it
// touches (block()); a kernel that leaves none gets them wherever it has SGPRs it never uses
// (Engine::prepare_kernel), each pair at an even register.
struct ReservedSgprs {
  unsigned slot = 0;  // s[slot:slot+1]: the wave's arena slot
  unsigned one = 0;   // s[one:one+1]: 1, what increments add
  // False where a kernel short of SGPRs keeps none: its increments move 1 into `temporary`
  // first (Engine::increment).
  bool keeps_one = true;
  unsigned scc_save = 0;  // SCC across s_getpc fixes
  // The prologue's copy of lane 0's work-item id, when there is no room for it after the
  // workgroup ids.
  unsigned workitem = 0;
  // s[temporary:temporary+1]: a pair the prologue uses for the slot ticket and, after it, store
  // snippets for the value they store, relaxed branches for their long jump's target and,
  // without `one`, increments for their 1.
  unsigned temporary = 0;
  // The kernel or a device function relocated with it makes a call whose target is computed at
  // run time (Engine::translate_call): the two pairs with which such a call finds the
  // instrumented copy of its callee are reserved too.
  bool translations = false;
  unsigned translation = 0;       // s[translation:translation+1]: the original target
  unsigned translation_copy = 0;  // s[translation_copy:+1]: its copy's entry

  unsigned count() const { return translations ? 12 : 8; }
  // The block layout from `base`: slot, one, scc_save, workitem, temporary, then the
  // translation pairs.
  static ReservedSgprs block(unsigned base, bool translations);
  bool contains(unsigned sgpr) const;
  unsigned end() const;  // one past the highest
};

struct PrologueInput {
  codeobj::Target target;
  std::vector<EntrySgpr> original;  // what the original code expects
  std::vector<EntrySgpr> launched;  // what the rewritten descriptor makes the hardware provide
  unsigned original_vgpr_workitem_id = 0;  // the original descriptor's setting
  ReservedSgprs reserved;
  std::uint64_t arena_arg_offset = 0;  // kernarg offset of the arena pointer
  std::uint64_t stride = 0;            // bytes per wave slot
  bool skip_sgpr_moves = false;        // negative control only
  // The 64-bit 1 the increments add (ReservedSgprs::one); bbcount on a kernel without
  // branches updates no counter and does without it.
  bool sets_one = true;
  // Assembly run once the entry values are saved and before the moves overwrite any launched
  // SGPR (the probe calls' copy of the scratch resource).
  std::string save_before_moves;
};

// Assembly text of the entry prologue: claims this wave's arena slot, fills its capture region,
// and moves the shifted SGPRs back to where the original code expects them. Runs with SCC dead
// (kernel entry) and leaves only the reserved SGPRs changed.
std::string entry_prologue(const PrologueInput& input);

}  // namespace wavekit::rewrite::detail
