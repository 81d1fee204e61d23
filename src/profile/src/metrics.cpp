#include "wavekit/profile/metrics.h"

#include <algorithm>
#include <numeric>

namespace wavekit::profile {

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp8:
      return "fp8";
    case Precision::fp16:
      return "fp16";
    case Precision::tf32:
      return "tf32";
    case Precision::fp32:
      return "fp32";
    case Precision::fp64:
      return "fp64";
    case Precision::fp64_tensor:
      return "fp64_tensor";
    case Precision::int8:
      return "int8";
    case Precision::count:
      break;
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (std::size_t p = 0; p < kPrecisionCount; ++p)
    if (name == precision_name(static_cast<Precision>(p))) return static_cast<Precision>(p);
  if (name == "bf16") return Precision::fp16;  // same peak on every GPU in the tables
  if (name == "flops8") return Precision::fp8;
  if (name == "flops16") return Precision::fp16;
  if (name == "flops32") return Precision::fp32;
  if (name == "flops64") return Precision::fp64;
  return std::nullopt;
}

void Metrics::merge(const Metrics& other) {
  count += other.count;
  timed += other.timed;
  time_ns += other.time_ns;
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
  for (std::size_t p = 0; p < kPrecisionCount; ++p) flops[p] += other.flops[p];
  bytes += other.bytes;
  for (std::size_t b = 0; b < kHistogramBuckets; ++b) histogram[b] += other.histogram[b];
}

double Metrics::total_flops() const { return std::accumulate(flops.begin(), flops.end(), 0.0); }

void SelfMetrics::merge(const SelfMetrics& other) {
  records += other.records;
  unattributed += other.unattributed;
  dropped += other.dropped;
  late += other.late;
  table_full += other.table_full;
  filtered += other.filtered;
  graph_unknown += other.graph_unknown;
  max_lag_ns = std::max(max_lag_ns, other.max_lag_ns);
  rss_bytes = std::max(rss_bytes, other.rss_bytes);
}

}  // namespace wavekit::profile
