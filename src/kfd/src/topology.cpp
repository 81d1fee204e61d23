#include "wavekit/kfd/topology.h"

#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace wavekit::kfd {

Target target_named(const std::string& gfx) {
  // Device IDs of a real part of each ISA, so that libhsakmt 5.2's table (device ID -> ISA,
  // ASIC name) has an entry for it: MI100, MI210, MI300X. 5.2 predates gfx942, whose ID is in
  // no table of it: the node is still listed, with gfx_target_version, and ROCr 5.2 refuses it.
  constexpr uint64_t kGiB = uint64_t(1) << 30;
  if (gfx == "gfx908")
    return {"gfx908", "arcturus", "AMD Instinct MI100 (wavekit emulated)", 0x738c, 90008, 120,
            1502,     32 * kGiB};
  if (gfx == "gfx90a" || gfx.empty())
    return {"gfx90a", "aldebaran", "AMD Instinct MI210 (wavekit emulated)", 0x740f, 90010, 104,
            1700,     64 * kGiB};
  if (gfx == "gfx942")
    return {"gfx942", "gfx942",  "AMD Instinct MI300X (wavekit emulated)", 0x74a1, 90402, 304,
            2100,     192 * kGiB};
  throw std::invalid_argument("wavekit: kfd: unknown target '" + gfx +
                              "' (gfx908, gfx90a or gfx942)");
}

namespace {

using Properties = std::vector<std::pair<const char*, uint64_t>>;

std::string render(const Properties& properties) {
  std::ostringstream out;
  for (const auto& [key, value] : properties) out << key << ' ' << value << '\n';
  return out.str();
}

std::string io_link(uint32_t from, uint32_t to) {
  // HSA_IOLINKTYPE_PCIEXPRESS, the weight the driver gives a PCIe link.
  return render({{"type", 2},
                 {"version_major", 0},
                 {"version_minor", 0},
                 {"node_from", from},
                 {"node_to", to},
                 {"weight", 20},
                 {"min_latency", 0},
                 {"max_latency", 0},
                 {"min_bandwidth", 312},
                 {"max_bandwidth", 64000},
                 {"recommended_transfer_size", 0},
                 {"flags", 1}});
}

}  // namespace

std::map<std::string, std::string> topology_files(const Target& target, uint32_t cpu_count,
                                                  uint64_t system_memory) {
  std::map<std::string, std::string> files;
  files["generation_id"] = "1\n";
  files["system_properties"] =
      render({{"platform_oem", 0}, {"platform_id", 0}, {"platform_rev", 0}});

  // Node 0, the CPU: its caches come from /sys/devices/system/node (libhsakmt reads them there).
  files["nodes/0/gpu_id"] = "0\n";
  files["nodes/0/name"] = "\n";
  files["nodes/0/properties"] = render({{"cpu_cores_count", cpu_count},
                                        {"simd_count", 0},
                                        {"mem_banks_count", 1},
                                        {"caches_count", 0},
                                        {"io_links_count", 1},
                                        {"p2p_links_count", 0},
                                        {"cpu_core_id_base", 0},
                                        {"simd_id_base", 0},
                                        {"max_waves_per_simd", 0},
                                        {"lds_size_in_kb", 0},
                                        {"gds_size_in_kb", 0},
                                        {"num_gws", 0},
                                        {"wave_front_size", 0},
                                        {"array_count", 0},
                                        {"simd_arrays_per_engine", 0},
                                        {"cu_per_simd_array", 0},
                                        {"simd_per_cu", 0},
                                        {"max_slots_scratch_cu", 0},
                                        {"gfx_target_version", 0},
                                        {"vendor_id", 0},
                                        {"device_id", 0},
                                        {"location_id", 0},
                                        {"domain", 0},
                                        {"drm_render_minor", 0},
                                        {"hive_id", 0},
                                        {"num_sdma_engines", 0},
                                        {"num_sdma_xgmi_engines", 0},
                                        {"num_sdma_queues_per_engine", 0},
                                        {"num_cp_queues", 0},
                                        {"max_engine_clk_ccompute", 2000}});
  // HSA_HEAPTYPE_SYSTEM
  files["nodes/0/mem_banks/0/properties"] = render({{"heap_type", 0},
                                                    {"size_in_bytes", system_memory},
                                                    {"flags", 0},
                                                    {"width", 64},
                                                    {"mem_clk_max", 0}});
  files["nodes/0/io_links/0/properties"] = io_link(0, 1);

  // Node 1, the emulated GPU. 8 shader arrays; capability: doorbell type 2 (gfx9's 64-bit
  // doorbells, which ROCr requires), nothing else claimed (no SVM API, no debugger).
  constexpr uint32_t kArrays = 8;
  constexpr uint64_t kSimdIdBase = 0x80001000;
  files["nodes/1/gpu_id"] = std::to_string(kGpuId) + "\n";
  files["nodes/1/name"] = target.name + "\n";
  files["nodes/1/properties"] = render({{"cpu_cores_count", 0},
                                        {"simd_count", uint64_t(target.compute_units) * 4},
                                        {"mem_banks_count", 1},
                                        {"caches_count", 2},
                                        {"io_links_count", 1},
                                        {"p2p_links_count", 0},
                                        {"cpu_core_id_base", 0},
                                        {"simd_id_base", kSimdIdBase},
                                        {"max_waves_per_simd", 8},
                                        {"lds_size_in_kb", 64},
                                        {"gds_size_in_kb", 0},
                                        {"num_gws", 0},
                                        {"wave_front_size", 64},
                                        {"array_count", kArrays},
                                        {"simd_arrays_per_engine", 1},
                                        {"cu_per_simd_array", target.compute_units / kArrays},
                                        {"simd_per_cu", 4},
                                        {"max_slots_scratch_cu", 32},
                                        {"gfx_target_version", target.gfx_target_version},
                                        {"vendor_id", 0x1002},
                                        {"device_id", target.device_id},
                                        {"location_id", 0x100},
                                        {"domain", 0},
                                        {"drm_render_minor", kDrmRenderMinor},
                                        {"hive_id", 0},
                                        {"num_sdma_engines", 2},
                                        {"num_sdma_xgmi_engines", 0},
                                        {"num_sdma_queues_per_engine", 8},
                                        {"num_cp_queues", 24},
                                        {"max_engine_clk_fcompute", target.engine_clock_mhz},
                                        {"local_mem_size", target.vram_bytes},
                                        {"fw_version", 60},
                                        {"capability", 0x2000},
                                        {"debug_prop", 0},
                                        {"sdma_fw_version", 20},
                                        {"unique_id", 0x5741564b4954},  // "WAVKIT"
                                        {"max_engine_clk_ccompute", 2000}});
  // HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE: all of it; the pages exist only once allocated.
  files["nodes/1/mem_banks/0/properties"] = render({{"heap_type", 1},
                                                    {"size_in_bytes", target.vram_bytes},
                                                    {"flags", 0},
                                                    {"width", 4096},
                                                    {"mem_clk_max", 1600}});
  // L1 (per CU) and L2; type = data | HSA compute unit.
  files["nodes/1/caches/0/properties"] = render({{"processor_id_low", kSimdIdBase},
                                                 {"level", 1},
                                                 {"size", 16},
                                                 {"cache_line_size", 64},
                                                 {"cache_lines_per_tag", 1},
                                                 {"association", 4},
                                                 {"latency", 1},
                                                 {"type", 9}});
  files["nodes/1/caches/1/properties"] = render({{"processor_id_low", kSimdIdBase},
                                                 {"level", 2},
                                                 {"size", 8192},
                                                 {"cache_line_size", 128},
                                                 {"cache_lines_per_tag", 1},
                                                 {"association", 16},
                                                 {"latency", 1},
                                                 {"type", 9}});
  files["nodes/1/io_links/0/properties"] = io_link(1, 0);
  return files;
}

}  // namespace wavekit::kfd
