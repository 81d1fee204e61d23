// CUDA-graph capture sites. While a graph is captured, each kernel node is mapped to the
// calling context that captured it; instantiation clones nodes into the executable graph and
// the clones inherit the mapping. Writers (capture and instantiate callbacks, rare) work on a
// master map under a mutex and publish immutable snapshots; the consumer thread only reads the
// latest snapshot, so replay attribution takes no lock. Entries are freed when the executable
// graph or the graph is destroyed, so nothing leaks, and nodes of graphs made before profiling
// started are simply absent (their kernels fall back to the launch context). For graph-level
// tracing each executable graph (and its source graph) also maps to one capture context: the
// deepest context that holds all its kernel nodes' capture contexts.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "context_tree.h"

namespace wavekit::profile {

class GraphRegistry {
 public:
  using NodeMap = std::unordered_map<std::uint64_t, NodeId>;   // graph node id -> capture ctx
  using GraphMap = std::unordered_map<std::uint32_t, NodeId>;  // graph or exec id -> ctx
  struct Snapshot {
    NodeMap nodes;
    GraphMap execs;   // by CUPTI graph exec id
    GraphMap graphs;  // by CUPTI graph id of the graph an exec was instantiated from
  };

  // `tree` (may be null) finds the common context of an executable graph's nodes; without it
  // an executable graph maps to the context of one of its nodes.
  explicit GraphRegistry(const ContextTree* tree = nullptr);

  void node_created(std::uint32_t graph_id, std::uint64_t node_id, NodeId capture_context);
  // Called for every clone; clones made between exec_create_starting and exec_created on this
  // thread belong to that executable graph.
  void node_cloned(std::uint64_t original_node_id, std::uint64_t clone_node_id);
  void exec_create_starting();
  void exec_created(std::uint32_t exec_id, std::uint32_t source_graph_id);
  void exec_destroyed(std::uint32_t exec_id);
  void graph_destroyed(std::uint32_t graph_id);
  // Makes writes since the last publish visible to the consumer.
  void publish();

  std::shared_ptr<const Snapshot> snapshot() const { return snapshot_.load(); }
  std::size_t tracked_nodes() const;

 private:
  mutable std::mutex mutex_;
  NodeId common_context(NodeId a, NodeId b) const;

  const ContextTree* tree_;
  Snapshot master_;
  std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> graph_nodes_;
  std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> exec_nodes_;
  std::atomic<std::shared_ptr<const Snapshot>> snapshot_;
};

}  // namespace wavekit::profile
