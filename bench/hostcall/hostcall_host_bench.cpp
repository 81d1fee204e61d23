// Host-only hostcall throughput: host threads as producers, the ring against the single-mailbox
// FCFS baseline (the same protocol with one slot), in one run so that the ratio is fair on a
// shared machine. Prints one JSON line per configuration and a readable ratio.
//   hostcall_host_bench [--producers N] [--calls N] [--threads N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;

namespace {

struct Measurement {
  double calls_per_second = 0;
  hc::Statistics stats;
};

Measurement measure(uint32_t slots, unsigned producers, unsigned service_threads, uint64_t calls,
                    bool blocking) {
  hc::RingBuffer ring({.slots = slots, .lanes = 8, .words_per_lane = 2, .uniform_bytes = 0});
  hc::Runtime runtime(ring, {.service_threads = service_threads});
  runtime.register_handler(protocol::kFirstUserService, [](hc::Request& request) {
    for (uint32_t lane = 0; lane < request.lanes(); ++lane)
      if (request.lane_active(lane)) request.lane_words(lane)[0] += 1;
  });
  runtime.start();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      uint64_t words[8 * 2] = {};
      uint64_t replies[8 * protocol::kReplyWords];
      for (uint64_t i = p; i < calls; i += producers)
        protocol::call(ring.descriptor(), protocol::kFirstUserService,
                       blocking ? protocol::kFlagBlocking : 0, p, 0xff, words, nullptr, 0, replies);
    });
  for (auto& thread : threads) thread.join();
  runtime.stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {static_cast<double>(calls) / seconds, runtime.statistics()};
}

unsigned parse(int argc, char** argv, const char* name, unsigned fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned producers = parse(argc, argv, "--producers", 4);
  const uint64_t calls = parse(argc, argv, "--calls", 400000);
  const unsigned threads = parse(argc, argv, "--threads", 1);
  for (const bool blocking : {true, false}) {
    const Measurement ring = measure(1024, producers, threads, calls, blocking);
    const Measurement mailbox = measure(1, producers, threads, calls, blocking);
    const char* kind = blocking ? "blocking" : "fire_and_forget";
    std::printf(
        "{\"bench\": \"host_ring\", \"mode\": \"%s\", \"producers\": %u, \"service_threads\": %u, "
        "\"calls_per_second\": %.0f, \"runtime\": %s}\n",
        kind, producers, threads, ring.calls_per_second, ring.stats.to_json().c_str());
    std::printf(
        "{\"bench\": \"host_fcfs_single_mailbox\", \"mode\": \"%s\", \"producers\": %u, "
        "\"service_threads\": %u, "
        "\"calls_per_second\": %.0f, \"runtime\": %s}\n",
        kind, producers, threads, mailbox.calls_per_second, mailbox.stats.to_json().c_str());
    std::printf("%s calls: ring %.0f calls/s, single mailbox %.0f calls/s, ratio %.2fx\n", kind,
                ring.calls_per_second, mailbox.calls_per_second,
                ring.calls_per_second / mailbox.calls_per_second);
  }
  return 0;
}
