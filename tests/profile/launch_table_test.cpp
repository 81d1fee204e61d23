#include "launch_table.h"

#include <gtest/gtest.h>

namespace wavekit::profile {
namespace {

TEST(LaunchTable, ReturnsWhatTheLaunchRecorded) {
  LaunchTable table(1024);
  table.record(7, 42, 3);
  auto info = table.lookup(7);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->context, 42u);
  EXPECT_EQ(info->phase, 3u);
  EXPECT_FALSE(info->has_work);
  EXPECT_FALSE(table.lookup(8));
}

TEST(LaunchTable, ASlotReusedByALaterLaunchNoLongerAnswersForTheOldOne) {
  LaunchTable table(1024);
  table.record(5, 1, 0);
  table.record(5 + 1024, 2, 0);  // a consumer 1024 launches behind has lost launch 5
  EXPECT_FALSE(table.lookup(5));
  ASSERT_TRUE(table.lookup(5 + 1024));
  EXPECT_EQ(table.lookup(5 + 1024)->context, 2u);
}

TEST(LaunchTable, GraphLaunchesCarryTheirExecutableGraph) {
  LaunchTable table(1024);
  table.record(9, 1, 0);
  table.record_graph_exec(9, 77);
  ASSERT_TRUE(table.lookup_graph_exec(9));
  EXPECT_EQ(*table.lookup_graph_exec(9), 77u);
  EXPECT_FALSE(table.lookup_graph_exec(10)) << "a kernel launch has no executable graph";
  table.record_graph_exec(9 + 4096, 78);  // 4096 graph launches later the slot is reused
  EXPECT_FALSE(table.lookup_graph_exec(9));
  EXPECT_EQ(*table.lookup_graph_exec(9 + 4096), 78u);
}

TEST(LaunchTable, CarriesDeclaredWork) {
  LaunchTable table(1024, 16);
  LaunchWork work;
  work.flops[static_cast<std::size_t>(Precision::fp16)] = 2e9;
  work.bytes = 4096;
  table.record_with_work(100, 9, 1, work);
  auto info = table.lookup(100);
  ASSERT_TRUE(info && info->has_work);
  auto got = table.lookup_work(100);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->flops[static_cast<std::size_t>(Precision::fp16)], 2e9);
  EXPECT_EQ(got->bytes, 4096);
  table.record_with_work(116, 9, 1, work);  // same work slot (16 entries)
  EXPECT_FALSE(table.lookup_work(100));
}

TEST(LaunchTable, CapacityIsAPowerOfTwo) {
  LaunchTable table(1000);
  EXPECT_EQ(table.capacity(), 1024u);
}

}  // namespace
}  // namespace wavekit::profile
