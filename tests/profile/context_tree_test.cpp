#include "context_tree.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace wavekit::profile {
namespace {

TEST(ContextTree, InternsPathsAndRestoresParentOnExit) {
  ContextTree tree;
  EXPECT_EQ(tree.current(), kRootNode);
  tree.enter("model");
  tree.enter("layer0");
  NodeId layer0 = tree.current();
  tree.exit();
  tree.enter("layer0");
  EXPECT_EQ(tree.current(), layer0) << "the same (parent, name) must intern to one node";
  tree.exit();
  tree.exit();
  EXPECT_EQ(tree.current(), kRootNode);
  EXPECT_EQ(tree.path(layer0), (std::vector<std::string>{"model", "layer0"}));
  EXPECT_EQ(tree.size(), 3u);  // root, model, layer0
}

TEST(ContextTree, SameNameUnderDifferentParentsIsADifferentNode) {
  ContextTree tree;
  NodeId a = tree.child(tree.child(kRootNode, "a"), "x");
  NodeId b = tree.child(tree.child(kRootNode, "b"), "x");
  EXPECT_NE(a, b);
  EXPECT_EQ(tree.node(a).name, tree.node(b).name);
}

TEST(ContextTree, UnmatchedExitsStayAtRoot) {
  ContextTree tree;
  tree.exit();
  tree.exit();
  EXPECT_EQ(tree.current(), kRootNode);
  tree.enter("a");
  EXPECT_NE(tree.current(), kRootNode);
}

TEST(ContextTree, DeepNestingBeyondTheStackIsIgnoredNotCorrupting) {
  ContextTree tree;
  for (int i = 0; i < 1000; ++i) tree.enter("level");
  for (int i = 0; i < 1000; ++i) tree.exit();
  EXPECT_EQ(tree.current(), kRootNode);
  EXPECT_EQ(tree.size(), 257u);  // root + the 256 levels the stack holds
}

TEST(ContextTree, ThreadsShareNodesAndKeepTheirOwnCurrent) {
  ContextTree tree;
  std::vector<NodeId> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        tree.enter("step");
        tree.enter(i % 2 ? "odd" : "even");
        if (i == 999) seen[t] = tree.current();
        tree.exit();
        tree.exit();
      }
      EXPECT_EQ(tree.current(), kRootNode);
    });
  for (auto& th : threads) th.join();
  for (NodeId id : seen) EXPECT_EQ(id, seen[0]);
  EXPECT_EQ(tree.size(), 4u);  // root, step, odd, even
}

TEST(ContextTree, FullTreeCoarsensToTheParent) {
  ContextTree tree(/*max_nodes=*/3);
  NodeId a = tree.child(kRootNode, "a");
  NodeId b = tree.child(a, "b");
  NodeId c = tree.child(b, "c");
  EXPECT_EQ(c, b) << "no room: attribution falls back to the parent";
  EXPECT_EQ(tree.overflowed(), 1u);
}

TEST(NameTable, CapsTheNumberOfNames) {
  NameTable names(4);  // the overflow name plus three
  NameId a = names.intern("a");
  names.intern("b");
  names.intern("c");
  EXPECT_EQ(names.intern("d"), 0u);
  EXPECT_EQ(names.name(0), NameTable::kOverflowName);
  EXPECT_EQ(names.intern("a"), a);
  EXPECT_EQ(names.overflowed(), 1u);
}

}  // namespace
}  // namespace wavekit::profile
