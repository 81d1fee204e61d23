// The emulated KFD's topology: the files the kernel driver publishes under
// /sys/devices/virtual/kfd/kfd/topology, for a CPU node 0 and one emulated GPU node 1.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace wavekit::kfd {

// The emulated GPU as the driver describes it. The device ID selects libhsakmt's entry in its
// own table (ISA name, ASIC family); gfx_target_version is what newer thunks read instead.
struct Target {
  std::string gfx;   // "gfx90a"
  std::string name;  // the sysfs node name, the driver's ASIC name ("aldebaran")
  std::string marketing_name;
  uint32_t device_id = 0;
  uint32_t gfx_target_version = 0;  // major*10000 + minor*100 + stepping
  uint32_t compute_units = 0;
  uint32_t engine_clock_mhz = 0;
  uint64_t vram_bytes = 0;
};

// gfx908, gfx90a (the default) or gfx942; throws std::invalid_argument naming the choices.
Target target_named(const std::string& gfx);

// The GPU node's gpu_id (the driver's hash of the PCI location; any nonzero value will do).
inline constexpr uint32_t kGpuId = 0xa5e1;
// The render node the GPU node names: /dev/dri/renderD128.
inline constexpr uint32_t kDrmRenderMinor = 128;

// Relative path (under the topology directory) -> contents, for every file the driver publishes
// that libhsakmt 5.2 reads. cpu_count and system_memory describe the host (node 0).
std::map<std::string, std::string> topology_files(const Target& target, uint32_t cpu_count,
                                                  uint64_t system_memory);

}  // namespace wavekit::kfd
