#include "graph_registry.h"

#include <optional>

namespace wavekit::profile {

namespace {
// Clones made by this thread while it instantiates an executable graph.
thread_local std::vector<std::uint64_t>* pending_clones = nullptr;
}  // namespace

GraphRegistry::GraphRegistry(const ContextTree* tree)
    : tree_(tree), snapshot_(std::make_shared<const Snapshot>()) {}

NodeId GraphRegistry::common_context(NodeId a, NodeId b) const {
  if (!tree_) return a;
  auto depth = [this](NodeId n) {
    std::size_t d = 0;
    for (; n != kRootNode; n = tree_->node(n).parent) ++d;
    return d;
  };
  std::size_t da = depth(a), db = depth(b);
  for (; da > db; --da) a = tree_->node(a).parent;
  for (; db > da; --db) b = tree_->node(b).parent;
  while (a != b) {
    a = tree_->node(a).parent;
    b = tree_->node(b).parent;
  }
  return a;
}

void GraphRegistry::node_created(std::uint32_t graph_id, std::uint64_t node_id,
                                 NodeId capture_context) {
  std::lock_guard lock(mutex_);
  master_.nodes[node_id] = capture_context;
  graph_nodes_[graph_id].push_back(node_id);
}

void GraphRegistry::node_cloned(std::uint64_t original_node_id, std::uint64_t clone_node_id) {
  std::lock_guard lock(mutex_);
  auto it = master_.nodes.find(original_node_id);
  if (it == master_.nodes.end()) return;  // a node captured before profiling started
  master_.nodes[clone_node_id] = it->second;
  if (pending_clones) pending_clones->push_back(clone_node_id);
}

void GraphRegistry::exec_create_starting() {
  delete pending_clones;
  pending_clones = new std::vector<std::uint64_t>();
}

void GraphRegistry::exec_created(std::uint32_t exec_id, std::uint32_t source_graph_id) {
  {
    std::lock_guard lock(mutex_);
    // The graph-level context: the common context of the source graph's nodes and of the
    // clones made while instantiating it (either may be absent, depending on the CUDA version
    // and on whether the graph was captured while attached).
    std::optional<NodeId> context;
    auto include = [&](std::uint64_t node) {
      auto it = master_.nodes.find(node);
      if (it == master_.nodes.end()) return;
      context = context ? common_context(*context, it->second) : it->second;
    };
    if (auto it = graph_nodes_.find(source_graph_id); it != graph_nodes_.end())
      for (std::uint64_t node : it->second) include(node);
    if (pending_clones)
      for (std::uint64_t node : *pending_clones) include(node);
    if (context) {
      master_.execs[exec_id] = *context;
      master_.graphs[source_graph_id] = *context;
    }
    if (pending_clones && !pending_clones->empty())
      exec_nodes_[exec_id] = std::move(*pending_clones);
  }
  delete pending_clones;
  pending_clones = nullptr;
  publish();
}

void GraphRegistry::exec_destroyed(std::uint32_t exec_id) {
  std::lock_guard lock(mutex_);
  master_.execs.erase(exec_id);
  auto it = exec_nodes_.find(exec_id);
  if (it == exec_nodes_.end()) return;
  for (std::uint64_t node : it->second) master_.nodes.erase(node);
  exec_nodes_.erase(it);
}

void GraphRegistry::graph_destroyed(std::uint32_t graph_id) {
  std::lock_guard lock(mutex_);
  master_.graphs.erase(graph_id);
  auto it = graph_nodes_.find(graph_id);
  if (it == graph_nodes_.end()) return;
  for (std::uint64_t node : it->second) master_.nodes.erase(node);
  graph_nodes_.erase(it);
}

void GraphRegistry::publish() {
  std::shared_ptr<const Snapshot> next;
  {
    std::lock_guard lock(mutex_);
    next = std::make_shared<const Snapshot>(master_);
  }
  snapshot_.store(std::move(next));
}

std::size_t GraphRegistry::tracked_nodes() const {
  std::lock_guard lock(mutex_);
  return master_.nodes.size();
}

}  // namespace wavekit::profile
