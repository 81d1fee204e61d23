// The service runtime: out-of-order service, start/stop, errors, statistics.
#include "wavekit/hostcall/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/support/error.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;

namespace {

constexpr uint32_t kSlow = protocol::kFirstUserService;
constexpr uint32_t kFast = protocol::kFirstUserService + 1;

uint32_t call_one(const hc::RingBuffer& ring, uint32_t service, bool blocking, uint64_t value,
                  uint64_t* reply = nullptr) {
  uint64_t words[protocol::kMaxLanes * 2] = {value, 0};
  uint64_t replies[protocol::kMaxLanes * protocol::kReplyWords] = {};
  const uint32_t status =
      protocol::call(ring.descriptor(), service, blocking ? protocol::kFlagBlocking : 0, 0, 1,
                     words, nullptr, 0, replies);
  if (reply) *reply = replies[0];
  return status;
}

// A latch the slow handler waits on; released by the test.
struct Gate {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
};

}  // namespace

// A handler that does not return until the test says so occupies one service thread; requests
// behind it in the ring are serviced by the other thread meanwhile.
TEST(hostcall, SlowHandlerDoesNotBlockOtherRequests) {
  hc::RingBuffer ring({.slots = 16, .lanes = 1, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring, {.service_threads = 2});
  Gate gate;
  runtime.register_handler(kSlow, [&](hc::Request&) {
    gate.entered.set_value();
    gate.released.wait();
  });
  runtime.register_handler(kFast, [](hc::Request& r) { r.lane_words(0)[0] += 1; });
  runtime.start();

  auto slow = std::async(std::launch::async, [&] { return call_one(ring, kSlow, true, 0); });
  gate.entered.get_future().wait();
  // The slow request holds its slot and a service thread; the other 15 slots keep working.
  // (A 16th call would land on the slow request's slot and wait for its turn: by design, the
  // only wait in the protocol.)
  auto fast = std::async(std::launch::async, [&] {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < 15; ++i) {
      uint64_t reply = 0;
      if (call_one(ring, kFast, true, i, &reply) == protocol::kOk) sum += reply;
    }
    return sum;
  });
  // Not a timing assertion: a generous liveness guard, so that a regression fails instead of
  // hanging the suite.
  const bool fast_done = fast.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  EXPECT_TRUE(fast_done) << "fast requests were held up behind the slow one";
  EXPECT_EQ(slow.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the slow call returned before its handler finished";
  gate.release.set_value();
  if (fast_done) EXPECT_EQ(fast.get(), 15u * 14u / 2u + 15u);
  EXPECT_EQ(slow.get(), protocol::kOk);
  runtime.stop();
  EXPECT_EQ(runtime.statistics().calls, 16u);
}

// The single-mailbox baseline (one slot) serialises calls: while the slow call holds the
// mailbox, the next caller can claim its ticket but not its turn.
TEST(hostcall, SingleMailboxBlocksBehindSlowHandler) {
  hc::RingBuffer ring({.slots = 1, .lanes = 1, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring, {.service_threads = 2});
  Gate gate;
  runtime.register_handler(kSlow, [&](hc::Request&) {
    gate.entered.set_value();
    gate.released.wait();
  });
  std::atomic<bool> fast_serviced{false};
  runtime.register_handler(kFast, [&](hc::Request&) { fast_serviced = true; });
  runtime.start();
  auto slow = std::async(std::launch::async, [&] { return call_one(ring, kSlow, true, 0); });
  gate.entered.get_future().wait();
  auto fast = std::async(std::launch::async, [&] { return call_one(ring, kFast, true, 0); });
  // Wait until the second caller holds its ticket (the counter reads 2).
  while (__atomic_load_n(ring.host_view().ticket, __ATOMIC_ACQUIRE) < 2) std::this_thread::yield();
  // Its request cannot be published while the slot belongs to the first caller's turn.
  EXPECT_FALSE(fast_serviced.load());
  EXPECT_EQ(fast.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  gate.release.set_value();
  EXPECT_EQ(slow.get(), protocol::kOk);
  EXPECT_EQ(fast.get(), protocol::kOk);
  EXPECT_TRUE(fast_serviced.load());
}

TEST(hostcall, StopServicesEverythingPublishedBefore) {
  hc::RingBuffer ring({.slots = 256, .lanes = 1, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring, {.service_threads = 2});
  std::atomic<uint64_t> sum{0};
  runtime.register_handler(kFast, [&](hc::Request& r) { sum += r.lane_words(0)[0]; });
  // Published while no service thread runs: they wait in the ring.
  for (uint64_t i = 1; i <= 100; ++i) ASSERT_EQ(call_one(ring, kFast, false, i), protocol::kOk);
  EXPECT_EQ(sum.load(), 0u);
  runtime.start();
  for (uint64_t i = 101; i <= 200; ++i) ASSERT_EQ(call_one(ring, kFast, false, i), protocol::kOk);
  runtime.stop();
  EXPECT_FALSE(runtime.running());
  EXPECT_EQ(sum.load(), 200u * 201u / 2u);
  EXPECT_EQ(runtime.statistics().calls, 200u);
  EXPECT_EQ(runtime.statistics().blocking_calls, 0u);
}

TEST(hostcall, StartStopCyclesAndIdleStop) {
  hc::RingBuffer ring({.slots = 8, .lanes = 2, .words_per_lane = 2, .uniform_bytes = 8});
  hc::Runtime runtime(ring, {.service_threads = 3});
  runtime.register_handler(kFast, [](hc::Request& r) { r.lane_words(0)[0] *= 2; });
  runtime.stop();  // stopping a runtime never started is harmless
  for (int cycle = 0; cycle < 20; ++cycle) {
    runtime.start();
    runtime.start();  // idempotent
    EXPECT_TRUE(runtime.running());
    uint64_t reply = 0;
    EXPECT_EQ(call_one(ring, kFast, true, cycle, &reply), protocol::kOk);
    EXPECT_EQ(reply, 2u * cycle);
    runtime.stop();
    runtime.stop();
  }
  EXPECT_EQ(runtime.statistics().calls, 20u);
  runtime.start();  // left running: the destructor stops it
}

TEST(hostcall, ErrorsReachTheCaller) {
  hc::RingBuffer ring({.slots = 4, .lanes = 1, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring);
  runtime.register_handler(kSlow, [](hc::Request&) { throw std::runtime_error("handler bug"); });
  runtime.register_handler(kFast, [](hc::Request& r) { r.set_status(protocol::kBadRequest); });
  EXPECT_THROW(runtime.register_handler(kFast, [](hc::Request&) {}), wavekit::Error);
  EXPECT_THROW(runtime.register_handler(0, [](hc::Request&) {}), wavekit::Error);
  runtime.start();
  EXPECT_THROW(runtime.register_handler(kFast + 1, [](hc::Request&) {}), wavekit::Error);
  EXPECT_EQ(call_one(ring, 999, true, 0), protocol::kUnknownService);
  EXPECT_EQ(call_one(ring, kSlow, true, 0), protocol::kHandlerFailed);
  EXPECT_EQ(call_one(ring, kFast, true, 0), protocol::kBadRequest);
  runtime.stop();
  EXPECT_EQ(runtime.statistics().failed, 3u);
}

TEST(hostcall, RingConfigurationIsValidated) {
  auto message = [](hc::RingConfig config) {
    try {
      hc::RingBuffer ring(config);
    } catch (const wavekit::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({.slots = 12}).find("power of two"), std::string::npos);
  EXPECT_NE(message({.slots = 0}).find("power of two"), std::string::npos);
  EXPECT_NE(message({.lanes = 65}).find("lanes"), std::string::npos);
  EXPECT_NE(message({.words_per_lane = 1}).find("words_per_lane"), std::string::npos);
  EXPECT_NE(message({.uniform_bytes = 12}).find("uniform_bytes"), std::string::npos);
  EXPECT_EQ(message({}), "accepted");
  hc::RingBuffer ring({});
  EXPECT_THROW(hc::Runtime(ring, {.service_threads = 0}), wavekit::Error);
}

// The slot layout the device code computes: header, uniform bytes, lane-major words, and a
// stride rounded to cache lines.
TEST(hostcall, SlotLayout) {
  hc::RingBuffer ring({.slots = 4, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 256});
  const protocol::Ring& r = ring.descriptor();
  EXPECT_EQ(r.magic, protocol::kMagic);
  EXPECT_EQ(r.slot_stride, 64u + 256u + 64u * 8u * 8u);
  auto* slot = protocol::slot_header(r, 3);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(slot) - r.slots, 3 * static_cast<long>(r.slot_stride));
  EXPECT_EQ(reinterpret_cast<uint8_t*>(protocol::slot_lane_words(r, slot, 5)) -
                reinterpret_cast<uint8_t*>(slot),
            64 + 256 + 5 * 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.slots) % 64, 0u);
  EXPECT_EQ(protocol::slot_stride_for(1, 2, 0), 128u);  // 64 + 16 rounded up to a cache line
}

// Quantiles against a sorted CPU reference: within the histogram's 1/16 relative resolution.
TEST(hostcall, LatencyHistogramQuantiles) {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> distribution(8.0, 1.5);
  std::vector<uint64_t> values;
  hc::LatencyHistogram histogram;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<uint64_t>(distribution(random));
    values.push_back(v);
    histogram.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double reference =
        static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    const double measured = static_cast<double>(histogram.quantile(q));
    EXPECT_GE(measured, reference) << q;
    EXPECT_LE(measured, reference * (1.0 + 1.0 / 16) + 1) << q;
  }
  EXPECT_EQ(histogram.max(), values.back());
  EXPECT_EQ(histogram.count(), values.size());
  EXPECT_EQ(hc::LatencyHistogram().quantile(0.5), 0u);
}

// made_progress() is what a deadlock detector asks before blaming waiting producers: true once
// after requests were serviced, true while a published request is unanswered (even if the
// service has not run at all), false when the host is idle with nothing to do.
TEST(hostcall, MadeProgressSeesServicedAndPendingRequests) {
  hc::RingBuffer ring({.slots = 4, .lanes = 1, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring);
  runtime.register_handler(kFast, [](hc::Request& r) { r.lane_words(0)[0] += 1; });
  EXPECT_FALSE(runtime.made_progress());  // nothing published, nothing serviced

  // Published while no service thread runs: pending, so the producer waits on the host.
  EXPECT_EQ(call_one(ring, kFast, false, 1), protocol::kOk);
  EXPECT_TRUE(runtime.made_progress());
  EXPECT_TRUE(runtime.made_progress());  // still pending: still the host's turn

  runtime.start();
  runtime.stop();                         // services what was published
  EXPECT_TRUE(runtime.made_progress());   // serviced since the last question
  EXPECT_FALSE(runtime.made_progress());  // and nothing since, nothing pending

  runtime.start();
  uint64_t reply = 0;
  EXPECT_EQ(call_one(ring, kFast, true, 41, &reply), protocol::kOk);
  EXPECT_EQ(reply, 42u);
  runtime.stop();
  EXPECT_TRUE(runtime.made_progress());
  EXPECT_FALSE(runtime.made_progress());
}
