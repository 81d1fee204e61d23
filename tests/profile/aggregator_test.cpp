#include "aggregator.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

#include "wavekit/profile/profile_data.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

using namespace std::chrono_literals;

struct Reference {
  std::uint64_t count = 0, sum = 0, min = ~0ull, max = 0;
};

// Paths "a / b / kernel" of every kernel leaf with its metrics.
void leaves(const ProfileNode& node, const std::string& prefix,
            std::map<std::string, Metrics>& out) {
  for (const auto& c : node.children) {
    std::string path = prefix.empty() ? c->name : prefix + " / " + c->name;
    if (c->is_kernel) out[path].merge(c->metrics);
    leaves(*c, path, out);
  }
}

struct Exported {
  std::vector<Profile> phases;
  SelfMetrics self;
};

TEST(Aggregator, MatchesAPlainReferenceOnRandomRecords) {
  ContextTree tree;
  LaunchTable launches(1 << 16);
  Exported out;
  Aggregator agg(tree, launches, nullptr, {}, [&](const PhaseTable& t, const SelfMetrics& s) {
    out.phases.push_back(build_profile(t, tree, s));
  });
  const std::vector<std::vector<std::string>> contexts = {
      {}, {"train"}, {"train", "forward"}, {"train", "backward"}, {"eval", "forward"}};
  const std::vector<std::string> kernels = {"gemm", "softmax", "add", "layernorm"};
  std::mt19937_64 rng(12345);
  std::map<std::string, Reference> reference;
  for (std::uint64_t corr = 1; corr <= 20000; ++corr) {
    const auto& ctx = contexts[rng() % contexts.size()];
    const auto& kernel = kernels[rng() % kernels.size()];
    for (const auto& s : ctx) tree.enter(s);
    launches.record(corr, tree.current(), 0);
    for (std::size_t i = 0; i < ctx.size(); ++i) tree.exit();
    std::uint64_t start = corr * 1000, duration = 1 + rng() % 5000;
    agg.consume({corr, start, start + duration, 0, 0, kernel, 0}, 0);
    std::string path;
    for (const auto& s : ctx) path += s + " / ";
    Reference& r = reference[path + kernel];
    ++r.count;
    r.sum += duration;
    r.min = std::min(r.min, duration);
    r.max = std::max(r.max, duration);
  }
  agg.finish();
  ASSERT_EQ(out.phases.size(), 1u);
  std::map<std::string, Metrics> got;
  leaves(out.phases[0].root, "", got);
  ASSERT_EQ(got.size(), reference.size());
  for (const auto& [path, r] : reference) {
    ASSERT_TRUE(got.count(path)) << path;
    EXPECT_EQ(got[path].count, r.count) << path;
    EXPECT_EQ(got[path].time_ns, r.sum) << path;
    EXPECT_EQ(got[path].min_ns, r.min) << path;
    EXPECT_EQ(got[path].max_ns, r.max) << path;
  }
  EXPECT_EQ(agg.totals().records, 20000u);
  EXPECT_EQ(agg.totals().unattributed, 0u);
}

TEST(Aggregator, GraphKernelsGoUnderTheirCaptureSite) {
  ContextTree tree;
  LaunchTable launches(1024);
  GraphRegistry graphs;
  std::vector<Profile> phases;
  // Capture: the node is created while the capturing thread is in "capture / attn".
  tree.enter("capture");
  tree.enter("attn");
  graphs.node_created(/*graph=*/1, /*node=*/100, tree.current());
  tree.exit();
  tree.exit();
  // Instantiate: the exec's node 200 is a clone of 100.
  graphs.exec_create_starting();
  graphs.node_cloned(100, 200);
  graphs.exec_created(/*exec=*/7, /*source_graph=*/1);
  Aggregator agg(tree, launches, &graphs, {}, [&](const PhaseTable& t, const SelfMetrics& s) {
    phases.push_back(build_profile(t, tree, s));
  });
  tree.enter("decode");
  launches.record(1, tree.current(), 0);  // the cuGraphLaunch
  tree.exit();
  agg.begin_batch();
  agg.consume({1, 0, 10, 0, 0, "flash_attn", 200}, 0);
  agg.consume({1, 10, 30, 0, 0, "mystery", 999}, 0);  // a node of a graph made before attach
  agg.finish();
  ASSERT_EQ(phases.size(), 1u);
  std::map<std::string, Metrics> got;
  leaves(phases[0].root, "", got);
  EXPECT_EQ(got["decode / <captured_at> / capture / attn / flash_attn"].count, 1u);
  EXPECT_EQ(got["decode / mystery"].count, 1u) << "unknown graph nodes fall back to the launch";
  EXPECT_EQ(agg.totals().graph_unknown, 1u);

  // Destroying the exec frees its clones: nothing accumulates across instantiations.
  EXPECT_EQ(graphs.tracked_nodes(), 2u);
  graphs.exec_destroyed(7);
  EXPECT_EQ(graphs.tracked_nodes(), 1u);
  graphs.graph_destroyed(1);
  EXPECT_EQ(graphs.tracked_nodes(), 0u);
}

// Graph-level tracing: one record per graph launch, under launch context / <captured_at> /
// the deepest context holding all the graph's captured kernels.
TEST(Aggregator, GraphLaunchesGoUnderTheirGraphsCaptureSite) {
  ContextTree tree;
  LaunchTable launches(1024);
  GraphRegistry graphs(&tree);
  std::vector<Profile> phases;
  tree.enter("capture");
  tree.enter("attn");
  graphs.node_created(/*graph=*/1, /*node=*/100, tree.current());
  tree.exit();
  tree.enter("mlp");
  graphs.node_created(/*graph=*/1, /*node=*/101, tree.current());
  tree.exit();
  tree.exit();
  // Instantiation without clone callbacks: the exec's context comes from its source graph.
  graphs.exec_create_starting();
  graphs.exec_created(/*exec=*/7, /*source_graph=*/1);
  Aggregator agg(tree, launches, &graphs, {}, [&](const PhaseTable& t, const SelfMetrics& s) {
    phases.push_back(build_profile(t, tree, s));
  });
  tree.enter("decode");
  launches.record(1, tree.current(), 0);  // cuGraphLaunch of exec 7
  launches.record_graph_exec(1, 7);
  launches.record(2, tree.current(), 0);  // a launch whose exec id the callback missed
  launches.record(3, tree.current(), 0);  // a graph instantiated before profiling started
  tree.exit();
  agg.begin_batch();
  agg.consume_graph({1, 0, 1000, 0, 0, /*graph_id=*/1}, 0);
  agg.consume_graph({1, 2000, 2500, 0, 0, 1}, 0);
  agg.consume_graph({2, 3000, 3400, 0, 0, 1}, 0);  // found through the record's graph id
  agg.consume_graph({3, 4000, 4100, 0, 0, 9}, 0);
  agg.finish();
  ASSERT_EQ(phases.size(), 1u);
  std::map<std::string, Metrics> got;
  leaves(phases[0].root, "", got);
  const Metrics& known = got["decode / <captured_at> / capture / " + graph_leaf_name(1)];
  EXPECT_EQ(known.count, 3u);
  EXPECT_EQ(known.time_ns, 1000u + 500u + 400u);
  EXPECT_EQ(got["decode / " + graph_leaf_name(9)].count, 1u) << "unknown graphs stay at launch";
  EXPECT_EQ(agg.totals().graph_unknown, 1u);
  EXPECT_EQ(agg.totals().records, 4u);

  graphs.exec_destroyed(7);
  graphs.graph_destroyed(1);
  EXPECT_EQ(graphs.tracked_nodes(), 0u);
}

TEST(Aggregator, AGraphCapturedInOneScopeIsAttributedToThatScope) {
  ContextTree tree;
  GraphRegistry graphs(&tree);
  tree.enter("step");
  NodeId step = tree.current();
  graphs.node_created(2, 200, step);
  graphs.node_created(2, 201, step);
  tree.exit();
  graphs.exec_create_starting();
  graphs.node_cloned(200, 300);
  graphs.node_cloned(201, 301);
  graphs.exec_created(/*exec=*/5, /*source_graph=*/2);
  auto snapshot = graphs.snapshot();
  ASSERT_EQ(snapshot->execs.count(5), 1u);
  EXPECT_EQ(snapshot->execs.at(5), step);
  EXPECT_EQ(snapshot->graphs.at(2), step);
  graphs.exec_destroyed(5);
  EXPECT_EQ(graphs.snapshot()->execs.count(5), 1u) << "the consumer's snapshot is immutable";
}

TEST(Aggregator, RecordsLandInTheirLaunchPhaseEvenWhenTheyArriveLate) {
  ContextTree tree;
  LaunchTable launches(1024);
  std::map<std::uint32_t, std::uint64_t> counts;
  std::uint64_t late_seen = 0;
  AggregatorConfig config;
  config.phase_grace = 1h;  // closed only by finish() or explicitly below
  Aggregator agg(tree, launches, nullptr, config, [&](const PhaseTable& t, const SelfMetrics& s) {
    t.for_each([&](const Entry& e) { counts[t.phase] += e.metrics.count; });
    late_seen += s.late;
  });
  launches.record(1, kRootNode, 0);
  launches.record(2, kRootNode, 1);
  launches.record(3, kRootNode, 0);  // launched in phase 0, finishes after a phase-1 kernel
  agg.consume({1, 0, 1, 0, 0, "k", 0}, 0);
  agg.consume({2, 1, 2, 0, 0, "k", 0}, 0);
  agg.consume({3, 2, 3, 0, 0, "k", 0}, 0);
  // Phase 2 starts; phase 0 is exported, then a straggler of phase 0 arrives.
  launches.record(4, kRootNode, 2);
  launches.record(5, kRootNode, 0);
  agg.consume({4, 3, 4, 0, 0, "k", 0}, 0);
  agg.consume({5, 4, 5, 0, 0, "k", 0}, 0);
  agg.finish();
  EXPECT_EQ(counts[0], 2u);
  EXPECT_EQ(counts[1], 1u);
  EXPECT_EQ(counts[2], 2u) << "the straggler is counted in the current phase";
  EXPECT_EQ(late_seen, 1u);
}

TEST(Aggregator, GracePeriodClosesThePreviousPhase) {
  ContextTree tree;
  LaunchTable launches(1024);
  std::vector<std::uint32_t> exported;
  AggregatorConfig config;
  config.phase_grace = 100ms;
  Aggregator agg(tree, launches, nullptr, config,
                 [&](const PhaseTable& t, const SelfMetrics&) { exported.push_back(t.phase); });
  launches.record(1, kRootNode, 0);
  agg.consume({1, 0, 1, 0, 0, "k", 0}, 0);
  auto t0 = std::chrono::steady_clock::now();
  agg.maybe_close_phases(1, t0);  // the launching side moved to phase 1
  EXPECT_TRUE(exported.empty()) << "phase 0 may still receive records";
  agg.maybe_close_phases(1, t0 + 50ms);
  EXPECT_TRUE(exported.empty());
  agg.maybe_close_phases(1, t0 + 150ms);
  EXPECT_EQ(exported, std::vector<std::uint32_t>{0});
}

TEST(Aggregator, FiltersUnattributedAndFullTablesAreCounted) {
  ContextTree tree;
  LaunchTable launches(1024);
  AggregatorConfig config;
  config.include_kernels = "gemm|attn";
  config.exclude_kernels = "^attn_bwd$";
  config.table_capacity = 8;  // holds 7 keys
  std::uint64_t exported_records = 0;
  Aggregator agg(tree, launches, nullptr, config, [&](const PhaseTable& t, const SelfMetrics&) {
    t.for_each([&](const Entry& e) { exported_records += e.metrics.count; });
  });
  agg.consume({1, 0, 1, 0, 0, "relu", 0}, 0);
  agg.consume({2, 0, 1, 0, 0, "attn_bwd", 0}, 0);
  agg.consume({3, 0, 1, 0, 0, "gemm_a", 0}, 0);  // never launched here: unattributed
  for (int i = 0; i < 10; ++i) {
    NodeId ctx = tree.child(kRootNode, "ctx" + std::to_string(i));
    launches.record(100 + i, ctx, 0);
    agg.consume({100u + i, 0, 1, 0, 0, "attn_fwd", 0}, 0);
  }
  agg.finish();
  const SelfMetrics& s = agg.totals();
  EXPECT_EQ(s.filtered, 2u);
  EXPECT_EQ(s.unattributed, 1u);
  EXPECT_EQ(s.table_full, 4u);  // 11 keys offered, 7 fit
  EXPECT_EQ(s.records, 7u);
  EXPECT_EQ(exported_records, 7u);
}

TEST(Aggregator, BadFilterIsAClearError) {
  ContextTree tree;
  LaunchTable launches(1024);
  AggregatorConfig config;
  config.include_kernels = "[unclosed";
  try {
    Aggregator agg(tree, launches, nullptr, config, nullptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[unclosed"), std::string::npos) << e.what();
  }
}

TEST(Aggregator, DeclaredWorkIsSummed) {
  ContextTree tree;
  LaunchTable launches(1024);
  Metrics total;
  Aggregator agg(tree, launches, nullptr, {}, [&](const PhaseTable& t, const SelfMetrics&) {
    t.for_each([&](const Entry& e) { total.merge(e.metrics); });
  });
  LaunchWork work;
  work.flops[static_cast<std::size_t>(Precision::fp16)] = 1e9;
  work.bytes = 100;
  for (std::uint64_t c = 1; c <= 3; ++c) {
    launches.record_with_work(c, kRootNode, 0, work);
    agg.consume({c, 0, 10, 0, 0, "gemm", 0}, 0);
  }
  agg.finish();
  EXPECT_EQ(total.flops[static_cast<std::size_t>(Precision::fp16)], 3e9);
  EXPECT_EQ(total.bytes, 300);
}

// --time-every: untimed launches are counted, and each (context, kernel) entry's time becomes
// its count times a mean: its own timed launches' where it has some, else the kernel's over
// the run so far. Inner frames sum those estimates (a pooled ratio over kernels of different
// lengths would be wrong).
TEST(Aggregator, EstimatesTheTimeOfUntimedLaunchesPerKernel) {
  ContextTree tree;
  LaunchTable launches(1 << 16);
  std::vector<Profile> phases;
  AggregatorConfig config;
  config.untimed_launches = true;
  Aggregator agg(tree, launches, nullptr, config, [&](const PhaseTable& t, const SelfMetrics& s) {
    phases.push_back(build_profile(t, tree, s));
  });
  std::uint64_t correlation = 0;
  auto launch = [&](const char* scope, std::string_view kernel, std::uint32_t phase,
                    std::optional<std::uint64_t> duration) {
    tree.enter(scope);
    launches.record(++correlation, tree.current(), phase);
    tree.exit();
    KernelActivity record{correlation, 1000, 1000, 0, 0, kernel, 0};
    if (duration)
      record.end_ns += *duration;
    else
      record.timed = false;
    agg.consume(record, 0);
  };
  // Phase 0. decode / gemm: 100 launches, every tenth timed (10, 20, ... 100 us): mean 55 us.
  for (int i = 0; i < 100; ++i)
    launch("decode", "gemm", 0,
           i % 10 == 0 ? std::optional<std::uint64_t>((i / 10 + 1) * 10'000) : std::nullopt);
  // decode / add: 3 launches of 200 ns, all timed; prefill / add: 50, none timed.
  for (int i = 0; i < 3; ++i) launch("decode", "add", 0, 200);
  for (int i = 0; i < 50; ++i) launch("prefill", "add", 0, std::nullopt);
  // A kernel never timed keeps its count and no time.
  for (int i = 0; i < 7; ++i) launch("prefill", "never", 0, std::nullopt);
  // Phase 1: decode / gemm untimed throughout; the run's gemm mean (55 us) stands in.
  for (int i = 0; i < 20; ++i) launch("decode", "gemm", 1, std::nullopt);
  agg.finish();
  ASSERT_EQ(phases.size(), 2u);
  std::map<std::string, Metrics> first, second;
  leaves(phases[0].root, "", first);
  leaves(phases[1].root, "", second);
  EXPECT_EQ(first["decode / gemm"].count, 100u);
  EXPECT_EQ(first["decode / gemm"].timed, 10u);
  EXPECT_EQ(first["decode / gemm"].time_ns, 100u * 55'000);
  EXPECT_EQ(first["decode / gemm"].min_ns, 10'000u);
  EXPECT_EQ(first["decode / gemm"].max_ns, 100'000u);
  EXPECT_TRUE(first["decode / gemm"].estimated());
  EXPECT_EQ(first["decode / add"].time_ns, 600u);
  EXPECT_FALSE(first["decode / add"].estimated());
  EXPECT_EQ(first["prefill / add"].count, 50u);
  EXPECT_EQ(first["prefill / add"].timed, 0u);
  EXPECT_EQ(first["prefill / add"].time_ns, 50u * 200);
  EXPECT_EQ(first["prefill / never"].count, 7u);
  EXPECT_EQ(first["prefill / never"].time_ns, 0u);
  EXPECT_EQ(second["decode / gemm"].count, 20u);
  EXPECT_EQ(second["decode / gemm"].time_ns, 20u * 55'000);
  const ProfileNode* decode = phases[0].root.find("decode");
  ASSERT_TRUE(decode);
  EXPECT_EQ(decode->metrics.time_ns, 100u * 55'000 + 600);
  EXPECT_EQ(decode->metrics.count, 103u);
  EXPECT_EQ(decode->metrics.timed, 13u);
  EXPECT_EQ(agg.totals().records, 180u);
}

// An untimed launch of the events backend carries its context and phase with the record, so
// the launch table is not written for it (Session::launch_info); its declared work still is.
TEST(Aggregator, RecordsThatCarryTheirContextNeedNoLaunchSlot) {
  ContextTree tree;
  LaunchTable launches(1 << 10);
  std::vector<Profile> phases;
  Aggregator agg(tree, launches, nullptr, {}, [&](const PhaseTable& t, const SelfMetrics& s) {
    phases.push_back(build_profile(t, tree, s));
  });
  tree.enter("serve");
  const NodeId serve = tree.current();
  tree.exit();
  LaunchWork work;
  work.bytes = 4096;
  launches.record_with_work(7, serve, 2, work);
  KernelActivity carried{5, 0, 0, 0, 0, "copy", 0};
  carried.timed = false;
  carried.launch = LaunchInfo{serve, 2, false};
  agg.consume(carried, 0);
  carried.correlation = 7;
  carried.launch = LaunchInfo{serve, 2, true};
  agg.consume(carried, 0);
  agg.finish();
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].first_phase, 2u);
  std::map<std::string, Metrics> got;
  leaves(phases[0].root, "", got);
  EXPECT_EQ(got["serve / copy"].count, 2u);
  EXPECT_EQ(got["serve / copy"].timed, 0u);
  EXPECT_EQ(got["serve / copy"].bytes, 4096);
  EXPECT_EQ(agg.totals().unattributed, 0u);
}

}  // namespace
}  // namespace wavekit::profile
