// The call envelope (rewriting.md §5): the code around a call from an instrumented kernel to a
// probe of a separately compiled probe library, through a GOT slot the loader fills.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "entry_abi.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/isa/isa.h"
#include "wavekit/rewrite/probe_library.h"

namespace wavekit::rewrite::detail {

// SGPRs of the envelope. Where the kernel leaves room they are a block right above the reserved
// SGPRs (block()), and so, like those, above every SGPR the kernel, its callees and the probes
// touch. A kernel that leaves no room keeps the scratch resource for good if it can and takes
// the others at each point from SGPRs dead there that the probe does not write
// (Engine::point_call_sgprs); the scratch resource too where even that does not fit, loaded
// at each point from the wave's slot (EnvelopeInput::scratch_resource_in_slot).
struct CallSgprs {
  unsigned scratch_resource = 0;  // s[r:r+3], gfx908/gfx90a: the wave's scratch V#
  unsigned exec_save = 0;         // a pair
  unsigned vcc_save = 0;          // a pair
  unsigned m0_save = 0;
  unsigned spill_offset = 0;  // soffset / saddr of the spill area
  unsigned target = 0;        // a pair: the GOT slot, then the callee
  static constexpr unsigned kCount = 12;
  // From `base`, a multiple of 4: the scratch resource, exec_save, vcc_save, m0_save,
  // spill_offset, target.
  static CallSgprs block(unsigned base) {
    return {base, base + 4, base + 6, base + 8, base + 9, base + 10};
  }
};

// How a memory instruction forms its address (an `address` argument; docs/rewrite.md says what
// the probe receives for each).
enum class AddressForm {
  global,         // FLAT / GLOBAL: v[first:first+1], or s[base:base+1] + 32-bit v[first]
  lds,            // DS: 32-bit v[first] + offset
  scratch,        // SCRATCH: 32-bit v[first] (has_vaddr) + s[base] (has_base) + offset
  scalar,         // SMEM: s[base:base+1] + s[soffset] (has_soffset) + offset, bits 1:0 cleared
  scalar_buffer,  // s_buffer_*: the V# s[base:base+3]'s base + (s[soffset] + offset) & ~3
  buffer,         // MUBUF / MTBUF: the V# s[base:base+3]'s base + s[soffset] + constant_soffset
                  // + index (indexed: v[first]; + the lane id under ADD_TID) and
                  // o = v[first + indexed] (has_vaddr) + offset, linear or swizzled as the V#
                  // says at run time
};

// A probe argument, resolved for one point.
struct EnvelopeArgument {
  // address: a memory instruction's effective address, per `form`; VGPRs read are
  // v[first:first+count-1].
  enum class Kind { immediate32, immediate64, sgpr, vgpr, exec, vcc, slot_offset, address };
  Kind kind = Kind::immediate32;
  // sgpr / vgpr / exec / vcc: the probe's return value (v0, v[0:1] for two dwords) becomes the
  // register's value after the call (plan.h: register_reference).
  bool by_reference = false;
  std::uint64_t value = 0;  // immediate; slot_offset: byte offset in the wave's slot
  unsigned first = 0;       // sgpr / vgpr / address: first register
  unsigned count = 1;       // sgpr / vgpr: 1 or 2 dwords; address: VGPRs read (0 to 2)
  bool has_base = false;    // address: an SGPR base (pair, single for scratch, V# for buffers)
  unsigned base = 0;
  std::int64_t offset = 0;  // address: the immediate offset (SMEM: a constant SOFFSET folded in)
  AddressForm form = AddressForm::global;
  bool has_vaddr = true;     // scratch / buffer: a VGPR offset takes part
  bool indexed = false;      // buffer: IDXEN, v[first] is the index
  bool has_soffset = false;  // scalar / scalar_buffer / buffer: an SGPR offset
  unsigned soffset = 0;
  // buffer: a constant SOFFSET, kept apart from `offset` because a swizzled V# interleaves
  // only the offset part.
  std::int64_t constant_soffset = 0;
  unsigned dwords() const {
    switch (kind) {
      case Kind::immediate32:
        return 1;
      case Kind::sgpr:
      case Kind::vgpr:
        return count;
      default:
        return 2;
    }
  }
};

struct EnvelopeInput {
  codeobj::Target target;
  ReservedSgprs reserved;
  CallSgprs call;
  isa::RegisterSet clobbers;  // the probe's transitive clobbers (its note)
  isa::RegisterSet live;      // live at the point (SCC, VCC, M0 included)
  std::vector<EnvelopeArgument> args;
  bool uniform = false;          // call with EXEC all ones
  std::uint64_t spill_base = 0;  // per lane: where the spill area starts
  std::uint64_t stack_base = 0;  // per lane: where the probe's stack starts
  // Inside a device function: a recursive call chain's frames grow past any fixed offset, so
  // the spill area starts spill_base above the s32 the point sees, and the probe's stack
  // (stack_base - spill_base) above it. Not at s32 itself: the function's own frame is not
  // always below s32 (a leaf addresses its frame upwards from s32; an epilogue moves s32 back to
  // the frame pointer before it reloads the registers it saved there), and spill_base, the
  // kernel's own private segment, bounds every function's frame on its static call chains.
  bool stack_relative = false;
  // Where the kernel cannot keep the scratch resource (gfx908/gfx90a): the slot offset the
  // prologue stored it at, from which the envelope loads it into call.scratch_resource.
  std::optional<std::uint64_t> scratch_resource_in_slot;
  // Negative controls only: NegativeControls (negative_controls.h) says what they do.
  bool skip_one_restore = false;
  bool misdecode_swizzle = false;
};

// The envelope's code, in two parts around the GOT-relative address computation, whose two
// 32-bit literals the engine patches once the slot and the code have addresses:
//   before  ... s_getpc_b64 s[t:t+1]; s_add_u32 st, st, LIT; s_addc_u32 st+1, st+1, LIT  after
struct Envelope {
  std::string before;
  std::string after;
  unsigned target_pair = 0;       // t
  std::uint64_t spill_bytes = 0;  // per lane, at most 4 * (VGPRs clobbered + 2)
};

// Throws wavekit::Error (with `where` in the message) for what the envelope cannot do.
Envelope call_envelope(const EnvelopeInput& in, const std::string& where);

// The envelope's temporary VGPRs: v0 .. v[argument dwords + 1] for the arguments, then one VGPR
// per 64 spilled SGPRs (at most two).
unsigned envelope_vgprs(const std::vector<EnvelopeArgument>& args);

}  // namespace wavekit::rewrite::detail
