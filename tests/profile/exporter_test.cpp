#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "aggregator.h"
#include "wavekit/profile/profile_data.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

Profile sample_profile() {
  ContextTree tree;
  LaunchTable launches(1024);
  GraphRegistry graphs;
  Profile result;
  Aggregator agg(tree, launches, &graphs, {}, [&](const PhaseTable& t, const SelfMetrics& s) {
    result = build_profile(t, tree, s);
  });
  tree.enter("capture");
  graphs.node_created(1, 50, tree.current());
  tree.exit();
  graphs.publish();
  tree.enter("step");
  LaunchWork work;
  work.flops[static_cast<std::size_t>(Precision::fp16)] = 1e12;
  work.bytes = 1e6;
  launches.record_with_work(1, tree.current(), 4, work);
  launches.record(2, tree.current(), 4);
  launches.record(3, tree.current(), 4);
  tree.exit();
  agg.begin_batch();
  agg.consume({1, 1000, 3000, 0, 0, "gemm<float>", 0}, 0);
  agg.consume({2, 3000, 3500, 1, 0, "add", 0}, 0);
  agg.consume({3, 4000, 4100, 0, 0, "graph_kernel", 50}, 0);
  agg.finish();
  result.devices[0] = {"sm_90", "NVIDIA H200", 132, 1980000, 3201000, 6144};
  return result;
}

void expect_same(const ProfileNode& a, const ProfileNode& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  EXPECT_EQ(a.is_kernel, b.is_kernel) << where;
  EXPECT_EQ(a.metrics.count, b.metrics.count) << where;
  EXPECT_EQ(a.metrics.timed, b.metrics.timed) << where;
  EXPECT_EQ(a.metrics.time_ns, b.metrics.time_ns) << where;
  EXPECT_EQ(a.metrics.flops, b.metrics.flops) << where;
  EXPECT_EQ(a.metrics.bytes, b.metrics.bytes) << where;
  if (a.is_kernel) {
    EXPECT_EQ(a.device, b.device) << where;
    EXPECT_EQ(a.metrics.min_ns, b.metrics.min_ns) << where;
    EXPECT_EQ(a.metrics.max_ns, b.metrics.max_ns) << where;
    EXPECT_EQ(a.metrics.histogram, b.metrics.histogram) << where;
  }
  ASSERT_EQ(a.children.size(), b.children.size()) << where;
  for (std::size_t i = 0; i < a.children.size(); ++i)
    expect_same(*a.children[i], *b.children[i], where + "/" + a.children[i]->name);
}

TEST(Exporters, TreeHasLaunchAndCaptureSitePaths) {
  Profile p = sample_profile();
  const ProfileNode* step = p.root.find("step");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->metrics.count, 3u);
  EXPECT_EQ(step->metrics.time_ns, 2000u + 500u + 100u);
  ASSERT_TRUE(step->find("<captured_at>"));
  ASSERT_TRUE(step->find("<captured_at>")->find("capture"));
  EXPECT_TRUE(step->find("<captured_at>")->find("capture")->find("graph_kernel"));
  EXPECT_EQ(p.first_phase, 4u);
}

TEST(Exporters, KernelsCarryALog2DurationHistogram) {
  Profile p = sample_profile();
  const ProfileNode* gemm = p.root.find("step")->find("gemm<float>");
  ASSERT_TRUE(gemm);
  // One kernel of 2000 ns: bit_width(2000) = 11, i.e. the bucket [1024, 2048).
  std::array<std::uint64_t, kHistogramBuckets> expected{};
  expected[11] = 1;
  EXPECT_EQ(gemm->metrics.histogram, expected);
  EXPECT_EQ(
      p.root.metrics.histogram[11] + p.root.metrics.histogram[9] + p.root.metrics.histogram[7],
      3u);  // 2000, 500 and 100 ns
}

TEST(Exporters, HatchetJsonRoundTripsAndHasProtonsShape) {
  Profile p = sample_profile();
  std::string text = to_hatchet_json(p);
  auto doc = nlohmann::json::parse(text);
  ASSERT_TRUE(doc.is_array());
  EXPECT_EQ(doc[0]["frame"]["name"], "ROOT");
  EXPECT_EQ(doc[0]["children"][0]["frame"]["name"], "step");
  EXPECT_EQ(doc[0]["children"][0]["metrics"]["time (ns)"], 2600);
  EXPECT_EQ(doc[1]["CUDA"]["0"]["num_sms"], 132);
  expect_same(p.root, from_hatchet_json(text, "mem").root, "ROOT");
}

TEST(Exporters, BinaryRoundTripsAndIsSmallerThanJson) {
  Profile p = sample_profile();
  auto bytes = to_binary(p);
  Profile back = from_binary(bytes, "mem");
  expect_same(p.root, back.root, "ROOT");
  EXPECT_EQ(back.self.records, 3u);
  EXPECT_EQ(back.devices.at(0).model, "NVIDIA H200");
  EXPECT_LT(bytes.size(), to_hatchet_json(p).size());
}

// A profile of --time-every: some kernels had untimed launches, so their times are estimates.
Profile estimated_profile() {
  Profile p;
  ProfileNode* gemm = p.root.child("step", false, 0)->child("gemm", true, 0);
  gemm->metrics.add_duration(1000);
  gemm->metrics.add_duration(3000);
  for (int i = 0; i < 6; ++i) gemm->metrics.add_untimed();
  gemm->metrics.time_ns = 8 * 2000;  // as the aggregator exports it: count x the timed mean
  p.root.child("add", true, 0)->metrics.add_duration(500);
  p.sum_up();
  return p;
}

TEST(Exporters, TimedCountsRoundTripAndOnlyEstimatesCarryThem) {
  Profile p = estimated_profile();
  std::string text = to_hatchet_json(p);
  auto doc = nlohmann::json::parse(text);
  const auto& step = doc[0]["children"][0];
  ASSERT_EQ(step["frame"]["name"], "step");
  EXPECT_EQ(step["metrics"]["timed"], 2);
  EXPECT_EQ(step["metrics"]["count"], 8);
  EXPECT_EQ(step["metrics"]["time (ns)"], 16000);
  EXPECT_FALSE(doc[0]["children"][1]["metrics"].contains("timed")) << "add: every launch timed";
  expect_same(p.root, from_hatchet_json(text, "mem").root, "ROOT");
  expect_same(p.root, from_binary(to_binary(p), "mem").root, "ROOT");
}

// The message of the wavekit::Error that `read` throws ("" when it throws none).
template <typename Read>
std::string error_of(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// (Format 2, which the phase files of earlier versions have, is read by the CLI test
// profile.cli_view_reads_format_2.)
TEST(Exporters, AnUnknownBinaryFormatIsNamed) {
  std::vector<std::uint8_t> four = to_binary(sample_profile());
  ASSERT_EQ(four[7], 3);
  four[7] = 4;
  const std::string error = error_of([&] { from_binary(four, "four.wkp"); });
  EXPECT_NE(error.find("format 4"), std::string::npos) << "'" << error << "'";
}

TEST(Exporters, MoreTimedLaunchesThanLaunchesIsAClearError) {
  const char* text = R"json([{"frame":{"name":"ROOT"},"metrics":{},"children":[
    {"frame":{"name":"k"},"metrics":{"count":2,"timed":3,"time (ns)":10},"children":[]}]}])json";
  const std::string error = error_of([&] { from_hatchet_json(text, "odd.hatchet"); });
  EXPECT_NE(error.find("3 timed launches of 2"), std::string::npos) << "'" << error << "'";
}

// A time of 1e300 or 2^64 ns has no 64-bit value: converting it was undefined behaviour (the
// release build printed 9223372036.855 s); negative and non-finite ones are refused as well.
TEST(Exporters, MetricValuesOutsideSixtyFourBitsAreAClearError) {
  for (const char* value : {"1e300", "18446744073709551616", "-5", "1.8446744073709552e19"}) {
    const std::string text = std::string(R"json([{"frame":{"name":"ROOT"},"metrics":{},"children":[
      {"frame":{"name":"k"},"metrics":{"count":1,"time (ns)":)json") +
                             value + "},\"children\":[]}]}]";
    const std::string error = error_of([&] { from_hatchet_json(text, "big.hatchet"); });
    EXPECT_EQ(error.rfind("big.hatchet: a metric value ", 0), 0u) << value << ": '" << error << "'";
    EXPECT_NE(error.find("is not an unsigned 64-bit integer"), std::string::npos) << error;
  }
  const char* largest = R"json([{"frame":{"name":"ROOT"},"metrics":{},"children":[
    {"frame":{"name":"k"},"metrics":{"count":1,"time (ns)":18446744073709551615},"children":[]}]}])json";
  EXPECT_EQ(error_of([&] { from_hatchet_json(largest, "max.hatchet"); }), "");
}

TEST(Exporters, EveryTruncationOfABinaryProfileIsAClearError) {
  auto bytes = to_binary(sample_profile());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    EXPECT_THROW(from_binary(cut, "cut.wkp"), Error) << "length " << n;
  }
}

TEST(Exporters, CorruptedBinaryNeverCrashes) {
  auto bytes = to_binary(sample_profile());
  int errors = 0;
  for (std::size_t i = 8; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= 0xFF;
    try {
      from_binary(bad, "bad.wkp");
    } catch (const Error&) {
      ++errors;  // a flipped count or index must be caught; a flipped metric may not be
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Exporters, ReadsProtonStyleHatchet) {
  const char* text = R"json([{"frame":{"name":"ROOT","type":"function"},"metrics":{},
    "children":[{"frame":{"name":"scope","type":"function"},"metrics":{"count":0},
      "children":[{"frame":{"name":"k","type":"function"},
        "metrics":{"count":2,"time (ns)":300,"flops16":5e9,"device_id":"0","device_type":"CUDA"},
        "children":[]}]}]},
    {"CUDA":{"0":{"arch":"90","num_sms":132,"clock_rate":1980000}}}])json";
  Profile p = from_hatchet_json(text, "proton.hatchet");
  EXPECT_EQ(p.root.metrics.count, 2u);
  EXPECT_EQ(p.root.metrics.time_ns, 300u);
  EXPECT_EQ(p.root.metrics.flops[static_cast<std::size_t>(Precision::fp16)], 5e9);
  EXPECT_EQ(p.devices.at(0).num_sms, 132u);
}

TEST(Exporters, NamesThatAreNotUtf8DoNotBreakTheExport) {
  Profile p;
  p.root.child("scope\xAF", false, 0)->child("k", true, 0)->metrics.add_duration(5);
  p.sum_up();
  Profile back = from_hatchet_json(to_hatchet_json(p), "mem");
  ASSERT_EQ(back.root.children.size(), 1u);
  EXPECT_EQ(back.root.children[0]->name, "scope\xEF\xBF\xBD");  // U+FFFD
  EXPECT_EQ(back.root.metrics.count, 1u);
}

TEST(Exporters, BadJsonNamesTheFile) {
  try {
    from_hatchet_json("{not json", "broken.hatchet");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.hatchet"), std::string::npos);
  }
  EXPECT_THROW(from_hatchet_json(R"([{"metrics":{}}])", "x"), Error);
  // A frame name of the wrong type is the file's fault, reported as such.
  EXPECT_THROW(from_hatchet_json(R"([{"frame":{"name":7}}])", "x"), Error);
}

TEST(Exporters, ChromeTraceIsValidJsonWithOneEventPerKernel) {
  std::vector<TraceEvent> events = {{"gemm", "step", 1000, 3000, 0, 7},
                                    {"add", "", 3000, 3500, 0, 7}};
  auto doc = nlohmann::json::parse(to_chrome_trace(events));
  ASSERT_EQ(doc["traceEvents"].size(), 2u);
  EXPECT_EQ(doc["traceEvents"][0]["ph"], "X");
  EXPECT_DOUBLE_EQ(doc["traceEvents"][0]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(doc["traceEvents"][0]["dur"].get<double>(), 2.0);
  EXPECT_EQ(doc["traceEvents"][0]["tid"], 7);
}

TEST(Exporters, MergingPhasesSumsKernels) {
  Profile a = sample_profile(), b = sample_profile();
  Profile total;
  total.merge(a);
  total.merge(b);
  EXPECT_EQ(total.root.metrics.count, 2 * a.root.metrics.count);
  EXPECT_EQ(total.root.metrics.time_ns, 2 * a.root.metrics.time_ns);
  EXPECT_EQ(total.self.records, 6u);
}

}  // namespace
}  // namespace wavekit::profile
