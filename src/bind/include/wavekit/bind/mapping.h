// The mapping: given a node's TopologyView and the job's parameters, decide each task's CPUs,
// thread count and GPUs. `map` is a pure function of its arguments.
//
// Two modes. `compat` reproduces mpibind v0.23.1 (on hwloc 2.9) bit for bit, defects included.
// `fixed` (the default) applies the rules in `kRules` below; each is a named, tested
// difference from mpibind.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wavekit/bind/bitmap.h"
#include "wavekit/bind/topology.h"

namespace wavekit::bind {

enum class Mode { fixed, compat };

struct Params {
  int ntasks = 0;
  int nthreads = 0;  // 0: computed per task
  bool greedy = true;
  bool gpu_optim = true;
  int smt = 0;                         // 0: automatic, else 1..hw_smt PUs per core
  std::optional<Bitmap> restrict_set;  // a cpuset (cpu) or a NUMA os-index set (mem)
  RestrictType restrict_type = RestrictType::cpu;
  // The GPUs (SMI ids) the resource manager gave the job; others are not handed out (rule
  // rm-gpu-set; mpibind has no such input, so compat mode refuses it).
  std::optional<Bitmap> gpu_set;
  Mode mode = Mode::fixed;
};

enum class DeviceKind { gpu, nic };
enum class GpuVendor { amd, nvidia, intel, other };

struct Device {
  DeviceKind kind;
  std::string name;     // the hwloc OS device name, e.g. "rsmi4"
  std::string subtype;  // "RSMI", "NVML", "LevelZero", ...
  std::string pci_busid;
  unsigned vendor_id = 0;  // PCI vendor
  std::string uuid;
  std::string model;
  int smi = -1;  // all the digits of the name, as mpibind does ("rsmi12" -> 12)
  Bitmap ancestor_cpuset;
  Bitmap ancestor_nodeset;
  GpuVendor vendor() const;
};

struct TaskMapping {
  int nthreads = 0;
  Bitmap cpus;            // OS indexes of PUs
  std::vector<int> gpus;  // indexes into Mapping::devices (mpibind ids), ascending
  Bitmap memory_nodes;    // the NUMA nodes (os indexes) of the task's memory domain
};

struct Mapping {
  Mode mode = Mode::fixed;
  std::vector<Device> devices;  // discovery order; GPUs and NICs, as mpibind keeps them
  std::vector<TaskMapping> tasks;
  bool gpu_optim = false;          // whether the GPU-weighted distribution was used
  bool greedy = false;             // whether the greedy path was taken
  std::vector<std::string> notes;  // what a fixed-mode rule changed, for verbose output
  int num_gpus() const;
};

// The named rules of the fixed mode (name, one-line description); docs/bind.md lists them.
struct Rule {
  std::string_view name;
  std::string_view description;
};
extern const std::vector<Rule> kRules;

// Throws wavekit::Error for parameters mpibind would reject (ntasks <= 0, nthreads < 0, smt
// outside 0..hw_smt) and for inputs the chosen mode cannot map, naming the problem.
Mapping map(const TopologyView& view, const Params& params);

// The whole pipeline for callers holding an hwloc topology: applies the restriction the way
// the mode does (hwloc_topology_restrict in compat, a logical mask otherwise), builds the view
// and maps.
Mapping map_topology(const Topology& topology, const Params& params);

// distrib(w, d): w items into d contiguous buckets, the first w mod d get one more.
std::vector<int> distrib(int items, int buckets);

// mpibind's smi id: atoi of all the digits in the name ("mlx5_0" -> 50); -1 without digits.
int smi_from_name(std::string_view name);

}  // namespace wavekit::bind
