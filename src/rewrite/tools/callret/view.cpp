#include "view.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>

#include "wavekit/support/error.h"

namespace wavekit::rewrite::tools {
namespace {

struct SiteSummary {
  std::uint64_t waves = 0, returns = 0, lanes = 0;
  std::int64_t min = INT64_MAX, max = INT64_MIN;
  std::optional<std::int64_t> wave0_value;  // wave 0's first active lane at its first return
};

// Sums each call site's records over the waves.
void add_waves(const nlohmann::json& waves, std::map<std::uint64_t, SiteSummary>& sites) {
  for (const auto& wave : waves) {
    if (!wave.contains("calls")) throw Error("not a callret report: a wave has no \"calls\"");
    for (const auto& [address, record] : wave["calls"].items()) {
      SiteSummary& site = sites[std::stoull(address, nullptr, 16)];
      ++site.waves;
      site.returns += record.at("returns").get<std::uint64_t>();
      site.lanes += record.at("lanes").get<std::uint64_t>();
      site.min = std::min(site.min, record.at("min").get<std::int64_t>());
      site.max = std::max(site.max, record.at("max").get<std::int64_t>());
      if (wave.value("id", std::uint64_t{1}) == 0)
        site.wave0_value = record.at("first_value").get<std::int64_t>();
    }
  }
}

}  // namespace

std::string callret_table(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("waves") || !report["waves"].is_array())
    throw Error("not a callret report: no \"waves\" array");
  std::map<std::uint64_t, SiteSummary> sites;  // by address: keys read as numbers
  try {
    add_waves(report["waves"], sites);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {  // a missing or mistyped field, a bad address key
    throw Error(std::string("not a callret report: ") + error.what());
  }
  std::string text = "kernel " + report.value("kernel", std::string("?")) + ": " +
                     std::to_string(report["waves"].size()) + " waves, " +
                     std::to_string(sites.size()) + " call sites\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-10s %7s %9s %11s %12s %12s %14s\n", "call at", "waves",
                "returns", "lane-values", "min", "max", "wave 0 got");
  text += line;
  for (const auto& [address, site] : sites) {
    const std::string first = site.wave0_value ? std::to_string(*site.wave0_value) : "-";
    std::snprintf(
        line, sizeof line, "  0x%-8llx %7llu %9llu %11llu %12lld %12lld %14s\n",
        static_cast<unsigned long long>(address), static_cast<unsigned long long>(site.waves),
        static_cast<unsigned long long>(site.returns), static_cast<unsigned long long>(site.lanes),
        static_cast<long long>(site.min), static_cast<long long>(site.max), first.c_str());
    text += line;
  }
  return text;
}

}  // namespace wavekit::rewrite::tools
