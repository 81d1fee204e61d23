#include "context_tree.h"

#include <algorithm>

namespace wavekit::profile {

NameTable::NameTable(std::size_t max_names) : max_names_(std::max<std::size_t>(max_names, 2)) {
  intern(kOverflowName);
}

NameId NameTable::intern(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (names_.size() >= max_names_) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return 0;  // the overflow name, interned first
  }
  auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

std::string NameTable::name(NameId id) const {
  std::lock_guard lock(mutex_);
  return id < names_.size() ? names_[id] : std::string(kOverflowName);
}

std::size_t NameTable::size() const {
  std::lock_guard lock(mutex_);
  return names_.size();
}

namespace {
constexpr std::size_t kMaxDepth = 256;
constexpr std::size_t kCacheSlots = 256;
std::atomic<std::uint64_t> next_tree_instance{1};
}  // namespace

// Per-thread state: the scope stack and a direct-mapped cache of (parent, name) -> child.
// Keyed by the tree's instance number so that a thread that outlives one tree (tests create
// many) never reads another tree's nodes.
struct ContextTree::ThreadState {
  std::uint64_t instance = 0;
  std::size_t depth = 0;
  std::size_t overflow_depth = 0;  // pushes beyond kMaxDepth, popped without effect
  NodeId stack[kMaxDepth + 1] = {kRootNode};
  struct CacheEntry {
    std::uint64_t key = ~std::uint64_t{0};
    NodeId child = 0;
  } cache[kCacheSlots];
};

ContextTree::ContextTree(std::size_t max_nodes, std::size_t max_names)
    : nodes_(std::make_unique_for_overwrite<Node[]>(std::max<std::size_t>(max_nodes, 1))),
      max_nodes_(std::max<std::size_t>(max_nodes, 1)),
      names_(max_names),
      instance_(next_tree_instance.fetch_add(1)) {
  nodes_[kRootNode] = {kRootNode, names_.intern("ROOT")};
}

ContextTree::ThreadState& ContextTree::thread_state() const {
  thread_local ThreadState state;
  if (state.instance != instance_) {
    state = ThreadState{};
    state.instance = instance_;
  }
  return state;
}

NodeId ContextTree::child(NodeId parent, NameId name) {
  std::uint64_t key = (std::uint64_t{parent} << 32) | name;
  ThreadState& state = thread_state();
  auto& entry = state.cache[(key * 0x9E3779B97F4A7C15ull) >> 56];
  if (entry.key == key) return entry.child;

  NodeId result;
  {
    std::lock_guard lock(mutex_);
    if (auto it = children_.find(key); it != children_.end()) {
      result = it->second;
    } else {
      std::size_t id = size_.load(std::memory_order_relaxed);
      if (id >= max_nodes_) {
        overflowed_.fetch_add(1, std::memory_order_relaxed);
        return parent;  // not cached: a later run with room should not be stuck coarse
      }
      nodes_[id] = {parent, name};
      size_.store(id + 1, std::memory_order_release);  // publish the node before its id
      result = static_cast<NodeId>(id);
      children_.emplace(key, result);
    }
  }
  entry = {key, result};
  return result;
}

std::vector<std::string> ContextTree::path(NodeId id) const {
  std::vector<std::string> names;
  while (id != kRootNode && id < size()) {
    names.push_back(names_.name(nodes_[id].name));
    id = nodes_[id].parent;
  }
  std::reverse(names.begin(), names.end());
  return names;
}

NodeId ContextTree::current() const {
  const ThreadState& state = thread_state();
  return state.stack[state.depth];
}

void ContextTree::enter(NameId name) {
  ThreadState& state = thread_state();
  if (state.depth == kMaxDepth) {
    ++state.overflow_depth;
    return;
  }
  NodeId next = child(state.stack[state.depth], name);
  state.stack[++state.depth] = next;
}

void ContextTree::exit() {
  ThreadState& state = thread_state();
  if (state.overflow_depth > 0) {
    --state.overflow_depth;
  } else if (state.depth > 0) {
    --state.depth;
  }
}

}  // namespace wavekit::profile
