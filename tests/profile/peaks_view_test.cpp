#include <gtest/gtest.h>

#include "peaks.h"
#include "wavekit/profile/view.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

TEST(Peaks, H200MatchesTheDatasheetNotProtonsWidthScaling) {
  auto h200 = find_device("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::fp16), 989.4e12);
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::fp8), 1979e12);
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::tf32), 494.7e12);
  // Proton's specs give 494 TF for flops32 and 247 TF for flops64 on this GPU.
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::fp32), 66.9e12);
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::fp64), 33.5e12);
  EXPECT_DOUBLE_EQ(peak_flops(*h200, Precision::fp64_tensor), 66.9e12);
  EXPECT_DOUBLE_EQ(h200->bytes_per_s, 4.8e12);
}

TEST(Peaks, KnowsTheOtherGpusAndScalesByClock) {
  EXPECT_EQ(find_device("AMD Instinct MI300X")->arch, "gfx942");
  EXPECT_EQ(find_device("MI250X")->arch, "gfx90a");
  EXPECT_EQ(find_device("NVIDIA A100-SXM4-80GB")->arch, "sm_80");
  EXPECT_EQ(find_device("NVIDIA H100 80GB HBM3")->name, "H100");
  EXPECT_FALSE(find_device("GeForce GTX 480"));
  auto a100 = *find_device("A100");
  EXPECT_DOUBLE_EQ(peak_flops(a100, Precision::fp16, 705), 156e12);  // half the boost clock
}

TEST(Peaks, UtilisationIsTheLargerOfComputeAndMemoryTime) {
  auto h200 = *find_device("H200");
  Metrics m;
  m.time_ns = 1000000;                                           // 1 ms
  m.flops[static_cast<std::size_t>(Precision::fp16)] = 494.7e9;  // 0.5 ms at peak
  EXPECT_NEAR(utilisation(m, h200), 0.5, 1e-12);
  m.bytes = 4.8e9 * 0.8;  // 0.8 ms at peak bandwidth
  EXPECT_NEAR(utilisation(m, h200), 0.8, 1e-12);
  // At a throttled 990 MHz the same compute is half as far from the (halved) peak.
  m.bytes = 0;
  EXPECT_NEAR(utilisation(m, h200, 990), 1.0, 1e-12);
}

Profile two_kernel_profile(std::uint64_t gemm_ns) {
  Profile p;
  ProfileNode* step = p.root.child("step", false, 0);
  ProfileNode* gemm = step->child("gemm", true, 0);
  gemm->metrics.add_duration(gemm_ns);
  gemm->metrics.flops[static_cast<std::size_t>(Precision::fp16)] = 9.894e11;
  ProfileNode* add = p.root.child("add", true, 0);
  add->metrics.add_duration(100);
  add->metrics.add_duration(300);
  p.devices[0].model = "NVIDIA H200";
  p.sum_up();
  return p;
}

TEST(View, TreeShowsTimeCountRateAndUtilisation) {
  std::string text = render_tree(two_kernel_profile(2000000), {});
  // 9.894e11 flops in 2 ms: 494.7 TF/s, 50 % of the fp16 peak.
  EXPECT_NE(text.find("494.7 TF/s   50.0%      gemm"), std::string::npos) << text;
  EXPECT_NE(text.find("400 ns          2       200 ns"), std::string::npos) << text;  // add
}

TEST(View, TopSortsKernelsByTimeAndFiltersApply) {
  Profile p = two_kernel_profile(2000000);
  ViewOptions o;
  std::string top = render_top(p, o);
  EXPECT_LT(top.find("gemm"), top.find("add"));
  o.exclude = "^gemm$";
  std::string filtered = render_top(p, o);
  EXPECT_EQ(filtered.find("gemm"), std::string::npos);
  o.exclude.clear();
  o.include = "^add$";
  EXPECT_EQ(filter_profile(p, o).root.metrics.count, 2u);
  o.include = "(";
  EXPECT_THROW(render_top(p, o), Error);
}

TEST(View, DiffRanksFramesByChange) {
  std::string text = render_diff(two_kernel_profile(2000000), two_kernel_profile(3000000), {});
  // The first row is the frame that changed most: step (and gemm), +1 ms, +50 %.
  auto first_row = text.substr(text.find('\n') + 1);
  EXPECT_NE(first_row.find("+50.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("step / gemm"), std::string::npos) << text;
}

TEST(View, EstimatedTimesAreMarkedAndExplained) {
  Profile p;
  ProfileNode* gemm = p.root.child("gemm", true, 0);
  gemm->metrics.add_duration(2000);
  for (int i = 0; i < 3; ++i) gemm->metrics.add_untimed();
  gemm->metrics.time_ns = 8000;
  p.sum_up();
  std::string tree = render_tree(p, {});
  EXPECT_NE(tree.find("~8.000 us          4    ~2.000 us"), std::string::npos) << tree;
  EXPECT_NE(tree.find("~ estimated: 1 of 4 launches timed"), std::string::npos) << tree;
  EXPECT_NE(render_top(p, {}).find("~ estimated"), std::string::npos);
  EXPECT_EQ(render_tree(two_kernel_profile(2000000), {}).find('~'), std::string::npos);
  EXPECT_NE(tree_json(p, {}).find("\"timed\": 1"), std::string::npos) << tree_json(p, {});
}

TEST(View, UnknownDeviceIsAClearError) {
  ViewOptions o;
  o.device_model = "Voodoo2";
  EXPECT_THROW(render_tree(two_kernel_profile(1), o), Error);
}

}  // namespace
}  // namespace wavekit::profile
