// Writes hwloc XML for a node described compactly, so people can explore mappings for nodes
// they do not have and tests can build the topologies (and mpibind's quirk cases) they need.
//
// The node: `packages` packages, each split into `numa_per_package` NUMA domains (a Group per
// domain when there are several), each with `l3_per_numa` L3 caches of `cores_per_l3` cores of
// `smt` PUs. GPUs hang off each domain's parent through a PCI bridge.
#pragma once

#include <string>
#include <string_view>

namespace wavekit::bind {

struct MachineDescription {
  int packages = 1;
  int numa_per_package = 1;
  int l3_per_numa = 1;
  int cores_per_l3 = 4;
  int smt = 1;
  // Linux numbers SMT siblings last (core c has PUs c, c+ncores, ...); false numbers each
  // core's PUs consecutively.
  bool siblings_last = true;
  int gpus_per_numa = 0;
  bool gpus_on_l3 = false;     // the GPUs hang from each L3 (as on MI250X nodes) instead
  int partitions_per_gpu = 1;  // OS devices sharing one PCI function (MI300A CPX, MI250X GCDs)
  // "rsmi" (AMD), "nvml" (NVIDIA), "levelzero" (Intel), "cuda" / "opencl" (CUDA/OpenCL only),
  // or "drm" (a bare DRM card: mpibind v0.23.1 crashes on it).
  std::string gpu_kind = "rsmi";
  // Extra NUMA nodes (subtype HBM) under each domain's parent, sharing its CPUs (KNL, GH200).
  int hbm_per_numa = 0;
  // NUMA nodes without CPUs hanging from the machine (CXL or GPU memory).
  int cpuless_numa = 0;
  int nics_per_package = 0;  // Slingshot NICs under each package
};

// Parses
// "packages=2,numa=2,l3=2,cores=8,smt=2,gpus=1,gpus-on=numa|l3,gpu-kind=rsmi,partitions=1,hbm=0,
// cpuless=0,nics=0,numbering=siblings-last|consecutive"; keys may be in any order, each at most
// once. Errors name the bad key or value.
MachineDescription parse_machine_description(std::string_view text);

// hwloc 2 XML for the node; throws wavekit::Error for impossible descriptions.
std::string machine_xml(const MachineDescription& description);

}  // namespace wavekit::bind
