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
std::string srange(unsigned n, unsigned count) {
  return "s[" + std::to_string(n) + ":" + std::to_string(n + count - 1) + "]";
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
  const unsigned dispatch = r + 4, kernarg = r + 6;
  const unsigned wg_x = r + 8, wg_y = r + 9, wg_z = r + 10, wave_in_group = r + 11;
  const unsigned header = r + 12;  // 8 dwords of probe::ArenaHeader
  const unsigned tid_x = r + 20, tid_y = r + 21, tid_z = r + 22;
  const unsigned a = r + 23, wave_id = r + 24, b = r + 26;

  auto launched = [&](EntryValue value) -> const EntrySgpr& {
    const EntrySgpr* entry = find_entry(in.launched, value);
    if (!entry) throw Error("internal: the rewritten descriptor does not launch a needed SGPR");
    return *entry;
  };

  std::ostringstream s;
  // 1. Save the entry-only values before anything can overwrite them.
  s << "s_mov_b64 " << spair(dispatch) << ", " << spair(launched(EntryValue::dispatch_ptr).first)
    << "\n";
  s << "s_mov_b64 " << spair(kernarg) << ", " << spair(launched(EntryValue::kernarg_ptr).first)
    << "\n";
  s << "s_mov_b32 " << sreg(wg_x) << ", " << sreg(launched(EntryValue::workgroup_id_x).first)
    << "\n";
  s << "s_mov_b32 " << sreg(wg_y) << ", " << sreg(launched(EntryValue::workgroup_id_y).first)
    << "\n";
  s << "s_mov_b32 " << sreg(wg_z) << ", " << sreg(launched(EntryValue::workgroup_id_z).first)
    << "\n";
  // The first active lane's work-item id; lanes of a wave hold consecutive flat ids, so it
  // gives the wave's index in its workgroup.
  s << "v_readfirstlane_b32 " << sreg(tid_x) << ", v0\n";
  if (!in.target.has_packed_work_item_ids()) {
    s << "v_readfirstlane_b32 " << sreg(tid_y) << ", v1\n";
    s << "v_readfirstlane_b32 " << sreg(tid_z) << ", v2\n";
  }

  s << in.save_before_moves;

  // 2. Move the user/system SGPRs the new descriptor shifted back to where the original code
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

  // 3. This wave's slot: arena + header + wave_id * stride, with the geometry from the header.
  s << "s_load_dwordx2 " << spair(in.reserved.slot()) << ", " << spair(kernarg) << ", "
    << hex(in.arena_arg_offset) << "\n";
  s << "s_waitcnt lgkmcnt(0)\n";
  s << "s_load_dwordx8 " << srange(header, 8) << ", " << spair(in.reserved.slot()) << ", 0x0\n";
  s << "s_waitcnt lgkmcnt(0)\n";
  if (in.target.has_packed_work_item_ids()) {
    s << "s_bfe_u32 " << sreg(tid_z) << ", " << sreg(tid_x) << ", 0xa0014\n";
    s << "s_bfe_u32 " << sreg(tid_y) << ", " << sreg(tid_x) << ", 0xa000a\n";
    s << "s_and_b32 " << sreg(tid_x) << ", " << sreg(tid_x) << ", 0x3ff\n";
  }
  // flat = x + size_x * (y + size_y * z); wave_in_group = flat / 64
  s << "s_lshr_b32 " << sreg(wave_in_group) << ", " << sreg(header) << ", 16\n";
  s << "s_mul_i32 " << sreg(a) << ", " << sreg(tid_z) << ", " << sreg(wave_in_group) << "\n";
  s << "s_add_u32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(tid_y) << "\n";
  s << "s_and_b32 " << sreg(wave_in_group) << ", " << sreg(header) << ", 0xffff\n";
  s << "s_mul_i32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(wave_in_group) << "\n";
  s << "s_add_u32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(tid_x) << "\n";
  s << "s_lshr_b32 " << sreg(wave_in_group) << ", " << sreg(a) << ", 6\n";
  // linear workgroup = x + groups_x * (y + groups_y * z)
  s << "s_mul_i32 " << sreg(a) << ", " << sreg(wg_z) << ", " << sreg(header + 3) << "\n";
  s << "s_add_u32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(wg_y) << "\n";
  s << "s_mul_i32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(header + 2) << "\n";
  s << "s_add_u32 " << sreg(a) << ", " << sreg(a) << ", " << sreg(wg_x) << "\n";
  // wave_id (64-bit) = linear workgroup * waves_per_workgroup + wave_in_group
  s << "s_lshr_b32 " << sreg(b) << ", " << sreg(header + 1) << ", 16\n";
  s << "s_mul_hi_u32 " << sreg(wave_id + 1) << ", " << sreg(a) << ", " << sreg(b) << "\n";
  s << "s_mul_i32 " << sreg(wave_id) << ", " << sreg(a) << ", " << sreg(b) << "\n";
  s << "s_add_u32 " << sreg(wave_id) << ", " << sreg(wave_id) << ", " << sreg(wave_in_group)
    << "\n";
  s << "s_addc_u32 " << sreg(wave_id + 1) << ", " << sreg(wave_id + 1) << ", 0\n";
  // slot = arena + header size + wave_id * stride
  const std::string stride = hex(in.stride);
  s << "s_mul_i32 " << sreg(a) << ", " << sreg(wave_id) << ", " << stride << "\n";
  s << "s_mul_hi_u32 " << sreg(b) << ", " << sreg(wave_id) << ", " << stride << "\n";
  s << "s_mul_i32 " << sreg(tid_y) << ", " << sreg(wave_id + 1) << ", " << stride << "\n";
  s << "s_add_u32 " << sreg(b) << ", " << sreg(b) << ", " << sreg(tid_y) << "\n";
  s << "s_add_u32 " << sreg(in.reserved.slot()) << ", " << sreg(in.reserved.slot()) << ", "
    << sreg(a) << "\n";
  s << "s_addc_u32 " << sreg(in.reserved.slot() + 1) << ", " << sreg(in.reserved.slot() + 1) << ", "
    << sreg(b) << "\n";
  s << "s_add_u32 " << sreg(in.reserved.slot()) << ", " << sreg(in.reserved.slot()) << ", "
    << hex(probe::kArenaHeaderSize) << "\n";
  s << "s_addc_u32 " << sreg(in.reserved.slot() + 1) << ", " << sreg(in.reserved.slot() + 1)
    << ", 0\n";

  // 4. The capture region (probe::CaptureRegion); `entered` is stored from a register.
  s << "s_mov_b32 " << sreg(in.reserved.one()) << ", 1\n";
  s << "s_mov_b32 " << sreg(in.reserved.one() + 1) << ", 0\n";
  const std::string slot = spair(in.reserved.slot());
  s << "s_store_dwordx4 " << srange(dispatch, 4) << ", " << slot << ", "
    << hex(probe::kCaptureDispatchPtr) << "\n";
  s << "s_store_dwordx4 " << srange(wg_x, 4) << ", " << slot << ", "
    << hex(probe::kCaptureWorkgroupId) << "\n";
  s << "s_store_dwordx2 " << spair(wave_id) << ", " << slot << ", " << hex(probe::kCaptureWaveId)
    << "\n";
  s << "s_store_dwordx4 " << srange(header, 4) << ", " << slot << ", "
    << hex(probe::kCaptureWorkgroupSize) << "\n";
  s << "s_store_dword " << sreg(header + 4) << ", " << slot << ", "
    << hex(probe::kCaptureGridWorkgroups + 8) << "\n";
  s << "s_store_dword " << sreg(in.reserved.one()) << ", " << slot << ", "
    << hex(probe::kCaptureEntered) << "\n";
  return s.str();
}

}  // namespace wavekit::rewrite::detail
