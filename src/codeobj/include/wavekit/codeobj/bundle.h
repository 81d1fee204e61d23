// Clang offload bundles ("__CLANG_OFFLOAD_BUNDLE__") and HIP fat binaries: the containers that
// carry one code object per GPU target. Compressed bundles ("CCOB") are refused with a clear
// message.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wavekit/support/error.h"

namespace wavekit::codeobj {

struct BundleEntry {
  std::string triple;        // "hipv4-amdgcn-amd-amdhsa--gfx90a", "host-x86_64-unknown-linux-gnu-"
  std::uint64_t offset = 0;  // in the bundle as read (0 for entries made in memory)
  std::vector<std::uint8_t> bytes;

  bool is_amdgpu() const;         // the triple names amdgcn-amd-amdhsa
  std::string processor() const;  // "gfx90a" (with features: "gfx90a:xnack+"), "" for host
};

// True if bytes start with the bundle magic.
bool is_offload_bundle(std::span<const std::uint8_t> bytes);
// True if bytes are an ELF (any kind).
bool is_elf(std::span<const std::uint8_t> bytes);

// Parses a bundle; throws wavekit::Error naming `context` for a truncated, inconsistent or
// compressed bundle.
std::vector<BundleEntry> parse_bundle(std::span<const std::uint8_t> bytes,
                                      const std::string& context);
// Writes a bundle in clang-offload-bundler's layout (entries' bytes aligned to 4096 like the
// bundler does; the offsets in `entries` are ignored).
std::vector<std::uint8_t> write_bundle(const std::vector<BundleEntry>& entries);

// The bundle inside a host ELF's `.hip_fatbin` section (clang -x hip output). Throws if the
// ELF has no such section.
std::vector<std::uint8_t> extract_hip_fatbin(std::span<const std::uint8_t> host_elf,
                                             const std::string& context);

// Whatever `bytes` is (AMDGPU code object, bundle, or host ELF with .hip_fatbin), the AMDGPU
// code objects it holds: {triple, bytes}. A plain code object gives one entry with the triple
// "amdgcn-amd-amdhsa--<processor>".
std::vector<BundleEntry> find_code_objects(std::span<const std::uint8_t> bytes,
                                           const std::string& context);

}  // namespace wavekit::codeobj
