// Text every part writes the same way.
#pragma once

#include <cstdint>
#include <string>

namespace wavekit {

// An address or a value as "0x" followed by lower-case hex digits, no padding (the spelling of
// llvm-objdump and of every wavekit message and report).
std::string hex(std::uint64_t value);

}  // namespace wavekit
