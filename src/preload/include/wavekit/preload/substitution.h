// Substitution: given the bytes of a code object the application loads, find or make its
// instrumented version. Cached rewrites are keyed by the original's SHA-256 and the plan's, so
// `wavekit rewrite --cache DIR` (offline) and the shim (at load time) meet in one place and
// give byte-identical objects.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/preload/config.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"

namespace wavekit::preload {

struct Substitution {
  std::vector<std::uint8_t> bytes;  // the rewritten object
  rewrite::RewriteNote note;
  std::vector<std::uint8_t> probe_library;  // bytes to load into the same executable (or empty)
  std::string origin;    // "cache", "load-time rewrite" or "already instrumented"
  bool adopted = false;  // the object was already wavekit's (origin "already instrumented")
  // With ShimConfig::keep_objects: the original's copy there (for an object adopted as already
  // instrumented, the copy its own substitution kept, when there is one); else empty.
  std::string kept;
  // For an object adopted as already instrumented: its original, when a substitution in this
  // process made it (the HIP registration path rewrote the bundle's entry before HSA saw it),
  // so that the original kernels can still run; empty when the original was never seen here
  // (an object the user rewrote offline).
  std::vector<std::uint8_t> adopted_original;
  // The object defines writable global variables (__device__, __constant__ a program fills
  // with hipMemcpyToSymbol): its original kernels cannot run from an executable of their own,
  // which would have its own copies of them.
  bool global_variables = false;
};

// An object whose kernels are instrumented one at a time, each when its first selected dispatch
// comes (ShimConfig::rewrite_at_dispatch): the program loads the original, and the kernels it
// never dispatches instrumented are never rewritten. Substituter::substitute_kernel makes one.
struct Deferred {
  struct Kernel {
    std::string name;
    std::string descriptor_symbol;
  };
  std::vector<Kernel> kernels;  // what the plan would instrument in the object
  std::string kept;             // as Substitution::kept
};

// Why an object is left as it is. `quiet` is for objects that simply have nothing to
// instrument (no selected kernel), which is not worth a message.
struct Declined {
  std::string reason;
  bool quiet = false;
  std::vector<std::string> kernels = {};  // the object's kernels, when it could be read
};

class Substituter {
 public:
  explicit Substituter(ShimConfig config);

  // The instrumented object for `original`, or that its kernels are to be rewritten one at a
  // time (never for an object with global variables, which the original kernels would not
  // share with an executable of their own, nor when the cache has the whole object's rewrite),
  // or why neither. Never throws.
  std::variant<Substitution, Deferred, Declined> substitute(
      std::span<const std::uint8_t> original) const;

  // The object rewritten for `kernel` alone (a kernel of a Deferred object: its name), from the
  // cache or rewritten now; or why not. Never throws.
  std::variant<Substitution, Declined> substitute_kernel(std::span<const std::uint8_t> original,
                                                         const std::string& kernel) const;

 private:
  // From the cache entry for `original` and `plan`, or rewritten now (and stored there); the
  // probe library attached and checked.
  std::variant<Substitution, Declined> cached_or_rewritten(const codeobj::CodeObject& object,
                                                           std::span<const std::uint8_t> original,
                                                           const rewrite::Plan& plan) const;
  // ShimConfig::keep_objects: the original's copy there ("" when not kept).
  std::string keep(std::span<const std::uint8_t> original, const std::string& digest) const;

  ShimConfig config_;
  rewrite::Plan plan_;  // without a ready-made tool's probe library, which depends on the GPU
};

// The cache file for an object and a plan: DIR/<object sha256>-<plan sha256>.co
std::string cache_path(const std::string& cache_dir, std::span<const std::uint8_t> original,
                       const rewrite::Plan& plan);
// Writes a rewritten object into the cache (atomically: a reader never sees half a file).
void store_in_cache(const std::string& path, std::span<const std::uint8_t> rewritten);

// The plan a config asks for (a ready-made tool's, or the custom plan file with the probe
// library override). A ready-made tool's probe library is built per processor: given
// `processor` ("gfx90a"), the plan names it, exactly as `wavekit rewrite --tool` does, so that
// offline and load-time rewrites agree byte for byte. Throws wavekit::Error naming the problem.
rewrite::Plan plan_for(const ShimConfig& config, const std::string& processor = {});

}  // namespace wavekit::preload
