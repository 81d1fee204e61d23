#include "wavekit/bind/apply.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "wavekit/support/error.h"

namespace wavekit::bind {

void apply_task(const Mapping& mapping, int task, const ApplyOptions& options) {
  if (task < 0 || task >= static_cast<int>(mapping.tasks.size()))
    throw Error("task " + std::to_string(task) + " is not in the mapping (0.." +
                std::to_string(mapping.tasks.size() - 1) + ")");
  const TaskMapping& mapped = mapping.tasks[static_cast<std::size_t>(task)];
  // Binding is done against this machine whatever topology the mapping came from: the sets
  // are OS indexes, which is what the kernel takes.
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) < 0 || hwloc_topology_load(topology) < 0)
    throw Error("hwloc could not load this machine's topology to bind");
  int cpu_result = hwloc_set_cpubind(topology, mapped.cpus.get(), 0);
  int cpu_errno = errno;
  int mem_result = 0, mem_errno = 0;
  if (cpu_result == 0 && options.membind && !mapped.memory_nodes.empty()) {
    mem_result = hwloc_set_membind(topology, mapped.memory_nodes.get(), HWLOC_MEMBIND_BIND,
                                   HWLOC_MEMBIND_BYNODESET);
    mem_errno = errno;
  }
  hwloc_topology_destroy(topology);
  if (cpu_result < 0)
    throw Error("cannot bind task " + std::to_string(task) + " to CPUs " + mapped.cpus.list() +
                ": " + std::strerror(cpu_errno));
  if (mem_result < 0)
    throw Error("cannot bind task " + std::to_string(task) + "'s memory to NUMA nodes " +
                mapped.memory_nodes.list() + ": " + std::strerror(mem_errno));
  if (!options.set_environment) return;
  for (const auto& [name, value] : task_environment(mapping, task, options.env)) {
    bool gpu_variable = name.rfind("OMP_", 0) != 0;
    if (gpu_variable && !options.visible_devices) continue;
    setenv(name.c_str(), value.c_str(), 1);
  }
}

}  // namespace wavekit::bind
