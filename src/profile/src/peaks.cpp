#include "peaks.h"

#include <algorithm>
#include <cctype>

namespace wavekit::profile {

namespace {
constexpr double T = 1e12;
// Order: fp8, fp16/bf16, tf32, fp32, fp64, fp64_tensor, int8.
// NVIDIA H100/H200 SXM datasheet (dense): FP8 1979, BF16 989, TF32 495, FP32 67, FP64 34,
// FP64 tensor 67, INT8 1979; H100 3.35 TB/s, H200 4.8 TB/s; 1980 MHz boost, 132 SMs.
// A100 SXM 80 GB: BF16 312, TF32 156, FP32 19.5, FP64 9.7, FP64 tensor 19.5, INT8 624,
// 2.039 TB/s, 1410 MHz, 108 SMs; no FP8 units.
// MI250X: FP16/BF16 383, FP32 vector 47.9, FP64 vector 47.9, FP64 matrix 95.7, INT8 383,
// 3.2768 TB/s, 1700 MHz, 220 CUs; no FP8 and no TF32.
// MI300X: FP8 2614.9, FP16/BF16 1307.4, TF32 653.7, FP32 vector 163.4, FP64 vector 81.7,
// FP64 matrix 163.4, INT8 2614.9, 5.3 TB/s, 2100 MHz, 304 CUs.
const std::vector<DevicePeaks> kDevices = {
    {"H100",
     "sm_90",
     {1979 * T, 989.4 * T, 494.7 * T, 66.9 * T, 33.5 * T, 66.9 * T, 1979 * T},
     3.35e12,
     1980,
     132},
    {"H200",
     "sm_90",
     {1979 * T, 989.4 * T, 494.7 * T, 66.9 * T, 33.5 * T, 66.9 * T, 1979 * T},
     4.8e12,
     1980,
     132},
    {"A100",
     "sm_80",
     {0, 312 * T, 156 * T, 19.5 * T, 9.7 * T, 19.5 * T, 624 * T},
     2.039e12,
     1410,
     108},
    {"MI250X",
     "gfx90a",
     {0, 383 * T, 0, 47.9 * T, 47.9 * T, 95.7 * T, 383 * T},
     3.2768e12,
     1700,
     220},
    {"MI300X",
     "gfx942",
     {2614.9 * T, 1307.4 * T, 653.7 * T, 163.4 * T, 81.7 * T, 163.4 * T, 2614.9 * T},
     5.3e12,
     2100,
     304},
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

const std::vector<DevicePeaks>& known_devices() { return kDevices; }

std::optional<DevicePeaks> find_device(std::string_view model) {
  std::string text = upper(model);
  // Longest name first, so "MI250X" is not taken for a shorter match.
  const DevicePeaks* best = nullptr;
  for (const auto& d : kDevices)
    if (text.find(d.name) != std::string::npos && (!best || d.name.size() > best->name.size()))
      best = &d;
  if (best) return *best;
  return std::nullopt;
}

double peak_flops(const DevicePeaks& device, Precision precision, double clock_mhz) {
  double peak = device.flops_per_s[static_cast<std::size_t>(precision)];
  if (clock_mhz > 0 && device.boost_clock_mhz > 0) peak *= clock_mhz / device.boost_clock_mhz;
  return peak;
}

double utilisation(const Metrics& metrics, const DevicePeaks& device, double clock_mhz) {
  if (metrics.time_ns == 0) return 0;
  double compute_s = 0;
  for (std::size_t p = 0; p < kPrecisionCount; ++p) {
    if (metrics.flops[p] == 0) continue;
    double peak = peak_flops(device, static_cast<Precision>(p), clock_mhz);
    // Work in a precision the device has no unit for runs on the next wider one; fp32 is the
    // widest common fallback and is always present.
    if (peak == 0) peak = peak_flops(device, Precision::fp32, clock_mhz);
    compute_s += metrics.flops[p] / peak;
  }
  double memory_s = device.bytes_per_s > 0 ? metrics.bytes / device.bytes_per_s : 0;
  return std::max(compute_s, memory_s) / (static_cast<double>(metrics.time_ns) * 1e-9);
}

}  // namespace wavekit::profile
