// The AMDGPU build of protocol.h on the emulator: 16,384 waves, far more than may be resident
// at once, each streaming lines to its own file through the ring and the file-egress service.
// Every file must be complete and in order. The same scenario through a single mailbox served
// in dispatch order deadlocks, and the emulator must say so (no_progress) instead of hanging.
// (Needs the emu and hsa parts, which come after hostcall; tests/hostcall/CMakeLists.txt
// defines this test once they are configured.)
//
// No test here depends on how fast the host is: the emulator's deadlock detector asks the
// hostcall runtime whether the waves are waiting on the host (Runtime::made_progress) before
// it blames them, so a slow or starved service thread is never reported as a deadlock.
#include <gtest/gtest.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emu_test_support.h"
#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"
#include "wavekit/hostcall/services.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;
namespace emu = wavekit::emu;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the kernels' wave `wave` writes: `calls` times "line:" and, per lane in lane order,
// 'a', the last digit of the lane's work-item id in its 256-wide group, ' '.
std::string expected_file(uint64_t wave, uint32_t calls) {
  std::string chunk = "line:";
  for (uint32_t lane = 0; lane < 64; ++lane) {
    const uint32_t item = static_cast<uint32_t>(wave % 4) * 64 + lane;
    chunk += 'a';
    chunk += static_cast<char>('0' + item % 10);
    chunk += ' ';
  }
  std::string all;
  for (uint32_t i = 0; i < calls; ++i) all += chunk;
  return all;
}

std::filesystem::path fresh_directory(const std::string& name) {
  const auto path = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(path);
  return path;
}

// A ring the emulated GPU can reach (ticket line, slots, descriptor), its service threads and
// the file-egress service writing under a fresh directory.
struct EmulatedRing {
  emu::test::LoadedObject object{WAVEKIT_HOSTCALL_KERNELS};
  hc::RingBuffer ring;
  emu::test::Buffer descriptor;
  std::filesystem::path root;
  hc::FileEgress egress;
  hc::Runtime runtime;  // after egress: stops its threads before the handlers' egress goes

  EmulatedRing(const hc::RingConfig& config, const std::string& name)
      : ring(config),
        descriptor(object.memory(), sizeof(protocol::Ring), "hostcall descriptor"),
        root(fresh_directory(name)),
        egress(root),
        runtime(ring, {.service_threads = 2}) {
    const protocol::Ring& view = ring.descriptor();
    object.memory().add(view.ticket, 64 + hc::RingBuffer::bytes_for(config),
                        emu::MemoryMap::kReadWrite, "hostcall ring");
    *descriptor.as<protocol::Ring>() = view;
    egress.register_services(runtime);
  }
  ~EmulatedRing() { std::filesystem::remove_all(root); }

  // Waves spinning on the ring wait on the host: that is progress the emulator cannot see.
  emu::DispatchOptions options(unsigned resident) {
    emu::DispatchOptions options;
    options.max_resident_waves = resident;
    options.outside_progress = [this] { return runtime.made_progress(); };
    return options;
  }

  // Files of waves [0, waves) that differ from expected_file (the first three are reported).
  uint64_t wrong_files(uint64_t waves, uint32_t calls) {
    uint64_t wrong = 0;
    for (uint64_t wave = 0; wave < waves; ++wave) {
      const std::string content = slurp(root / "waves" / ("wave-" + std::to_string(wave) + ".txt"));
      if (content != expected_file(wave, calls) && ++wrong <= 3)
        ADD_FAILURE() << "wave " << wave << " wrote '" << content.substr(0, 80) << "...'";
    }
    return wrong;
  }
};

constexpr uint32_t kBlock[3] = {256, 1, 1};

}  // namespace

TEST(hostcall, EmulatorSixteenThousandWavesStreamTheirOwnFiles) {
  constexpr uint32_t kWaves = 16384, kCalls = 3, kResident = 512;
  EmulatedRing setup({.slots = kResident, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64},
                     "hostcall_emu_ring");
  setup.runtime.start();
  const uint32_t grid[3] = {kWaves * 64, 1, 1};
  const emu::DispatchResult result =
      setup.object.run("hostcall_wave_files", {setup.descriptor.address(), kCalls}, grid, kBlock,
                       setup.options(kResident));
  setup.runtime.stop();
  ASSERT_TRUE(result.ok()) << emu::error_kind_name(result.error) << ": " << result.message;
  EXPECT_EQ(result.total_waves, kWaves);

  const hc::Statistics stats = setup.runtime.statistics();
  EXPECT_EQ(stats.calls, uint64_t{kWaves} * (kCalls + 2));
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_EQ(setup.egress.files_opened(), kWaves);
  EXPECT_EQ(setup.egress.open_files(), 0u);
  EXPECT_EQ(setup.wrong_files(kWaves, kCalls), 0u);
}

// A host that takes long to answer is not a deadlock. The first request's handler sleeps far
// longer than the detector's limits (lowered here so that they are certainly reached while it
// sleeps): without outside_progress the emulator blames the waiting waves, with it the
// dispatch completes and every reply arrives.
TEST(hostcall, EmulatorSlowHostIsNotReportedAsDeadlock) {
  for (const bool ask_the_host : {false, true}) {
    SCOPED_TRACE(ask_the_host ? "with outside_progress" : "without outside_progress");
    EmulatedRing setup({.slots = 8, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64},
                       "hostcall_emu_slow");
    std::atomic<bool> first{true};
    setup.runtime.register_handler(protocol::kFirstUserService, [&](hc::Request& request) {
      if (first.exchange(false)) std::this_thread::sleep_for(std::chrono::milliseconds(500));
      for (uint32_t lane = 0; lane < 64; ++lane)
        if (request.lane_active(lane)) request.lane_words(lane)[0] += 1000;
    });
    emu::test::Buffer out(setup.object.memory(), 256 * sizeof(uint64_t), "out");
    setup.runtime.start();
    emu::DispatchOptions options = setup.options(4);
    if (!ask_the_host) options.outside_progress = nullptr;
    options.no_progress_instructions = 1000;
    options.no_progress_seconds = 0.05;
    const uint32_t grid[3] = {256, 1, 1};
    const emu::DispatchResult result =
        setup.object.run("hostcall_blocking_call", {setup.descriptor.address(), out.address()},
                         grid, kBlock, options);
    setup.runtime.stop();
    if (!ask_the_host) {
      EXPECT_EQ(result.error, emu::ErrorKind::no_progress) << result.message;
      continue;
    }
    ASSERT_TRUE(result.ok()) << emu::error_kind_name(result.error) << ": " << result.message;
    for (uint64_t thread = 0; thread < 256; ++thread)
      ASSERT_EQ(out.as<uint64_t>()[thread], thread + 1000) << "thread " << thread;
  }
}

// The baseline: one mailbox serving the calls in dispatch order. With every wave resident it is
// a correct, if serial, mailbox: every file complete.
TEST(hostcall, EmulatorDispatchOrderMailboxWorksWhileEveryWaveIsResident) {
  constexpr uint32_t kWaves = 64, kCalls = 3;
  EmulatedRing setup({.slots = 1, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64},
                     "hostcall_emu_mailbox_resident");
  setup.runtime.start();
  const uint32_t grid[3] = {kWaves * 64, 1, 1};
  const emu::DispatchResult result =
      setup.object.run("hostcall_wave_files_dispatch_order",
                       {setup.descriptor.address(), kCalls | uint64_t{kWaves} << 32}, grid, kBlock,
                       setup.options(kWaves));
  setup.runtime.stop();
  ASSERT_TRUE(result.ok()) << emu::error_kind_name(result.error) << ": " << result.message;
  EXPECT_EQ(setup.runtime.statistics().calls, uint64_t{kWaves} * (kCalls + 2));
  EXPECT_EQ(setup.wrong_files(kWaves, kCalls), 0u);
}

// ...and with 16,384 waves and 512 resident it deadlocks: wave 0's first write waits for the
// open of wave 512, which cannot become resident before a resident wave ends. The emulator
// reports it (the host has nothing outstanding, so outside_progress does not excuse it) in
// bounded time, naming waiting waves: resident ones, each having opened its file and nothing
// more. (The report lists the waves of the workgroups queued at that moment; a workgroup a
// worker thread holds just then is not listed, so it may name fewer than all 512.)
TEST(hostcall, EmulatorDispatchOrderMailboxDeadlocksAndIsReported) {
  constexpr uint32_t kWaves = 16384, kCalls = 3, kResident = 512;
  EmulatedRing setup({.slots = 1, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64},
                     "hostcall_emu_mailbox_deadlock");
  setup.runtime.start();
  const uint32_t grid[3] = {kWaves * 64, 1, 1};
  // The default limits (2^26 wave-instructions, and twice, since the first time the host has
  // just serviced the opens) take minutes on a loaded 2-core machine; 2^22 instructions of
  // spinning with the host idle are as conclusive.
  emu::DispatchOptions options = setup.options(kResident);
  options.no_progress_instructions = 1u << 22;
  options.no_progress_seconds = 1.0;
  const emu::DispatchResult result = setup.object.run(
      "hostcall_wave_files_dispatch_order",
      {setup.descriptor.address(), kCalls | uint64_t{kWaves} << 32}, grid, kBlock, options);
  setup.runtime.stop();
  ASSERT_EQ(result.error, emu::ErrorKind::no_progress)
      << emu::error_kind_name(result.error) << ": " << result.message;
  EXPECT_NE(result.message.find("no progress"), std::string::npos) << result.message;
  ASSERT_FALSE(result.faults.empty());
  EXPECT_LE(result.faults.size(), kResident);
  for (const emu::WaveLocation& wave : result.faults) EXPECT_LT(wave.linear_wave_id, kResident);
  EXPECT_EQ(setup.runtime.statistics().calls, kResident);  // the resident waves' opens
  EXPECT_EQ(setup.egress.files_opened(), kResident);
}

namespace {

// Every write to the watched sequence words, in the order the writers' trap handlers took a
// lock, with the value each handler read back. The protocol only ever raises a slot's sequence
// word, so the values read back must never decrease.
struct SequenceWatch {
  static constexpr size_t kMaxWrites = 1 << 20;
  std::vector<uint64_t*> words;
  std::vector<std::vector<uint64_t>> seen;  // per watched word
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  std::vector<int> descriptors;
  struct sigaction previous {};
};
SequenceWatch* active_watch = nullptr;

// SIGTRAP from a hardware write watchpoint (perf sigtrap): runs on the writing thread right
// after its store. Async-signal-safe: a spin lock (never held by the interrupted code of this
// thread) and stores into preallocated vectors.
void on_sequence_write(int, siginfo_t* info, void*) {
  SequenceWatch& watch = *active_watch;
  while (watch.lock.test_and_set(std::memory_order_acquire)) {
  }
  for (size_t i = 0; i < watch.words.size(); ++i) {
    if (info->si_addr != watch.words[i]) continue;
    if (watch.seen[i].size() < watch.seen[i].capacity())
      watch.seen[i].push_back(__atomic_load_n(watch.words[i], __ATOMIC_RELAXED));
  }
  watch.lock.clear(std::memory_order_release);
}

// Arms one write watchpoint per word for this thread and the threads it creates afterwards.
// Returns why it cannot (no debug registers in this VM, perf_event_paranoid) or "".
std::string arm(SequenceWatch& watch) {
  active_watch = &watch;
  struct sigaction action {};
  action.sa_sigaction = on_sequence_write;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGTRAP, &action, &watch.previous);
  for (uint64_t* word : watch.words) {
    watch.seen.emplace_back().reserve(SequenceWatch::kMaxWrites);
    perf_event_attr attr{};
    attr.type = PERF_TYPE_BREAKPOINT;
    attr.size = sizeof attr;
    attr.bp_type = HW_BREAKPOINT_W;
    attr.bp_addr = reinterpret_cast<uint64_t>(word);
    attr.bp_len = HW_BREAKPOINT_LEN_8;
    attr.sample_period = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.inherit = 1;
    attr.sigtrap = 1;
    attr.remove_on_exec = 1;  // required with sigtrap and inherit
    const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    if (fd < 0)
      return std::string("perf_event_open (hardware write watchpoint): ") + strerror(errno);
    watch.descriptors.push_back(fd);
  }
  return "";
}

void disarm(SequenceWatch& watch) {
  for (int fd : watch.descriptors) close(fd);
  sigaction(SIGTRAP, &watch.previous, nullptr);
  active_watch = nullptr;
}

}  // namespace

// Emulated device stores reach the ring as the hardware makes them: one store per element. A
// copy that writes an element twice (glibc's memcpy of a run-time 4 bytes does: two overlapping
// moves) undoes whatever the host stored between the two writes: a request's kReady came back
// after the host had replied, and the request was serviced twice (docs/hostcall.md). A trap on
// every write to the sequence words of a 4-slot ring holds each writer right after its store,
// which opens exactly that window wide: with the double write, a run of 2,048 waves saw a slot's
// sequence word go back 116 times in about 20,700 writes and the dispatch fail, and this test
// failed too; with single stores, never.
TEST(hostcall, EmulatorStoresNeverUndoTheHostsWrites) {
  constexpr uint32_t kWaves = 512, kCalls = 3, kResident = 128, kSlots = 4;
  EmulatedRing setup({.slots = kSlots, .lanes = 64, .words_per_lane = 8, .uniform_bytes = 64},
                     "hostcall_emu_watch");
  SequenceWatch watch;
  for (uint32_t slot = 0; slot < kSlots; ++slot)
    watch.words.push_back(&protocol::slot_header(setup.ring.host_view(), slot)->seq);
  if (const std::string why = arm(watch); !why.empty()) {
    disarm(watch);
    GTEST_SKIP() << why << " (this machine lends no debug registers to user space)";
  }
  setup.runtime.start();
  const uint32_t grid[3] = {kWaves * 64, 1, 1};
  const emu::DispatchResult result =
      setup.object.run("hostcall_wave_files", {setup.descriptor.address(), kCalls}, grid, kBlock,
                       setup.options(kResident));
  setup.runtime.stop();
  disarm(watch);
  ASSERT_TRUE(result.ok()) << emu::error_kind_name(result.error) << ": " << result.message;
  EXPECT_EQ(setup.runtime.statistics().calls, uint64_t{kWaves} * (kCalls + 2));
  EXPECT_EQ(setup.wrong_files(kWaves, kCalls), 0u);
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    const std::vector<uint64_t>& values = watch.seen[slot];
    // Each call writes the word four times (free, ready, claimed, replied).
    EXPECT_GE(values.size(), uint64_t{kWaves} * (kCalls + 2) / kSlots * 4) << "slot " << slot;
    for (size_t i = 1; i < values.size(); ++i)
      ASSERT_GE(values[i], values[i - 1]) << "slot " << slot << ", write " << i;
  }
}
