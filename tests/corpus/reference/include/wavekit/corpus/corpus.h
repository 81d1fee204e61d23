// The kernel corpus seen from C++: every corpus code object of this build (objects()), and for
// every kernel its launch configuration, an input generator and a CPU reference (kernels()).
//
// To check an execution of kernel K (emulator, rewritten object, real GPU):
//   const CorpusKernel& k = kernel("vector_add");
//   std::vector<Argument> args = k.make_inputs(seed);   // inputs filled, outputs zeroed
//   std::vector<Argument> expected = args;
//   k.reference(expected);                               // outputs now hold the expected values
//   ... copy every buffer of `args` to the device, pass scalars by value, in this order
//   ... (the order of the kernel's parameters, = the metadata note's explicit .args), launch
//   ... k.grid workgroups of k.block work-items, copy buffers back into `args` ...
//   if (auto mismatch = compare_outputs(k, expected, args)) FAIL() << *mismatch;
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavekit::corpus {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

enum class ElementType { i32, u32, i64, u64, f16, f32, f64 };
std::size_t element_size(ElementType type);
std::string_view element_type_name(ElementType type);

struct Argument {
  enum class Kind { buffer, scalar };
  std::string name;  // the kernel parameter's name in the source
  Kind kind = Kind::buffer;
  ElementType type = ElementType::u32;
  // A buffer's contents (the kernel gets a global pointer to a copy), or a scalar's value
  // (4 or 8 bytes, little-endian, passed by value in the kernarg segment).
  std::vector<std::uint8_t> bytes;
  bool is_output = false;  // the kernel writes it: compare it after the run
  // 0: bit-exact. Otherwise the largest accepted |actual - expected| / max(|expected|, 1).
  double tolerance = 0;

  std::size_t count() const { return bytes.size() / element_size(type); }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

struct CorpusKernel {
  std::string name;    // the kernel symbol (extern "C", unmangled)
  std::string source;  // tests/corpus/kernels/<source>.hip
  Dim3 grid;           // in workgroups (HIP's gridDim); the HSA grid size is grid * block
  Dim3 block;          // workgroup size in work-items
  // Arguments in parameter order: inputs drawn from `seed` (deterministic), outputs zeroed.
  std::function<std::vector<Argument>(std::uint64_t seed)> make_inputs;
  // Overwrites the output arguments with what the kernel must produce for these inputs.
  std::function<void(std::vector<Argument>& args)> reference;

  Dim3 grid_size() const { return {grid.x * block.x, grid.y * block.y, grid.z * block.z}; }
};

// Every kernel of the corpus, and lookup by name (throws wavekit::Error naming an unknown one).
const std::vector<CorpusKernel>& kernels();
const CorpusKernel& kernel(std::string_view name);

// std::nullopt when every output of `actual` matches `expected` within its tolerance; otherwise
// a message naming the kernel, the argument, the first mismatching element and both values.
std::optional<std::string> compare_outputs(const CorpusKernel& kernel,
                                           const std::vector<Argument>& expected,
                                           const std::vector<Argument>& actual);

// One code object built from the corpus (manifest.json lists the same, for non-C++ users).
struct CorpusObject {
  std::string name;                  // e.g. "basic_gfx908_O2_cov5"
  std::string path;                  // absolute path in the build tree
  std::string source;                // tests/corpus/kernels/<source>.hip
  std::vector<std::string> targets;  // one processor, or several for a fat binary
  std::string opt;                   // "-O0", "-O2", "-O3"
  int code_object_version = 5;
  bool stripped = false;    // no .symtab: device functions have no names
  bool fat_binary = false;  // a host ELF with the offload bundle in .hip_fatbin
  std::vector<std::string> kernels;
};
const std::vector<CorpusObject>& objects();
// The object called `name` (e.g. "calls_gfx90a_O0_cov5"); throws wavekit::Error for an unknown
// name.
const CorpusObject& object(std::string_view name);

}  // namespace wavekit::corpus
