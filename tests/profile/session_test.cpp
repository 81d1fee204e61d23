#include "session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "aggregator.h"
#include "synthetic_backend.h"
#include "wavekit/profile/profile_data.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

using testing::SyntheticBackend;
using testing::SyntheticRecord;

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("wavekit-profile-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// Plays an application and CUPTI: launches `total` kernels (one slot write each) under a few
// contexts, advancing the phase every `phase_every` launches, and hands the records over in
// buffers from the backend's bounded pool.
void play(Session& session, SyntheticBackend& backend, std::uint64_t total,
          std::uint64_t phase_every) {
  const char* scopes[] = {"prefill", "decode", "sample"};
  RawBuffer buffer = backend.acquire();
  for (std::uint64_t corr = 1; corr <= total; ++corr) {
    const char* scope = scopes[corr % 3];
    session.tree().enter(scope);
    session.on_kernel_launch(corr);
    session.tree().exit();
    if (phase_every && corr % phase_every == 0) session.advance_phase();
    SyntheticBackend::append(buffer,
                             {corr, corr * 10, corr * 10 + 5 + corr % 7, 0, 0,
                              static_cast<std::uint32_t>(corr % backend.kernel_names.size())});
    if (backend.full(buffer)) {
      session.submit(buffer);
      buffer = backend.acquire();
    }
  }
  session.submit(buffer);
}

TEST(Session, WritesPhasesAndAMergedProfileThatAgree) {
  auto dir = fresh_dir("phases");
  SyntheticBackend backend({"gemm", "softmax"}, 1000, 4);
  SessionConfig config;
  config.output_dir = dir.string();
  config.launch_slots = 1 << 16;
  {
    Session session(config, &backend);
    session.start();
    play(session, backend, 30000, 10000);
    session.stop();
    EXPECT_EQ(session.totals().records, 30000u);
    EXPECT_EQ(session.totals().unattributed, 0u);
  }
  std::size_t phase_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    phase_files += e.path().extension() == ".wkp";
  EXPECT_GE(phase_files, 3u);
  Profile merged = load_profile((dir / "profile.hatchet").string());
  EXPECT_EQ(merged.root.metrics.count, 30000u);
  ASSERT_TRUE(merged.root.find("decode"));
  EXPECT_EQ(merged.root.find("decode")->metrics.count, 10000u);
  // The phase files alone must add up to the same profile.
  std::filesystem::remove(dir / "profile.hatchet");
  Profile from_phases = load_profile(dir.string());
  EXPECT_EQ(from_phases.root.metrics.count, merged.root.metrics.count);
  EXPECT_EQ(from_phases.root.metrics.time_ns, merged.root.metrics.time_ns);
  EXPECT_GT(backend.flushes.load(), 0) << "phase ends ask the backend for its buffers";
  std::filesystem::remove_all(dir);
}

TEST(Session, DisabledSessionRecordsNothing) {
  SyntheticBackend backend({"k"}, 100, 2);
  SessionConfig config;
  config.launch_slots = 1024;
  Session session(config, &backend);
  session.set_enabled(false);
  EXPECT_FALSE(session.on_kernel_launch(1));
  session.set_enabled(true);
  EXPECT_TRUE(session.on_kernel_launch(2));
}

TEST(Session, SampledModeCollectsOnlyInItsWindows) {
  SyntheticBackend backend({"k"}, 100, 2);
  SessionConfig config;
  config.launch_slots = 1024;
  config.duty_on = std::chrono::milliseconds(30);
  config.duty_period = std::chrono::milliseconds(60);
  Session session(config, &backend);
  session.start();
  bool saw_on = false, saw_off = false;
  // Polls the switch the launch path reads; no timing is asserted, only that both states occur.
  for (int i = 0; i < 2000 && !(saw_on && saw_off); ++i) {
    (session.collecting() ? saw_on : saw_off) = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  session.stop();
  EXPECT_TRUE(saw_on);
  EXPECT_TRUE(saw_off);
}

// The duty cycle without clocks: a 50 ms window every 1000 ms from the epoch.
TEST(SampleWindows, OpensAndClosesOnceAPeriod) {
  using namespace std::chrono_literals;
  using Action = SampleWindows::Action;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  SampleWindows w(50ms, 1000ms, t0);
  EXPECT_FALSE(w.collecting()) << "a session starts between windows";
  EXPECT_EQ(w.step(t0, true), Action::collect_on);
  EXPECT_EQ(w.step(t0 + 49ms, true), Action::none);
  EXPECT_TRUE(w.collecting());
  EXPECT_EQ(w.step(t0 + 50ms, true), Action::collect_off);
  EXPECT_EQ(w.step(t0 + 999ms, true), Action::none);
  EXPECT_EQ(w.step(t0 + 1000ms, true), Action::collect_on);
  EXPECT_EQ(w.step(t0 + 1060ms, true), Action::collect_off);
  // A consumer that stalls over whole windows misses them: it never opens one late.
  EXPECT_EQ(w.step(t0 + 3500ms, true), Action::none);
  EXPECT_FALSE(w.collecting());
}

// The consumer sleeps until the next edge, so a 10 ms window is 10 ms, not up to 20.
TEST(SampleWindows, NextEdgeIsTheWindowsCloseOrTheNextOpen) {
  using namespace std::chrono_literals;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  SampleWindows w(10ms, 1000ms, t0);
  EXPECT_EQ(w.next_edge(t0 - 5ms), t0) << "before the epoch: the first window's open";
  EXPECT_EQ(w.next_edge(t0), t0 + 10ms);
  EXPECT_EQ(w.next_edge(t0 + 9ms), t0 + 10ms);
  EXPECT_EQ(w.next_edge(t0 + 10ms), t0 + 1000ms);
  EXPECT_EQ(w.next_edge(t0 + 2500ms), t0 + 3000ms);
  EXPECT_EQ(w.next_edge(t0 + 3004ms), t0 + 3010ms);
}

TEST(SampleWindows, DisablingClosesTheWindowAndOpensNone) {
  using namespace std::chrono_literals;
  using Action = SampleWindows::Action;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  SampleWindows w(50ms, 1000ms, t0);
  EXPECT_EQ(w.step(t0 + 10ms, true), Action::collect_on);
  EXPECT_EQ(w.step(t0 + 20ms, false), Action::collect_off);
  EXPECT_EQ(w.step(t0 + 1010ms, false), Action::none);
  EXPECT_FALSE(w.collecting());
  EXPECT_EQ(w.step(t0 + 1020ms, true), Action::collect_on) << "re-enabled inside a window";
}

TEST(Session, SampledModeStartsBetweenWindows) {
  SyntheticBackend backend({"k"}, 100, 2);
  SessionConfig config;
  config.launch_slots = 1024;
  config.duty_on = std::chrono::milliseconds(30);
  config.duty_period = std::chrono::milliseconds(60);
  Session session(config, &backend);
  // Before the consumer's first step nothing is collected: the backend has not been switched
  // on yet, so a launch recorded now would have no records.
  EXPECT_FALSE(session.collecting());
  EXPECT_FALSE(session.on_kernel_launch(1));
}

TEST(Session, LaunchInfoIsTheThreadsContextAndStoresOnlyDeclaredWork) {
  SyntheticBackend backend({"k"}, 16, 2);
  SessionConfig config;
  config.launch_slots = 1 << 10;
  Session session(config, &backend);
  session.tree().enter("decode");
  const NodeId decode = session.tree().current();
  auto info = session.launch_info(1);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->context, decode);
  EXPECT_FALSE(info->has_work);
  EXPECT_FALSE(session.launches().lookup(1)) << "no launch slot written";
  LaunchWork work;
  work.flops[0] = 1e9;
  Session::set_next_launch_work(work);
  info = session.launch_info(2);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->has_work);
  ASSERT_TRUE(session.launches().lookup_work(2));
  EXPECT_EQ(session.launches().lookup_work(2)->flops[0], 1e9);
  session.set_enabled(false);
  EXPECT_FALSE(session.launch_info(3));
  session.tree().exit();
}

TEST(Session, EnvironmentConfigRejectsBadValues) {
  ::setenv("WAVEKIT_PROFILE_DUTY", "fifty", 1);
  EXPECT_THROW(SessionConfig::from_environment(), Error);
  ::setenv("WAVEKIT_PROFILE_DUTY", "50/1000", 1);
  SessionConfig c = SessionConfig::from_environment();
  EXPECT_EQ(c.duty_on.count(), 50);
  EXPECT_EQ(c.duty_period.count(), 1000);
  ::unsetenv("WAVEKIT_PROFILE_DUTY");
  ::setenv("WAVEKIT_PROFILE_PHASE_MS", "-3", 1);
  EXPECT_THROW(SessionConfig::from_environment(), Error);
  ::unsetenv("WAVEKIT_PROFILE_PHASE_MS");
  EXPECT_FALSE(SessionConfig::from_environment().graph_level) << "per-kernel by default";
  ::setenv("WAVEKIT_PROFILE_GRAPHS", "graph", 1);
  EXPECT_TRUE(SessionConfig::from_environment().graph_level);
  ::setenv("WAVEKIT_PROFILE_GRAPHS", "kernel", 1);
  EXPECT_FALSE(SessionConfig::from_environment().graph_level);
  ::setenv("WAVEKIT_PROFILE_GRAPHS", "nodes", 1);
  EXPECT_THROW(SessionConfig::from_environment(), Error);
  ::unsetenv("WAVEKIT_PROFILE_GRAPHS");
  EXPECT_EQ(SessionConfig::from_environment().time_every, 1u) << "every launch timed by default";
  ::setenv("WAVEKIT_PROFILE_TIME_EVERY", "32", 1);
  EXPECT_THROW(SessionConfig::from_environment(), Error) << "CUPTI times every kernel";
  ::setenv("WAVEKIT_PROFILE_BACKEND", "events", 1);
  EXPECT_EQ(SessionConfig::from_environment().time_every, 32u);
  for (const char* bad : {"0", "x", "1000001"}) {
    ::setenv("WAVEKIT_PROFILE_TIME_EVERY", bad, 1);
    EXPECT_THROW(SessionConfig::from_environment(), Error) << bad;
  }
  ::unsetenv("WAVEKIT_PROFILE_TIME_EVERY");
  ::unsetenv("WAVEKIT_PROFILE_BACKEND");
}

// 10^7 synthetic kernels through the full path (launch slot, buffer, consumer, phases of 10^5
// kernels exported to disk and recycled). Memory must not grow with the number of records:
// RSS after the first million and at the end differ by less than 8 MiB.
TEST(Session, SoakOfTenMillionRecordsKeepsMemoryFlat) {
  auto dir = fresh_dir("soak");
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) names.push_back("kernel_" + std::to_string(i));
  SyntheticBackend backend(names, 20000, 8);
  SessionConfig config;
  config.output_dir = dir.string();
  std::uint64_t rss_after_warmup = 0;
  {
    Session session(config, &backend);
    session.start();
    play(session, backend, 1000000, 100000);
    // Let the consumer catch up before the baseline: only what persists should count.
    for (int i = 0; i < 2000 && session.totals().records < 900000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    rss_after_warmup = resident_set_bytes();
    play(session, backend, 9000000, 100000);  // correlation ids restart: slots are overwritten
    session.stop();
    std::uint64_t rss_end = resident_set_bytes();
    const SelfMetrics totals = session.totals();
    EXPECT_EQ(totals.records, 10000000u);
    EXPECT_EQ(totals.table_full, 0u);
    EXPECT_GE(session.exported_phases(), 90u);
    EXPECT_LT(rss_end, rss_after_warmup + (8u << 20))
        << "RSS grew from " << rss_after_warmup << " to " << rss_end;
    RecordProperty("rss_after_1M", std::to_string(rss_after_warmup));
    RecordProperty("rss_after_10M", std::to_string(rss_end));
  }
  Profile merged = load_profile((dir / "profile.hatchet").string());
  EXPECT_EQ(merged.root.metrics.count, 10000000u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wavekit::profile
