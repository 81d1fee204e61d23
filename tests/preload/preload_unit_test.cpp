#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "wavekit/preload/callret_view.h"
#include "wavekit/preload/config.h"
#include "wavekit/preload/heatmap.h"
#include "wavekit/preload/substitution.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {
namespace {

std::string corpus(const std::string& name) { return std::string(WAVEKIT_CORPUS_DIR) + "/" + name; }

std::filesystem::path fresh_directory(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("wavekit-preload-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

TEST(Config, EnvironmentRoundTrip) {
  ShimConfig config;
  config.tool = "bbcount";
  config.tool_out = "/tmp/out";
  config.cache_dir = "/tmp/cache";
  config.kernels = {"a", "b"};
  config.load_time_rewrite = false;
  config.fault = InjectedFault::arena_allocation;
  for (const auto& [name, value] : config_to_environment(config))
    setenv(name.c_str(), value.c_str(), 1);
  ShimConfig read = config_from_environment();
  EXPECT_EQ(read.tool, "bbcount");
  EXPECT_EQ(read.tool_out, "/tmp/out");
  EXPECT_EQ(read.cache_dir, "/tmp/cache");
  EXPECT_EQ(read.kernels, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(read.load_time_rewrite);
  EXPECT_EQ(read.fault, InjectedFault::arena_allocation);
  for (const auto& [name, value] : config_to_environment(config)) unsetenv(name.c_str());
}

TEST(Config, MalformedVariablesAreNamed) {
  setenv("WAVEKIT_INJECT_FAULT", "meteor", 1);
  try {
    config_from_environment();
    FAIL() << "accepted an unknown fault";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("meteor"), std::string::npos);
  }
  unsetenv("WAVEKIT_INJECT_FAULT");
}

TEST(Substitution, LoadTimeRewriteFillsTheCacheAndTheCacheGivesTheSameBytes) {
  auto cache = fresh_directory("cache");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));

  auto first = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Substitution>(first)) << std::get<Declined>(first).reason;
  EXPECT_EQ(std::get<Substitution>(first).origin, "load-time rewrite");

  config.load_time_rewrite = false;  // now only the cache can answer
  auto second = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Substitution>(second)) << std::get<Declined>(second).reason;
  EXPECT_EQ(std::get<Substitution>(second).origin, "cache");
  EXPECT_EQ(std::get<Substitution>(first).bytes, std::get<Substitution>(second).bytes);
  std::filesystem::remove_all(cache);
}

TEST(Substitution, AnInstrumentedObjectIsAdoptedNotRewrittenAgain) {
  ShimConfig config;
  config.tool = "bbcount";
  auto first = Substituter(config).substitute(read_file(corpus("basic_gfx90a_O2_cov5.co")));
  ASSERT_TRUE(std::holds_alternative<Substitution>(first)) << std::get<Declined>(first).reason;
  const auto& rewritten = std::get<Substitution>(first).bytes;
  auto again = Substituter(config).substitute(rewritten);
  ASSERT_TRUE(std::holds_alternative<Substitution>(again)) << std::get<Declined>(again).reason;
  EXPECT_EQ(std::get<Substitution>(again).origin, "already instrumented");
  EXPECT_EQ(std::get<Substitution>(again).bytes, rewritten);
}

TEST(Substitution, CorruptCacheEntryIsDeclinedWithItsPath) {
  auto cache = fresh_directory("corrupt");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  config.load_time_rewrite = false;
  std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));
  std::string entry = cache_path(config.cache_dir, original, plan_for(config));
  write_file(entry, std::string("\x7f"
                                "ELF but not really"));
  auto outcome = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_NE(std::get<Declined>(outcome).reason.find(entry), std::string::npos)
      << std::get<Declined>(outcome).reason;
  std::filesystem::remove_all(cache);
}

TEST(Substitution, ProbeLibraryForAnotherTargetIsDeclined) {
  ShimConfig config;
  config.tool = "bbcount";
  config.probe_library = corpus("basic_gfx908_O2_cov5.co");  // any gfx908 object will do
  auto outcome = Substituter(config).substitute(read_file(corpus("basic_gfx90a_O2_cov5.co")));
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_NE(std::get<Declined>(outcome).reason.find("gfx908"), std::string::npos)
      << std::get<Declined>(outcome).reason;
}

TEST(Substitution, GarbageIsDeclinedNotThrown) {
  ShimConfig config;
  config.tool = "bbcount";
  std::vector<std::uint8_t> garbage(100, 0x42);
  auto outcome = Substituter(config).substitute(garbage);
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_FALSE(std::get<Declined>(outcome).reason.empty());
}

TEST(Heatmap, CountsDistinctProfilesAndShadesByCount) {
  nlohmann::json report = nlohmann::json::parse(R"({"kernel": "k", "waves": [
      {"id": 0, "workgroup": [0,0,0], "wave_in_workgroup": 0, "blocks": {"0x100": 1, "0x120": 9}},
      {"id": 1, "workgroup": [0,0,0], "wave_in_workgroup": 1, "blocks": {"0x100": 1}},
      {"id": 2, "workgroup": [1,0,0], "wave_in_workgroup": 0, "blocks": {"0x100": 1, "0x120": 9}},
      {"id": 3, "workgroup": [1,0,0], "wave_in_workgroup": 1, "blocks": {"0x100": 1, "0x120": 3}}]})");
  HeatmapText text = heatmap_text(report);
  EXPECT_EQ(text.distinct_profiles, 3u);
  EXPECT_NE(text.picture.find("4 waves x 2 blocks"), std::string::npos) << text.picture;
  EXPECT_NE(text.picture.find("wave     1  ─·"), std::string::npos) << text.picture;
  EXPECT_NE(text.picture.find("wave     0  ─█"), std::string::npos) << text.picture;
  EXPECT_NE(text.picture.find("wave     3  ─░"), std::string::npos) << text.picture;
  EXPECT_NE(text.picture.find("block 0x120: entered 3..9 times"), std::string::npos)
      << text.picture;
  std::string svg = heatmap_svg(report);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("viewBox="), std::string::npos) << "scales to any size";
  EXPECT_NE(svg.find("wave 0, block 0x120: entered 9 times"), std::string::npos);
  EXPECT_NE(svg.find(">0x120</text>"), std::string::npos) << "columns are labelled";
  EXPECT_NE(svg.find(">3-9</text>"), std::string::npos) << "each column's range is shown";
  EXPECT_NE(svg.find("not entered"), std::string::npos) << "a legend";
}

// Blocks differ in scale (a loop body runs 100 times more than the entry), and the picture
// shows how waves differ in each: every column gets its own colour range, so 109 and 118
// entries are the two ends of the scale, not two indistinguishable shades of one colour.
TEST(Heatmap, SvgColoursEachBlockOverItsOwnRange) {
  nlohmann::json report = nlohmann::json::parse(R"({"kernel": "k", "waves": [
      {"id": 0, "blocks": {"0x100": 1, "0x120": 109}},
      {"id": 1, "blocks": {"0x100": 1, "0x120": 118}},
      {"id": 2, "blocks": {"0x100": 1}}]})");
  const std::string svg = heatmap_svg(report);
  const auto fill_of = [&](const std::string& title) {
    const std::size_t at = svg.find("<title>" + title + "</title>");
    EXPECT_NE(at, std::string::npos) << title;
    const std::size_t fill = svg.rfind("fill=\"", at);
    return svg.substr(fill + 6, svg.find('"', fill + 6) - fill - 6);
  };
  EXPECT_EQ(fill_of("wave 0, block 0x120: entered 109 times"), "#440154");  // its fewest
  EXPECT_EQ(fill_of("wave 1, block 0x120: entered 118 times"), "#fde725");  // its most
  EXPECT_EQ(fill_of("wave 2, block 0x120: entered 0 times"), "#ffffff");
  EXPECT_EQ(fill_of("wave 0, block 0x100: entered 1 times"), "#c8c8c8");  // same in every wave
}

TEST(CallretView, OneRowPerSiteSummedOverWavesInAddressOrder) {
  nlohmann::json report = nlohmann::json::parse(R"({"kernel": "k", "waves": [
      {"id": 1, "calls": {"0x1ab0": {"returns": 2, "lanes": 100, "first_lane": 0,
                                     "first_value": 7, "min": -5, "max": 40, "hash": "0x1"}}},
      {"id": 0, "calls": {"0x1ab0": {"returns": 1, "lanes": 64, "first_lane": 3,
                                     "first_value": 11, "min": 2, "max": 90, "hash": "0x2"},
                          "0x900": {"returns": 1, "lanes": 1, "first_lane": 0,
                                    "first_value": -1, "min": -1, "max": -1, "hash": "0x3"}}}]})");
  const std::string table = callret_table(report);
  EXPECT_NE(table.find("kernel k: 2 waves, 2 call sites"), std::string::npos) << table;
  const std::size_t low = table.find("0x900"), high = table.find("0x1ab0");
  ASSERT_NE(low, std::string::npos) << table;
  ASSERT_NE(high, std::string::npos) << table;
  EXPECT_LT(low, high) << "rows in address order:\n" << table;
  // 0x1ab0: 2 waves, 3 returns, 164 lane-values, min -5, max 90, wave 0 got 11.
  const std::string row = table.substr(high, table.find('\n', high) - high);
  EXPECT_EQ(row,
            "0x1ab0           2         3         164           -5           90             11")
      << table;
  EXPECT_THROW(callret_table(nlohmann::json::parse(R"({"kernel": "k"})")), Error);
  EXPECT_THROW(callret_table(nlohmann::json::parse(R"({"waves": [{"id": 0}]})")), Error);
  // A record without its fields, or a call site that is not an address: named, not a crash.
  EXPECT_THROW(callret_table(nlohmann::json::parse(R"({"waves": [{"calls": {"0x10": {}}}]})")),
               Error);
  EXPECT_THROW(callret_table(nlohmann::json::parse(
                   R"({"waves": [{"calls": {"site": {"returns": 1, "lanes": 1, "min": 0,
                                                        "max": 0}}}]})")),
               Error);
}

}  // namespace
}  // namespace wavekit::preload
