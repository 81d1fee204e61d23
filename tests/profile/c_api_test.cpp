// The C interface that the Python module and other languages use: a no-op without a session,
// and with one, the same scopes, phases and declared work as the C++ API.
#include "wavekit/profile/c_api.h"

#include <gtest/gtest.h>

#include "profiler.h"
#include "synthetic_backend.h"

namespace wavekit::profile {
namespace {

TEST(CApi, IsANoOpWithoutASession) {
  set_global_session(nullptr);
  EXPECT_EQ(wavekit_profile_active(), 0);
  wavekit_profile_scope_enter("ignored");
  wavekit_profile_scope_exit();
  wavekit_profile_advance_phase();
  EXPECT_EQ(wavekit_profile_phase(), 0u);
  EXPECT_EQ(wavekit_profile_intern("x"), 0u);
}

TEST(CApi, DrivesTheSessionsTreePhasesAndWork) {
  testing::SyntheticBackend backend({"gemm"}, 16, 2);
  SessionConfig config;
  config.launch_slots = 1024;
  Session session(config, &backend);
  set_global_session(&session);
  session.start();
  EXPECT_EQ(wavekit_profile_active(), 1);

  std::uint32_t layer = wavekit_profile_intern("layer");
  wavekit_profile_scope_enter("model");
  wavekit_profile_scope_enter_id(layer);
  EXPECT_EQ(session.tree().path(session.tree().current()),
            (std::vector<std::string>{"model", "layer"}));
  double flops[WAVEKIT_PROFILE_PRECISIONS] = {0, 4e9};  // fp16
  wavekit_profile_set_next_launch_work(flops, 1e6);
  session.on_kernel_launch(1);
  session.on_kernel_launch(2);  // the work applies to one launch only
  wavekit_profile_scope_exit();
  wavekit_profile_scope_exit();
  wavekit_profile_advance_phase();
  EXPECT_EQ(wavekit_profile_phase(), 1u);

  RawBuffer buffer = backend.acquire();
  testing::SyntheticBackend::append(buffer, {1, 0, 100, 0, 0, 0});
  testing::SyntheticBackend::append(buffer, {2, 100, 200, 0, 0, 0});
  session.submit(buffer);
  session.stop();
  set_global_session(nullptr);

  Profile p = session.merged_profile();
  const ProfileNode* gemm = p.root.find("model") ? p.root.find("model")->find("layer") : nullptr;
  ASSERT_TRUE(gemm && gemm->find("gemm"));
  const Metrics& m = gemm->find("gemm")->metrics;
  EXPECT_EQ(m.count, 2u);
  EXPECT_EQ(m.flops[static_cast<std::size_t>(Precision::fp16)], 4e9);
  EXPECT_EQ(m.bytes, 1e6);
}

}  // namespace
}  // namespace wavekit::profile
