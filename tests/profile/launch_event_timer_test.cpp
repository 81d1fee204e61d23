#include "launch_event_timer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "session.h"
#include "wavekit/profile/profile_data.h"

namespace wavekit::profile {
namespace {

// Plays the driver: events are numbers; the test decides when the GPU reaches each one and at
// what time, so completion order and durations are known independently of the timer.
class FakeEvents final : public EventApi {
 public:
  struct Event {
    void* stream = nullptr;
    bool recorded = false, done = false, failed = false;
    std::uint64_t gpu_ns = 0;
  };

  bool create(void*, EventPair& pair) override {
    if (refuse_create) return false;
    pair = {make(), make()};
    start_of[pair.end] = pair.start;
    ++created;
    return true;
  }
  void destroy(void*, const EventPair&) override { ++destroyed; }
  bool record(void* event, void* stream, bool) override {
    Event& e = events.at(event);
    e = Event{stream, true, false, false, 0};
    return true;
  }
  State query(void*, void* event) override {
    ++queries;
    const Event& e = events.at(event);
    if (e.failed) return State::failed;
    return e.done ? State::done : State::pending;
  }
  std::optional<std::uint64_t> elapsed_ns(void*, const EventPair& pair) override {
    const Event &start = events.at(pair.start), &end = events.at(pair.end);
    if (!start.done || !end.done) return std::nullopt;
    return end.gpu_ns - start.gpu_ns;
  }
  std::uint64_t host_now_ns() override { return host_clock_ns; }
  void wait(void*, void* event) override {
    ++waits;
    // The GPU gets to the pair's start event, then 1000 ns later to its end event.
    Event& end = events.at(event);
    if (end.done) return;
    Event& start = events.at(start_of.at(event));
    if (!start.done) reach(start, gpu_clock_ns);
    reach(end, start.gpu_ns + 1000);
  }

  // The GPU reaches the start event at `start_ns` and the end event at `end_ns`.
  void run(const EventPair& pair, std::uint64_t start_ns, std::uint64_t end_ns) {
    reach(events.at(pair.start), start_ns);
    reach(events.at(pair.end), end_ns);
  }

  std::map<void*, Event> events;
  std::map<void*, void*> start_of;  // end event -> start event of its pair
  bool refuse_create = false;
  int created = 0, destroyed = 0, queries = 0, waits = 0;
  std::uint64_t host_clock_ns = 0;  // what host_now_ns() answers
  std::uint64_t gpu_clock_ns = 1'000'000;

 private:
  void* make() {
    void* id = reinterpret_cast<void*>(next_++);
    events[id] = {};
    return id;
  }
  static void reach(Event& e, std::uint64_t ns) {
    e.done = true;
    e.gpu_ns = ns;
  }
  std::uintptr_t next_ = 0x1000;
};

class CollectingSink final : public RecordSink {
 public:
  void kernel(const KernelActivity& record) override {
    ++kernels;
    if (!record.timed) untimed_correlations.push_back(record.correlation);
    kernel_names.emplace_back(record.kernel_name);
    kernel_ns.push_back(record.end_ns - record.start_ns);
  }
  void graph(const GraphActivity& record) override { graphs.push_back(record); }
  void dropped(std::uint64_t count) override { dropped_total += count; }
  void device(std::uint32_t, const DeviceInfo&) override {}  // the timer describes none
  std::vector<GraphActivity> graphs;
  int kernels = 0;
  std::vector<std::string> kernel_names;
  std::vector<std::uint64_t> kernel_ns;
  std::vector<std::uint64_t> untimed_correlations;
  std::uint64_t dropped_total = 0;
};

void* const kContext = reinterpret_cast<void*>(0xc0);
void* const kStream = reinterpret_cast<void*>(0x5);
void* const kOtherStream = reinterpret_cast<void*>(0x6);

TEST(LaunchEventTimer, ReportsCompletedLaunchesWithTheirGpuTimeAndKeepsPendingOnes) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16);
  const void* exec_a = reinterpret_cast<void*>(0xa);
  const void* exec_b = reinterpret_cast<void*>(0xb);
  std::vector<LaunchEventTimer::Ticket> tickets;
  // The second launch goes to another stream, so it may finish after the third.
  for (std::uint64_t i = 0; i < 3; ++i) {
    void* const stream = i == 1 ? kOtherStream : kStream;
    auto ticket = timer.begin(kContext, stream, false);
    ASSERT_TRUE(ticket);
    timer.end(*ticket, stream, false,
              {.correlation = 100 + i,
               .host_ns = 5000 * i,
               .graph_number = timer.graph_number(i == 1 ? exec_b : exec_a)});
    tickets.push_back(*ticket);
  }
  EXPECT_EQ(driver.events.at(tickets[0].pair.start).stream, kStream);
  EXPECT_EQ(driver.events.at(tickets[0].pair.end).stream, kStream);
  // The GPU finishes the first and the third launch; the second is still running.
  driver.run(tickets[0].pair, 10'000, 12'500);
  driver.run(tickets[2].pair, 20'000, 20'700);
  CollectingSink sink;
  timer.poll(sink, false);
  ASSERT_EQ(sink.graphs.size(), 2u);
  EXPECT_EQ(sink.graphs[0].correlation, 100u);
  EXPECT_EQ(sink.graphs[0].end_ns - sink.graphs[0].start_ns, 2500u);
  EXPECT_EQ(sink.graphs[0].start_ns, 0u);  // the host time of the launch
  EXPECT_EQ(sink.graphs[0].graph_id, 1u);
  EXPECT_FALSE(sink.graphs[0].capture_tracked);
  EXPECT_EQ(sink.graphs[1].correlation, 102u);
  EXPECT_EQ(sink.graphs[1].end_ns - sink.graphs[1].start_ns, 700u);
  EXPECT_EQ(sink.graphs[1].graph_id, 1u);  // the same executable graph as the first
  EXPECT_EQ(timer.in_flight(), 1u);
  EXPECT_EQ(driver.waits, 0);  // polling never waits for the GPU

  driver.run(tickets[1].pair, 30'000, 31'000);
  timer.poll(sink, false);
  ASSERT_EQ(sink.graphs.size(), 3u);
  EXPECT_EQ(sink.graphs[2].correlation, 101u);
  EXPECT_EQ(sink.graphs[2].graph_id, 2u);
  EXPECT_EQ(sink.graphs[2].end_ns - sink.graphs[2].start_ns, 1000u);
  EXPECT_EQ(timer.in_flight(), 0u);
  EXPECT_EQ(sink.dropped_total, 0u);
}

// Kernel launches come back as kernel records under their own names, copied at launch: the
// driver's name pointer may later name another kernel (its module unloaded, another loaded).
TEST(LaunchEventTimer, ReportsKernelLaunchesUnderTheNameTheyHadAtLaunch) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16);
  char driver_name[32] = "_Z6decodev";
  auto first = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(first);
  timer.end(*first, kStream, false,
            {.correlation = 1, .kernel_name = timer.kernel_name(driver_name)});
  std::strcpy(driver_name, "_Z7prefillv");  // the same pointer, another kernel
  auto second = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(second);
  timer.end(*second, kStream, false,
            {.correlation = 2, .kernel_name = timer.kernel_name(driver_name)});
  auto third = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(third);
  timer.end(*third, kStream, false, {.correlation = 3, .kernel_name = nullptr});
  driver.run(first->pair, 1000, 1300);
  driver.run(second->pair, 2000, 2700);
  driver.run(third->pair, 3000, 3100);
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_TRUE(sink.graphs.empty());
  ASSERT_EQ(sink.kernel_names.size(), 3u);
  EXPECT_EQ(sink.kernel_names[0], "_Z6decodev");
  EXPECT_EQ(sink.kernel_names[1], "_Z7prefillv");
  EXPECT_EQ(sink.kernel_names[2], "<unknown kernel>");
  EXPECT_EQ(sink.kernel_ns, (std::vector<std::uint64_t>{300, 700, 100}));
}

// Event pairs time a stream, not a kernel: on a starved stream the GPU reaches the start event
// at once and the kernel only when its launch arrives. Host times (ns) and GPU times are given
// here; the timer must take the launch call's host time off only where the gap before the
// start event shows that the stream was starved.
TEST(LaunchEventTimer, TakesTheLaunchCallOffTheTimeOnAStarvedStreamOnly) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16);
  struct Step {
    std::uint64_t start_recorded, launch_returned, end_recorded;  // host
    std::uint64_t gpu_start, gpu_end;                             // when the GPU got there
  };
  const Step steps[] = {
      // No launch before it on the stream: left as measured (5000).
      {0, 4000, 5000, 0, 5000},
      // Starved: the GPU gap from the last end event (9000 - 5000) equals the host gap; its
      // kernel ran from 13000 (when the launch arrived) to 40000, so 27000, not 31000.
      {9000, 13000, 14000, 9000, 40000},
      // Busy: the start event waited behind that kernel (GPU gap 0, host gap 3000): 1000.
      {17000, 21000, 22000, 40000, 41000},
      // Too close to tell (host gap 1000): left as measured although the gaps agree.
      {23000, 27000, 28000, 42000, 47000},
  };
  std::vector<LaunchEventTimer::Ticket> tickets;
  std::uint64_t correlation = 1;
  for (const Step& step : steps) {
    auto ticket = timer.begin(kContext, kStream, false);
    ASSERT_TRUE(ticket);
    driver.host_clock_ns = step.end_recorded;
    timer.end(*ticket, kStream, false,
              {.correlation = correlation++,
               .host_ns = step.start_recorded,
               .launched_ns = step.launch_returned});
    driver.run(ticket->pair, step.gpu_start, step.gpu_end);
  }
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_EQ(sink.kernel_ns, (std::vector<std::uint64_t>{5000, 27000, 1000, 5000}));
  // The last launch's events stay with the timer until the stream's next launch; a final poll
  // gives them back.
  timer.poll(sink, true);
  EXPECT_EQ(timer.in_flight(), 0u);
}

// A sampled launch (--time-every) follows untimed ones, so the gap to the stream's previous
// timed launch says nothing; the hook asked the driver whether the stream was idle instead.
TEST(LaunchEventTimer, TakesTheLaunchCallOffWhereTheHookFoundTheStreamIdle) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16, 64);
  struct Step {
    bool idle;
    std::uint64_t gpu_start, gpu_end;
  };
  // Each launch call takes 4000 ns of host time; gaps between launches are far apart and equal
  // on both clocks, which the gap rule alone would read as starved every time.
  const Step steps[] = {
      {true, 100'000, 131'000}, {false, 200'000, 201'000}, {true, 300'000, 302'000}};
  std::uint64_t correlation = 1;
  for (const Step& step : steps) {
    auto ticket = timer.begin(kContext, kStream, false);
    ASSERT_TRUE(ticket);
    timer.end(*ticket, kStream, false,
              {.correlation = correlation,
               .host_ns = correlation * 100'000,
               .launched_ns = correlation * 100'000 + 4000,
               .stream_was_idle = step.idle});
    driver.run(ticket->pair, step.gpu_start, step.gpu_end);
    ++correlation;
  }
  CollectingSink sink;
  timer.poll(sink, false);
  // Idle: 31000 - 4000; busy: as measured; idle but shorter than the call: 0, not a wrap.
  EXPECT_EQ(sink.kernel_ns, (std::vector<std::uint64_t>{27'000, 1000, 0}));
  EXPECT_EQ(timer.in_flight(), 0u);
  // No pair is kept for a stream comparison: the next launches reuse the three pairs.
  const int created = driver.created;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(timer.begin(kContext, kStream, false));
  EXPECT_EQ(driver.created, created);
}

// Untimed (counted) launches reach the sink as kernel records without a time, in order, ahead
// of the timed ones; a full ring drops the newest and says so.
TEST(LaunchEventTimer, HandsCountedLaunchesOverUntimedAndCountsWhatAFullRingDrops) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16, 4);
  const std::string* name = timer.kernel_name("_Z3addv");
  for (std::uint64_t i = 1; i <= 6; ++i)
    timer.count({.correlation = i, .host_ns = 1000 * i, .device = 0, .kernel_name = name});
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_EQ(sink.untimed_correlations, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(sink.dropped_total, 2u);
  EXPECT_EQ(sink.kernel_names, (std::vector<std::string>(4, "_Z3addv")));
  EXPECT_EQ(sink.kernel_ns, (std::vector<std::uint64_t>(4, 0)));
  // The ring is reusable once read.
  for (std::uint64_t i = 7; i <= 10; ++i) timer.count({.correlation = i, .kernel_name = nullptr});
  timer.poll(sink, false);
  EXPECT_EQ(sink.untimed_correlations.size(), 8u);
  EXPECT_EQ(sink.kernel_names.back(), "<unknown kernel>");
  EXPECT_EQ(sink.dropped_total, 2u);
}

// Many application threads count launches while the consumer polls: every launch is either
// delivered once or counted as dropped, never lost or delivered twice.
TEST(LaunchEventTimer, CountedLaunchesFromManyThreadsArriveExactlyOnce) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16, 1024);
  constexpr int kThreads = 4;
  constexpr std::uint64_t kEach = 50'000;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < kEach; ++i)
        timer.count({.correlation = static_cast<std::uint64_t>(t) * kEach + i + 1});
      --running;
    });
  CollectingSink sink;
  while (running.load() > 0) timer.poll(sink, false);
  for (auto& thread : threads) thread.join();
  timer.poll(sink, true);
  std::vector<std::uint64_t> seen = sink.untimed_correlations;
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "delivered twice";
  EXPECT_EQ(seen.size() + sink.dropped_total, kThreads * kEach);
  EXPECT_GT(seen.size(), 0u);
  for (std::uint64_t c : seen) EXPECT_TRUE(c >= 1 && c <= kThreads * kEach);
}

// Each stream's last launch keeps its events for the starved-stream comparison; launches into
// ever new streams must not keep the whole pool that way.
TEST(LaunchEventTimer, ManyStreamsDoNotHoldThePool) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16);
  CollectingSink sink;
  for (std::uintptr_t s = 1; s <= 100; ++s) {
    void* const stream = reinterpret_cast<void*>(s);
    auto ticket = timer.begin(kContext, stream, false);
    ASSERT_TRUE(ticket) << "no event pair left at stream " << s;
    timer.end(*ticket, stream, false, {.correlation = s});
    driver.run(ticket->pair, 0, 10);
    timer.poll(sink, false);
  }
  EXPECT_EQ(sink.kernels, 100);
  EXPECT_EQ(sink.dropped_total, 0u);
  EXPECT_LE(driver.created, 16);
}

// Launches of one stream finish in order: behind an unfinished one, the driver is not asked.
TEST(LaunchEventTimer, AsksOnlyUpToTheFirstUnfinishedLaunchOfAStream) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 16);
  std::vector<LaunchEventTimer::Ticket> on_stream, on_other;
  for (std::uint64_t i = 0; i < 4; ++i) {
    auto a = timer.begin(kContext, kStream, false);
    timer.end(*a, kStream, false, {.correlation = 10 + i, .graph_number = 1});
    on_stream.push_back(*a);
    auto b = timer.begin(kContext, kOtherStream, false);
    timer.end(*b, kOtherStream, false, {.correlation = 20 + i, .graph_number = 1});
    on_other.push_back(*b);
  }
  // The first stream has finished its first launch only; the other all four.
  driver.run(on_stream[0].pair, 0, 10);
  for (const auto& t : on_other) driver.run(t.pair, 0, 10);
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_EQ(sink.graphs.size(), 5u);
  EXPECT_EQ(driver.queries, 2 + 4) << "asked behind the first stream's unfinished launch";
  for (std::size_t i = 1; i < 4; ++i) driver.run(on_stream[i].pair, 20, 30);
  timer.poll(sink, false);
  EXPECT_EQ(sink.graphs.size(), 8u);
  EXPECT_EQ(timer.in_flight(), 0u);
}

TEST(LaunchEventTimer, RecyclesEventPairsAndCountsLaunchesBeyondThePool) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 2);
  auto first = timer.begin(kContext, kStream, false);
  auto second = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(timer.begin(kContext, kStream, false));  // both pairs in flight
  timer.end(*first, kStream, false, {.correlation = 1, .graph_number = 1});
  timer.end(*second, kStream, false, {.correlation = 2, .graph_number = 1});
  driver.run(first->pair, 100, 200);
  driver.run(second->pair, 300, 400);
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_EQ(sink.graphs.size(), 2u);
  EXPECT_EQ(sink.dropped_total, 1u);
  // Pairs come back to the pool: more launches create no new events.
  for (int i = 0; i < 10; ++i) {
    auto again = timer.begin(kContext, kStream, false);
    ASSERT_TRUE(again);
    timer.cancel(*again);  // as after a failed launch
  }
  EXPECT_EQ(driver.created, 2);
}

TEST(LaunchEventTimer, KeepsPairsOfEachContextApart) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 8);
  void* other_context = reinterpret_cast<void*>(0xd0);
  auto a = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(a);
  timer.cancel(*a);
  // The free pair belongs to the first context; the second context needs its own.
  auto b = timer.begin(other_context, kStream, false);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->context, other_context);
  EXPECT_NE(b->pair.start, a->pair.start);
  EXPECT_EQ(driver.created, 2);
}

TEST(LaunchEventTimer, CountsLaunchesItCouldNotTime) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 8);
  driver.refuse_create = true;
  EXPECT_FALSE(timer.begin(kContext, kStream, false));
  driver.refuse_create = false;
  auto ok = timer.begin(kContext, kStream, false);
  ASSERT_TRUE(ok);
  timer.end(*ok, kStream, false, {.correlation = 7, .graph_number = 1});
  driver.events.at(ok->pair.end).failed = true;  // e.g. the context was torn down
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_TRUE(sink.graphs.empty());
  EXPECT_EQ(sink.dropped_total, 2u);
  EXPECT_EQ(timer.in_flight(), 0u);
}

TEST(LaunchEventTimer, FinalPollWaitsForEveryLaunch) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 8);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    auto t = timer.begin(kContext, kStream, true);
    ASSERT_TRUE(t);
    timer.end(*t, kStream, true, {.correlation = i, .graph_number = 1});
  }
  CollectingSink sink;
  timer.poll(sink, false);
  EXPECT_TRUE(sink.graphs.empty());
  timer.poll(sink, true);
  EXPECT_EQ(sink.graphs.size(), 3u);
  EXPECT_EQ(driver.waits, 3);
}

TEST(LaunchEventTimer, GraphNumbersAreStableUntilTheGraphIsDestroyed) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 8);
  const void* exec = reinterpret_cast<void*>(0x100);
  const void* other = reinterpret_cast<void*>(0x200);
  EXPECT_EQ(timer.graph_number(exec), 1u);
  EXPECT_EQ(timer.graph_number(other), 2u);
  EXPECT_EQ(timer.graph_number(exec), 1u);
  timer.forget(exec);
  // A new executable graph at a freed address is a different graph.
  EXPECT_EQ(timer.graph_number(exec), 3u);
}

// A backend that reports the timer's records, as the event mode's backend does.
class TimerBackend final : public Backend {
 public:
  explicit TimerBackend(LaunchEventTimer& timer) : timer_(timer) {}
  void start(Session&) override {}  // the test times the launches itself
  void decode(const RawBuffer&, RecordSink&) override {}
  void release(const RawBuffer&) override {}
  void poll(RecordSink& sink, bool final) override { timer_.poll(sink, final); }

 private:
  LaunchEventTimer& timer_;
};

TEST(LaunchEventTimer, SessionAggregatesGraphLaunchesUnderTheirLaunchContexts) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 64);
  TimerBackend backend(timer);
  SessionConfig config;
  config.launch_slots = 1 << 10;
  config.events_backend = true;
  Session session(config, &backend);
  session.start();
  const void* decode_graph = reinterpret_cast<void*>(0x1);
  const void* prefill_graph = reinterpret_cast<void*>(0x2);
  std::uint64_t expected_decode_ns = 0;
  for (std::uint64_t corr = 1; corr <= 30; ++corr) {
    const bool decode = corr % 3 != 0;
    session.tree().enter(decode ? "decode" : "prefill");
    ASSERT_TRUE(session.on_kernel_launch(corr));
    // Two streams: the GPU runs the first's launches before the session stops; the second's
    // are waited for.
    void* const stream = corr % 2 == 0 ? kStream : kOtherStream;
    auto ticket = timer.begin(kContext, stream, false);
    ASSERT_TRUE(ticket);
    timer.end(*ticket, stream, false,
              {.correlation = corr,
               .host_ns = corr * 1000,
               .graph_number = timer.graph_number(decode ? decode_graph : prefill_graph)});
    session.tree().exit();
    if (corr % 2 == 0) driver.run(ticket->pair, corr * 1000, corr * 1000 + corr);
    if (decode) expected_decode_ns += corr % 2 == 0 ? corr : 1000;
  }
  session.stop();
  Profile merged = session.merged_profile();
  EXPECT_EQ(merged.root.metrics.count, 30u);
  const ProfileNode* decode = merged.root.find("decode");
  ASSERT_TRUE(decode);
  const ProfileNode* leaf = decode->find(graph_leaf_name(1));
  ASSERT_TRUE(leaf);
  EXPECT_EQ(leaf->metrics.count, 20u);
  ASSERT_TRUE(merged.root.find("prefill"));
  const ProfileNode* prefill_leaf = merged.root.find("prefill")->find(graph_leaf_name(2));
  ASSERT_TRUE(prefill_leaf);
  EXPECT_EQ(prefill_leaf->metrics.count, 10u);
  EXPECT_EQ(merged.root.find("decode")->find("<captured_at>"), nullptr);
  // Launches run before stop took their GPU time; those waited for at stop took 1000 ns.
  EXPECT_EQ(leaf->metrics.time_ns, expected_decode_ns);
  EXPECT_EQ(driver.waits, 15);
  SelfMetrics self = session.totals();
  EXPECT_EQ(self.records, 30u);
  EXPECT_EQ(self.graph_unknown, 0u);
  EXPECT_EQ(self.unattributed, 0u);
}

// --time-every through a whole session: counted launches land in the tree with the timed ones,
// each kernel's time is its count times its timed mean, and the trace holds only timed launches.
TEST(LaunchEventTimer, SessionEstimatesUntimedKernelsAndTracesOnlyTimedOnes) {
  FakeEvents driver;
  LaunchEventTimer timer(driver, 64, 256);
  TimerBackend backend(timer);
  SessionConfig config;
  config.launch_slots = 1 << 10;
  config.events_backend = true;
  config.time_every = 4;
  config.trace_events = 100;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("wavekit-timer-trace-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  config.output_dir = dir.string();
  Session session(config, &backend);
  // The fake driver is not thread-safe: everything is launched and run before the consumer
  // thread starts.
  const std::string* name = timer.kernel_name("_Z4stepv");
  session.tree().enter("decode");
  for (std::uint64_t corr = 1; corr <= 40; ++corr) {
    ASSERT_TRUE(session.on_kernel_launch(corr));
    LaunchEventTimer::Launch launch{.correlation = corr,
                                    .host_ns = corr * 10'000,
                                    .launched_ns = corr * 10'000 + 100,
                                    .kernel_name = name,
                                    .stream_was_idle = false};
    if (corr % 4 != 1) {
      timer.count(launch);
      continue;
    }
    auto ticket = timer.begin(kContext, kStream, false);
    ASSERT_TRUE(ticket);
    timer.end(*ticket, kStream, false, launch);
    // Timed launches take 3000 or 5000 ns: a mean of 4000.
    driver.run(ticket->pair, corr * 10'000, corr * 10'000 + (corr % 8 == 1 ? 3000 : 5000));
  }
  session.tree().exit();
  session.start();
  session.stop();
  const Profile merged = session.merged_profile();
  const ProfileNode* decode = merged.root.find("decode");
  ASSERT_TRUE(decode);
  const ProfileNode* leaf = decode->find("_Z4stepv");  // no display_name: as the driver said
  ASSERT_TRUE(leaf);
  EXPECT_EQ(leaf->metrics.count, 40u);
  EXPECT_EQ(leaf->metrics.timed, 10u);
  EXPECT_EQ(leaf->metrics.time_ns, 40u * 4000);
  EXPECT_EQ(leaf->metrics.min_ns, 3000u);
  EXPECT_EQ(leaf->metrics.max_ns, 5000u);
  EXPECT_EQ(session.totals().dropped, 0u);
  const auto trace = nlohmann::json::parse(std::ifstream(dir / "trace.json"));
  EXPECT_EQ(trace["traceEvents"].size(), 10u) << "the 10 timed launches only";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wavekit::profile
