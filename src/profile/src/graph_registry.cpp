#include "wavekit/profile/graph_registry.h"

namespace wavekit::profile {

namespace {
// Clones made by this thread while it instantiates an executable graph.
thread_local std::vector<std::uint64_t>* pending_clones = nullptr;
}  // namespace

GraphRegistry::GraphRegistry() : snapshot_(std::make_shared<const Snapshot>()) {}

void GraphRegistry::node_created(std::uint32_t graph_id, std::uint64_t node_id,
                                 NodeId capture_context) {
  std::lock_guard lock(mutex_);
  master_[node_id] = capture_context;
  graph_nodes_[graph_id].push_back(node_id);
}

void GraphRegistry::node_cloned(std::uint64_t original_node_id, std::uint64_t clone_node_id) {
  std::lock_guard lock(mutex_);
  auto it = master_.find(original_node_id);
  if (it == master_.end()) return;  // a node captured before profiling started
  master_[clone_node_id] = it->second;
  if (pending_clones) pending_clones->push_back(clone_node_id);
}

void GraphRegistry::exec_create_starting() {
  delete pending_clones;
  pending_clones = new std::vector<std::uint64_t>();
}

void GraphRegistry::exec_created(std::uint32_t exec_id) {
  {
    std::lock_guard lock(mutex_);
    if (pending_clones) exec_nodes_[exec_id] = std::move(*pending_clones);
  }
  delete pending_clones;
  pending_clones = nullptr;
  publish();
}

void GraphRegistry::exec_destroyed(std::uint32_t exec_id) {
  std::lock_guard lock(mutex_);
  auto it = exec_nodes_.find(exec_id);
  if (it == exec_nodes_.end()) return;
  for (std::uint64_t node : it->second) master_.erase(node);
  exec_nodes_.erase(it);
}

void GraphRegistry::graph_destroyed(std::uint32_t graph_id) {
  std::lock_guard lock(mutex_);
  auto it = graph_nodes_.find(graph_id);
  if (it == graph_nodes_.end()) return;
  for (std::uint64_t node : it->second) master_.erase(node);
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
  return master_.size();
}

}  // namespace wavekit::profile
