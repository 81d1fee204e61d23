// Emulator throughput: executed wave-instructions per second per host thread, on a VALU-heavy
// and a memory-heavy kernel, with 1 and 2 host threads in the same run (so the scaling ratio
// compares like with like). The per-thread rate divides by the process's CPU time, which stays
// meaningful on a shared, loaded machine; the scaling ratio uses wall time and is only
// meaningful on an idle one. Prints a table for people and, with --json, JSON for machines.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "../../tests/emu/emu_test_support.h"

namespace {

using namespace wavekit::emu;
using namespace wavekit::emu::test;

struct Measurement {
  std::string kernel;
  unsigned threads;
  std::uint64_t instructions;
  double seconds;      // wall
  double cpu_seconds;  // all threads of the process
  double per_thread() const { return double(instructions) / cpu_seconds; }
};

Measurement measure(LoadedObject& object, const std::string& kernel,
                    const std::vector<std::uint64_t>& kernarg, std::uint32_t items,
                    unsigned threads) {
  const std::uint32_t grid[3] = {items, 1, 1}, block[3] = {256, 1, 1};
  DispatchOptions options;
  options.host_threads = threads;
  auto cpu_now = [] {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  };
  double cpu_start = cpu_now();
  auto start = std::chrono::steady_clock::now();
  DispatchResult result = object.run(kernel, kernarg, grid, block, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu_seconds = cpu_now() - cpu_start;
  if (!result.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", kernel.c_str(), result.message.c_str());
    std::exit(1);
  }
  return {kernel, threads, result.total_instructions, seconds, cpu_seconds};
}

}  // namespace

int main(int argc, char** argv) {
  bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  LoadedObject object(WAVEKIT_EMU_BENCH_OBJECT);
  const std::uint32_t items = 64 * 1024;  // 1,024 waves
  Buffer out(object.memory(), items * 4, "out"), in(object.memory(), items * 4, "in");
  for (std::uint32_t i = 0; i < items; ++i) in.as<std::uint32_t>()[i] = i * 2654435761u;
  // Kernarg: pointers first, then 32-bit scalars packed into the next 8-byte slots.
  std::uint64_t iterations = 200;
  std::uint64_t n_and_rounds = std::uint64_t(items) | (std::uint64_t(64) << 32);
  std::vector<Measurement> all;
  // Warm-up: the first dispatch decodes the code and faults in the host pages.
  measure(object, "valu_heavy", {out.address(), iterations}, items, 1);
  measure(object, "memory_heavy", {in.address(), out.address(), n_and_rounds}, items, 1);
  for (unsigned threads : {1u, 2u}) {
    all.push_back(measure(object, "valu_heavy", {out.address(), iterations}, items, threads));
    all.push_back(measure(object, "memory_heavy", {in.address(), out.address(), n_and_rounds},
                          items, threads));
  }
  if (json) {
    std::printf("{\"target\": \"gfx90a\", \"results\": [");
    for (std::size_t i = 0; i < all.size(); ++i)
      std::printf(
          "%s{\"kernel\": \"%s\", \"threads\": %u, \"wave_instructions\": %llu, "
          "\"seconds\": %.4f, \"cpu_seconds\": %.4f, \"per_thread_per_second\": %.0f}",
          i ? ", " : "", all[i].kernel.c_str(), all[i].threads,
          (unsigned long long)all[i].instructions, all[i].seconds, all[i].cpu_seconds,
          all[i].per_thread());
    std::printf("]}\n");
    return 0;
  }
  std::printf("%-14s %7s %14s %9s %9s %26s\n", "kernel", "threads", "wave-instrs", "wall s",
              "CPU s", "wave-instrs/CPU-s/thread");
  for (const auto& m : all)
    std::printf("%-14s %7u %14llu %9.3f %9.3f %26.0f\n", m.kernel.c_str(), m.threads,
                (unsigned long long)m.instructions, m.seconds, m.cpu_seconds, m.per_thread());
  for (const char* kernel : {"valu_heavy", "memory_heavy"}) {
    double one = 0, two = 0;
    for (const auto& m : all) {
      if (m.kernel != kernel) continue;
      (m.threads == 1 ? one : two) = m.instructions / m.seconds;
    }
    std::printf("%s: 1 -> 2 threads wall-clock throughput ratio %.2f\n", kernel, two / one);
  }
  return 0;
}
