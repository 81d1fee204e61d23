// Host threads as producers: many calls through a small ring, each request serviced exactly
// once and each reply delivered to the lanes that asked. The same source is built twice: the
// full run (WAVEKIT_STRESS_CALLS = 4 million) and a ThreadSanitizer build with fewer calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;

namespace {

constexpr uint32_t kService = protocol::kFirstUserService;
constexpr uint32_t kLanes = 4;
constexpr uint32_t kWords = 4;

// The reply the handler computes for one lane, which the caller recomputes to check it got its
// own reply and not another lane's or another call's.
uint64_t expected_reply(uint64_t call_id, uint32_t lane, uint64_t salt) {
  uint64_t x = call_id * 0x9e3779b97f4a7c15ull ^ (uint64_t{lane} << 56) ^ salt;
  x ^= x >> 29;
  return x * 0xbf58476d1ce4e5b9ull;
}

struct Outcome {
  uint64_t bad_replies = 0;
  uint64_t bad_status = 0;
};

void run_stress(uint64_t total_calls, unsigned producers, unsigned service_threads, uint32_t slots,
                uint64_t blocking_every) {
  hc::RingBuffer ring(
      {.slots = slots, .lanes = kLanes, .words_per_lane = kWords, .uniform_bytes = 8});
  hc::Runtime runtime(ring, {.service_threads = service_threads});
  // One counter per call: how many times a handler saw it.
  auto seen = std::make_unique<std::atomic<uint8_t>[]>(total_calls);
  std::atomic<uint64_t> bad_payloads{0};
  runtime.register_handler(kService, [&](hc::Request& request) {
    bool counted = false;
    for (uint32_t lane = 0; lane < request.lanes(); ++lane) {
      if (!request.lane_active(lane)) continue;
      auto words = request.lane_words(lane);
      const uint64_t call_id = words[0];
      if (call_id >= total_calls || words[1] != lane || words[2] != ~call_id ||
          request.wave_id() != words[3]) {
        bad_payloads.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (!counted) seen[call_id].fetch_add(1, std::memory_order_relaxed);
      counted = true;
      words[0] = expected_reply(call_id, lane, 0);
      words[1] = expected_reply(call_id, lane, 1);
    }
  });
  runtime.start();

  std::vector<Outcome> outcomes(producers);
  std::vector<std::thread> threads;
  const uint64_t per_producer = total_calls / producers;
  for (unsigned p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      Outcome& outcome = outcomes[p];
      uint64_t words[kLanes * kWords] = {};
      uint64_t replies[kLanes * protocol::kReplyWords] = {};
      const uint64_t begin = p * per_producer;
      const uint64_t end = p + 1 == producers ? total_calls : begin + per_producer;
      for (uint64_t call_id = begin; call_id < end; ++call_id) {
        // A varying, never empty set of active lanes, as a diverged wave would have.
        const uint64_t mask = (call_id % ((1u << kLanes) - 1)) + 1;
        for (uint32_t lane = 0; lane < kLanes; ++lane) {
          words[lane * kWords + 0] = call_id;
          words[lane * kWords + 1] = lane;
          words[lane * kWords + 2] = ~call_id;
          words[lane * kWords + 3] = p;
        }
        // Every blocking_every-th call waits for its reply; the rest are fire-and-forget.
        const bool blocking = call_id % blocking_every == 0;
        const uint32_t status =
            protocol::call(ring.descriptor(), kService, blocking ? protocol::kFlagBlocking : 0, p,
                           mask, words, nullptr, 0, replies);
        if (status != protocol::kOk) ++outcome.bad_status;
        if (!blocking) continue;
        for (uint32_t lane = 0; lane < kLanes; ++lane) {
          if (!(mask >> lane & 1)) continue;
          if (replies[lane * 2] != expected_reply(call_id, lane, 0) ||
              replies[lane * 2 + 1] != expected_reply(call_id, lane, 1))
            ++outcome.bad_replies;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  runtime.stop();

  uint64_t bad_replies = 0, bad_status = 0;
  for (const auto& outcome : outcomes) {
    bad_replies += outcome.bad_replies;
    bad_status += outcome.bad_status;
  }
  uint64_t never = 0, twice = 0;
  for (uint64_t i = 0; i < total_calls; ++i) {
    const uint8_t n = seen[i].load(std::memory_order_relaxed);
    never += n == 0;
    twice += n > 1;
  }
  const hc::Statistics stats = runtime.statistics();
  EXPECT_EQ(bad_payloads.load(), 0u);
  EXPECT_EQ(bad_replies, 0u);
  EXPECT_EQ(bad_status, 0u);
  EXPECT_EQ(never, 0u) << "requests never serviced";
  EXPECT_EQ(twice, 0u) << "requests serviced more than once";
  EXPECT_EQ(stats.calls, total_calls);
  EXPECT_EQ(stats.blocking_calls, (total_calls + blocking_every - 1) / blocking_every);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_GE(stats.peak_occupancy, 1u);
  EXPECT_LE(stats.peak_occupancy, slots);
  std::printf("%llu calls: %s\n", static_cast<unsigned long long>(total_calls),
              stats.to_json().c_str());
}

}  // namespace

// The long run: 8 producer threads, one service thread (on 2 cores, more threads only add
// context switches); one call in 8 blocking, so that producers mostly run without waiting.
TEST(hostcall, StressManyProducersExactlyOnce) { run_stress(WAVEKIT_STRESS_CALLS, 8, 1, 1024, 8); }

// More producers than slots, so that producers wrap around the ring and wait for their turn,
// and two service threads racing to claim the same ready slots.
TEST(hostcall, StressWrappingProducersTwoServiceThreads) {
  run_stress(WAVEKIT_STRESS_CALLS / 50, 16, 2, 8, 2);
}

// The one-slot ring is the first-come-first-served single mailbox: still correct, one call at
// a time.
TEST(hostcall, StressSingleMailboxExactlyOnce) {
  run_stress(WAVEKIT_STRESS_CALLS / 100, 8, 1, 1, 2);
}
