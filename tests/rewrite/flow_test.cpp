// Edge counting on a maximum spanning tree (src/rewrite/src/flow.h), against brute force: walks
// through hand-made and random CFGs count every block, edge, exit and entry directly; the
// counters' values from those walks, put through the solved sums, must give every block count
// exactly, and the counters must be as few as the spanning tree allows.
#include "flow.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>

namespace wavekit::rewrite::detail {
namespace {

struct Walked {
  std::vector<std::uint64_t> blocks, edges, exits;
  std::uint64_t entries = 0;
};

// `runs` walks from the entry to an exit, each step a random successor (an exit is one more
// choice at an exit block); after `limit` steps a walk heads for the nearest exit, so that it
// ends.
Walked walk(const FlowGraph& graph, std::uint32_t runs, std::mt19937& random,
            std::uint32_t limit = 200) {
  const std::uint32_t n = graph.blocks;
  std::vector<std::vector<std::uint32_t>> out(n);
  for (std::uint32_t e = 0; e < graph.edges.size(); ++e) out[graph.edges[e].from].push_back(e);
  std::vector<bool> exits(n);
  for (std::uint32_t b : graph.exits) exits[b] = true;
  std::vector<std::uint32_t> distance(n, UINT32_MAX);  // steps to an exit
  std::deque<std::uint32_t> work;
  for (std::uint32_t b : graph.exits) distance[b] = 0, work.push_back(b);
  while (!work.empty()) {
    const std::uint32_t b = work.front();
    work.pop_front();
    for (const FlowGraph::Edge& edge : graph.edges)
      if (edge.to == b && distance[edge.from] == UINT32_MAX) {
        distance[edge.from] = distance[b] + 1;
        work.push_back(edge.from);
      }
  }
  Walked w;
  w.blocks.resize(n);
  w.edges.resize(graph.edges.size());
  w.exits.resize(n);
  for (std::uint32_t run = 0; run < runs; ++run) {
    ++w.entries;
    std::uint32_t block = 0;
    for (std::uint32_t step = 0;; ++step) {
      ++w.blocks[block];
      const std::size_t choices = out[block].size() + (exits[block] ? 1 : 0);
      std::size_t pick = std::uniform_int_distribution<std::size_t>(0, choices - 1)(random);
      if (step >= limit) {  // the way out
        if (exits[block]) {
          pick = out[block].size();
        } else {
          for (std::size_t i = 0; i < out[block].size(); ++i)
            if (distance[graph.edges[out[block][i]].to] + 1 == distance[block]) pick = i;
        }
      }
      if (pick == out[block].size()) {
        ++w.exits[block];
        break;
      }
      ++w.edges[out[block][pick]];
      block = graph.edges[out[block][pick]].to;
    }
  }
  return w;
}

std::vector<std::uint64_t> counter_values(const FlowCounters& counters, const Walked& w) {
  std::vector<std::uint64_t> values;
  for (const FlowCounters::Counter& c : counters.counters) switch (c.site) {
      case FlowCounters::Site::block:
        values.push_back(w.blocks[c.index]);
        break;
      case FlowCounters::Site::edge:
        values.push_back(w.edges[c.index]);
        break;
      case FlowCounters::Site::exit:
        values.push_back(w.exits[c.index]);
        break;
      case FlowCounters::Site::entry:
        values.push_back(w.entries);
        break;
    }
  return values;
}

std::int64_t evaluate(const FlowSum& sum, const std::vector<std::uint64_t>& values) {
  std::int64_t total = sum.constant;
  for (const auto& [counter, coefficient] : sum.terms)
    total += coefficient * static_cast<std::int64_t>(values.at(counter));
  return total;
}

// Every block count, from the counters of `runs` walks (a kernel: one, its wave's).
void expect_exact(const FlowGraph& graph, std::mt19937& random, const std::string& what) {
  const FlowCounters counters = spanning_tree_counters(graph);
  ASSERT_EQ(counters.block_counts.size(), graph.blocks) << what;
  // One counter per arc left out of the spanning tree of the split graph (2n + 1 nodes, n block
  // arcs, the CFG edges, the exits and the virtual edge, which a kernel knows).
  EXPECT_EQ(counters.counters.size(),
            graph.edges.size() + graph.exits.size() + (graph.entered_once ? 0 : 1) - graph.blocks)
      << what;
  // A block's count crosses each counter's fundamental cycle at most once.
  for (const FlowSum& sum : counters.block_counts)
    for (const auto& [counter, coefficient] : sum.terms)
      EXPECT_TRUE(coefficient == 1 || coefficient == -1) << what << ": " << coefficient;
  for (std::uint32_t trial = 0; trial < 20; ++trial) {
    const std::uint32_t runs =
        graph.entered_once ? 1 : std::uniform_int_distribution<std::uint32_t>(0, 4)(random);
    const Walked w = walk(graph, runs, random);
    const std::vector<std::uint64_t> values = counter_values(counters, w);
    for (std::uint32_t b = 0; b < graph.blocks; ++b)
      ASSERT_EQ(evaluate(counters.block_counts[b], values), static_cast<std::int64_t>(w.blocks[b]))
          << what << ": block " << b << ", trial " << trial;
  }
}

FlowGraph graph_of(std::uint32_t blocks, std::vector<std::pair<std::uint32_t, std::uint32_t>> edges,
                   std::vector<std::uint32_t> exits, bool kernel) {
  FlowGraph graph;
  graph.blocks = blocks;
  for (auto [from, to] : edges) graph.edges.push_back({from, to, from >= to});
  graph.exits = std::move(exits);
  graph.entered_once = kernel;
  return graph;
}

bool counted(const FlowCounters& counters, FlowCounters::Site site, std::uint32_t index) {
  return std::any_of(
      counters.counters.begin(), counters.counters.end(),
      [&](const FlowCounters::Counter& c) { return c.site == site && c.index == index; });
}

TEST(Flow, StraightLineKernelNeedsNoCounter) {
  const FlowGraph graph = graph_of(1, {}, {0}, true);
  const FlowCounters counters = spanning_tree_counters(graph);
  EXPECT_TRUE(counters.counters.empty());
  ASSERT_EQ(counters.block_counts.size(), 1u);
  EXPECT_EQ(counters.block_counts[0].constant, 1);
  EXPECT_TRUE(counters.block_counts[0].terms.empty());
}

TEST(Flow, IfThenKernelCountsOneSide) {
  // 0: s_cbranch_execz -> 2; 1: the body; 2: s_endpgm (vector_add's shape).
  const FlowGraph graph = graph_of(3, {{0, 1}, {0, 2}, {1, 2}}, {2}, true);
  std::mt19937 random(1);
  expect_exact(graph, random, "if-then");
  EXPECT_EQ(spanning_tree_counters(graph).counters.size(), 1u);
}

TEST(Flow, NestedLoopsCountOncePerInnerPassAndNothingOutside) {
  // 0 -> 1; 1: a loop of one block (1 -> 1) and 1 -> 2 -> 3, 3 -> 1 (an outer loop), 3 -> 4.
  const FlowGraph graph = graph_of(5, {{0, 1}, {1, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}}, {4}, true);
  std::mt19937 random(2);
  expect_exact(graph, random, "nested loops");
  const FlowCounters counters = spanning_tree_counters(graph);
  // The inner loop runs most, and each of its passes needs one counter update: its block's (a
  // counter on its back edge would also cost a stub's s_branch). The outer loop's one counter
  // is outside the inner loop, and nothing is counted outside both.
  EXPECT_TRUE(counted(counters, FlowCounters::Site::block, 1));
  EXPECT_FALSE(counted(counters, FlowCounters::Site::edge, 1));
  ASSERT_EQ(counters.counters.size(), 2u);
  EXPECT_FALSE(counted(counters, FlowCounters::Site::block, 0));
  EXPECT_FALSE(counted(counters, FlowCounters::Site::block, 4));
  EXPECT_FALSE(counted(counters, FlowCounters::Site::edge, 0));
  EXPECT_FALSE(counted(counters, FlowCounters::Site::edge, 5));
}

TEST(Flow, DeviceFunctionWithTwoReturnsCountsItsCalls) {
  // 0 -> 1 | 2; 1 returns; 2 loops on itself, then returns.
  const FlowGraph graph = graph_of(3, {{0, 1}, {0, 2}, {2, 2}}, {1, 2}, false);
  std::mt19937 random(3);
  expect_exact(graph, random, "function");
}

TEST(Flow, EdgePlacesFollowPredecessorsAndSuccessors) {
  // 0 -> 1, 0 -> 2 (taken), 1 -> 2: 0 -> 1 goes into 1 (one predecessor), 1 -> 2 at the end of
  // 1 (one successor), 0 -> 2 is split.
  const FlowGraph graph = graph_of(3, {{0, 1}, {0, 2}, {1, 2}}, {2}, true);
  EXPECT_EQ(edge_places(graph),
            (std::vector<EdgePlace>{EdgePlace::target, EdgePlace::split, EdgePlace::source}));
  // A branch back to the entry: the entry has the virtual edge too, so that edge is split.
  const FlowGraph loop = graph_of(2, {{0, 0}, {0, 1}}, {1}, true);
  EXPECT_EQ(edge_places(loop), (std::vector<EdgePlace>{EdgePlace::split, EdgePlace::target}));
}

TEST(Flow, RandomGraphsAgreeWithBruteForce) {
  std::mt19937 random(16);
  for (std::uint32_t g = 0; g < 400; ++g) {
    const std::uint32_t n = std::uniform_int_distribution<std::uint32_t>(1, 14)(random);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    auto add = [&](std::uint32_t from, std::uint32_t to) {
      if (std::find(edges.begin(), edges.end(), std::pair{from, to}) == edges.end())
        edges.emplace_back(from, to);
    };
    // Every block reachable: one edge from an earlier block; then up to one more successor
    // each, anywhere (loops, self-loops, branches back to the entry).
    for (std::uint32_t b = 1; b < n; ++b)
      add(std::uniform_int_distribution<std::uint32_t>(0, b - 1)(random), b);
    for (std::uint32_t b = 0; b < n; ++b)
      if (random() % 2) add(b, std::uniform_int_distribution<std::uint32_t>(0, n - 1)(random));
    // Exits: the blocks without successors and some others; then every block that could not
    // reach one, so that every walk can end.
    std::vector<bool> exit(n);
    for (std::uint32_t b = 0; b < n; ++b)
      exit[b] = random() % 5 == 0 || std::none_of(edges.begin(), edges.end(),
                                                  [&](const auto& e) { return e.first == b; });
    for (std::uint32_t b = 0; b < n; ++b) {
      std::vector<bool> seen(n);
      std::vector<std::uint32_t> work{b};
      bool reaches = false;
      while (!work.empty() && !reaches) {
        const std::uint32_t at = work.back();
        work.pop_back();
        if (seen[at]) continue;
        seen[at] = true;
        reaches = exit[at];
        for (const auto& e : edges)
          if (e.first == at) work.push_back(e.second);
      }
      if (!reaches) exit[b] = true;
    }
    std::vector<std::uint32_t> exits;
    for (std::uint32_t b = 0; b < n; ++b)
      if (exit[b]) exits.push_back(b);
    const FlowGraph graph = graph_of(n, edges, exits, g % 2 == 0);
    expect_exact(graph, random, "random graph " + std::to_string(g));
    if (testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace wavekit::rewrite::detail
