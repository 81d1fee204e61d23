#include "call_envelope.h"

#include <algorithm>
#include <sstream>

#include "abi.h"
#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::rewrite::detail {
namespace {

std::string s(unsigned n) { return "s" + std::to_string(n); }
std::string v(unsigned n) { return "v" + std::to_string(n); }
std::string spair(unsigned n) {
  return "s[" + std::to_string(n) + ":" + std::to_string(n + 1) + "]";
}
// v[to:to+1] += a 32-bit value (an SGPR, a VGPR or a literal), sign-extended when `negative`.
std::string add64(unsigned to, const std::string& low, bool negative = false) {
  return "v_add_co_u32_e32 " + v(to) + ", vcc, " + low + ", " + v(to) + "\n" +
         "v_addc_co_u32_e32 " + v(to + 1) + ", vcc, " + (negative ? "-1" : "0") + ", " + v(to + 1) +
         ", vcc\n";
}

std::string vpair(unsigned n) {
  return "v[" + std::to_string(n) + ":" + std::to_string(n + 1) + "]";
}

std::string literal(std::int64_t value) { return hex(static_cast<std::uint32_t>(value)); }

// The code that leaves an address argument in v[next:next+1] (docs/rewrite.md, "Effective
// addresses"). v[temp:temp+1] are free: the SGPR-spill temporaries, already stored; so are
// s[scalar_pair:scalar_pair+1], the callee pair, until the GOT load (SCC too: saved). `fetch`
// copies one of the instruction's VGPRs, as it was at the point, into a register.
template <typename Fetch>
std::string address_code(const EnvelopeArgument& arg, unsigned next, unsigned temp,
                         unsigned scalar_pair, bool misdecode_swizzle, const Fetch& fetch) {
  std::string code;
  const auto fetched = [&](unsigned destination, unsigned source) {
    code += fetch(destination, source);
    code += "s_waitcnt vmcnt(0)\n";
  };
  // The base of a V# (its first 48 bits) into v[next:next+1].
  const auto resource_base = [&] {
    code += "v_mov_b32 " + v(next) + ", " + s(arg.base) + "\n";
    code += "v_mov_b32 " + v(next + 1) + ", " + s(arg.base + 1) + "\n";
    code += "v_and_b32_e32 " + v(next + 1) + ", 0xffff, " + v(next + 1) + "\n";
  };
  switch (arg.form) {
    case AddressForm::global:
      for (unsigned i = 0; i < arg.count; ++i) code += fetch(next + i, arg.first + i);
      code += "s_waitcnt vmcnt(0)\n";
      if (arg.has_base) {  // s[base:base+1] + the 32-bit VGPR offset
        code += "v_add_co_u32_e32 " + v(next) + ", vcc, " + s(arg.base) + ", " + v(next) + "\n";
        code += "v_mov_b32 " + v(next + 1) + ", " + s(arg.base + 1) + "\n";
        code += "v_addc_co_u32_e32 " + v(next + 1) + ", vcc, 0, " + v(next + 1) + ", vcc\n";
      }
      if (arg.offset != 0) code += add64(next, literal(arg.offset), arg.offset < 0);
      break;
    case AddressForm::lds:
    case AddressForm::scratch:
      if (arg.has_vaddr)
        fetched(next, arg.first);
      else
        code += "v_mov_b32 " + v(next) + ", 0\n";
      if (arg.has_base)
        code += "v_add_u32_e32 " + v(next) + ", " + s(arg.base) + ", " + v(next) + "\n";
      if (arg.offset != 0)
        code += "v_add_u32_e32 " + v(next) + ", " + literal(arg.offset) + ", " + v(next) + "\n";
      code += "v_mov_b32 " + v(next + 1) + ", 0\n";
      break;
    case AddressForm::scalar:
      code += "v_mov_b32 " + v(next) + ", " + s(arg.base) + "\n";
      code += "v_mov_b32 " + v(next + 1) + ", " + s(arg.base + 1) + "\n";
      if (arg.has_soffset) code += add64(next, s(arg.soffset));
      if (arg.offset != 0) code += add64(next, literal(arg.offset), arg.offset < 0);
      code += "v_and_b32_e32 " + v(next) + ", -4, " + v(next) + "\n";
      break;
    case AddressForm::scalar_buffer:
      // The offset is aligned before it is added to the resource's base.
      code += "v_mov_b32 " + v(temp) + ", " + (arg.has_soffset ? s(arg.soffset) : "0") + "\n";
      if (arg.offset != 0)
        code += "v_add_u32_e32 " + v(temp) + ", " + literal(arg.offset) + ", " + v(temp) + "\n";
      code += "v_and_b32_e32 " + v(temp) + ", -4, " + v(temp) + "\n";
      resource_base();
      code += add64(next, v(temp));
      break;
    case AddressForm::buffer: {
      // What the hardware forms per lane (the emulator's buffer_memory), with the V#'s fields
      // read at run time, so that a swizzled resource (the runtime's private segment buffer)
      // comes out right too:
      //   base + soffset + (index >> lis) * (stride << lis) + (o >> les) << (les + lis)
      //        + (index & (2^lis - 1)) << les + (o & (2^les - 1))
      // index = the idxen VGPR + the lane id under ADD_TID (dword 3 bit 23); o = the offen VGPR
      // + the instruction's offset; les = log2 of the element size (2 << dword 3 bits 20:19),
      // lis = log2 of the index stride (8 << dword 3 bits 22:21) when SWIZZLE_ENABLE (dword 1
      // bit 31) is set, else 0, which leaves base + soffset + index * stride + o. The uniform
      // fields go through the scalar pair; v[temp] holds the index, v[temp + 1] o.
      const std::string lis = s(scalar_pair), les = s(scalar_pair + 1);
      const std::string& descriptor3 = s(arg.base + 3);
      const std::string& descriptor1 = s(arg.base + 1);
      const unsigned element_bias = misdecode_swizzle ? 0 : 1;
      const unsigned index_bias = misdecode_swizzle ? 0 : 3;
      if (arg.indexed)
        fetched(temp, arg.first);
      else
        code += "v_mov_b32 " + v(temp) + ", 0\n";
      code += "v_mbcnt_lo_u32_b32 " + v(temp + 1) + ", -1, 0\n";
      code += "v_mbcnt_hi_u32_b32 " + v(temp + 1) + ", -1, " + v(temp + 1) + "\n";
      code += "v_bfe_u32 " + v(next) + ", " + descriptor3 + ", 23, 1\n";
      code += "v_mul_u32_u24_e32 " + v(temp + 1) + ", " + v(next) + ", " + v(temp + 1) + "\n";
      code += "v_add_u32_e32 " + v(temp) + ", " + v(temp) + ", " + v(temp + 1) + "\n";
      if (arg.has_vaddr)
        fetched(temp + 1, arg.first + (arg.indexed ? 1 : 0));
      else
        code += "v_mov_b32 " + v(temp + 1) + ", 0\n";
      if (arg.offset != 0)
        code +=
            "v_add_u32_e32 " + v(temp + 1) + ", " + literal(arg.offset) + ", " + v(temp + 1) + "\n";
      code += "s_bfe_u32 " + lis + ", " + descriptor3 + ", 0x20015\n";  // bits 22:21
      code += "s_add_u32 " + lis + ", " + lis + ", " + std::to_string(index_bias) + "\n";
      code += "s_bitcmp1_b32 " + descriptor1 + ", 31\n";
      code += "s_cselect_b32 " + lis + ", " + lis + ", 0\n";
      code += "s_bfe_u32 " + les + ", " + descriptor3 + ", 0x20013\n";  // bits 20:19
      code += "s_add_u32 " + les + ", " + les + ", " + std::to_string(element_bias) + "\n";
      // v[next:next+1] = the parts below the element and the index stride.
      code += "v_bfe_u32 " + v(next) + ", " + v(temp) + ", 0, " + lis + "\n";
      code += "v_lshlrev_b32_e32 " + v(next) + ", " + les + ", " + v(next) + "\n";
      code += "v_bfe_u32 " + v(next + 1) + ", " + v(temp + 1) + ", 0, " + les + "\n";
      code += "v_add_u32_e32 " + v(next) + ", " + v(next) + ", " + v(next + 1) + "\n";
      code += "v_mov_b32 " + v(next + 1) + ", 0\n";
      code += "v_lshrrev_b32_e32 " + v(temp) + ", " + lis + ", " + v(temp) + "\n";
      code += "v_lshrrev_b32_e32 " + v(temp + 1) + ", " + les + ", " + v(temp + 1) + "\n";
      // + (o >> les) << (les + lis), then + (index >> lis) * (stride << lis), 64-bit.
      code += "s_add_u32 " + les + ", " + les + ", " + lis + "\n";
      code += "s_lshl_b32 " + les + ", 1, " + les + "\n";
      code += "v_mad_u64_u32 " + vpair(next) + ", vcc, " + v(temp + 1) + ", " + les + ", " +
              vpair(next) + "\n";
      code += "s_bfe_u32 " + les + ", " + descriptor1 + ", 0xe0010\n";  // stride: bits 29:16
      code += "s_lshl_b32 " + lis + ", " + les + ", " + lis + "\n";
      code += "v_mad_u64_u32 " + vpair(next) + ", vcc, " + v(temp) + ", " + lis + ", " +
              vpair(next) + "\n";
      if (arg.has_soffset) code += add64(next, s(arg.soffset));
      if (arg.constant_soffset != 0) code += add64(next, literal(arg.constant_soffset));
      // + the V#'s 48-bit base (the high half through a VGPR: the carry-in VCC already takes
      // the one constant-bus read).
      code += "s_and_b32 " + les + ", " + descriptor1 + ", 0xffff\n";
      code += "v_mov_b32 " + v(temp) + ", " + les + "\n";
      code += "v_add_co_u32_e32 " + v(next) + ", vcc, " + s(arg.base) + ", " + v(next) + "\n";
      code +=
          "v_addc_co_u32_e32 " + v(next + 1) + ", vcc, " + v(temp) + ", " + v(next + 1) + ", vcc\n";
      break;
    }
  }
  return code;
}
}  // namespace

unsigned envelope_vgprs(const std::vector<EnvelopeArgument>& args) {
  unsigned dwords = 2;  // the slot pointer
  for (const EnvelopeArgument& arg : args) dwords += arg.dwords();
  return dwords + 2;
}

Envelope call_envelope(const EnvelopeInput& in, const std::string& where) {
  const bool buffer_scratch = !in.target.has_architected_flat_scratch();
  const unsigned spill_offset = in.call.spill_offset;

  // Registers the envelope itself writes before the call: the arguments, the SGPR-spill
  // temporaries, and the ABI inputs (scratch resource, stack pointer, link pair).
  unsigned arg_dwords = 2;
  for (const EnvelopeArgument& arg : in.args) arg_dwords += arg.dwords();
  if (arg_dwords > 31) fail(where, "the probe call passes more than 31 argument dwords");
  isa::RegisterSet written = in.clobbers;
  for (unsigned i = 0; i < arg_dwords + 2; ++i) written.vgpr[i] = true;
  // 64-bit address arguments are summed with VALU carries through VCC (and a buffer's 64-bit
  // products write it); LDS and scratch addresses are 32-bit sums without carries.
  const bool writes_vcc =
      std::any_of(in.args.begin(), in.args.end(), [](const EnvelopeArgument& arg) {
        if (arg.kind != EnvelopeArgument::Kind::address) return false;
        switch (arg.form) {
          case AddressForm::global:
            return arg.has_base || arg.offset != 0;
          case AddressForm::lds:
          case AddressForm::scratch:
            return false;
          default:
            return true;
        }
      });
  if (buffer_scratch)
    for (unsigned i = 0; i < 4; ++i) written.sgpr[i] = true;
  written.sgpr[kLinkPair] = written.sgpr[kLinkPair + 1] = written.sgpr[kStackPointer] = true;
  if (in.clobbers.agpr.any())
    fail(where, "the probe writes AGPRs (" + in.clobbers.to_string() +
                    "): the envelope does not save AGPRs yet");

  // What must be saved: live and written. A VGPR an argument reads is saved too when the
  // envelope overwrites it before the argument is read, so that the argument comes from the
  // saved copy.
  // A VGPR passed by reference is always saved: its new value goes to the saved copy, which the
  // restore then loads.
  std::vector<unsigned> vgprs, sgprs;
  const EnvelopeArgument* reference = nullptr;
  for (const EnvelopeArgument& arg : in.args)
    if (arg.by_reference) reference = &arg;
  for (unsigned i = 0; i < 256; ++i) {
    bool save = in.live.vgpr[i] && written.vgpr[i];
    for (const EnvelopeArgument& arg : in.args) {
      const bool reads =
          arg.kind == EnvelopeArgument::Kind::vgpr || arg.kind == EnvelopeArgument::Kind::address;
      if (reads && i >= arg.first && i < arg.first + arg.count &&
          (written.vgpr[i] || arg.by_reference))
        save = true;
    }
    if (save) vgprs.push_back(i);
  }
  for (unsigned i = 0; i < kNumberedSgprs; ++i)
    if (in.live.sgpr[i] && written.sgpr[i]) sgprs.push_back(i);
  const unsigned temp = arg_dwords;  // the SGPR-spill VGPRs: v[temp], v[temp + 1]
  const unsigned temps = static_cast<unsigned>((sgprs.size() + 63) / 64);
  std::vector<std::uint64_t> vgpr_offset(256, 0);
  std::uint64_t spill = 0;
  for (unsigned reg : vgprs) {
    vgpr_offset[reg] = spill;
    spill += 4;
  }
  const std::uint64_t sgpr_spill = spill;
  spill += 4 * temps;
  if (spill > 4095) fail(where, "the spill area exceeds the 4095-byte offset field");

  const bool save_scc = in.live.scc;
  // VCC as an argument is read from its saved copy (an address argument may have used VCC for
  // its carries by then), and by reference it is written there.
  const bool vcc_argument = std::any_of(
      in.args.begin(), in.args.end(),
      [](const EnvelopeArgument& arg) { return arg.kind == EnvelopeArgument::Kind::vcc; });
  const bool save_vcc = vcc_argument || (in.live.vcc() && (in.clobbers.vcc() || writes_vcc));
  const bool save_m0 = in.live.m0() && in.clobbers.m0();
  const unsigned exec_save = in.call.exec_save;

  auto store = [&](unsigned reg, std::uint64_t offset) {
    return buffer_scratch ? "buffer_store_dword " + v(reg) + ", off, s[" +
                                std::to_string(in.call.scratch_resource) + ":" +
                                std::to_string(in.call.scratch_resource + 3) + "], " +
                                s(spill_offset) + " offset:" + std::to_string(offset) + "\n"
                          : "scratch_store_dword off, " + v(reg) + ", " + s(spill_offset) +
                                " offset:" + std::to_string(offset) + "\n";
  };
  auto load = [&](unsigned reg, std::uint64_t offset) {
    return buffer_scratch ? "buffer_load_dword " + v(reg) + ", off, s[" +
                                std::to_string(in.call.scratch_resource) + ":" +
                                std::to_string(in.call.scratch_resource + 3) + "], " +
                                s(spill_offset) + " offset:" + std::to_string(offset) + "\n"
                          : "scratch_load_dword " + v(reg) + ", off, " + s(spill_offset) +
                                " offset:" + std::to_string(offset) + "\n";
  };
  // Per-lane offsets are per-wave ones x 64 where the scratch resource is swizzled (MUBUF
  // soffset and s32 on gfx908/gfx90a); gfx942's architected flat scratch takes them per lane.
  const std::uint64_t lanes = buffer_scratch ? 64 : 1;

  std::ostringstream b;
  // 1. Everything in flight lands first (loads issued before the point, the kernel's stores).
  b << "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n";
  if (in.scratch_resource_in_slot) {
    b << "s_load_dwordx4 s[" << in.call.scratch_resource << ":" << in.call.scratch_resource + 3
      << "], " << spair(in.reserved.slot) << ", " << hex(*in.scratch_resource_in_slot) << "\n";
    b << "s_waitcnt lgkmcnt(0)\n";
  }
  if (save_scc) b << "s_cselect_b32 " << s(in.reserved.scc_save) << ", 1, 0\n";
  // 2. EXEC saved, all ones for the save window (inactive lanes' registers are saved too).
  b << "s_mov_b64 " << spair(exec_save) << ", exec\n";
  b << "s_mov_b64 exec, -1\n";
  if (save_vcc) b << "s_mov_b64 " << spair(in.call.vcc_save) << ", vcc\n";
  if (save_m0) b << "s_mov_b32 " << s(in.call.m0_save) << ", m0\n";
  // 3. VGPRs to scratch, then SGPRs through v_writelane into the temporaries, also to scratch
  // (never through scalar memory: a probe's s_dcache_inv would lose it).
  if (in.stack_relative)
    b << "s_add_u32 " << s(spill_offset) << ", " << s(kStackPointer) << ", "
      << hex(in.spill_base * lanes) << "\n";
  else
    b << "s_mov_b32 " << s(spill_offset) << ", " << hex(in.spill_base * lanes) << "\n";
  for (unsigned reg : vgprs) b << store(reg, vgpr_offset[reg]);
  for (std::size_t i = 0; i < sgprs.size(); ++i)
    b << "v_writelane_b32 " << v(temp + static_cast<unsigned>(i / 64)) << ", " << s(sgprs[i])
      << ", " << i % 64 << "\n";
  if (temps) b << "s_nop 1\n";
  for (unsigned t = 0; t < temps; ++t) b << store(temp + t, sgpr_spill + 4 * t);
  if (!vgprs.empty() || temps) b << "s_waitcnt vmcnt(0)\n";

  // 4. Arguments: the slot in v[0:1], then the plan's, in order. A VGPR the envelope has
  // overwritten already is read back from its saved copy.
  const auto fetch = [&](unsigned destination, unsigned source) {
    return written.vgpr[source] ? load(destination, vgpr_offset[source])
                                : "v_mov_b32 " + v(destination) + ", " + v(source) + "\n";
  };
  unsigned next = 2;
  for (const EnvelopeArgument& arg : in.args) {
    switch (arg.kind) {
      case EnvelopeArgument::Kind::immediate32:
        b << "v_mov_b32 " << v(next) << ", " << hex(arg.value & 0xffffffff) << "\n";
        break;
      case EnvelopeArgument::Kind::immediate64:
        b << "v_mov_b32 " << v(next) << ", " << hex(arg.value & 0xffffffff) << "\n";
        b << "v_mov_b32 " << v(next + 1) << ", " << hex(arg.value >> 32) << "\n";
        break;
      case EnvelopeArgument::Kind::sgpr:
        for (unsigned i = 0; i < arg.count; ++i)
          b << "v_mov_b32 " << v(next + i) << ", " << s(arg.first + i) << "\n";
        break;
      case EnvelopeArgument::Kind::vgpr:
        for (unsigned i = 0; i < arg.count; ++i) {
          const unsigned source = arg.first + i;
          if (written.vgpr[source])
            b << load(next + i, vgpr_offset[source]);
          else
            b << "v_mov_b32 " << v(next + i) << ", " << v(source) << "\n";
        }
        break;
      case EnvelopeArgument::Kind::address:
        b << address_code(arg, next, temp, in.call.target, in.misdecode_swizzle, fetch);
        break;
      case EnvelopeArgument::Kind::exec:
        b << "v_mov_b32 " << v(next) << ", " << s(exec_save) << "\n";
        b << "v_mov_b32 " << v(next + 1) << ", " << s(exec_save + 1) << "\n";
        break;
      case EnvelopeArgument::Kind::vcc:
        b << "v_mov_b32 " << v(next) << ", " << s(in.call.vcc_save) << "\n";
        b << "v_mov_b32 " << v(next + 1) << ", " << s(in.call.vcc_save + 1) << "\n";
        break;
      case EnvelopeArgument::Kind::slot_offset:
        // slot + offset with scalar adds into the callee pair, free until the GOT load.
        b << "s_add_u32 " << s(in.call.target) << ", " << s(in.reserved.slot) << ", "
          << hex(arg.value) << "\n";
        b << "s_addc_u32 " << s(in.call.target + 1) << ", " << s(in.reserved.slot + 1) << ", 0\n";
        b << "v_mov_b32 " << v(next) << ", " << s(in.call.target) << "\n";
        b << "v_mov_b32 " << v(next + 1) << ", " << s(in.call.target + 1) << "\n";
        break;
    }
    next += arg.dwords();
  }
  b << "s_waitcnt vmcnt(0)\n";
  b << "v_mov_b32 v0, " << s(in.reserved.slot) << "\n";
  b << "v_mov_b32 v1, " << s(in.reserved.slot + 1) << "\n";

  // 5. The ABI inputs a separately compiled function expects: the scratch resource
  // (gfx908/gfx90a; gfx942 addresses scratch through the architected FLAT_SCRATCH) and the
  // stack pointer above the spill area. The probes read ids from the capture region, not from
  // s[4:5], s[8:9], s12-s14 or v31.
  if (buffer_scratch) {
    b << "s_mov_b64 s[0:1], " << spair(in.call.scratch_resource) << "\n";
    b << "s_mov_b64 s[2:3], " << spair(in.call.scratch_resource + 2) << "\n";
  }
  // (SCC is free here: saved above when live.)
  if (in.stack_relative)
    b << "s_add_u32 " << s(kStackPointer) << ", " << s(spill_offset) << ", "
      << hex((in.stack_base - in.spill_base) * lanes) << "\n";
  else
    b << "s_mov_b32 " << s(kStackPointer) << ", " << hex(in.stack_base * lanes) << "\n";
  // The caller's EXEC for the call, unless the probe asked for all lanes.
  if (!in.uniform) b << "s_mov_b64 exec, " << spair(exec_save) << "\n";
  // A uniform register passed by reference takes the first active lane's return value (step 6):
  // the lanes the probe does not run for hold the register's value in v0 (v[0:1]), so that with
  // no lane active (a block entered with EXEC zero) it keeps its value. (SCC is free here.)
  if (reference && reference->kind != EnvelopeArgument::Kind::vgpr && !in.uniform) {
    unsigned position = 2;
    for (const EnvelopeArgument& arg : in.args) {
      if (&arg == reference) break;
      position += arg.dwords();
    }
    b << "s_not_b64 exec, exec\n";
    for (unsigned i = 0; i < reference->dwords(); ++i)
      b << "v_mov_b32 " << v(i) << ", " << v(position + i) << "\n";
    b << "s_not_b64 exec, exec\n";
  }

  Envelope envelope;
  envelope.before = b.str();
  envelope.target_pair = in.call.target;
  envelope.spill_bytes = spill;

  std::ostringstream a;
  const std::string target = spair(in.call.target);
  a << "s_load_dwordx2 " << target << ", " << target << ", 0x0\n";
  a << "s_waitcnt lgkmcnt(0)\n";
  a << "s_swappc_b64 s[30:31], " << target << "\n";
  // 6. A register passed by reference takes the probe's return value: a VGPR in its saved copy,
  // for the lanes the probe was called for (the point's EXEC, also after a uniform call); an
  // SGPR through the callee pair, free now, written after the restore; EXEC and VCC in their
  // saved copies, which the restore puts back.
  std::string reference_after_restore;
  if (reference) {
    using Kind = EnvelopeArgument::Kind;
    const unsigned dwords = reference->dwords();
    switch (reference->kind) {
      case Kind::vgpr:
        if (in.uniform) a << "s_mov_b64 exec, " << spair(exec_save) << "\n";
        for (unsigned i = 0; i < dwords; ++i) a << store(i, vgpr_offset[reference->first + i]);
        a << "s_waitcnt vmcnt(0)\n";
        break;
      case Kind::sgpr:
        for (unsigned i = 0; i < dwords; ++i) {
          a << "v_readfirstlane_b32 " << s(in.call.target + i) << ", " << v(i) << "\n";
          reference_after_restore +=
              "s_mov_b32 " + s(reference->first + i) + ", " + s(in.call.target + i) + "\n";
        }
        break;
      case Kind::exec:
      case Kind::vcc: {
        const unsigned saved = reference->kind == Kind::exec ? exec_save : in.call.vcc_save;
        a << "v_readfirstlane_b32 " << s(saved) << ", v0\n";
        a << "v_readfirstlane_b32 " << s(saved + 1) << ", v1\n";
        break;
      }
      default:
        fail(where, "internal: only a register can be passed by reference");
    }
  }
  // 7. Restore in reverse, under EXEC all ones.
  a << "s_mov_b64 exec, -1\n";
  if (temps) {
    for (unsigned t = 0; t < temps; ++t) a << load(temp + t, sgpr_spill + 4 * t);
    a << "s_waitcnt vmcnt(0)\n";
    for (std::size_t i = 0; i < sgprs.size(); ++i) {
      if (in.skip_one_restore && vgprs.empty() && i == 0) continue;
      a << "v_readlane_b32 " << s(sgprs[i]) << ", " << v(temp + static_cast<unsigned>(i / 64))
        << ", " << i % 64 << "\n";
    }
  }
  for (std::size_t i = 0; i < vgprs.size(); ++i) {
    if (in.skip_one_restore && i == 0) continue;
    a << load(vgprs[i], vgpr_offset[vgprs[i]]);
  }
  a << "s_waitcnt vmcnt(0)\n";
  if (save_m0) a << "s_mov_b32 m0, " << s(in.call.m0_save) << "\n";
  if (save_vcc) a << "s_mov_b64 vcc, " << spair(in.call.vcc_save) << "\n";
  a << "s_mov_b64 exec, " << spair(exec_save) << "\n";
  if (save_scc) a << "s_cmp_lg_u32 " << s(in.reserved.scc_save) << ", 0\n";
  a << reference_after_restore;
  // gfx9 hazards: an SGPR written by a VALU (v_readlane) read by VMEM or as a VALU lane select
  // needs up to 5 wait states; M0 written by SALU then read by LDS/s_sendmsg needs one.
  a << "s_nop 4\n";
  envelope.after = a.str();
  return envelope;
}

}  // namespace wavekit::rewrite::detail
