// Clang offload bundles (clang/lib/Driver/OffloadBundler.cpp, uncompressed format):
//   "__CLANG_OFFLOAD_BUNDLE__"  u64 entry count
//   per entry: u64 offset, u64 size, u64 triple length, triple bytes
//   then the entries' bytes at their offsets.
#include "wavekit/codeobj/bundle.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cstring>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"

namespace wavekit::codeobj {

namespace {

constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::size_t kBundleMagicSize = sizeof(kBundleMagic) - 1;
constexpr char kCompressedMagic[] = "CCOB";
// HIP bundles align each entry to 4096 bytes (clang passes -bundle-align=4096 for HIP).
constexpr std::uint64_t kEntryAlignment = 4096;

std::uint64_t read_u64(std::span<const std::uint8_t> bytes, std::uint64_t offset,
                       const std::string& context) {
  if (offset > bytes.size() || bytes.size() - offset < 8) {
    fail(context, "truncated offload bundle header");
  }
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, 8);
  return value;
}

}  // namespace

bool BundleEntry::is_amdgpu() const {
  return triple.find("amdgcn-amd-amdhsa") != std::string::npos;
}

std::string BundleEntry::processor() const {
  if (!is_amdgpu()) return "";
  // "<kind>-amdgcn-amd-amdhsa-<env>-<target id>": the target id follows the last '-' that
  // precedes "gfx".
  auto position = triple.rfind("gfx");
  return position == std::string::npos ? "" : triple.substr(position);
}

bool is_offload_bundle(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= kBundleMagicSize &&
         std::memcmp(bytes.data(), kBundleMagic, kBundleMagicSize) == 0;
}

bool is_elf(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0;
}

std::vector<BundleEntry> parse_bundle(std::span<const std::uint8_t> bytes,
                                      const std::string& context) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), kCompressedMagic, 4) == 0) {
    fail(context,
         "compressed offload bundles are not supported (CCOB magic); unbundle with "
         "clang-offload-bundler -unbundle first");
  }
  if (!is_offload_bundle(bytes))
    fail(context, "not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)");
  std::uint64_t count = read_u64(bytes, kBundleMagicSize, context);
  // Each entry needs at least 24 header bytes: a larger count cannot be real.
  if (count > bytes.size() / 24)
    fail(context, "offload bundle claims " + std::to_string(count) + " entries");
  std::vector<BundleEntry> entries;
  std::uint64_t cursor = kBundleMagicSize + 8;
  for (std::uint64_t i = 0; i < count; ++i) {
    BundleEntry entry;
    entry.offset = read_u64(bytes, cursor, context);
    std::uint64_t size = read_u64(bytes, cursor + 8, context);
    std::uint64_t triple_size = read_u64(bytes, cursor + 16, context);
    cursor += 24;
    if (triple_size > bytes.size() - cursor) fail(context, "truncated offload bundle entry triple");
    entry.triple.assign(reinterpret_cast<const char*>(bytes.data() + cursor), triple_size);
    // clang writes target triples in printable ASCII; anything else is corruption, and would
    // end up in messages and JSON (which must be UTF-8).
    if (!std::all_of(entry.triple.begin(), entry.triple.end(),
                     [](char c) { return c >= 0x20 && c < 0x7f; }))
      fail(context, "offload bundle entry " + std::to_string(i) +
                        " has a target triple that is not printable ASCII");
    cursor += triple_size;
    if (entry.offset > bytes.size() || size > bytes.size() - entry.offset) {
      fail(context, "offload bundle entry " + entry.triple + " lies outside the bundle");
    }
    entry.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(entry.offset),
                       bytes.begin() + static_cast<std::ptrdiff_t>(entry.offset + size));
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<std::uint8_t> write_bundle(const std::vector<BundleEntry>& entries) {
  std::vector<std::uint8_t> out(kBundleMagic, kBundleMagic + kBundleMagicSize);
  auto append_u64 = [&out](std::uint64_t value) {
    auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
    out.insert(out.end(), bytes, bytes + 8);
  };
  append_u64(entries.size());
  std::uint64_t header_size = out.size();
  for (const auto& entry : entries) header_size += 24 + entry.triple.size();
  std::vector<std::uint64_t> offsets;
  std::uint64_t cursor = header_size;
  for (const auto& entry : entries) {
    // Empty entries (the host entry of a device-only bundle) take no space.
    if (!entry.bytes.empty())
      cursor = (cursor + kEntryAlignment - 1) / kEntryAlignment * kEntryAlignment;
    offsets.push_back(cursor);
    cursor += entry.bytes.size();
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    append_u64(offsets[i]);
    append_u64(entries[i].bytes.size());
    append_u64(entries[i].triple.size());
    out.insert(out.end(), entries[i].triple.begin(), entries[i].triple.end());
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out.resize(offsets[i], 0);
    out.insert(out.end(), entries[i].bytes.begin(), entries[i].bytes.end());
  }
  return out;
}

std::vector<std::uint8_t> extract_hip_fatbin(std::span<const std::uint8_t> host_elf,
                                             const std::string& context) {
  llvm::MemoryBufferRef buffer(
      llvm::StringRef(reinterpret_cast<const char*>(host_elf.data()), host_elf.size()), context);
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object) fail(context, "not a readable object file: " + llvm::toString(object.takeError()));
  for (const auto& section : (*object)->sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".hip_fatbin") continue;
    auto contents = section.getContents();
    if (!contents)
      fail(context, ".hip_fatbin is unreadable: " + llvm::toString(contents.takeError()));
    return std::vector<std::uint8_t>(contents->begin(), contents->end());
  }
  fail(context, "no .hip_fatbin section: not a HIP fat binary");
}

std::vector<BundleEntry> find_code_objects(std::span<const std::uint8_t> bytes,
                                           const std::string& context) {
  std::vector<BundleEntry> found;
  if (is_offload_bundle(bytes) ||
      (bytes.size() >= 4 && std::memcmp(bytes.data(), kCompressedMagic, 4) == 0)) {
    for (auto& entry : parse_bundle(bytes, context)) {
      if (entry.is_amdgpu() && !entry.bytes.empty()) found.push_back(std::move(entry));
    }
    return found;
  }
  if (!is_elf(bytes)) fail(context, "neither an ELF file nor an offload bundle");
  constexpr std::size_t kMachineOffset = 18;
  std::uint16_t machine = 0;
  if (bytes.size() >= kMachineOffset + 2) std::memcpy(&machine, bytes.data() + kMachineOffset, 2);
  if (machine == llvm::ELF::EM_AMDGPU) {
    CodeObject object = CodeObject::parse(bytes, context);
    found.push_back(BundleEntry{"amdgcn-amd-amdhsa--" + object.target().target_id(), 0,
                                std::vector<std::uint8_t>(bytes.begin(), bytes.end())});
    return found;
  }
  std::vector<std::uint8_t> fatbin = extract_hip_fatbin(bytes, context);
  return find_code_objects(fatbin, context + " (.hip_fatbin)");
}

}  // namespace wavekit::codeobj
