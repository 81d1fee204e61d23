// The shape every MessagePack note wavekit reads has: one object, maps keyed by strings, UTF-8
// strings, no extension types, shallow nesting. LLVM's msgpack::Document reader is not written
// for hostile input (a note with, e.g., a map as a map key crashes it, and llvm-readelf-22 with
// it), so every blob from outside is checked with LLVM's streaming reader before it reaches a
// Document.
#pragma once

#include <string>
#include <string_view>

namespace wavekit::codeobj {

// Throws wavekit::Error naming `context` and `what` ("AMDGPU metadata note") for a blob of
// another shape.
void check_msgpack_shape(std::string_view blob, const std::string& context,
                         const std::string& what);

}  // namespace wavekit::codeobj
