// A code object loaded with the shared loader (wavekit::hsa::Executable) and registered with
// the emulator, for tests that call emu::dispatch directly with their own options.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wavekit/emu/emu.h"
#include "wavekit/hsa/loader.h"
#include "wavekit/support/file.h"

namespace wavekit::emu::test {

// Host memory the emulated code may touch: 256-byte aligned, registered in the memory map.
class Buffer {
 public:
  Buffer(MemoryMap& memory, std::size_t bytes, std::string label) : memory_(memory) {
    data_ = static_cast<std::uint8_t*>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
    std::memset(data_, 0, bytes);
    size_ = bytes;
    memory_.add(data_, bytes, MemoryMap::kReadWrite, std::move(label));
  }
  ~Buffer() {
    memory_.remove(data_);
    std::free(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }
  std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(data_); }
  std::size_t size() const { return size_; }

 private:
  MemoryMap& memory_;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

class LoadedObject {
 public:
  explicit LoadedObject(const std::string& path) {
    std::vector<std::uint8_t> bytes = wavekit::read_file(path);
    executable_.load(bytes, path);
    executable_.freeze();
    const auto& object = executable_.objects().front();
    processor_ = parse_processor(object.target);
    base_ = object.load_base;
    size_ = object.load_size;
    memory_.add(reinterpret_cast<const void*>(object.load_base), object.load_size,
                MemoryMap::kReadWrite, "code object");
    code_.add_object(processor_, reinterpret_cast<const void*>(object.load_base), object.load_size,
                     0);
  }

  MemoryMap& memory() { return memory_; }
  std::uint64_t base() const { return base_; }
  std::size_t size() const { return size_; }
  // Overwrites loaded code and registers the object again, so that the emulator decodes the
  // new bytes (its code cache keeps what it decoded per registered object).
  void patch_code(std::uint64_t host_address, std::span<const std::uint8_t> bytes) {
    code_.remove_object(reinterpret_cast<const void*>(base_));
    std::memcpy(reinterpret_cast<void*>(host_address), bytes.data(), bytes.size());
    code_.add_object(processor_, reinterpret_cast<const void*>(base_), size_, 0);
  }
  CodeCache& code() { return code_; }
  Processor processor() const { return processor_; }
  // Original virtual address of a kernel's first instruction.
  std::uint64_t entry_vaddr(const std::string& kernel) const {
    const auto* info = executable_.find_kernel(kernel);
    std::int64_t offset;
    std::memcpy(&offset, reinterpret_cast<const void*>(info->descriptor_address + 16), 8);
    return info->descriptor_address + offset - base_;
  }

  // The loaded kernel descriptor of `kernel` (writable: tests change its fields).
  std::uint8_t* descriptor(const std::string& kernel) {
    const auto* info = executable_.find_kernel(kernel);
    if (!info) throw wavekit::Error("no kernel " + kernel);
    return reinterpret_cast<std::uint8_t*>(info->descriptor_address);
  }

  // Dispatches `kernel` with `pointers` as its kernarg segment (8 bytes each).
  DispatchResult run(const std::string& kernel, const std::vector<std::uint64_t>& pointers,
                     const std::uint32_t grid[3], const std::uint32_t block[3],
                     DispatchOptions options = {}) {
    const auto* info = executable_.find_kernel(kernel);
    if (!info) throw wavekit::Error("no kernel " + kernel);
    Buffer kernarg(memory_,
                   std::max<std::size_t>(info->kernarg_segment_size, 8 * pointers.size()) + 256,
                   "kernarg");
    if (!pointers.empty())  // data() of an empty vector may be null, which memcpy may not take
      std::memcpy(kernarg.as<std::uint8_t>(), pointers.data(), 8 * pointers.size());
    DispatchParams params;
    params.processor = processor_;
    params.kernel_descriptor = reinterpret_cast<const void*>(info->descriptor_address);
    params.kernarg = kernarg.as<void>();
    for (int d = 0; d < 3; ++d) {
      params.grid[d] = grid[d];
      params.workgroup[d] = block[d];
    }
    params.private_segment_size = info->private_segment_fixed_size;
    params.group_segment_size = info->group_segment_fixed_size;
    params.options = options;
    return dispatch(params, memory_, code_);
  }

 private:
  wavekit::hsa::Executable executable_;
  MemoryMap memory_;
  CodeCache code_;
  Processor processor_ = Processor::gfx90a;
  std::uint64_t base_ = 0;
  std::size_t size_ = 0;
};

}  // namespace wavekit::emu::test
