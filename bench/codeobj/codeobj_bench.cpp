// Throughput of parse, parse + describe_json, and parse + write over every corpus object, in
// MB/s and as ratios to copying the same bytes (measured in the same run, so that the ratios
// do not depend on the machine's speed or load as much as the absolute numbers do).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/file.h"

namespace {

using Clock = std::chrono::steady_clock;

// Runs `work` over all objects `repetitions` times; returns seconds.
template <typename Work>
double time_over(const std::vector<std::vector<std::uint8_t>>& objects, int repetitions,
                 Work work) {
  auto start = Clock::now();
  for (int r = 0; r < repetitions; ++r) {
    for (const auto& bytes : objects) work(bytes);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main() {
  std::vector<std::vector<std::uint8_t>> objects;
  std::size_t total_bytes = 0;
  std::stringstream list(WAVEKIT_CORPUS_OBJECT_LIST);
  for (std::string path; std::getline(list, path, '|');) {
    for (auto& entry : wavekit::codeobj::find_code_objects(wavekit::read_file(path), path)) {
      total_bytes += entry.bytes.size();
      objects.push_back(std::move(entry.bytes));
    }
  }
  constexpr int kRepetitions = 20;
  volatile std::size_t sink = 0;
  double copy = time_over(objects, kRepetitions, [&](const auto& bytes) {
    std::vector<std::uint8_t> copied(bytes);
    sink = sink + copied.back();
  });
  double parse = time_over(objects, kRepetitions, [&](const auto& bytes) {
    sink = sink + wavekit::codeobj::CodeObject::parse(bytes, "bench").kernels().size();
  });
  double describe = time_over(objects, kRepetitions, [&](const auto& bytes) {
    auto object = wavekit::codeobj::CodeObject::parse(bytes, "bench");
    sink = sink + wavekit::codeobj::describe_json(object).dump().size();
  });
  double write = time_over(objects, kRepetitions, [&](const auto& bytes) {
    sink = sink + wavekit::codeobj::CodeObject::parse(bytes, "bench").write().size();
  });
  const double megabytes = static_cast<double>(total_bytes) * kRepetitions / 1e6;
  std::printf("%zu code objects, %.1f KB in all, %d repetitions\n", objects.size(),
              static_cast<double>(total_bytes) / 1e3, kRepetitions);
  std::printf("%-22s %10s %14s %16s\n", "step", "MB/s", "objects/s", "time / copy");
  auto row = [&](const char* name, double seconds) {
    std::printf("%-22s %10.1f %14.0f %16.1f\n", name, megabytes / seconds,
                static_cast<double>(objects.size()) * kRepetitions / seconds, seconds / copy);
  };
  row("copy (baseline)", copy);
  row("parse", parse);
  row("parse + describe_json", describe);
  row("parse + write", write);
  return 0;
}
