// Where wavekit's companion files are (the preload shim, the emulator's HSA runtime, the
// profiler's injected libraries, the ready-made tools' probe libraries): beside the running
// code in an installed wavekit, in the build tree otherwise.
#pragma once

#include <string>

namespace wavekit {

// The installed location of `name` (a path relative to <prefix>/<libdir>/wavekit, e.g.
// "libwavekit-preload.so" or "probes") when the code calling this runs from an installed
// wavekit: the `wavekit` executable in <prefix>/bin (found through /proc/self/exe) or a library
// in <prefix>/<libdir>/wavekit itself (the preload shim inside an application, found through
// dladdr). Otherwise, or when nothing of that name is installed there, build_tree_path: the
// path the build tree has (a compile definition), so that build/wavekit works as before.
std::string companion_path(const std::string& name, const std::string& build_tree_path);

// <prefix>/<libdir>/wavekit of the running installation, or "" when this code does not run
// from one (the build tree).
std::string installed_library_directory();

}  // namespace wavekit
