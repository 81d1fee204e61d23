#include "wavekit/preload/fat_binary.h"

#include <cstring>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/support/error.h"

namespace wavekit::preload {

namespace {

constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::uint64_t kBundleMagicSize = sizeof(kBundleMagic) - 1;
// Real bundles hold a handful of entries with triples of a few dozen bytes; these bounds only
// stop a garbage header from sending the reader far beyond it.
constexpr std::uint64_t kMaxEntries = 1024;
constexpr std::uint64_t kMaxTripleBytes = 1024;

std::uint64_t load_u64(const std::uint8_t* at) {
  std::uint64_t value = 0;
  std::memcpy(&value, at, sizeof value);
  return value;
}

template <typename T>
T load(const std::uint8_t* at) {
  T value{};
  std::memcpy(&value, at, sizeof value);
  return value;
}

// The processor of a target id ("gfx90a" of "gfx90a:xnack-") and its features ("xnack-").
std::pair<std::string_view, std::vector<std::string_view>> split_target(std::string_view id) {
  std::vector<std::string_view> features;
  std::size_t colon = id.find(':');
  std::string_view processor = id.substr(0, colon);
  while (colon != std::string_view::npos) {
    std::size_t next = id.find(':', colon + 1);
    features.push_back(
        id.substr(colon + 1, next == std::string_view::npos ? next : next - colon - 1));
    colon = next;
  }
  return {processor, features};
}

}  // namespace

bool is_compressed_bundle(const std::uint8_t* start) { return std::memcmp(start, "CCOB", 4) == 0; }

std::uint64_t offload_bundle_extent(const std::uint8_t* start) {
  if (std::memcmp(start, kBundleMagic, kBundleMagicSize) != 0)
    throw Error("HIP fat binary: no __CLANG_OFFLOAD_BUNDLE__ magic");
  const std::uint64_t count = load_u64(start + kBundleMagicSize);
  if (count == 0 || count > kMaxEntries)
    throw Error("HIP fat binary: implausible offload bundle entry count " + std::to_string(count));
  std::uint64_t cursor = kBundleMagicSize + 8;
  std::uint64_t extent = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t offset = load_u64(start + cursor);
    const std::uint64_t size = load_u64(start + cursor + 8);
    const std::uint64_t triple_size = load_u64(start + cursor + 16);
    if (triple_size > kMaxTripleBytes)
      throw Error("HIP fat binary: offload bundle entry " + std::to_string(i) +
                  " has an implausible triple length " + std::to_string(triple_size));
    cursor += 24 + triple_size;
    if (offset > kMaxBundleBytes || size > kMaxBundleBytes - offset)
      throw Error("HIP fat binary: offload bundle entry " + std::to_string(i) + " lies beyond " +
                  std::to_string(kMaxBundleBytes) + " bytes");
    extent = std::max(extent, offset + size);
  }
  // The entries follow the header; one that overlaps it is a corrupt header.
  for (std::uint64_t i = 0, at = kBundleMagicSize + 8; i < count; ++i) {
    const std::uint64_t offset = load_u64(start + at);
    const std::uint64_t size = load_u64(start + at + 8);
    if (size != 0 && offset < cursor)
      throw Error("HIP fat binary: offload bundle entry " + std::to_string(i) +
                  " overlaps the bundle header");
    at += 24 + load_u64(start + at + 16);
  }
  return std::max(extent, cursor);
}

std::uint64_t elf_extent(const std::uint8_t* start) {
  if (std::memcmp(start,
                  "\x7f"
                  "ELF",
                  4) != 0)
    throw Error("code object: not an ELF file");
  if (start[4] != 2 || start[5] != 1)
    throw Error("code object: not a 64-bit little-endian ELF file");
  // Elf64_Ehdr: e_phoff at 32, e_shoff at 40, e_phentsize at 54, e_phnum at 56,
  // e_shentsize at 58, e_shnum at 60.
  const auto program_headers = load<std::uint64_t>(start + 32);
  const auto section_headers = load<std::uint64_t>(start + 40);
  const auto program_header_size = load<std::uint16_t>(start + 54);
  const auto program_header_count = load<std::uint16_t>(start + 56);
  const auto section_header_size = load<std::uint16_t>(start + 58);
  const auto section_header_count = load<std::uint16_t>(start + 60);
  if ((program_header_count && program_header_size < 56) ||
      (section_header_count && section_header_size < 64))
    throw Error("code object: ELF header gives impossible header sizes");
  if (program_headers > kMaxBundleBytes || section_headers > kMaxBundleBytes)
    throw Error("code object: ELF header tables lie beyond " + std::to_string(kMaxBundleBytes) +
                " bytes");
  std::uint64_t extent = 64;
  auto cover = [&extent](std::uint64_t offset, std::uint64_t size) {
    if (offset > kMaxBundleBytes || size > kMaxBundleBytes - offset)
      throw Error("code object: ELF contents lie beyond " + std::to_string(kMaxBundleBytes) +
                  " bytes");
    extent = std::max(extent, offset + size);
  };
  cover(program_headers, std::uint64_t{program_header_count} * program_header_size);
  cover(section_headers, std::uint64_t{section_header_count} * section_header_size);
  for (std::uint16_t i = 0; i < program_header_count; ++i) {
    const std::uint8_t* header = start + program_headers + std::uint64_t{i} * program_header_size;
    cover(load<std::uint64_t>(header + 8), load<std::uint64_t>(header + 32));  // p_offset, p_filesz
  }
  constexpr std::uint32_t kNoBits = 8;  // SHT_NOBITS: no bytes in the file
  for (std::uint16_t i = 0; i < section_header_count; ++i) {
    const std::uint8_t* header = start + section_headers + std::uint64_t{i} * section_header_size;
    if (load<std::uint32_t>(header + 4) == kNoBits) continue;
    cover(load<std::uint64_t>(header + 24),
          load<std::uint64_t>(header + 32));  // sh_offset, sh_size
  }
  return extent;
}

std::vector<std::string> parse_hip_targets(std::string_view text) {
  std::vector<std::string> targets;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    std::size_t end = text.find(',', begin);
    std::string_view id = text.substr(begin, end == std::string_view::npos ? end : end - begin);
    auto [processor, features] = split_target(id);
    bool valid = processor.size() > 3 && processor.substr(0, 3) == "gfx";
    for (std::string_view feature : features)
      valid = valid && feature.size() > 1 && (feature.back() == '+' || feature.back() == '-');
    if (!valid)
      throw Error("WAVEKIT_HIP_TARGET: '" + std::string(id) +
                  "' is not a target id like gfx90a or gfx90a:xnack-");
    targets.emplace_back(id);
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return targets;
}

bool target_runs_on(std::string_view entry_target, std::string_view wanted) {
  auto [entry_processor, entry_features] = split_target(entry_target);
  auto [wanted_processor, wanted_features] = split_target(wanted);
  if (entry_processor != wanted_processor) return false;
  if (wanted_features.empty()) return true;
  for (std::string_view feature : entry_features) {
    bool same_setting = false;
    for (std::string_view setting : wanted_features)
      same_setting = same_setting || setting == feature;
    if (!same_setting) return false;
  }
  return true;
}

bool already_instrumented(std::span<const std::uint8_t> code_object) {
  try {
    return rewrite::find_note(codeobj::CodeObject::parse(code_object, "code object")).has_value();
  } catch (const Error&) {
    return false;
  }
}

bool FatBinarySubstitution::changed() const {
  for (const EntryOutcome& outcome : outcomes)
    if (outcome.substituted) return true;
  return false;
}

FatBinarySubstitution substitute_fat_binary(std::span<const std::uint8_t> bundle,
                                            const std::vector<std::string>& targets,
                                            const Substituter& substituter) {
  std::vector<codeobj::BundleEntry> entries = codeobj::parse_bundle(bundle, "HIP fat binary");
  FatBinarySubstitution result;
  for (codeobj::BundleEntry& entry : entries) {
    if (!entry.is_amdgpu()) continue;
    bool chosen = targets.empty();
    for (const std::string& wanted : targets)
      chosen = chosen || target_runs_on(entry.processor(), wanted);
    if (!chosen) continue;
    EntryOutcome outcome;
    outcome.triple = entry.triple;
    if (already_instrumented(entry.bytes)) {
      outcome.detail = "already instrumented";
      outcome.quiet = true;
      result.outcomes.push_back(std::move(outcome));
      continue;
    }
    auto substituted = substituter.substitute(entry.bytes);
    if (auto* substitution = std::get_if<Substitution>(&substituted)) {
      // The runtime gets the instrumented object (its kernarg layout and segment sizes are the
      // ones the dispatches need); the shim adopts it when it reaches HSA, loading the probe
      // library its note names into the runtime's executable.
      entry.bytes = std::move(substitution->bytes);
      outcome.substituted = true;
      outcome.detail = substitution->origin;
    } else if (std::holds_alternative<Deferred>(substituted)) {
      // The HSA runtime gets the original, and the shim rewrites each kernel there, at its
      // first selected dispatch, with a kernarg segment of its own (the program's is the
      // original's size).
      outcome.detail = "instrumented at each kernel's first selected dispatch";
      outcome.quiet = true;
    } else {
      const Declined& declined = std::get<Declined>(substituted);
      outcome.detail = declined.reason;
      outcome.quiet = declined.quiet;
    }
    result.outcomes.push_back(std::move(outcome));
  }
  // Repacking moves every entry to the bundler's alignment; an unchanged bundle is handed back
  // as it came so that a run without instrumentation sees exactly the program's bytes.
  if (result.changed())
    result.bundle = codeobj::write_bundle(entries);
  else
    result.bundle.assign(bundle.begin(), bundle.end());
  return result;
}

}  // namespace wavekit::preload
