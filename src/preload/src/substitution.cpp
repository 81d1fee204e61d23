#include "wavekit/preload/substitution.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {

namespace {

std::string plan_sha256(const rewrite::Plan& plan) {
  std::string canonical = rewrite::plan_to_json(plan).dump();
  return rewrite::sha256_hex(
      std::span(reinterpret_cast<const std::uint8_t*>(canonical.data()), canonical.size()));
}

std::string cache_file(const std::string& cache_dir, const std::string& object_digest,
                       const std::string& plan_digest) {
  return cache_dir + "/" + object_digest + "-" + plan_digest + ".co";
}

// The originals of the objects substituted in this process, by SHA-256: the HIP registration
// path and the HSA path each have a Substituter, and the second sees only the first's result.
std::mutex originals_mutex;
std::map<std::string, std::vector<std::uint8_t>>& originals() {
  static auto* made = new std::map<std::string, std::vector<std::uint8_t>>();  // never freed
  return *made;
}

void remember_original(const std::string& digest, std::span<const std::uint8_t> original) {
  std::lock_guard lock(originals_mutex);
  originals().try_emplace(digest, original.begin(), original.end());
}

std::vector<std::uint8_t> original_made_here(const std::string& digest) {
  std::lock_guard lock(originals_mutex);
  const auto found = originals().find(digest);
  return found == originals().end() ? std::vector<std::uint8_t>{} : found->second;
}

// A defined data object of some size in a writable loaded section; not clang's compilation-unit
// marker __hip_cuid_<hash> (one byte in .bss that no code reads).
bool has_global_variables(const codeobj::CodeObject& object) {
  const auto& sections = object.sections();
  const auto writable = [&](const codeobj::Symbol& symbol) {
    return symbol.type == 1 /* STT_OBJECT */ && symbol.size > 0 &&
           !symbol.name.starts_with("__hip_cuid_") && symbol.section_index < sections.size() &&
           (sections[symbol.section_index].flags & 0x3) == 0x3;  // SHF_WRITE | SHF_ALLOC
  };
  return std::any_of(object.symbols().begin(), object.symbols().end(), writable) ||
         std::any_of(object.dynamic_symbols().begin(), object.dynamic_symbols().end(), writable);
}

bool file_exists(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

}  // namespace

rewrite::Plan plan_for(const ShimConfig& config, const std::string& processor) {
  return rewrite::resolve_plan(config.tool_choice(), processor);
}

std::string cache_path(const std::string& cache_dir, std::span<const std::uint8_t> original,
                       const rewrite::Plan& plan) {
  return cache_file(cache_dir, rewrite::sha256_hex(original), plan_sha256(plan));
}

void store_in_cache(const std::string& path, std::span<const std::uint8_t> rewritten) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  write_file(temporary, rewritten);
  std::filesystem::rename(temporary, path);
}

Substituter::Substituter(ShimConfig config)
    : config_(std::move(config)), plan_(plan_for(config_)) {}

std::string Substituter::keep(std::span<const std::uint8_t> original,
                              const std::string& digest) const {
  if (config_.keep_objects.empty()) return "";
  // Not keeping a copy leaves it "" (the shim says so); the substitution stands.
  try {
    std::filesystem::create_directories(config_.keep_objects);
    const std::string kept = config_.keep_objects + "/" + digest + ".co";
    if (!file_exists(kept)) write_file(kept, original);
    return kept;
  } catch (const std::exception&) {
    return "";
  }
}

std::variant<Substitution, Declined> Substituter::cached_or_rewritten(
    const codeobj::CodeObject& object, std::span<const std::uint8_t> original,
    const rewrite::Plan& plan) const {
  Substitution result;
  const std::string original_digest = rewrite::sha256_hex(original);
  const std::string cached =
      config_.cache_dir.empty() ? ""
                                : cache_file(config_.cache_dir, original_digest, plan_sha256(plan));
  if (!cached.empty() && file_exists(cached)) {
    result.bytes = read_file(cached);
    codeobj::CodeObject rewritten = codeobj::CodeObject::parse(result.bytes, cached);
    std::optional<rewrite::RewriteNote> note = rewrite::find_note(rewritten);
    if (!note) return Declined{cached + ": cache entry carries no wavekit note"};
    if (note->original_sha256 != original_digest)
      return Declined{cached + ": cache entry was made from another object"};
    result.note = std::move(*note);
    result.origin = "cache";
  } else if (config_.load_time_rewrite) {
    rewrite::RewriteResult rewritten = rewrite::rewrite(object, plan);
    result.bytes = std::move(rewritten.bytes);
    result.note = std::move(rewritten.note);
    result.origin = "load-time rewrite";
    if (!cached.empty()) store_in_cache(cached, result.bytes);
  } else {
    return Declined{"no cached rewrite and load-time rewriting is off"};
  }
  result.kept = keep(original, original_digest);
  remember_original(original_digest, original);
  result.global_variables = has_global_variables(object);
  if (!plan.probe_library.empty()) {
    result.probe_library = read_file(plan.probe_library);
    codeobj::CodeObject probes =
        codeobj::CodeObject::parse(result.probe_library, plan.probe_library);
    if (probes.target().processor != object.target().processor)
      return Declined{"probe library " + plan.probe_library + " is for " +
                      probes.target().processor + ", the object for " + object.target().processor};
  }
  return result;
}

std::variant<Substitution, Deferred, Declined> Substituter::substitute(
    std::span<const std::uint8_t> original) const {
  try {
    codeobj::CodeObject object = codeobj::CodeObject::parse(original, "loaded code object");
    const auto planned = [&](const codeobj::Kernel& kernel) {
      if (plan_.kernels.empty()) return true;
      for (const std::string& name : plan_.kernels)
        if (kernel.name == name || kernel.descriptor_symbol == name) return true;
      return false;
    };
    if (std::none_of(object.kernels().begin(), object.kernels().end(), planned)) {
      Declined declined{"none of the selected kernels is in this object", true, {}};
      for (const auto& kernel : object.kernels()) declined.kernels.push_back(kernel.name);
      return declined;
    }

    // An object wavekit already rewrote (offline by the user, or by the HIP registration
    // path before it reached HSA) is adopted as it is, with the probe library its note names:
    // rewriting it again would nest tools.
    if (std::optional<rewrite::RewriteNote> note = rewrite::find_note(object)) {
      Substitution adopted;
      adopted.bytes.assign(original.begin(), original.end());
      if (!note->probe_library.empty()) adopted.probe_library = read_file(note->probe_library);
      adopted.note = std::move(*note);
      adopted.origin = "already instrumented";
      adopted.adopted = true;
      adopted.adopted_original = original_made_here(adopted.note.original_sha256);
      adopted.global_variables = has_global_variables(object);
      if (!config_.keep_objects.empty()) {
        // The HIP registration path substituted this object's original earlier in the process.
        const std::string kept = config_.keep_objects + "/" + adopted.note.original_sha256 + ".co";
        if (file_exists(kept)) adopted.kept = kept;
      }
      return adopted;
    }

    const rewrite::Plan plan = rewrite::plan_depends_on_processor(config_.tool_choice())
                                   ? plan_for(config_, object.target().processor)
                                   : plan_;
    // A whole-object rewrite in the cache (`wavekit rewrite --cache`, or a run that rewrote at
    // load) is taken as it is; so is an object whose kernels share global variables.
    const std::string digest = rewrite::sha256_hex(original);
    const bool whole_cached = !config_.cache_dir.empty() &&
                              file_exists(cache_file(config_.cache_dir, digest, plan_sha256(plan)));
    if (config_.rewrite_at_dispatch && !whole_cached && !has_global_variables(object)) {
      Deferred deferred;
      for (const codeobj::Kernel& kernel : object.kernels())
        if (planned(kernel)) deferred.kernels.push_back({kernel.name, kernel.descriptor_symbol});
      deferred.kept = keep(original, digest);
      return deferred;
    }
    auto result = cached_or_rewritten(object, original, plan);
    if (auto* declined = std::get_if<Declined>(&result)) return std::move(*declined);
    return std::move(std::get<Substitution>(result));
  } catch (const std::exception& error) {
    return Declined{error.what()};
  }
}

std::variant<Substitution, Declined> Substituter::substitute_kernel(
    std::span<const std::uint8_t> original, const std::string& kernel) const {
  try {
    codeobj::CodeObject object = codeobj::CodeObject::parse(original, "loaded code object");
    rewrite::Plan plan = rewrite::plan_depends_on_processor(config_.tool_choice())
                             ? plan_for(config_, object.target().processor)
                             : plan_;
    plan.kernels = {kernel};
    return cached_or_rewritten(object, original, plan);
  } catch (const std::exception& error) {
    return Declined{error.what()};
  }
}

}  // namespace wavekit::preload
