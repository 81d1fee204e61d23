// Predictions against measurements: Nsight Compute CSVs (`ncu --csv --page raw` with the
// metrics bench/model/run_h200.sh asks for), gpuFLOPBench's profiling-data.csv, a plain CSV of
// ours (kernel, program, seconds, fp32_flops, fp64_flops, dram_bytes), and a `wavekit profile`
// output (its directory or profile.hatchet; Proton's .hatchet too): per kernel leaf, time,
// flops32, flops64 and bytes divided by the launch count.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace wavekit::model {

struct Measurement {
  std::string program;  // "" when the file does not say
  std::string kernel;   // as the profiler names it (may carry a signature)
  std::string arguments;
  double seconds = 0;
  std::optional<double> fp32_flops, fp64_flops, dram_bytes;
};

// A CSV file as rows of fields (RFC 4180 quoting); throws wavekit::Error when unreadable.
std::vector<std::vector<std::string>> read_csv(const std::string& path);

// Detects the format (a hatchet profile by its JSON, a CSV by its header); throws
// wavekit::Error naming the file and the missing columns when it is none of them.
std::vector<Measurement> read_measurements(const std::string& path);

// "ns::kern<float>(float*, int)" -> "kern": what predictions and measurements are matched on.
std::string kernel_base_name(const std::string& name);

struct ComparisonRow {
  std::string program, kernel, machine;
  double measured_seconds = 0, predicted_seconds = 0;
  std::optional<double> measured_flops, predicted_flops;  // SP + DP
  std::optional<double> measured_bytes, predicted_bytes;
  std::string bound;
};

struct ComparisonSummary {
  std::size_t kernels = 0;
  std::size_t flop_kernels = 0, flops_within_5 = 0;
  std::size_t byte_kernels = 0, bytes_within_30 = 0;
  double time_median_abs_error = 0;  // |pred/meas - 1|, median
  std::size_t time_within_2x = 0;
};

// Matches each prediction ({"program"?, "kernel", "seconds", "fp32_flops", "fp64_flops",
// "dram_bytes", "bound"}) with the measurements of the same kernel (and program, when both
// name one): the measured launch of the prediction's "launch" (0-based, a whole program's
// prediction), else the first measured launch of the kernel (later launches may run other
// sizes, as gpuFLOPBench's lebesgue rows do). A launch that was not measured meets nothing.
std::vector<ComparisonRow> compare(const std::vector<nlohmann::json>& predictions,
                                   const std::vector<Measurement>& measurements);
ComparisonSummary summarise(const std::vector<ComparisonRow>& rows);
std::string comparison_table(const std::vector<ComparisonRow>& rows,
                             const ComparisonSummary& summary);
nlohmann::json to_json(const std::vector<ComparisonRow>& rows, const ComparisonSummary& summary);

}  // namespace wavekit::model
