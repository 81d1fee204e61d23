// The HIP half of libwavekit-preload.so: a HIP host program registers its offload bundle with
// __hipRegisterFatBinary from a constructor, and may load more code (a bundle or a plain code
// object) with hipModuleLoadData. The shim
// hands the runtime a repacked bundle whose entries for the process's GPU targets are the
// instrumented ones (WAVEKIT_HIP_TARGET, or every AMDGPU entry); anything that cannot be done
// passes the program's own bytes through with one message. Nothing throws across the C ABI.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <set>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/preload/config.h"
#include "wavekit/preload/fat_binary.h"
#include "wavekit/preload/substitution.h"

namespace wavekit::preload {
namespace {

class HipSubstitution {
 public:
  static HipSubstitution& get() {
    // Never destroyed: the runtime unregisters fat binaries from atexit handlers and
    // destructors that may run after ours, and must still find the bytes it was given.
    static HipSubstitution* instance = new HipSubstitution();
    return *instance;
  }

  // The bytes the runtime should see instead of the `size` bytes at `original` (which stay
  // valid for the process's lifetime), or nullptr to pass the original through. A plain code
  // object is substituted whatever its target: the program chose it for its GPU.
  const std::vector<std::uint8_t>* substitute(const std::uint8_t* original, std::uint64_t size,
                                              bool is_bundle) {
    if (!substituter_) return nullptr;
    std::lock_guard lock(mutex_);
    std::span<const std::uint8_t> bytes(original, size);
    if (!is_bundle) {
      if (already_instrumented(bytes)) return nullptr;
      auto outcome = substituter_->substitute(bytes);
      if (auto* substitution = std::get_if<Substitution>(&outcome)) {
        return &kept_.emplace_back(std::move(substitution->bytes));
      } else if (const auto* declined = std::get_if<Declined>(&outcome);
                 declined && !declined->quiet) {
        warn("HIP code object: running the original: " + declined->reason);
      }
      return nullptr;
    }
    try {
      FatBinarySubstitution result = substitute_fat_binary(bytes, targets_, *substituter_);
      for (const EntryOutcome& outcome : result.outcomes)
        if (!outcome.substituted && !outcome.quiet)
          warn("HIP fat binary entry " + outcome.triple +
               ": running the original: " + outcome.detail);
      if (!result.changed()) return nullptr;
      return &kept_.emplace_back(std::move(result.bundle));
    } catch (const std::exception& error) {
      warn(std::string(error.what()) + "; running the original");
      return nullptr;
    }
  }

  // A wrapper like the program's, pointing at `bundle`, alive for the process's lifetime (the
  // runtime keeps the pointer for __hipUnregisterFatBinary).
  const HipFatBinaryWrapper* wrap(const HipFatBinaryWrapper& original, const void* bundle) {
    std::lock_guard lock(mutex_);
    HipFatBinaryWrapper& wrapper = wrappers_.emplace_back(original);
    wrapper.binary = bundle;
    return &wrapper;
  }

  void warn(const std::string& message) {
    std::lock_guard lock(messages_mutex_);
    if (!warned_.insert(message).second) return;
    std::fprintf(stderr, "wavekit: %s\n", message.c_str());
  }

 private:
  HipSubstitution() {
    try {
      ShimConfig config = config_from_environment();
      if (!config.enabled()) return;
      const char* targets = std::getenv("WAVEKIT_HIP_TARGET");
      targets_ = parse_hip_targets(targets ? targets : "");
      substituter_ = std::make_unique<Substituter>(std::move(config));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "wavekit: HIP instrumentation is off: %s\n", error.what());
      substituter_.reset();
    }
  }

  std::unique_ptr<Substituter> substituter_;
  std::vector<std::string> targets_;
  std::mutex mutex_;                            // kept_, wrappers_
  std::deque<std::vector<std::uint8_t>> kept_;  // deque: growing it never moves an element
  std::deque<HipFatBinaryWrapper> wrappers_;
  std::mutex messages_mutex_;  // warned_
  std::set<std::string> warned_;
};

template <typename Function>
Function* next_definition(const char* name) {
  auto* next = reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
  if (!next) {
    std::fprintf(stderr, "wavekit: the HIP runtime has no %s; cannot continue\n", name);
    std::abort();
  }
  return next;
}

// The substituted version of an image that may be an offload bundle or a plain code object,
// or nullptr to pass it through.
const void* substitute_image(const void* image) {
  if (!image) return nullptr;
  const auto* bytes = static_cast<const std::uint8_t*>(image);
  HipSubstitution& hip = HipSubstitution::get();
  try {
    if (is_compressed_bundle(bytes)) {
      hip.warn("compressed HIP fat binaries (CCOB) are passed through uninstrumented");
      return nullptr;
    }
    const bool is_bundle = codeobj::is_offload_bundle(std::span(bytes, 24));
    const std::uint64_t size = is_bundle ? offload_bundle_extent(bytes) : elf_extent(bytes);
    const std::vector<std::uint8_t>* substituted = hip.substitute(bytes, size, is_bundle);
    return substituted ? substituted->data() : nullptr;
  } catch (const std::exception& error) {
    hip.warn(std::string(error.what()) + "; running the original");
    return nullptr;
  }
}

}  // namespace
}  // namespace wavekit::preload

using wavekit::preload::HipFatBinaryWrapper;

extern "C" {

void** __hipRegisterFatBinary(const void* data) {
  using Register = void**(const void*);
  static Register* const next =
      wavekit::preload::next_definition<Register>("__hipRegisterFatBinary");
  const auto* wrapper = static_cast<const HipFatBinaryWrapper*>(data);
  if (!wrapper || wrapper->magic != wavekit::preload::kHipFatBinaryMagic || !wrapper->binary) {
    wavekit::preload::HipSubstitution::get().warn(
        "__hipRegisterFatBinary got no HIPF wrapper; passing it through");
    return next(data);
  }
  const void* substituted = wavekit::preload::substitute_image(wrapper->binary);
  if (!substituted) return next(data);
  return next(wavekit::preload::HipSubstitution::get().wrap(*wrapper, substituted));
}

// hipModule_t is an opaque pointer and hipError_t an int-sized enum: void** and int have the
// same ABI, so the shim needs no HIP headers.
int hipModuleLoadData(void** module, const void* image) {
  using Load = int(void**, const void*);
  static Load* const next = wavekit::preload::next_definition<Load>("hipModuleLoadData");
  const void* substituted = wavekit::preload::substitute_image(image);
  return next(module, substituted ? substituted : image);
}

int hipModuleLoadDataEx(void** module, const void* image, unsigned int option_count, void* options,
                        void** option_values) {
  using Load = int(void**, const void*, unsigned int, void*, void**);
  static Load* const next = wavekit::preload::next_definition<Load>("hipModuleLoadDataEx");
  const void* substituted = wavekit::preload::substitute_image(image);
  return next(module, substituted ? substituted : image, option_count, options, option_values);
}

}  // extern "C"
