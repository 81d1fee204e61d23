// The hostcall ring under thousands of resident CUDA warps (the CUDA build of protocol.h,
// serviced by wavekit_hostcall's Runtime): calls per second, device-measured latency p50/p99,
// loss, at 1, 2 and 4 service threads, against the single-mailbox FCFS baseline (the same
// protocol with one slot), and the print service against CUDA's device printf.
//
// Build and run: bench/hostcall/build_cuda.sh (needs nvcc; not part of the CMake build).
// Output: one JSON object per line on stdout, then a readable table on stderr.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wavekit/hostcall/protocol.h"
#include "wavekit/hostcall/runtime.h"
#include "wavekit/hostcall/services.h"

namespace hc = wavekit::hostcall;
namespace protocol = wavekit::hostcall::protocol;

#define CHECK(call)                                                      \
  do {                                                                   \
    cudaError_t error_ = (call);                                         \
    if (error_ != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(error_));                          \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

namespace {

constexpr uint32_t kEchoService = protocol::kFirstUserService;

__device__ uint64_t global_time_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ uint64_t expected_reply(uint64_t call_id, uint32_t lane) {
  return (call_id * 0x9e3779b97f4a7c15ull) ^ lane;
}

// Every warp makes `calls` blocking calls; each lane sends (call id, lane) and checks that its
// reply is the one computed for it. The leader records each call's latency.
__global__ void echo_kernel(protocol::Ring ring, uint32_t calls, uint64_t* latencies,
                            unsigned long long* bad_replies) {
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32;
  for (uint32_t i = 0; i < calls; ++i) {
    const uint64_t call_id = uint64_t{warp} * calls + i;
    const uint64_t words[2] = {call_id, lane};
    uint64_t reply[protocol::kReplyWords] = {0, 0};
    const uint64_t start = global_time_ns();
    const uint32_t status = protocol::call(ring, kEchoService, protocol::kFlagBlocking, warp, words,
                                           2, nullptr, 0, reply);
    const uint64_t end = global_time_ns();
    if (status != protocol::kOk || reply[0] != expected_reply(call_id, lane) || reply[1] != call_id)
      atomicAdd(bad_replies, 1ull);
    if (lane == 0) latencies[call_id] = end - start;
  }
}

__global__ void print_kernel(protocol::Ring ring, uint32_t calls) {
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32;
  for (uint32_t i = 0; i < calls; ++i)
    protocol::print(ring, warp, true, "warp %u lane %u call %u: %f\n", warp, lane, i, lane * 0.25);
}

__global__ void cuda_printf_kernel(uint32_t calls) {
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32;
  for (uint32_t i = 0; i < calls; ++i)
    printf("warp %u lane %u call %u: %f\n", warp, lane, i, lane * 0.25);
}

struct Memory {
  void* slots = nullptr;
  uint64_t* ticket = nullptr;
  bool ticket_on_host = false;
  ~Memory() {
    cudaFreeHost(slots);
    if (ticket_on_host)
      cudaFreeHost(ticket);
    else
      cudaFree(ticket);
  }
};

// Slots in pinned, mapped host memory; the ticket counter in device memory (its atomics stay
// on the GPU) unless asked otherwise.
std::unique_ptr<hc::RingBuffer> make_ring(const hc::RingConfig& config, Memory& memory,
                                          bool ticket_on_host) {
  CHECK(cudaHostAlloc(&memory.slots, hc::RingBuffer::bytes_for(config),
                      cudaHostAllocMapped | cudaHostAllocPortable));
  memory.ticket_on_host = ticket_on_host;
  if (ticket_on_host) {
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&memory.ticket), 64,
                        cudaHostAllocMapped | cudaHostAllocPortable));
    *memory.ticket = 0;
  } else {
    CHECK(cudaMalloc(&memory.ticket, 64));
    CHECK(cudaMemset(memory.ticket, 0, 64));
  }
  void* device_slots = nullptr;
  CHECK(cudaHostGetDevicePointer(&device_slots, memory.slots, 0));
  void* device_ticket = memory.ticket;
  if (ticket_on_host) CHECK(cudaHostGetDevicePointer(&device_ticket, memory.ticket, 0));
  return std::make_unique<hc::RingBuffer>(config, memory.slots,
                                          reinterpret_cast<uint64_t>(device_slots),
                                          reinterpret_cast<uint64_t>(device_ticket));
}

uint64_t percentile(std::vector<uint64_t>& values, double q) {
  if (values.empty()) return 0;
  const size_t index =
      std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<long>(index), values.end());
  return values[index];
}

struct Result {
  std::string name;
  unsigned service_threads = 0;
  uint64_t warps = 0, calls = 0, serviced_once = 0, duplicates = 0, bad_replies = 0;
  double seconds = 0;
  uint64_t p50_ns = 0, p99_ns = 0;
  bool timed_out = false;
  hc::Statistics stats;
  double calls_per_second() const { return seconds > 0 ? static_cast<double>(calls) / seconds : 0; }
};

void report(const Result& r) {
  std::printf(
      "{\"bench\": \"%s\", \"service_threads\": %u, \"warps\": %llu, \"calls\": %llu, \"seconds\": "
      "%.6f, "
      "\"calls_per_second\": %.0f, \"latency_p50_ns\": %llu, \"latency_p99_ns\": %llu, \"lost\": "
      "%llu, "
      "\"serviced_twice\": %llu, \"bad_replies\": %llu, \"timed_out\": %s, \"runtime\": %s}\n",
      r.name.c_str(), r.service_threads, static_cast<unsigned long long>(r.warps),
      static_cast<unsigned long long>(r.calls), r.seconds, r.calls_per_second(),
      static_cast<unsigned long long>(r.p50_ns), static_cast<unsigned long long>(r.p99_ns),
      static_cast<unsigned long long>(r.calls - r.serviced_once),
      static_cast<unsigned long long>(r.duplicates), static_cast<unsigned long long>(r.bad_replies),
      r.timed_out ? "true" : "false", r.stats.to_json().c_str());
  std::fflush(stdout);
}

// Waits for the kernel with a watchdog, so that a protocol that deadlocks is reported, not hung.
bool wait_for_kernel(double limit_seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (cudaStreamQuery(0) == cudaErrorNotReady) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        limit_seconds)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK(cudaGetLastError());
  return true;
}

Result run_echo(const std::string& name, uint32_t slots, unsigned service_threads, uint32_t blocks,
                uint32_t threads_per_block, uint32_t calls_per_warp, bool ticket_on_host,
                double watchdog_seconds = 60) {
  Result result;
  result.name = name;
  result.service_threads = service_threads;
  result.warps = uint64_t{blocks} * threads_per_block / 32;
  result.calls = result.warps * calls_per_warp;
  Memory memory;
  auto ring = make_ring({.slots = slots, .lanes = 32, .words_per_lane = 2, .uniform_bytes = 0},
                        memory, ticket_on_host);
  hc::Runtime runtime(*ring, {.service_threads = service_threads});
  auto seen = std::make_unique<std::atomic<uint8_t>[]>(result.calls);
  const uint64_t total_calls = result.calls;
  runtime.register_handler(kEchoService, [&seen, total_calls](hc::Request& request) {
    bool counted = false;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      if (!request.lane_active(lane)) continue;
      auto words = request.lane_words(lane);
      const uint64_t call_id = words[0];
      if (call_id >= total_calls) continue;
      if (!counted) seen[call_id].fetch_add(1, std::memory_order_relaxed);
      counted = true;
      words[0] = (call_id * 0x9e3779b97f4a7c15ull) ^ words[1];
      words[1] = call_id;
    }
  });
  uint64_t* latencies = nullptr;
  unsigned long long* bad = nullptr;
  CHECK(cudaMalloc(&latencies, result.calls * sizeof(uint64_t)));
  CHECK(cudaMalloc(&bad, sizeof *bad));
  CHECK(cudaMemset(bad, 0, sizeof *bad));
  runtime.start();
  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventRecord(begin));
  echo_kernel<<<blocks, threads_per_block>>>(ring->descriptor(), calls_per_warp, latencies, bad);
  CHECK(cudaEventRecord(end));
  if (!wait_for_kernel(watchdog_seconds)) {
    result.timed_out = true;
    result.seconds = watchdog_seconds;
    result.stats = runtime.statistics();
    result.serviced_once = result.stats.calls;
    report(result);
    std::fprintf(stderr, "%s: not finished after %.0f s (%llu of %llu calls serviced); exiting\n",
                 name.c_str(), watchdog_seconds,
                 static_cast<unsigned long long>(result.stats.calls),
                 static_cast<unsigned long long>(result.calls));
    std::_Exit(3);
  }
  runtime.stop();
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, begin, end));
  result.seconds = ms / 1000.0;
  std::vector<uint64_t> host_latencies(result.calls);
  CHECK(cudaMemcpy(host_latencies.data(), latencies, result.calls * sizeof(uint64_t),
                   cudaMemcpyDeviceToHost));
  unsigned long long host_bad = 0;
  CHECK(cudaMemcpy(&host_bad, bad, sizeof host_bad, cudaMemcpyDeviceToHost));
  result.bad_replies = host_bad;
  result.p50_ns = percentile(host_latencies, 0.50);
  result.p99_ns = percentile(host_latencies, 0.99);
  for (uint64_t i = 0; i < result.calls; ++i) {
    const uint8_t n = seen[i].load(std::memory_order_relaxed);
    result.serviced_once += n == 1;
    result.duplicates += n > 1;
  }
  result.stats = runtime.statistics();
  cudaFree(latencies);
  cudaFree(bad);
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  report(result);
  return result;
}

uint64_t count_lines(const char* path) {
  std::FILE* file = std::fopen(path, "rb");
  if (!file) return 0;
  uint64_t lines = 0;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
    lines += static_cast<uint64_t>(std::count(buffer, buffer + n, '\n'));
  std::fclose(file);
  return lines;
}

// Lines per second through the print service (to a file) and through CUDA's printf (stdout
// redirected to a file; its FIFO sized to hold every line, the time including the flush at
// synchronisation).
void run_print(unsigned service_threads, uint32_t blocks, uint32_t threads_per_block,
               uint32_t calls_per_warp, const std::string& directory) {
  const uint64_t lanes = uint64_t{blocks} * threads_per_block;
  const uint64_t lines = lanes * calls_per_warp;
  {
    Memory memory;
    auto ring = make_ring({.slots = 16384, .lanes = 32, .words_per_lane = 5, .uniform_bytes = 64},
                          memory, false);
    hc::Runtime runtime(*ring, {.service_threads = service_threads});
    const std::string path = directory + "/hostcall_print.txt";
    std::FILE* out = std::fopen(path.c_str(), "wb");
    std::mutex mutex;
    hc::register_print_service(runtime, [&](uint64_t, std::string_view text) {
      std::lock_guard lock(mutex);
      std::fwrite(text.data(), 1, text.size(), out);
    });
    runtime.start();
    const auto start = std::chrono::steady_clock::now();
    print_kernel<<<blocks, threads_per_block>>>(ring->descriptor(), calls_per_warp);
    if (!wait_for_kernel(60)) std::_Exit(3);
    runtime.stop();
    std::fclose(out);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const uint64_t got = count_lines(path.c_str());
    std::printf(
        "{\"bench\": \"print_hostcall\", \"service_threads\": %u, \"lines\": %llu, \"lines_out\": "
        "%llu, "
        "\"seconds\": %.6f, \"lines_per_second\": %.0f, \"runtime\": %s}\n",
        service_threads, static_cast<unsigned long long>(lines),
        static_cast<unsigned long long>(got), seconds, static_cast<double>(lines) / seconds,
        runtime.statistics().to_json().c_str());
    std::fflush(stdout);
    std::remove(path.c_str());
  }
  {
    const std::string path = directory + "/cuda_printf.txt";
    std::fflush(stdout);
    const int saved = dup(1);
    std::FILE* redirected = std::freopen(path.c_str(), "wb", stdout);
    if (!redirected) std::exit(1);
    const auto start = std::chrono::steady_clock::now();
    cuda_printf_kernel<<<blocks, threads_per_block>>>(calls_per_warp);
    CHECK(cudaDeviceSynchronize());
    std::fflush(stdout);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    dup2(saved, 1);
    close(saved);
    const uint64_t got = count_lines(path.c_str());
    std::printf(
        "{\"bench\": \"print_cuda_printf\", \"lines\": %llu, \"lines_out\": %llu, \"seconds\": "
        "%.6f, "
        "\"lines_per_second\": %.0f}\n",
        static_cast<unsigned long long>(lines), static_cast<unsigned long long>(got), seconds,
        static_cast<double>(lines) / seconds);
    std::fflush(stdout);
    std::remove(path.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string directory = argc > 1 ? argv[1] : "/tmp";
  cudaDeviceProp properties{};
  CHECK(cudaGetDeviceProperties(&properties, 0));
  // One block of 256 threads (8 warps) per 8 warp slots of every SM: all warps resident at once.
  const uint32_t threads_per_block = 256;
  const uint32_t blocks_per_sm =
      static_cast<uint32_t>(properties.maxThreadsPerMultiProcessor) / threads_per_block;
  const uint32_t blocks = static_cast<uint32_t>(properties.multiProcessorCount) * blocks_per_sm;
  std::fprintf(stderr, "%s: %d SMs, %u blocks x %u threads = %u warps\n", properties.name,
               properties.multiProcessorCount, blocks, threads_per_block,
               blocks * threads_per_block / 32);
  // CUDA's printf FIFO, sized once (it cannot change after the first printf kernel) to hold
  // every line of the printf comparison: 4.3 M lines of about 48 bytes of record each.
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, size_t{512} << 20));
  int occupancy = 0;
  CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, echo_kernel, threads_per_block, 0));
  std::fprintf(stderr, "echo_kernel: %d resident blocks per SM (want %u)\n", occupancy,
               blocks_per_sm);

  const uint32_t calls_per_warp = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 256;
  // Runs of each full-load ring configuration (their median is reported), and "ring" to leave
  // out the print comparison and the FCFS run under every warp (which takes its 20 s watchdog).
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  const bool ring_only = argc > 4 && std::string(argv[4]) == "ring";
  // Warm-up: first-touch of the pinned slots and the module load.
  run_echo("warmup", 16384, 1, blocks, threads_per_block, 4, false);
  std::vector<Result> results;
  for (unsigned threads : {1u, 2u, 4u}) {
    std::vector<Result> runs;
    for (int i = 0; i < repeats; ++i)
      runs.push_back(
          run_echo("ring", 16384, threads, blocks, threads_per_block, calls_per_warp, false));
    std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) {
      return a.calls_per_second() < b.calls_per_second();
    });
    for (const Result& r : runs)
      std::fprintf(stderr, "ring, %u service threads: %.0f calls/s p50 %llu ns p99 %llu ns\n",
                   threads, r.calls_per_second(), static_cast<unsigned long long>(r.p50_ns),
                   static_cast<unsigned long long>(r.p99_ns));
    results.push_back(runs[runs.size() / 2]);
    results.back().name = "ring_median_of_" + std::to_string(repeats);
  }
  results.push_back(run_echo("ring_ticket_in_host_memory", 16384, 4, blocks, threads_per_block,
                             calls_per_warp, true));
  // Low load (one warp per SM): latency without queueing.
  const uint32_t sms = static_cast<uint32_t>(properties.multiProcessorCount);
  // The ring sized from the resident waves (132 warps: 256 slots), as the design says.
  results.push_back(run_echo("ring_low_load", 256, 1, sms, 32, 64, false));
  results.push_back(run_echo("fcfs_single_mailbox_low_load", 1, 1, sms, 32, 16, false, 30));
  for (const Result& r : results)
    std::fprintf(stderr,
                 "%-30s warps %5llu threads %u: %10.0f calls/s  p50 %8llu ns  p99 %8llu ns  lost "
                 "%llu  twice %llu  bad %llu\n",
                 r.name.c_str(), static_cast<unsigned long long>(r.warps), r.service_threads,
                 r.calls_per_second(), static_cast<unsigned long long>(r.p50_ns),
                 static_cast<unsigned long long>(r.p99_ns),
                 static_cast<unsigned long long>(r.calls - r.serviced_once),
                 static_cast<unsigned long long>(r.duplicates),
                 static_cast<unsigned long long>(r.bad_replies));
  // Ratios over the single mailbox, from this one run (the last result is its low-load run).
  const double fcfs = results.back().calls_per_second();
  for (size_t i = 0; i + 1 < results.size(); ++i)
    if (fcfs > 0)
      std::fprintf(stderr, "ratio %s (%u threads) / fcfs_single_mailbox_low_load: %.1fx\n",
                   results[i].name.c_str(), results[i].service_threads,
                   results[i].calls_per_second() / fcfs);
  if (ring_only) return 0;
  for (unsigned threads : {1u, 4u}) run_print(threads, blocks, threads_per_block, 16, directory);
  // The FCFS single mailbox under every resident warp, last: it may not finish (its watchdog
  // then reports how many calls were serviced and ends the program).
  run_echo("fcfs_single_mailbox", 1, 1, blocks, threads_per_block, 1, false, 20);
  return 0;
}
