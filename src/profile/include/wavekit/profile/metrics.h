// Per-kernel metrics: time statistics and the work (FLOPs by precision, bytes) that the
// application declared for its launches.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace wavekit::profile {

// Precisions with distinct peaks. fp32 is CUDA-core / vector math and tf32 the tensor-core
// mode: Proton folds both into "flops32" and so reports a tensor-core peak for plain fp32.
enum class Precision : std::uint8_t { fp8, fp16, tf32, fp32, fp64, fp64_tensor, int8, count };
inline constexpr std::size_t kPrecisionCount = static_cast<std::size_t>(Precision::count);

std::string_view precision_name(Precision precision);
// Accepts our names and Proton's ("flops8", "flops16", "flops32", "flops64").
std::optional<Precision> parse_precision(std::string_view name);

inline constexpr std::size_t kHistogramBuckets = 32;  // log2(ns) buckets: 1 ns .. ~4 s

// `count` launches ran; `timed` of them were timed. Every backend times every launch
// (timed == count) except the events backend with --time-every N, which counts every launch and
// times about one in N: there `time_ns` is an estimate (the timed launches' total scaled by
// count / timed, made per kernel and phase when the phase is exported; Aggregator), and min,
// max and the histogram describe the timed launches only.
struct Metrics {
  std::uint64_t count = 0;
  std::uint64_t timed = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t min_ns = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ns = 0;
  std::array<double, kPrecisionCount> flops{};
  double bytes = 0;
  // Durations by power of two: bucket b counts kernels with bit_width(ns) == b, so the
  // distribution (p50, p99 to a factor of two) survives aggregation.
  std::array<std::uint64_t, kHistogramBuckets> histogram{};

  void add_duration(std::uint64_t ns) {
    ++count;
    ++timed;
    time_ns += ns;
    if (ns < min_ns) min_ns = ns;
    if (ns > max_ns) max_ns = ns;
    ++histogram[std::min<std::size_t>(std::bit_width(ns), kHistogramBuckets - 1)];
  }
  // A launch that ran untimed (counted, its work added by the caller).
  void add_untimed() { ++count; }
  bool estimated() const { return timed < count; }
  void merge(const Metrics& other);
  double total_flops() const;
};

// What the profiler knows about its own health; exported with every phase.
struct SelfMetrics {
  std::uint64_t records = 0;        // kernel records aggregated
  std::uint64_t unattributed = 0;   // launch slot overwritten before the record arrived
  std::uint64_t dropped = 0;        // records the backend lost (CUPTI's dropped count)
  std::uint64_t late = 0;           // records of a phase already exported
  std::uint64_t table_full = 0;     // records with a new key after the table filled
  std::uint64_t filtered = 0;       // records excluded by kernel-name filters
  std::uint64_t graph_unknown = 0;  // graph nodes without capture info (graph predates attach)
  std::uint64_t max_lag_ns = 0;     // largest (consumer time - kernel end) seen
  std::uint64_t rss_bytes = 0;      // resident set size when the phase was exported
  void merge(const SelfMetrics& other);
};

}  // namespace wavekit::profile
