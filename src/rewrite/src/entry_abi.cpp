#include "entry_abi.h"

#include <algorithm>
#include <sstream>

#include "abi.h"
#include "wavekit/probe/capture.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite::detail {
namespace {

std::string sreg(unsigned n) { return "s" + std::to_string(n); }
std::string spair(unsigned n) {
  return "s[" + std::to_string(n) + ":" + std::to_string(n + 1) + "]";
}
// Stores SGPRs first .. first+count-1 at slot + offset with as few scalar stores as the
// register alignment allows (a dwordx2 source starts at an even SGPR, a dwordx4 at a multiple
// of four).
void store_run(std::ostringstream& s, const std::string& slot, unsigned first, unsigned count,
               std::uint32_t offset) {
  while (count != 0) {
    const unsigned width = first % 4 == 0 && count >= 4 ? 4 : first % 2 == 0 && count >= 2 ? 2 : 1;
    s << (width == 4
              ? "s_store_dwordx4 s[" + std::to_string(first) + ":" + std::to_string(first + 3) + "]"
          : width == 2 ? "s_store_dwordx2 " + spair(first)
                       : "s_store_dword " + sreg(first))
      << ", " << slot << ", " << hex(offset) << "\n";
    first += width;
    count -= width;
    offset += 4 * width;
  }
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

ReservedSgprs ReservedSgprs::block(unsigned base, bool translations) {
  ReservedSgprs reserved;
  reserved.slot = base;
  reserved.one = base + 2;
  reserved.scc_save = base + 4;
  reserved.workitem = base + 5;
  reserved.temporary = base + 6;
  reserved.translations = translations;
  reserved.translation = base + 8;
  reserved.translation_copy = base + 10;
  return reserved;
}

bool ReservedSgprs::contains(unsigned sgpr) const {
  const auto in_pair = [&](unsigned first) { return sgpr == first || sgpr == first + 1; };
  return in_pair(slot) || (keeps_one && in_pair(one)) || sgpr == scc_save || sgpr == workitem ||
         in_pair(temporary) ||
         (translations && (in_pair(translation) || in_pair(translation_copy)));
}

unsigned ReservedSgprs::end() const {
  unsigned last = std::max({slot + 1, keeps_one ? one + 1 : 0, scc_save, workitem, temporary + 1});
  if (translations) last = std::max({last, translation + 1, translation_copy + 1});
  return last + 1;
}

std::string entry_prologue(const PrologueInput& in) {
  auto launched = [&](EntryValue value) -> const EntrySgpr& {
    const EntrySgpr* entry = find_entry(in.launched, value);
    if (!entry) throw Error("internal: the rewritten descriptor does not launch a needed SGPR");
    return *entry;
  };
  const unsigned dispatch = launched(EntryValue::dispatch_ptr).first;
  const unsigned kernarg = launched(EntryValue::kernarg_ptr).first;
  const unsigned wg = launched(EntryValue::workgroup_id_x).first;
  if (launched(EntryValue::workgroup_id_y).first != wg + 1 ||
      launched(EntryValue::workgroup_id_z).first != wg + 2)
    throw Error("internal: the workgroup ids are not launched together");
  // Lane 0's packed work-item id goes right after workgroup_id_z when nothing was launched
  // there (no workgroup info, no scratch wave offset) and the reserved SGPRs do not lie there,
  // so that one run of stores covers both; otherwise into ReservedSgprs::workitem.
  const bool after_wg = wg + 3 < kNumberedSgprs && !in.reserved.contains(wg + 3) &&
                        std::none_of(in.launched.begin(), in.launched.end(),
                                     [&](const EntrySgpr& e) { return e.first == wg + 3; });
  // The stride goes into a 64-bit SGPR pair as a 32-bit literal, which reads the same
  // zero- or sign-extended only below 2^31.
  if (in.stride >= 0x80000000u)
    throw Error("per-wave slots of " + std::to_string(in.stride) + " bytes are too large");
  const unsigned ticket = in.reserved.temporary;
  const unsigned workitem = after_wg ? wg + 3 : in.reserved.workitem;
  const std::string slot = spair(in.reserved.slot);

  std::ostringstream s;
  // 1. Claim this wave's slot: next_slot in the arena header holds the byte offset of the next
  // free one; adding the stride returns ours. One atomic instead of the wave's linear id (the
  // reporter derives that from the capture region).
  s << "s_load_dwordx2 " << slot << ", " << spair(kernarg) << ", " << hex(in.arena_arg_offset)
    << "\n";
  if (in.sets_one) s << "s_mov_b64 " << spair(in.reserved.one) << ", 1\n";
  s << "s_mov_b64 " << spair(ticket) << ", " << hex(in.stride) << "\n";
  // Lane 0's work-item id (lane 0 is active at wave launch), packed as gfx90a packs v0. On
  // gfx908, v0 packs y and z in for the read (x < 1024 leaves them room) and is masked back
  // to x below.
  if (!in.target.has_packed_work_item_ids()) {
    s << "v_lshl_or_b32 v0, v1, 10, v0\n";
    s << "v_lshl_or_b32 v0, v2, 20, v0\n";
  }
  s << "v_readfirstlane_b32 " << sreg(workitem) << ", v0\n";
  s << "s_waitcnt lgkmcnt(0)\n";
  s << "s_atomic_add_x2 " << spair(ticket) << ", " << slot << ", " << hex(probe::kArenaNextSlot)
    << " glc\n";
  s << "s_waitcnt lgkmcnt(0)\n";
  s << "s_add_u32 " << sreg(in.reserved.slot) << ", " << sreg(in.reserved.slot) << ", "
    << sreg(ticket) << "\n";
  s << "s_addc_u32 " << sreg(in.reserved.slot + 1) << ", " << sreg(in.reserved.slot + 1) << ", "
    << sreg(ticket + 1) << "\n";

  // 2. The capture region (probe::CaptureRegion), stored straight from the registers the
  // hardware launched the values in, before step 3 can overwrite those. The dispatch and
  // kernarg pointers are adjacent unless the queue pointer sits between them.
  if (kernarg == dispatch + 2) {
    store_run(s, slot, dispatch, 4, probe::kCaptureDispatchPtr);
  } else {
    store_run(s, slot, dispatch, 2, probe::kCaptureDispatchPtr);
    store_run(s, slot, kernarg, 2, probe::kCaptureKernargPtr);
  }
  if (after_wg) {
    store_run(s, slot, wg, 4, probe::kCaptureWorkgroupId);
  } else {
    store_run(s, slot, wg, 3, probe::kCaptureWorkgroupId);
    store_run(s, slot, workitem, 1, probe::kCaptureFirstWorkitem);
  }

  s << in.save_before_moves;

  // 3. Move the user/system SGPRs the new descriptor shifted back to where the original code
  // expects them. Ascending destinations never overwrite a source still to be read, because
  // every source lies at or above its destination; pairs (pointers) sit at even SGPRs in both
  // layouts and move whole.
  if (!in.skip_sgpr_moves) {
    std::vector<EntrySgpr> original = in.original;
    std::sort(original.begin(), original.end(),
              [](const EntrySgpr& x, const EntrySgpr& y) { return x.first < y.first; });
    for (const EntrySgpr& entry : original) {
      const EntrySgpr& now = launched(entry.value);
      if (now.first < entry.first) throw Error("internal: an entry SGPR moved down");
      if (now.first == entry.first) continue;
      const bool pairs = entry.count % 2 == 0 && entry.first % 2 == 0 && now.first % 2 == 0;
      for (unsigned i = 0; i < entry.count; i += pairs ? 2 : 1)
        s << (pairs ? "s_mov_b64 " + spair(entry.first + i) + ", " + spair(now.first + i)
                    : "s_mov_b32 " + sreg(entry.first + i) + ", " + sreg(now.first + i))
          << "\n";
    }
  }
  // v0 back to what the original code expects: x alone on gfx908 (y and z are in v1 and v2);
  // with packed ids, the ids the original asked for.
  if (!in.target.has_packed_work_item_ids())
    s << "v_and_b32 v0, 0x3ff, v0\n";
  else if (in.original_vgpr_workitem_id < 2)
    s << "v_and_b32 v0, " << (in.original_vgpr_workitem_id == 0 ? "0x3ff" : "0xfffff") << ", v0\n";
  return s.str();
}

}  // namespace wavekit::rewrite::detail
