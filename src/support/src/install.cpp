#include "wavekit/support/install.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <system_error>

#ifndef WAVEKIT_INSTALL_BINDIR_TO_PKGLIBDIR
#define WAVEKIT_INSTALL_BINDIR_TO_PKGLIBDIR "../lib/wavekit"
#endif

namespace wavekit {

namespace {

namespace fs = std::filesystem;

// The file holding this code: the main executable or the shared library it was linked into.
fs::path running_object() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&running_object), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) &&
      map && map->l_name && *map->l_name)
    return map->l_name;  // a shared library, by the path it was loaded from
  return "/proc/self/exe";  // the main executable (its link map has no name)
}

fs::path canonical_or_empty(const fs::path& path) {
  std::error_code error;
  fs::path result = fs::canonical(path, error);
  return error ? fs::path() : result;
}

}  // namespace

std::string installed_library_directory() {
  const fs::path object = canonical_or_empty(running_object());
  if (object.empty()) return {};
  const fs::path directory = object.parent_path();
  // `cmake --install` leaves this file in <prefix>/<libdir>/wavekit; a build tree has none.
  const auto installation = [](const fs::path& candidate) {
    std::error_code error;
    return !candidate.empty() && fs::exists(candidate / ".wavekit-installation", error);
  };
  // The executable in <prefix>/bin ...
  if (const fs::path from_bin = canonical_or_empty(directory / WAVEKIT_INSTALL_BINDIR_TO_PKGLIBDIR);
      installation(from_bin))
    return from_bin.string();
  // ... or a library in <prefix>/<libdir>/wavekit, or one level below it (the emulator's
  // runtime has a directory of its own).
  if (installation(directory)) return directory.string();
  if (installation(directory.parent_path())) return directory.parent_path().string();
  return {};
}

std::string companion_path(const std::string& name, const std::string& build_tree_path) {
  const std::string directory = installed_library_directory();
  if (!directory.empty()) {
    const fs::path installed = fs::path(directory) / name;
    std::error_code error;
    if (fs::exists(installed, error)) return installed.string();
  }
  return build_tree_path;
}

}  // namespace wavekit
