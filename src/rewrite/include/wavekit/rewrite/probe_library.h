// Probe libraries: code objects of HIP-dialect device functions (WAVEKIT_PROBE) that a
// rewritten object calls. wavekit_add_probe_library() (cmake/ProbeLibrary.cmake) builds one with
// clang-22 and ld.lld-22, then `wavekit probe-lib` post-processes it here:
//
// - an STT_OBJECT GLOBAL alias "__wavekit_probe.<name>" at each probe's address, in .dynsym and
//   .symtab: the ROCr loader resolves a rewritten object's undefined STT_NOTYPE references only
//   against objects and kernels, never functions (amdgpu-codeobject.md §9);
// - a WAVEKIT note (type kNoteTypeProbes) with each probe's transitive footprint computed from
//   its disassembly: the registers it and everything it calls may write, and the scratch it
//   needs. The call envelope saves what is live and in this set, and trusts no fixed
//   callee-saved table (those changed between LLVM releases).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavekit/isa/isa.h"

namespace wavekit::codeobj {
class CodeObject;
}

namespace wavekit::rewrite {

inline constexpr std::uint32_t kNoteTypeProbes = 2;
inline constexpr const char* kProbeNoteSectionName = ".note.wavekit.probes";
inline constexpr const char* kProbeAliasPrefix = "__wavekit_probe.";

struct ProbeFootprint {
  std::string name;   // the probe function
  std::string alias;  // "__wavekit_probe.<name>"
  std::uint64_t address = 0;
  unsigned sgpr_count = 0;  // highest numbered SGPR written + 1 (s0..s101), transitively
  unsigned vgpr_count = 0;  // highest VGPR written + 1
  unsigned agpr_count = 0;  // highest AGPR written + 1
  bool writes_vcc = false;
  bool writes_m0 = false;
  bool writes_exec = false;
  bool writes_scc = false;
  std::uint64_t scratch_bytes = 0;  // per lane: its own frame plus the deepest callee chain
  // Some function in the chain addresses its frame through a computed pointer (an
  // address-taken local), so scratch_bytes is only a lower bound: a call envelope must not
  // trust it.
  bool scratch_unbounded = false;
  bool calls = false;                // makes calls (directly)
  std::vector<std::string> callees;  // names (or "0x<addr>") of what it calls, transitively
  std::string clobbers;              // the written registers, as text ("s[0:5] v[0:3] vcc scc")
};

// Computes every probe's footprint (probes: the object's exported, default-visibility
// functions) and returns the post-processed object. Throws wavekit::Error naming the probe
// for what it cannot analyse (an indirect call, a call target that is not a function).
std::vector<std::uint8_t> post_process_probe_library(const codeobj::CodeObject& library,
                                                     std::vector<ProbeFootprint>* footprints);

std::vector<std::uint8_t> encode_probe_note(const std::vector<ProbeFootprint>& probes);
std::vector<ProbeFootprint> decode_probe_note(std::span<const std::uint8_t> desc,
                                              const std::string& context);
// The probe note of a post-processed library; nullopt for a library not post-processed.
std::optional<std::vector<ProbeFootprint>> find_probe_note(const codeobj::CodeObject& library);
nlohmann::json footprint_to_json(const ProbeFootprint& probe);
// The registers in `probe.clobbers` (isa::RegisterSet::to_string's notation, read back). Throws
// wavekit::Error for a name it does not know.
isa::RegisterSet clobber_set(const ProbeFootprint& probe);

}  // namespace wavekit::rewrite
