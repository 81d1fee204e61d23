// A callret report ({"kernel", "waves": [{"id", "calls": {"0x<site>": {"returns", "lanes",
// "first_lane", "first_value", "min", "max", "hash"}}}]}) as a table people read: one row per
// call site, summed over the waves, with the value wave 0's first lane got back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wavekit::rewrite::tools {

// Throws wavekit::Error naming what is missing for a report that is not callret's.
std::string callret_table(const nlohmann::json& report);

}  // namespace wavekit::rewrite::tools
