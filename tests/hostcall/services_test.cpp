// The print and file-egress services, driven by host producers through the ring.
#include "wavekit/hostcall/services.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"
#include "wavekit/support/error.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;

namespace {

std::vector<uint64_t> print_words(std::initializer_list<protocol::PrintArg> args) {
  std::vector<uint64_t> words(protocol::kMaxPrintArguments + 1);
  const uint32_t used =
      protocol::encode_print(words.data(), args.begin(), static_cast<uint32_t>(args.size()));
  words.resize(used);
  return words;
}

std::string reference(const char* format, auto... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

std::string format(std::string_view text, std::initializer_list<protocol::PrintArg> args) {
  std::string with_nul(text);
  with_nul += '\0';
  return hc::format_print(with_nul, print_words(args));
}

}  // namespace

// The C library's own printf is the oracle for the conversions we pass through.
TEST(hostcall, PrintFormatsLikePrintf) {
  EXPECT_EQ(format("x=%d y=%5.2f z=%s", {-42, 3.14159, static_cast<const void*>(nullptr)}),
            reference("x=%d y=%5.2f ", -42, 3.14159) +
                "z=[print: '%s' is not supported: argument 3 points into device memory]");
  EXPECT_EQ(format("%u %x %08X %o", {4000000000u, 255u, 0xabcdu, 8u}),
            reference("%u %x %08X %o", 4000000000u, 255u, 0xabcdu, 8u));
  EXPECT_EQ(format("%ld %lld %hd", {-5000000000l, 7ll, static_cast<short>(-3)}),
            reference("%ld %lld %hd", -5000000000l, 7ll, -3));
  EXPECT_EQ(format("%c%c! %-6d| %+.3e %g %%", {'h', 'i', 12, 1234.5, 0.1f}),
            reference("%c%c! %-6d| %+.3e %g %%", 'h', 'i', 12, 1234.5, static_cast<double>(0.1f)));
  EXPECT_EQ(format("%p", {reinterpret_cast<const void*>(0x1234)}), "0x1234");
}

TEST(hostcall, PrintNamesBadRequests) {
  EXPECT_EQ(format("%d", {2.5}),
            "[print: argument 1 is a floating-point value, '%d' wants an integer]");
  EXPECT_EQ(format("%f", {3}),
            "[print: argument 1 is a signed integer, '%f' wants a floating-point value]");
  EXPECT_EQ(format("a %d b %d", {1}), "a 1 b [print: no argument for '%d']");
  EXPECT_EQ(format("%n", {1}), "[print: unsupported conversion '%n']");
  EXPECT_EQ(format("%*d", {1, 2}), "[print: unsupported conversion '%*']d");
  EXPECT_EQ(format("100%", {}), "100[print: incomplete conversion at the end of the format]");
  // No NUL: the device had to cut the format string to fit the slot.
  EXPECT_EQ(hc::format_print("abc", print_words({})), "abc[print: format string truncated]");
  // A signature claiming more arguments than words arrived is clamped to the words.
  const std::vector<uint64_t> lying = {0xf};
  EXPECT_EQ(hc::format_print(std::string_view("%d\0", 3), lying), "[print: no argument for '%d']");
}

// A whole-wave print: one request, every active lane's line, in lane order.
TEST(hostcall, PrintServiceAllActiveLanes) {
  constexpr uint32_t kLanes = 8;
  hc::RingBuffer ring({.slots = 4, .lanes = kLanes, .words_per_lane = 4, .uniform_bytes = 64});
  hc::Runtime runtime(ring, {.service_threads = 2});
  std::mutex mutex;
  std::vector<std::pair<uint64_t, std::string>> printed;
  hc::register_print_service(runtime, [&](uint64_t wave, std::string_view text) {
    std::lock_guard lock(mutex);
    printed.emplace_back(wave, std::string(text));
  });
  runtime.start();
  const char format_text[] = "lane %u of wave %d: %.1f\n";
  std::vector<uint64_t> words(kLanes * 4);
  for (uint32_t lane = 0; lane < kLanes; ++lane) {
    auto encoded = print_words({lane, 77, lane * 0.5});
    std::copy(encoded.begin(), encoded.end(), words.begin() + lane * 4);
  }
  const uint64_t mask = 0b10110101;
  uint64_t replies[kLanes * protocol::kReplyWords] = {};
  EXPECT_EQ(protocol::call(ring.descriptor(), protocol::kServicePrint, protocol::kFlagBlocking, 77,
                           mask, words.data(), format_text, sizeof format_text, replies),
            protocol::kOk);
  runtime.stop();
  std::string expected;
  for (uint32_t lane = 0; lane < kLanes; ++lane) {
    if (!(mask >> lane & 1)) continue;
    const std::string line = reference(format_text, lane, 77, lane * 0.5);
    EXPECT_EQ(replies[lane * 2], line.size()) << lane;
    expected += line;
  }
  ASSERT_EQ(printed.size(), 1u);
  EXPECT_EQ(printed[0].first, 77u);
  EXPECT_EQ(printed[0].second, expected);
}

namespace {

// One host "wave": open its own file, stream chunks (wave-uniform bytes and per-lane bytes),
// close. Returns the content it expects the file to hold.
std::string stream_wave(const hc::RingBuffer& ring, uint64_t wave, int chunks) {
  const protocol::Ring& r = ring.descriptor();
  std::vector<uint64_t> words(r.lanes * r.words_per_lane);
  uint64_t replies[protocol::kMaxLanes * protocol::kReplyWords] = {};
  const uint64_t all = (uint64_t{1} << r.lanes) - 1;
  const char path[] = "waves/wave-{wave}.txt";
  words[0] = protocol::kFileTruncate;
  protocol::call(r, protocol::kServiceFileOpen, protocol::kFlagBlocking, wave, 1, words.data(),
                 path, sizeof path, replies);
  const uint64_t handle = replies[0];
  if (handle == 0) return "open failed";
  std::string expected;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const std::string header =
        "wave " + std::to_string(wave) + " chunk " + std::to_string(chunk) + ":";
    expected += header;
    for (uint32_t lane = 0; lane < r.lanes; ++lane) {
      const std::string lane_text = " L" + std::to_string(lane) + "." + std::to_string(chunk);
      uint64_t* lane_words = words.data() + lane * r.words_per_lane;
      std::fill(lane_words, lane_words + r.words_per_lane, 0);
      lane_words[0] = handle;
      lane_words[1] = lane_text.size();
      std::memcpy(lane_words + 2, lane_text.data(), lane_text.size());
      expected += lane_text;
    }
    expected += "\n";
    uint64_t* last = words.data() + (r.lanes - 1) * r.words_per_lane;
    std::memcpy(reinterpret_cast<char*>(last + 2) + last[1], "\n", 1);
    last[1] += 1;
    protocol::call(r, protocol::kServiceFileWrite, protocol::kFlagBlocking, wave, all, words.data(),
                   header.data(), static_cast<uint32_t>(header.size()), replies);
  }
  words[0] = handle;
  protocol::call(r, protocol::kServiceFileClose, protocol::kFlagBlocking, wave, 1, words.data(),
                 nullptr, 0, replies);
  if (replies[0] != 0) return "close failed";
  return expected;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Many waves at once, each streaming to its own file through several service threads: every
// file complete and in order.
TEST(hostcall, FileEgressOneFilePerWave) {
  const auto root = std::filesystem::path(testing::TempDir()) / "hostcall_egress";
  std::filesystem::remove_all(root);
  hc::RingBuffer ring({.slots = 16, .lanes = 4, .words_per_lane = 4, .uniform_bytes = 64});
  hc::Runtime runtime(ring, {.service_threads = 3});
  hc::FileEgress egress(root);
  egress.register_services(runtime);
  runtime.start();
  constexpr int kThreads = 8, kWavesPerThread = 32, kChunks = 20;
  std::vector<std::vector<std::string>> expected(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int w = 0; w < kWavesPerThread; ++w)
        expected[t].push_back(stream_wave(ring, t * kWavesPerThread + w, kChunks));
    });
  for (auto& thread : threads) thread.join();
  runtime.stop();
  EXPECT_EQ(egress.files_opened(), uint64_t{kThreads * kWavesPerThread});
  EXPECT_EQ(egress.open_files(), 0u);
  for (int t = 0; t < kThreads; ++t)
    for (int w = 0; w < kWavesPerThread; ++w) {
      const int wave = t * kWavesPerThread + w;
      EXPECT_EQ(slurp(root / "waves" / ("wave-" + std::to_string(wave) + ".txt")), expected[t][w])
          << wave;
    }
  std::filesystem::remove_all(root);
}

TEST(hostcall, FileEgressRefusesEscapesAndBadHandles) {
  const auto root = std::filesystem::path(testing::TempDir()) / "hostcall_egress_bad";
  hc::FileEgress egress(root);
  EXPECT_EQ(egress.resolve("a/{wave}/b-{wave}", 7), root / "a/7/b-7");
  EXPECT_THROW(egress.resolve("../outside", 0), wavekit::Error);
  EXPECT_THROW(egress.resolve("/etc/passwd", 0), wavekit::Error);
  EXPECT_THROW(egress.resolve("", 0), wavekit::Error);

  hc::RingBuffer ring({.slots = 4, .lanes = 1, .words_per_lane = 4, .uniform_bytes = 64});
  hc::Runtime runtime(ring);
  egress.register_services(runtime);
  runtime.start();
  uint64_t words[4] = {protocol::kFileTruncate};
  uint64_t replies[2] = {};
  const char escape[] = "../escape.txt";
  EXPECT_EQ(protocol::call(ring.descriptor(), protocol::kServiceFileOpen, protocol::kFlagBlocking,
                           0, 1, words, escape, sizeof escape, replies),
            protocol::kBadRequest);
  EXPECT_EQ(replies[0], 0u);
  EXPECT_FALSE(std::filesystem::exists(root.parent_path() / "escape.txt"));
  words[0] = 12345;  // never opened
  words[1] = 0;
  EXPECT_EQ(protocol::call(ring.descriptor(), protocol::kServiceFileWrite, protocol::kFlagBlocking,
                           0, 1, words, "x", 1, replies),
            protocol::kBadRequest);
  EXPECT_EQ(replies[1], static_cast<uint64_t>(EBADF));
  runtime.stop();
  std::filesystem::remove_all(root);
}
