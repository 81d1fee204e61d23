// The calling-context tree: an interned, append-only tree of scope names shared by every
// thread. A launch is attributed to the current node of its thread, an integer, so the
// per-launch hot path copies no strings and takes no locks. New (parent, name) pairs take a
// mutex once per thread; after that a per-thread cache answers. Nodes are never removed, so
// the consumer thread can read any node id it is handed without synchronising with writers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wavekit::profile {

using NodeId = std::uint32_t;
using NameId = std::uint32_t;
inline constexpr NodeId kRootNode = 0;

// Interned strings with stable ids. Past `max_names` every new name maps to the one
// overflow name, so a program that invents names forever (ids in kernel names, say) cannot
// grow memory without bound.
class NameTable {
 public:
  explicit NameTable(std::size_t max_names);
  NameId intern(std::string_view name);
  std::string name(NameId id) const;
  std::size_t size() const;
  std::uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
  static constexpr std::string_view kOverflowName = "<names overflowed>";

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, NameId, Hash, std::equal_to<>> ids_;
  std::deque<std::string> names_;  // deque: references stay valid as it grows
  std::size_t max_names_;
  std::atomic<std::uint64_t> overflowed_{0};
};

class ContextTree {
 public:
  struct Node {
    NodeId parent;
    NameId name;
  };

  explicit ContextTree(std::size_t max_nodes = std::size_t{1} << 20,
                       std::size_t max_names = std::size_t{1} << 16);
  ContextTree(const ContextTree&) = delete;
  ContextTree& operator=(const ContextTree&) = delete;

  NameTable& names() { return names_; }
  const NameTable& names() const { return names_; }

  // The child of `parent` called `name`, created on first sight. When the tree is full the
  // parent is returned (attribution coarsens instead of failing) and overflow is counted.
  NodeId child(NodeId parent, NameId name);
  NodeId child(NodeId parent, std::string_view name) { return child(parent, names_.intern(name)); }

  Node node(NodeId id) const { return nodes_[id]; }
  std::size_t size() const { return size_.load(std::memory_order_acquire); }
  std::uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
  // Names from the root (exclusive) down to `id` (inclusive).
  std::vector<std::string> path(NodeId id) const;

  // The calling thread's current context. Threads start at the root.
  NodeId current() const;
  // Scope entry/exit for the calling thread. Exits past the root are ignored (an unmatched
  // NVTX pop must not corrupt the stack).
  void enter(NameId name);
  void enter(std::string_view name) { enter(names_.intern(name)); }
  void exit();

 private:
  struct ThreadState;
  ThreadState& thread_state() const;

  std::unique_ptr<Node[]> nodes_;
  std::size_t max_nodes_;
  std::atomic<std::size_t> size_{1};
  std::atomic<std::uint64_t> overflowed_{0};
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, NodeId> children_;  // (parent << 32 | name) -> child
  NameTable names_;
  std::uint64_t instance_;  // distinguishes trees in the per-thread caches
};

// RAII scope for C++ callers.
class Scope {
 public:
  Scope(ContextTree& tree, std::string_view name) : tree_(tree) { tree_.enter(name); }
  ~Scope() { tree_.exit(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  ContextTree& tree_;
};

}  // namespace wavekit::profile
