// Peak rates per precision for the GPUs we know, from the vendors' datasheets (dense, no
// sparsity), and the utilisation that follows from them. Peaks are quoted at the boost clock;
// when the clock the kernels ran at is known, the peak is scaled to it, which separates
// throttling from inefficiency.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/profile/metrics.h"

namespace wavekit::profile {

struct DevicePeaks {
  std::string_view name;                              // "H200", "MI300X"
  std::string_view arch;                              // "sm_90", "gfx942"
  std::array<double, kPrecisionCount> flops_per_s{};  // 0: no such unit
  double bytes_per_s = 0;
  double boost_clock_mhz = 0;
  unsigned compute_units = 0;
};

const std::vector<DevicePeaks>& known_devices();
// Matches a device model string ("NVIDIA H200", "AMD Instinct MI300X", "H100 SXM") or a short
// name; nullopt if unknown.
std::optional<DevicePeaks> find_device(std::string_view model);

// Peak of one precision at `clock_mhz` (the boost clock when 0).
double peak_flops(const DevicePeaks& device, Precision precision, double clock_mhz = 0);

// Proton's definition, with correct peaks: the larger of compute time at peak (summed over
// precisions) and memory time at peak bandwidth, over the measured time. In [0, 1] for
// kernels that do what they declare; >1 means the declared work is wrong.
double utilisation(const Metrics& metrics, const DevicePeaks& device, double clock_mhz = 0);

}  // namespace wavekit::profile
