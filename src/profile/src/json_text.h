// JSON text for every output. Names come from binaries, drivers and users and are not always
// valid UTF-8; invalid bytes become U+FFFD instead of making the export throw (found by
// tests/profile/profile_fuzz.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wavekit::profile {

inline std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace wavekit::profile
