#include "entry_abi.h"

#include <algorithm>
#include <sstream>

#include "wavekit/probe/capture.h"
#include "wavekit/support/error.h"

namespace wavekit::rewrite::detail {
namespace {

std::string sreg(unsigned n) { return "s" + std::to_string(n); }
std::string spair(unsigned n) {
  return "s[" + std::to_string(n) + ":" + std::to_string(n + 1) + "]";
}
std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

}  // namespace

std::vector<EntrySgpr> entry_sgprs(const codeobj::KernelDescriptor& kd,
                                   const codeobj::Target& target, const std::string& kernel) {
  if (kd.kernarg_preload_length() != 0)
    throw Error(kernel + ": kernel arguments preloaded into SGPRs are not supported yet");
  std::vector<EntrySgpr> layout;
  unsigned next = 0;
  auto add = [&](bool enabled, EntryValue value, unsigned count) {
    if (!enabled) return;
    layout.push_back({value, next, count});
    next += count;
  };
  add(kd.enable_sgpr_private_segment_buffer(), EntryValue::private_segment_buffer, 4);
  add(kd.enable_sgpr_dispatch_ptr(), EntryValue::dispatch_ptr, 2);
  add(kd.enable_sgpr_queue_ptr(), EntryValue::queue_ptr, 2);
  add(kd.enable_sgpr_kernarg_segment_ptr(), EntryValue::kernarg_ptr, 2);
  add(kd.enable_sgpr_dispatch_id(), EntryValue::dispatch_id, 2);
  add(kd.enable_sgpr_flat_scratch_init() && !target.has_architected_flat_scratch(),
      EntryValue::flat_scratch_init, 2);
  add(kd.enable_sgpr_private_segment_size(), EntryValue::private_segment_size, 1);
  if (next != kd.user_sgpr_count())
    throw Error(kernel + ": the descriptor's USER_SGPR_COUNT (" +
                std::to_string(kd.user_sgpr_count()) + ") disagrees with its enabled user SGPRs (" +
                std::to_string(next) + ")");
  add(kd.enable_sgpr_workgroup_id_x(), EntryValue::workgroup_id_x, 1);
  add(kd.enable_sgpr_workgroup_id_y(), EntryValue::workgroup_id_y, 1);
  add(kd.enable_sgpr_workgroup_id_z(), EntryValue::workgroup_id_z, 1);
  add(kd.enable_sgpr_workgroup_info(), EntryValue::workgroup_info, 1);
  add(kd.enable_private_segment(), EntryValue::private_segment_wave_offset, 1);
  return layout;
}

const EntrySgpr* find_entry(const std::vector<EntrySgpr>& layout, EntryValue value) {
  for (const EntrySgpr& entry : layout)
    if (entry.value == value) return &entry;
  return nullptr;
}

std::string entry_prologue(const PrologueInput& in) {
  const unsigned r = in.reserved.base;
  // Temporaries inside the reserved block (ReservedSgprs documents the persistent ones).
  const unsigned ticket = r + 6, workitem = r + 8;  // workitem: x, y, z on gfx908

  auto launched = [&](EntryValue value) -> const EntrySgpr& {
    const EntrySgpr* entry = find_entry(in.launched, value);
    if (!entry) throw Error("internal: the rewritten descriptor does not launch a needed SGPR");
    return *entry;
  };
  const std::string slot = spair(in.reserved.slot());

  std::ostringstream s;
  // 1. Claim this wave's slot: next_slot in the arena header holds the byte offset of the next
  // free one; adding the stride returns ours. One atomic instead of the wave's linear id (the
  // reporter derives that from the capture region).
  s << "s_load_dwordx2 " << slot << ", " << spair(launched(EntryValue::kernarg_ptr).first) << ", "
    << hex(in.arena_arg_offset) << "\n";
  s << "s_mov_b64 " << spair(in.reserved.one()) << ", 1\n";
  s << "s_mov_b64 " << spair(ticket) << ", " << hex(in.stride) << "\n";
  // Lane 0's work-item id, packed as gfx90a packs v0 (lane 0 is active at wave launch).
  s << "v_readfirstlane_b32 " << sreg(workitem) << ", v0\n";
  if (!in.target.has_packed_work_item_ids()) {
    s << "v_readfirstlane_b32 " << sreg(workitem + 1) << ", v1\n";
    s << "v_readfirstlane_b32 " << sreg(workitem + 2) << ", v2\n";
    s << "s_lshl_b32 " << sreg(workitem + 1) << ", " << sreg(workitem + 1) << ", 10\n";
    s << "s_lshl_b32 " << sreg(workitem + 2) << ", " << sreg(workitem + 2) << ", 20\n";
    s << "s_or_b32 " << sreg(workitem) << ", " << sreg(workitem) << ", " << sreg(workitem + 1)
      << "\n";
    s << "s_or_b32 " << sreg(workitem) << ", " << sreg(workitem) << ", " << sreg(workitem + 2)
      << "\n";
  }
  s << "s_waitcnt lgkmcnt(0)\n";
  s << "s_atomic_add_x2 " << spair(ticket) << ", " << slot << ", " << hex(probe::kArenaNextSlot)
    << " glc\n";
  s << "s_waitcnt lgkmcnt(0)\n";
  s << "s_add_u32 " << sreg(in.reserved.slot()) << ", " << sreg(in.reserved.slot()) << ", "
    << sreg(ticket) << "\n";
  s << "s_addc_u32 " << sreg(in.reserved.slot() + 1) << ", " << sreg(in.reserved.slot() + 1) << ", "
    << sreg(ticket + 1) << "\n";

  // 2. The capture region (probe::CaptureRegion), stored straight from the registers the
  // hardware launched them in, before step 3 can overwrite those. Pairs start at even SGPRs
  // (everything launched before them comes in pairs); the workgroup ids start anywhere.
  s << "s_store_dwordx2 " << spair(launched(EntryValue::dispatch_ptr).first) << ", " << slot << ", "
    << hex(probe::kCaptureDispatchPtr) << "\n";
  s << "s_store_dwordx2 " << spair(launched(EntryValue::kernarg_ptr).first) << ", " << slot << ", "
    << hex(probe::kCaptureKernargPtr) << "\n";
  const unsigned wg = launched(EntryValue::workgroup_id_x).first;
  if (launched(EntryValue::workgroup_id_y).first != wg + 1 ||
      launched(EntryValue::workgroup_id_z).first != wg + 2)
    throw Error("internal: the workgroup ids are not launched together");
  if (wg % 2 == 0) {
    s << "s_store_dwordx2 " << spair(wg) << ", " << slot << ", " << hex(probe::kCaptureWorkgroupId)
      << "\n";
    s << "s_store_dword " << sreg(wg + 2) << ", " << slot << ", "
      << hex(probe::kCaptureWorkgroupId + 8) << "\n";
  } else {
    s << "s_store_dword " << sreg(wg) << ", " << slot << ", " << hex(probe::kCaptureWorkgroupId)
      << "\n";
    s << "s_store_dwordx2 " << spair(wg + 1) << ", " << slot << ", "
      << hex(probe::kCaptureWorkgroupId + 4) << "\n";
  }
  s << "s_store_dword " << sreg(workitem) << ", " << slot << ", "
    << hex(probe::kCaptureFirstWorkitem) << "\n";

  // 3. Move the user/system SGPRs the new descriptor shifted back to where the original code
  // expects them. Ascending destinations never overwrite a source still to be read, because
  // every source lies at or above its destination.
  if (!in.skip_sgpr_moves) {
    std::vector<EntrySgpr> original = in.original;
    std::sort(original.begin(), original.end(),
              [](const EntrySgpr& x, const EntrySgpr& y) { return x.first < y.first; });
    for (const EntrySgpr& entry : original) {
      const EntrySgpr& now = launched(entry.value);
      if (now.first < entry.first) throw Error("internal: an entry SGPR moved down");
      for (unsigned i = 0; i < entry.count && now.first != entry.first; ++i)
        s << "s_mov_b32 " << sreg(entry.first + i) << ", " << sreg(now.first + i) << "\n";
    }
  }
  // Packed work-item ids: v0 now holds y and z too; the original code saw only what it asked
  // for.
  if (in.target.has_packed_work_item_ids() && in.original_vgpr_workitem_id < 2)
    s << "v_and_b32 v0, " << (in.original_vgpr_workitem_id == 0 ? "0x3ff" : "0xfffff") << ", v0\n";
  return s.str();
}

}  // namespace wavekit::rewrite::detail
