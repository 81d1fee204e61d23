// HIP fat binaries at load time: a HIP host program registers its clang offload bundle with
// __hipRegisterFatBinary (or hands one to hipModuleLoadData) without saying how long it is, and
// the shim must give the runtime a bundle whose entries for the GPUs the process runs on are
// the instrumented ones. These functions are the shim's HIP path without the C ABI around it,
// so that tests reach them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/preload/substitution.h"

namespace wavekit::preload {

// The wrapper HIP host code passes to __hipRegisterFatBinary (clang's CGCUDANV and HIP's
// hip_fatbin.h agree on this layout).
struct HipFatBinaryWrapper {
  std::uint32_t magic;
  std::uint32_t version;
  const void* binary;
  void* reserved;
};
inline constexpr std::uint32_t kHipFatBinaryMagic = 0x48495046;  // "HIPF"

// Bundles larger than this are taken for garbage: the extent of a bundle is read from its own
// header, and a wild pointer must give an error, not a read of gigabytes.
inline constexpr std::uint64_t kMaxBundleBytes = std::uint64_t{1} << 32;

// True if `start` begins a compressed bundle ("CCOB"), which the shim passes through.
bool is_compressed_bundle(const std::uint8_t* start);

// How many bytes the uncompressed offload bundle at `start` spans (its header and the end of
// its furthest entry), read from the header alone. Throws wavekit::Error for a missing magic,
// an implausible entry count or triple length, or an entry beyond kMaxBundleBytes.
std::uint64_t offload_bundle_extent(const std::uint8_t* start);

// How many bytes the ELF file at `start` spans (headers, section and segment contents), from its
// headers alone. Throws wavekit::Error for anything but a 64-bit little-endian ELF.
std::uint64_t elf_extent(const std::uint8_t* start);

// WAVEKIT_HIP_TARGET: comma-separated target ids ("gfx90a", "gfx90a:xnack-"). Empty text gives
// an empty list (every AMDGPU entry is substituted). Throws wavekit::Error naming a malformed
// id.
std::vector<std::string> parse_hip_targets(std::string_view text);

// Whether a bundle entry for `entry_target` ("gfx90a", "gfx90a:xnack-") runs on `wanted`: the
// same processor, and every feature the entry fixes set the same way in `wanted` (an entry
// that leaves xnack unset runs either way; a bare wanted processor accepts every entry of it).
bool target_runs_on(std::string_view entry_target, std::string_view wanted);

// True if `code_object` is already wavekit's (it carries the WAVEKIT note). Such an object is
// passed through: instrumenting it again would count the probes' own code. False for bytes that
// are not a code object.
bool already_instrumented(std::span<const std::uint8_t> code_object);

// What happened to one AMDGPU entry of a bundle.
struct EntryOutcome {
  std::string triple;
  bool substituted = false;
  bool quiet = false;  // declined for a reason not worth a message (nothing to instrument)
  std::string detail;  // the substitution's origin, or why the entry was left as it was
};

struct FatBinarySubstitution {
  std::vector<std::uint8_t> bundle;    // repacked; equals the input when nothing was substituted
  std::vector<EntryOutcome> outcomes;  // the chosen AMDGPU entries, in bundle order
  bool changed() const;
};

// Substitutes the AMDGPU entries of `bundle` that run on one of `targets` (all of them when
// `targets` is empty) and repacks it; every other entry keeps its bytes. An entry the
// substituter declines, or one already instrumented, stays as it was. Throws wavekit::Error if
// `bundle` cannot be parsed (including compressed bundles).
FatBinarySubstitution substitute_fat_binary(std::span<const std::uint8_t> bundle,
                                            const std::vector<std::string>& targets,
                                            const Substituter& substituter);

}  // namespace wavekit::preload
