// The tool registry (src/rewrite/tools): one folder per tool, the plan-file tool, plan
// resolution and its errors, and the tools' views of a finished run (bbcount's heatmaps,
// callret's table).
#include "wavekit/rewrite/tools.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "bbcount/heatmap.h"
#include "callret/view.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite::tools {
namespace {

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

std::filesystem::path fresh_directory(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("wavekit-tools-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

// The registry is the folders: every folder of src/rewrite/tools is a tool, and the ready-made
// ones (all but the plan-file tool) are what tool_names() lists.
TEST(Registry, EveryToolFolderIsATool) {
  std::vector<std::string> folders;
  for (const auto& entry : std::filesystem::directory_iterator(WAVEKIT_TOOLS_SOURCE_DIR))
    if (entry.is_directory() && entry.path().filename() != "custom")
      folders.push_back(entry.path().filename().string());
  std::sort(folders.begin(), folders.end());
  std::vector<std::string> names = tool_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, folders);
  EXPECT_FALSE(folders.empty());
}

TEST(Registry, AToolWithProbesHasALibraryPerProcessor) {
  for (const std::string& tool : tool_names()) {
    const bool probes = std::filesystem::exists(std::filesystem::path(WAVEKIT_TOOLS_SOURCE_DIR) /
                                                tool / (tool + "_probes.hip"));
    for (const char* processor : {"gfx908", "gfx90a", "gfx942"}) {
      const std::string library = tool_probe_library(tool, processor);
      EXPECT_EQ(library.empty(), !probes) << tool << " " << processor;
      if (probes) EXPECT_TRUE(std::filesystem::exists(library)) << library;
    }
    EXPECT_EQ(plan_depends_on_processor({tool}), probes) << tool;
  }
}

TEST(ResolvePlan, AToolsPlanWithItsProbeLibraryAndTheSelectedKernels) {
  const Plan plan = resolve_plan({"callret", "", "", {"k1", "k2"}}, "gfx90a");
  EXPECT_EQ(plan.tool, "callret");
  EXPECT_EQ(plan.probe_library, tool_probe_library("callret", "gfx90a"));
  EXPECT_EQ(plan.kernels, (std::vector<std::string>{"k1", "k2"}));
  EXPECT_TRUE(resolve_plan({"callret"}).probe_library.empty()) << "no processor, no library yet";
  EXPECT_EQ(resolve_plan({"callret", "", "/mine.co"}, "gfx90a").probe_library, "/mine.co")
      << "a given library overrides the tool's";
}

TEST(ResolvePlan, APlanFileIsTheCustomTool) {
  const auto directory = fresh_directory("plan");
  const std::string path = (directory / "p.json").string();
  Plan written = tool_plan("bbcount");
  written.tool = "mine";
  write_file(path, plan_to_json(written).dump());
  const ToolChoice choice{"", path, "/probes/lib.co"};
  EXPECT_EQ(tool_name(choice), "custom");
  EXPECT_FALSE(plan_depends_on_processor(choice));
  const Plan plan = resolve_plan(choice, "gfx90a");
  EXPECT_EQ(plan.tool, "mine");
  EXPECT_EQ(plan.probe_library, "/probes/lib.co") << "the given library overrides the plan's";
  EXPECT_EQ(plan_to_json(resolve_plan({"custom", path})), plan_to_json(resolve_plan({"", path})));
  std::filesystem::remove_all(directory);
}

TEST(ResolvePlan, MistakesAreNamed) {
  EXPECT_NE(error_of([] { resolve_plan({"bbcnt"}); }).find("unknown tool 'bbcnt'"),
            std::string::npos);
  EXPECT_NE(error_of([] { resolve_plan({}); }).find("no tool"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_plan({"custom"}); }).find("needs a plan file"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              resolve_plan({"bbcount", "p.json"});
            }).find("goes with the custom"),
            std::string::npos);
  EXPECT_NE(error_of([] { tool_plan("custom"); }).find("takes its plan from a file"),
            std::string::npos);
  const auto directory = fresh_directory("bad-plan");
  const std::string path = (directory / "bad.json").string();
  write_file(path, std::string("{not json"));
  EXPECT_NE(error_of([&] { resolve_plan({"", path}); }).find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([&] {
              resolve_plan({"", path + ".missing"});
            }).find(".missing"),
            std::string::npos);
  std::filesystem::remove_all(directory);
}

// present_results over a run summary as `wavekit run` leaves it: bbcount draws an SVG beside
// every dispatch's JSON and prints the first picture; callret prints one table per kernel; a
// result it cannot read is reported and skipped.
TEST(Present, BbcountDrawsEveryDispatchAndPrintsTheFirst) {
  const auto directory = fresh_directory("present-bbcount");
  const std::string report = R"({"kernel": "k", "waves": [{"id": 0, "blocks": {"0x100": 2}}]})";
  write_file((directory / "k.0.json").string(), report);
  write_file((directory / "k.1.json").string(), report);
  write_file((directory / "k.2.json").string(), std::string("[]"));
  nlohmann::json summary = {{"dispatches", nlohmann::json::array()}};
  for (int i = 0; i < 3; ++i)
    summary["dispatches"].push_back(
        {{"kernel", "k"}, {"file", (directory / ("k." + std::to_string(i) + ".json")).string()}});
  summary["dispatches"].push_back({{"kernel", "k"}, {"error", "no report"}});
  std::ostringstream terminal;
  present_results("bbcount", summary, terminal);
  EXPECT_TRUE(std::filesystem::exists(directory / "k.0.svg"));
  EXPECT_TRUE(std::filesystem::exists(directory / "k.1.svg"));
  EXPECT_FALSE(std::filesystem::exists(directory / "k.2.svg"));
  const std::string text = terminal.str();
  EXPECT_NE(text.find("heatmap: " + (directory / "k.0.svg").string()), std::string::npos) << text;
  EXPECT_EQ(text.find("k.1.svg"), std::string::npos) << "only the first picture is printed";
  EXPECT_NE(text.find("no heatmap for " + (directory / "k.2.json").string()), std::string::npos)
      << text;
  std::filesystem::remove_all(directory);
}

TEST(Present, CallretPrintsTheFirstDispatchOfEachKernelAndToolsWithoutAViewNothing) {
  const auto directory = fresh_directory("present-callret");
  const std::string record = R"({"returns": 1, "lanes": 64, "first_lane": 0, "first_value": 5,
                                 "min": 5, "max": 5, "hash": "0x1"})";
  write_file((directory / "a.json").string(),
             R"({"kernel": "a", "waves": [{"id": 0, "calls": {"0x40": )" + record + "}}]}");
  write_file((directory / "b.json").string(),
             R"({"kernel": "b", "waves": [{"id": 0, "calls": {"0x80": )" + record + "}}]}");
  const nlohmann::json summary = {{"dispatches",
                                   {{{"kernel", "a"}, {"file", (directory / "a.json").string()}},
                                    {{"kernel", "a"}, {"file", (directory / "a.json").string()}},
                                    {{"kernel", "b"}, {"file", (directory / "b.json").string()}}}}};
  std::ostringstream terminal;
  present_results("callret", summary, terminal);
  const std::string text = terminal.str();
  EXPECT_NE(text.find("kernel a: 1 waves, 1 call sites"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel b: 1 waves, 1 call sites"), std::string::npos) << text;
  EXPECT_EQ(text.find("kernel a"), text.rfind("kernel a")) << "one table per kernel:\n" << text;
  std::ostringstream quiet;
  present_results("blocktrace", summary, quiet);
  present_results("custom", summary, quiet);
  present_results("bbcount", nullptr, quiet);
  EXPECT_EQ(quiet.str(), "");
  std::filesystem::remove_all(directory);
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
}  // namespace wavekit::rewrite::tools
