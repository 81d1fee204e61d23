// The code-object loader: maps one or more AMDGPU code objects into ONE executable in host
// memory (device pointers are host pointers on the emulator), applies their dynamic
// relocations with ROCr's rules, and answers symbol and kernel queries. The HSA API's
// executables, `wavekit launch` and the emulator's tests all load code through this class.
//
// ROCr's rules (ROCR-Runtime loader/executable.cpp, ApplyDynamicRelocation; see
// ../shared/design/amdgpu-codeobject.md §9), applied at freeze() so that objects may be loaded
// in any order:
//   - a relocation against an STT_OBJECT, STT_FUNC or STT_SECTION symbol resolves inside the
//     object that carries it (load base + st_value, even for an undefined STT_FUNC, as ROCr);
//   - a relocation against an STT_NOTYPE symbol is looked up by name among the executable's
//     agent symbols: the kernels and STT_OBJECT variables (GLOBAL/WEAK, from .symtab) of every
//     loaded object, and the variables given to define_global_variable();
//   - ABS32_LO/ABS32_HI/ABS32/ABS64 whose symbol value resolved to 0 => variable_undefined;
//   - RELATIVE64 writes load base + addend;
//   - any other relocation type, or another symbol type => invalid_code_object.
// Functions are never agent symbols: a cross-object call needs an STT_OBJECT alias in the
// provider (the probe-library recipe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/support/error.h"

namespace wavekit::hsa {

// Why loading failed, in the terms of the HSA status the API layer returns.
enum class LoaderErrorKind {
  invalid_code_object,       // HSA_STATUS_ERROR_INVALID_CODE_OBJECT
  incompatible_code_object,  // HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS (target mismatch)
  variable_undefined,        // HSA_STATUS_ERROR_VARIABLE_UNDEFINED
  variable_already_defined,  // HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED
  frozen_executable,         // HSA_STATUS_ERROR_FROZEN_EXECUTABLE
};

class LoaderError : public Error {
 public:
  LoaderError(LoaderErrorKind kind, const std::string& message) : Error(message), kind_(kind) {}
  LoaderErrorKind kind() const { return kind_; }

 private:
  LoaderErrorKind kind_;
};

// One entry of a kernel's metadata `.args`.
struct KernelArgument {
  std::string name;        // .name, empty when the note has none
  std::string type_name;   // .type_name, empty when absent
  std::string value_kind;  // e.g. "global_buffer", "by_value", "hidden_block_count_x"
  std::string address_space;
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool hidden() const { return value_kind.rfind("hidden_", 0) == 0; }
};

// A kernel as the runtime sees it: sizes from the metadata note (the runtime sizes launches
// from the note, not from the descriptor) and the host address of its descriptor.
struct KernelInfo {
  std::string name;                      // .name, e.g. "vector_add"
  std::string symbol;                    // .symbol, e.g. "vector_add.kd"
  std::uint64_t descriptor_address = 0;  // host address of the 64-byte kernel descriptor
  std::uint32_t kernarg_segment_size = 0;
  std::uint32_t kernarg_segment_align = 0;
  std::uint32_t group_segment_fixed_size = 0;
  std::uint32_t private_segment_fixed_size = 0;
  std::uint32_t wavefront_size = 64;
  std::uint32_t max_flat_workgroup_size = 0;
  std::uint32_t sgpr_count = 0;
  std::uint32_t vgpr_count = 0;
  bool uses_dynamic_stack = false;
  unsigned code_object_version = 0;  // 4, 5 or 6: decides the hidden-argument layout
  std::vector<KernelArgument> args;
};

// A variable visible to the executable: an STT_OBJECT of a loaded object, or a definition
// made with define_global_variable().
struct VariableInfo {
  std::string name;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  bool externally_defined = false;  // from define_global_variable()
};

// One loaded object: where its image lives in host memory.
struct LoadedObject {
  std::string name;       // what the caller called it (a path or "memory")
  std::string target;     // processor from the metadata, e.g. "gfx90a"
  std::string target_id;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a:xnack-"
  unsigned code_object_version = 0;
  std::uint64_t load_base = 0;  // host address of virtual address 0
  std::uint64_t load_size = 0;  // bytes from load_base covered by PT_LOAD segments
  struct Segment {
    std::uint64_t address = 0;  // host address
    std::uint64_t size = 0;     // p_memsz
    bool executable = false;
    bool writable = false;
  };
  std::vector<Segment> segments;
  // The executable segment's bytes are code: [code_address, code_address + code_size).
  std::uint64_t code_address = 0;
  std::uint64_t code_size = 0;
};

class Executable {
 public:
  Executable();
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Maps the PT_LOAD segments of `elf` (copied; the caller's bytes may go away) into one
  // aligned host allocation and registers its kernels and variables. `name` appears in error
  // messages. All objects of one executable must be for the same processor. Relocation waits
  // for freeze(). Throws LoaderError.
  const LoadedObject& load(std::span<const std::uint8_t> elf, const std::string& name);

  // hsa_executable_agent_global_variable_define: makes `name` resolve to `address` for
  // STT_NOTYPE relocations. Throws LoaderError (frozen, or name already defined).
  void define_global_variable(const std::string& name, std::uint64_t address);

  // Applies every loaded object's dynamic relocations. Throws LoaderError naming the object
  // and symbol; the executable stays unfrozen when it fails.
  void freeze();
  bool frozen() const { return frozen_; }

  // A kernel by `name` or by its descriptor symbol `name.kd`; nullptr when absent.
  const KernelInfo* find_kernel(std::string_view name) const;
  // The kernel whose descriptor lives at `descriptor_address`; nullptr when none does.
  const KernelInfo* kernel_at(std::uint64_t descriptor_address) const;
  const VariableInfo* find_variable(std::string_view name) const;

  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  const std::vector<VariableInfo>& variables() const { return variables_; }
  const std::vector<LoadedObject>& objects() const { return objects_; }
  // Names the loaded objects reference through STT_NOTYPE dynamic symbols without defining
  // them: what freeze() will look up among the agent symbols.
  const std::set<std::string, std::less<>>& undefined_references() const {
    return undefined_references_;
  }
  // The processor of the loaded objects ("" before the first load).
  const std::string& target() const { return target_; }

 private:
  struct ObjectImage;
  void relocate(ObjectImage& image);

  std::vector<std::unique_ptr<ObjectImage>> images_;
  std::vector<LoadedObject> objects_;
  std::vector<KernelInfo> kernels_;
  std::vector<VariableInfo> variables_;
  // Name -> where it was defined, for duplicate detection and NOTYPE resolution.
  std::map<std::string, std::uint64_t, std::less<>> agent_symbols_;
  std::set<std::string, std::less<>> undefined_references_;
  std::string target_;
  bool frozen_ = false;
};

// "gfx90a" from an EF_AMDGPU_MACH value of e_flags; "" for machines wavekit does not know.
std::string processor_from_mach(unsigned mach);

}  // namespace wavekit::hsa
