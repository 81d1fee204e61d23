#include "wavekit/support/text.h"

#include <cstdio>

namespace wavekit {

std::string hex(std::uint64_t value) {
  char text[2 + 16 + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace wavekit
