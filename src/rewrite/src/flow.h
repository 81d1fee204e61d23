// Block counting with fewer counters: counters on the edges off a maximum spanning tree of a
// function's control-flow graph, every block count derived from them by flow conservation
// (Knuth 1973; Ball and Larus 1994, "Optimally profiling and tracing programs"; gcov's arc
// profiling). Control flow is per wave and scalar, so conservation holds per wave.
//
// The graph each function is solved on: every block b is split into b_in -> b_out (the block
// edge: counting it is a counter at the block's start, what bbcount always did), each CFG edge
// u -> v is u_out -> v_in, each exit block (s_endpgm, a return, a tail call) has u_out -> X,
// and the virtual edge X -> entry_in closes the flow (Ball and Larus). A kernel's entry runs
// once per wave, so there the virtual edge is known (1) and never counted; a device function's
// is counted (once per call, in its entry code). The edges left out of the tree get counters;
// the tree edges are solved from them, so each block count is a constant plus a sum of
// counters with coefficients.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace wavekit::rewrite::detail {

struct FlowGraph {
  std::uint32_t blocks = 0;  // 0 is the entry
  struct Edge {
    std::uint32_t from = 0, to = 0;
    // A branch's taken edge: split, it needs a stub that also runs an s_branch (a split
    // fall-through needs only the counter after the branch).
    bool taken = false;
  };
  std::vector<Edge> edges;           // CFG edges between blocks, no duplicates
  std::vector<std::uint32_t> exits;  // blocks that leave the function (no CFG successor)
  bool entered_once = false;         // a kernel: the entry runs exactly once per wave
};

// Where a counter on CFG edge u -> v goes: in v when v has one predecessor (the entry counts
// the virtual edge as one), else at the end of u when u has one successor, else on the edge
// itself (after the conditional branch for the fall-through, a stub for the taken branch).
enum class EdgePlace { target, source, split };
std::vector<EdgePlace> edge_places(const FlowGraph& graph);  // per graph.edges

// A count: constant + sum of coefficient x counter.
struct FlowSum {
  std::int64_t constant = 0;
  std::vector<std::pair<std::uint32_t, std::int64_t>> terms;  // (counter, coefficient), ascending
};

struct FlowCounters {
  enum class Site {
    block,  // the start of block `index`
    edge,   // CFG edge `index` (graph.edges), placed as edge_places says
    exit,   // the end of exit block `index`, before it leaves
    entry,  // the function's entry code, once per call (the virtual edge)
  };
  struct Counter {
    Site site = Site::block;
    std::uint32_t index = 0;
  };
  std::vector<Counter> counters;
  std::vector<FlowSum> block_counts;  // per block, over the indices of `counters`
};

// Counters one per block, each block's count its own counter: for functions whose flow cannot
// be trusted to be conserved.
FlowCounters per_block_counters(std::uint32_t blocks);

// The counters off a maximum spanning tree, weighted by a static estimate of each edge's
// frequency (loops nested ten-fold, branches even) times what a counter there costs (a split
// taken edge also runs an s_branch), so that counters land where they run least; and the block
// counts solved from them. Deterministic: the same graph gives the same counters.
FlowCounters spanning_tree_counters(const FlowGraph& graph);

}  // namespace wavekit::rewrite::detail
