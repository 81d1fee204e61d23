// wavekit reports every failure it can foresee (bad input, unsupported targets, refused
// rewrites, emulator faults) as a wavekit::Error whose message names the problem, so that the
// CLI, the tests and the preload shim can all say exactly what went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace wavekit {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "<context>: <message>", for errors that should name the file or object they concern.
[[noreturn]] void fail(const std::string& context, const std::string& message);

}  // namespace wavekit
