// A stand-in for libamdhip64.so, for testing the preload shim's HIP path without ROCm: it
// defines what the host half of a clang HIP compilation calls; __hipRegisterFatBinary and
// hipModuleLoadData write what they are given to the files named by WAVEKIT_TEST_HIP_RECORD and
// WAVEKIT_TEST_HIP_MODULE_RECORD. Lengths come from the images' own headers, read here
// independently of the shim's reader.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct FatBinaryWrapper {
  std::uint32_t magic;
  std::uint32_t version;
  const void* binary;
  void* reserved;
};

std::uint64_t read_u64(const unsigned char* at) {
  std::uint64_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// "__CLANG_OFFLOAD_BUNDLE__", u64 count, count x {u64 offset, u64 size, u64 triple length,
// triple}: the bundle ends where its furthest entry does.
std::uint64_t bundle_length(const unsigned char* bundle) {
  std::uint64_t count = read_u64(bundle + 24);
  std::uint64_t cursor = 32;
  std::uint64_t end = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t entry_end = read_u64(bundle + cursor) + read_u64(bundle + cursor + 8);
    if (entry_end > end) end = entry_end;
    cursor += 24 + read_u64(bundle + cursor + 16);
  }
  return end > cursor ? end : cursor;
}

// An ELF file ends with its last section or its section header table.
std::uint64_t elf_length(const unsigned char* elf) {
  std::uint64_t section_headers = read_u64(elf + 40);
  std::uint16_t count, entry_size;
  std::memcpy(&entry_size, elf + 58, 2);
  std::memcpy(&count, elf + 60, 2);
  std::uint64_t end = section_headers + std::uint64_t{count} * entry_size;
  for (std::uint16_t i = 0; i < count; ++i) {
    const unsigned char* header = elf + section_headers + std::uint64_t{i} * entry_size;
    std::uint32_t type;
    std::memcpy(&type, header + 4, 4);
    std::uint64_t section_end = read_u64(header + 24) + read_u64(header + 32);
    if (type != 8 /* SHT_NOBITS */ && section_end > end) end = section_end;
  }
  return end;
}

void record(const char* variable, const unsigned char* bytes, std::uint64_t length) {
  const char* path = std::getenv(variable);
  if (!path) return;
  std::FILE* out = std::fopen(path, "wb");
  if (!out || std::fwrite(bytes, 1, length, out) != length || std::fclose(out) != 0) {
    std::fprintf(stderr, "hip double: cannot write %s\n", path);
    std::exit(3);
  }
}

void* fat_binary_handle = nullptr;
void* module_handle = nullptr;

// Records a module image (an offload bundle or an ELF code object) to
// WAVEKIT_TEST_HIP_MODULE_RECORD. Internal, so that hipModuleLoadDataEx does not call the
// exported hipModuleLoadData, which the shim interposes.
int load_module(void** module, const void* image) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  const bool is_bundle = std::memcmp(bytes, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0;
  record("WAVEKIT_TEST_HIP_MODULE_RECORD", bytes,
         is_bundle ? bundle_length(bytes) : elf_length(bytes));
  *module = &module_handle;
  return 0;
}

}  // namespace

extern "C" {

void** __hipRegisterFatBinary(const void* data) {
  const auto* wrapper = static_cast<const FatBinaryWrapper*>(data);
  if (wrapper->magic != 0x48495046 || wrapper->version != 1) {
    std::fprintf(stderr, "hip double: not a HIPF version 1 wrapper\n");
    std::exit(3);
  }
  const auto* bundle = static_cast<const unsigned char*>(wrapper->binary);
  if (std::memcmp(bundle, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0) {
    std::fprintf(stderr, "hip double: the wrapper points to no offload bundle\n");
    std::exit(3);
  }
  record("WAVEKIT_TEST_HIP_RECORD", bundle, bundle_length(bundle));
  return &fat_binary_handle;
}

int hipModuleLoadData(void** module, const void* image) { return load_module(module, image); }

int hipModuleLoadDataEx(void** module, const void* image, unsigned, void*, void**) {
  return load_module(module, image);
}

void __hipRegisterFunction(void**, const void*, char*, const char*, int, void*, void*, void*, void*,
                           int*) {}

void __hipUnregisterFatBinary(void**) {}

// The launch stubs clang emits reference these; the test program never launches.
int __hipPopCallConfiguration(void*, void*, std::size_t*, void*) { return 1; }
struct Dim3 {
  unsigned x, y, z;
};
int hipLaunchKernel(const void*, Dim3, Dim3, void**, unsigned long, void*) { return 1; }

}  // extern "C"
