// What a mapping looks like to its consumers: mpibind's lines, each task's environment, JSON
// for programs and a picture of the node for people.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "wavekit/bind/mapping.h"

namespace wavekit::bind {

// SMI ids of a task's GPUs in mapping (mpibind id) order, comma-joined: "4,5,2,3".
std::string gpu_smi_list(const Mapping& mapping, int task);

// mpibind_mapping_print with SMI ids:
// "mpibind: task %3d nths %2d gpus <ids> cpus <hwloc list>" per task, each ending in '\n'.
std::string format_mpibind(const Mapping& mapping);

struct EnvOptions {
  bool hip_visible_devices = false;  // also HIP_VISIBLE_DEVICES for AMD GPUs (fixed mode)
  bool cuda_uuids = false;  // CUDA_VISIBLE_DEVICES as UUIDs rather than SMI ids (fixed mode)
};

// A task's environment, in mpibind's order: OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND, then
// the visible-devices variable(s). Compat: one variable named after the last GPU's PCI vendor
// (ROCR_, CUDA_ or bare VISIBLE_DEVICES). Fixed: one per vendor present (rule
// visible-devices-per-vendor). No GPU variable when the node has no GPUs.
std::vector<std::pair<std::string, std::string>> task_environment(const Mapping& mapping, int task,
                                                                  const EnvOptions& options = {});

// "# task N" then NAME=VALUE lines, per task.
std::string format_env(const Mapping& mapping, const EnvOptions& options = {});
std::string format_json(const Mapping& mapping, const TopologyView& view,
                        const EnvOptions& options = {});
// A readable report: the node's tree (packages, NUMA domains, caches, cores) with the tasks
// placed on it, then one line per task.
std::string format_text(const Mapping& mapping, const TopologyView& view);

}  // namespace wavekit::bind
