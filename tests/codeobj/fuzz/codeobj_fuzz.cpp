// libFuzzer target: whatever the bytes, parse/describe/write and the bundle reader either work or
// throw wavekit::Error. A crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  try {
    auto object = wavekit::codeobj::CodeObject::parse(bytes, "fuzz");
    wavekit::codeobj::describe_json(object).dump();
    wavekit::codeobj::describe_text(object);
    auto written = object.write();
    // An unmodified object must come back byte for byte.
    if (written.size() != size || !std::equal(written.begin(), written.end(), data))
      __builtin_trap();
  } catch (const wavekit::Error&) {
  }
  try {
    wavekit::codeobj::parse_bundle(bytes, "fuzz");
  } catch (const wavekit::Error&) {
  }
  return 0;
}
