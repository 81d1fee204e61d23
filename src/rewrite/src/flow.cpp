#include "flow.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "wavekit/support/error.h"

namespace wavekit::rewrite::detail {
namespace {

// a += sign * b
void add(FlowSum& a, const FlowSum& b, std::int64_t sign) {
  a.constant += sign * b.constant;
  // Most sums on the way are empty or a single counter: no merge for those.
  if (b.terms.empty()) return;
  if (a.terms.empty()) {
    a.terms = b.terms;
    for (auto& term : a.terms) term.second *= sign;
    return;
  }
  std::vector<std::pair<std::uint32_t, std::int64_t>> merged;
  merged.reserve(a.terms.size() + b.terms.size());
  auto i = a.terms.begin();
  auto j = b.terms.begin();
  while (i != a.terms.end() || j != b.terms.end()) {
    if (j == b.terms.end() || (i != a.terms.end() && i->first < j->first)) {
      merged.push_back(*i++);
    } else if (i == a.terms.end() || j->first < i->first) {
      merged.emplace_back(j->first, sign * j->second);
      ++j;
    } else {
      const std::int64_t sum = i->second + sign * j->second;
      if (sum != 0) merged.emplace_back(i->first, sum);
      ++i;
      ++j;
    }
  }
  a.terms = std::move(merged);
}

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), std::uint32_t{0});
  }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  bool unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent[std::max(a, b)] = std::min(a, b);
    return true;
  }
};

// A static frequency estimate per block and per CFG edge: branches split evenly along the
// acyclic (forward) edges, and every natural loop a block or edge lies in multiplies by ten.
struct Estimate {
  std::vector<double> block;
  std::vector<double> edge;
};

Estimate estimate(const FlowGraph& graph) {
  const std::uint32_t n = graph.blocks;
  std::vector<std::vector<std::uint32_t>> out(n), in(n);  // edge indices
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    out[graph.edges[e].from].push_back(static_cast<std::uint32_t>(e));
    in[graph.edges[e].to].push_back(static_cast<std::uint32_t>(e));
  }
  // Depth-first from the entry: retreating edges (to a block on the stack) close loops; the
  // reverse postorder orders the remaining, forward, edges.
  std::vector<bool> retreating(graph.edges.size());
  std::vector<std::uint8_t> state(n);  // 0 new, 1 on the stack, 2 done
  std::vector<std::uint32_t> postorder;
  std::vector<std::pair<std::uint32_t, std::size_t>> stack{{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < out[node].size()) {
      const std::uint32_t e = out[node][next++];
      const std::uint32_t to = graph.edges[e].to;
      if (state[to] == 1) retreating[e] = true;
      if (state[to] == 0) {
        state[to] = 1;
        stack.emplace_back(to, 0);
      }
    } else {
      state[node] = 2;
      postorder.push_back(node);
      stack.pop_back();
    }
  }
  // Natural loops by header: the blocks that reach a retreating edge's source without passing
  // through its target.
  std::vector<std::vector<bool>> loops;
  std::vector<std::int64_t> loop_of_header(n, -1);
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    if (!retreating[e]) continue;
    const std::uint32_t header = graph.edges[e].to;
    if (loop_of_header[header] < 0) {
      loop_of_header[header] = static_cast<std::int64_t>(loops.size());
      loops.emplace_back(n);
      loops.back()[header] = true;
    }
    std::vector<bool>& body = loops[static_cast<std::size_t>(loop_of_header[header])];
    std::vector<std::uint32_t> work{graph.edges[e].from};
    while (!work.empty()) {
      const std::uint32_t b = work.back();
      work.pop_back();
      if (body[b]) continue;
      body[b] = true;
      for (std::uint32_t p : in[b]) work.push_back(graph.edges[p].from);
    }
  }
  auto nesting = [&](std::uint32_t a, std::uint32_t b) {
    int depth = 0;
    for (const std::vector<bool>& body : loops) depth += body[a] && body[b];
    return std::pow(10.0, std::min(depth, 6));
  };

  std::vector<double> acyclic(n, 0.0);
  acyclic[0] = 1;
  for (auto b = postorder.rbegin(); b != postorder.rend(); ++b) {
    std::size_t forward = 0;
    for (std::uint32_t e : out[*b]) forward += !retreating[e];
    for (std::uint32_t e : out[*b])
      if (!retreating[e]) acyclic[graph.edges[e].to] += acyclic[*b] / double(forward);
  }
  Estimate result;
  result.block.resize(n);
  for (std::uint32_t b = 0; b < n; ++b) result.block[b] = acyclic[b] * nesting(b, b);
  result.edge.resize(graph.edges.size());
  for (std::size_t e = 0; e < graph.edges.size(); ++e) {
    const FlowGraph::Edge& edge = graph.edges[e];
    std::size_t forward = 0;
    for (std::uint32_t f : out[edge.from]) forward += !retreating[f];
    // A loop's back edges are taken nine times in ten: a little less often than the block they
    // leave, which is what makes a one-block loop count its block, not its back edge.
    std::size_t back = 0;
    for (std::uint32_t f : out[edge.from]) back += retreating[f];
    result.edge[e] = retreating[e]
                         ? result.block[edge.from] * 0.9 / double(back)
                         : acyclic[edge.from] / double(forward) * nesting(edge.from, edge.to);
  }
  return result;
}

}  // namespace

std::vector<EdgePlace> edge_places(const FlowGraph& graph) {
  std::vector<std::size_t> predecessors(graph.blocks), successors(graph.blocks);
  for (const FlowGraph::Edge& edge : graph.edges) {
    ++predecessors.at(edge.to);
    ++successors.at(edge.from);
  }
  if (graph.blocks) ++predecessors[0];  // the virtual edge
  std::vector<EdgePlace> places;
  for (const FlowGraph::Edge& edge : graph.edges)
    places.push_back(predecessors[edge.to] == 1   ? EdgePlace::target
                     : successors[edge.from] == 1 ? EdgePlace::source
                                                  : EdgePlace::split);
  return places;
}

FlowCounters per_block_counters(std::uint32_t blocks) {
  FlowCounters result;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    result.counters.push_back({FlowCounters::Site::block, b});
    result.block_counts.push_back({0, {{b, 1}}});
  }
  return result;
}

FlowCounters spanning_tree_counters(const FlowGraph& graph) {
  const std::uint32_t n = graph.blocks;
  if (n == 0) return {};
  for (const FlowGraph::Edge& edge : graph.edges)
    if (edge.from >= n || edge.to >= n) throw Error("flow graph: an edge leaves the blocks");
  for (std::uint32_t exit : graph.exits)
    if (exit >= n) throw Error("flow graph: an exit is not a block");

  // The split graph's nodes: b_in = 2b, b_out = 2b + 1, X = 2n.
  const std::uint32_t exit_node = 2 * n;
  struct Arc {
    std::uint32_t from, to;
    FlowCounters::Counter site;
    double weight;
  };
  const Estimate freq = estimate(graph);
  const std::vector<EdgePlace> places = edge_places(graph);
  std::vector<Arc> arcs;
  for (std::uint32_t b = 0; b < n; ++b)
    arcs.push_back({2 * b, 2 * b + 1, {FlowCounters::Site::block, b}, freq.block[b]});
  for (std::uint32_t e = 0; e < graph.edges.size(); ++e) {
    const FlowGraph::Edge& edge = graph.edges[e];
    // A counter in either block costs the update; a split taken edge's stub an s_branch more.
    const bool stub = places[e] == EdgePlace::split && edge.taken;
    arcs.push_back({2 * edge.from + 1,
                    2 * edge.to,
                    {FlowCounters::Site::edge, e},
                    freq.edge[e] * (stub ? 2.0 : 1.0)});
  }
  for (std::uint32_t exit : graph.exits)
    arcs.push_back({2 * exit + 1, exit_node, {FlowCounters::Site::exit, exit}, freq.block[exit]});
  const std::size_t virtual_arc = arcs.size();
  arcs.push_back({exit_node, 0, {FlowCounters::Site::entry, 0}, 1.0});

  // Kruskal, heaviest first; ties keep the order above. The kernel's virtual edge is known and
  // stays out of the tree.
  std::vector<std::size_t> order(arcs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return arcs[a].weight > arcs[b].weight || (arcs[a].weight == arcs[b].weight && a < b);
  });
  UnionFind components(2 * n + 1);
  std::vector<bool> in_tree(arcs.size());
  std::size_t tree_arcs = 0;
  for (std::size_t a : order) {
    if (graph.entered_once && a == virtual_arc) continue;
    if (components.unite(arcs[a].from, arcs[a].to)) {
      in_tree[a] = true;
      ++tree_arcs;
    }
  }
  // A kernel with no exit leaves X alone: nothing to conserve against.
  if (tree_arcs != 2 * std::size_t{n}) return per_block_counters(n);

  FlowCounters result;
  std::vector<FlowSum> value(arcs.size());
  std::vector<bool> known(arcs.size());
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    if (in_tree[a]) continue;
    known[a] = true;
    if (graph.entered_once && a == virtual_arc) {
      value[a].constant = 1;
      continue;
    }
    value[a].terms = {{static_cast<std::uint32_t>(result.counters.size()), 1}};
    result.counters.push_back(arcs[a].site);
  }
  // Conservation: at every node what flows in flows out. balance = known inflow - known
  // outflow; a node with one unknown (tree) arc left gives that arc's value.
  std::vector<FlowSum> balance(2 * n + 1);
  std::vector<std::vector<std::size_t>> unknown(2 * n + 1);
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    if (known[a]) {
      add(balance[arcs[a].to], value[a], 1);
      add(balance[arcs[a].from], value[a], -1);
    } else {
      unknown[arcs[a].from].push_back(a);
      unknown[arcs[a].to].push_back(a);
    }
  }
  std::vector<std::uint32_t> leaves;
  for (std::uint32_t node = 0; node <= exit_node; ++node)
    if (unknown[node].size() == 1) leaves.push_back(node);
  while (!leaves.empty()) {
    const std::uint32_t node = leaves.back();
    leaves.pop_back();
    std::vector<std::size_t>& pending = unknown[node];
    std::erase_if(pending, [&](std::size_t a) { return known[a]; });
    if (pending.size() != 1) continue;
    const std::size_t a = pending.front();
    const Arc& arc = arcs[a];
    // in - out = 0: an outgoing unknown is the balance, an incoming one its negation.
    value[a] = balance[node];
    if (arc.to == node) {
      value[a].constant = -value[a].constant;
      for (auto& term : value[a].terms) term.second = -term.second;
    }
    known[a] = true;
    const std::uint32_t other = arc.to == node ? arc.from : arc.to;
    add(balance[other], value[a], other == arc.to ? 1 : -1);
    std::erase_if(unknown[other], [&](std::size_t b) { return known[b]; });
    if (unknown[other].size() == 1) leaves.push_back(other);
    pending.clear();
  }
  for (std::uint32_t b = 0; b < n; ++b) {
    if (!known[b]) throw Error("flow graph: block " + std::to_string(b) + " left unsolved");
    result.block_counts.push_back(value[b]);
  }
  return result;
}

}  // namespace wavekit::rewrite::detail
