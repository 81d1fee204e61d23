// libFuzzer over the profile readers (compact binary and hatchet JSON) and the views that
// print what they read: any input must give a profile or a wavekit::Error, never a crash.
#include <cstdint>
#include <string>
#include <vector>

#include "wavekit/profile/profile_data.h"
#include "wavekit/profile/view.h"
#include "wavekit/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wavekit::profile;
  std::vector<std::uint8_t> bytes(data, data + size);
  try {
    Profile p = bytes.size() >= 6 && std::string(bytes.begin(), bytes.begin() + 6) == "WKPROF"
                    ? from_binary(bytes, "fuzz.wkp")
                    : from_hatchet_json(std::string(bytes.begin(), bytes.end()), "fuzz.hatchet");
    ViewOptions options;
    options.device_model = "H200";
    render_tree(p, options);
    render_top(p, options);
    to_binary(p);
    to_hatchet_json(p);
  } catch (const wavekit::Error&) {
  }
  return 0;
}
