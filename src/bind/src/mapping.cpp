#include "wavekit/bind/mapping.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "wavekit/support/error.h"

namespace wavekit::bind {

const std::vector<Rule> kRules = {
    {"gpu-detection",
     "GPUs are RSMI/NVML/LevelZero devices (CUDA/OpenCL only as a fallback, one per PCI bus id); "
     "DRM card/renderD devices are ignored and a missing GPUVendor is harmless (mpibind crashes)"},
    {"memory-domains",
     "NUMA nodes sharing a parent or intersecting CPUs form one memory domain, so tasks on KNL, "
     "HBM or Grace-Hopper nodes never get identical CPU sets"},
    {"cpuless-memory-skipped",
     "memory domains without CPUs get no tasks, so no task gets an empty CPU set"},
    {"gpu-weights-match-assignment",
     "a domain's GPU weight counts the GPUs it can hand out (ancestor inside the domain), so "
     "tasks are not sent to a domain for GPUs it does not have"},
    {"zero-weight-guard",
     "when no domain has a local GPU the distribution falls back to PU weights instead of "
     "dividing by zero"},
    {"restrict-as-mask",
     "restriction is a logical mask on the view (no hwloc_topology_restrict, no renumbering); a "
     "restriction that leaves no CPUs is an error"},
    {"greedy-honours-smt",
     "a greedy task keeps only the first `smt` PUs of each core when smt is given"},
    {"visible-devices-per-vendor",
     "each vendor's GPUs go to its own variable (ROCR_ and HIP_VISIBLE_DEVICES for AMD, "
     "CUDA_VISIBLE_DEVICES for NVIDIA, ZE_AFFINITY_MASK for Intel), not the last GPU's vendor"},
    {"strict-options",
     "plugin option strings match keys exactly and reject unknown keys and values "
     "(mpibind reads gpu_optim:0 as gpu=1 and visible_devices as verbose)"},
    {"memory-binding", "--membind binds memory to the task's memory domain (mpibind never does)"},
    {"rm-gpu-set", "--gpus limits the GPUs handed out to those the resource manager gave the job"},
    {"cuda-uuids",
     "--cuda-uuids exports CUDA_VISIBLE_DEVICES as GPU UUIDs, stable under renumbering"},
};

GpuVendor Device::vendor() const {
  switch (vendor_id) {
    case 0x1002:
      return GpuVendor::amd;
    case 0x10de:
      return GpuVendor::nvidia;
    case 0x8086:
      return GpuVendor::intel;
    default:
      return GpuVendor::other;
  }
}

int Mapping::num_gpus() const {
  return static_cast<int>(std::count_if(devices.begin(), devices.end(),
                                        [](const Device& d) { return d.kind == DeviceKind::gpu; }));
}

std::vector<int> distrib(int items, int buckets) {
  std::vector<int> sizes(static_cast<std::size_t>(buckets), items / buckets);
  for (int i = 0; i < items % buckets; ++i) ++sizes[static_cast<std::size_t>(i)];
  return sizes;
}

int smi_from_name(std::string_view name) {
  std::string digits;
  for (char c : name)
    if (c >= '0' && c <= '9') digits += c;
  if (digits.empty()) return -1;
  return std::atoi(digits.c_str());
}

namespace {

constexpr int kMaxDevices = 128;  // mpibind's device array size

Device make_device(const ViewOsDevice& os, DeviceKind kind) {
  Device device;
  device.kind = kind;
  device.name = os.name;
  device.subtype = os.subtype;
  device.pci_busid = os.pci_busid;
  device.vendor_id = os.vendor_id;
  device.uuid = os.uuid;
  device.model = os.model;
  device.smi = smi_from_name(os.name);
  device.ancestor_cpuset = os.ancestor_cpuset;
  device.ancestor_nodeset = os.ancestor_nodeset;
  return device;
}

bool is_nic(const ViewOsDevice& os) {
  if (os.osdev_type == HWLOC_OBJ_OSDEV_OPENFABRICS) return true;
  return os.osdev_type == HWLOC_OBJ_OSDEV_NETWORK &&
         (os.subtype == "Slingshot" || os.subtype == "BXI");
}

// mpibind v0.23.1's device list: every OSDEV_GPU (DRM cards included), LevelZero co-processors,
// Slingshot/BXI networks and OpenFabrics NICs, in discovery order; CUDA/OpenCL are dropped.
std::vector<Device> compat_devices(const TopologyView& view) {
  std::vector<Device> devices;
  for (const auto& os : view.os_devices) {
    bool gpu = os.osdev_type == HWLOC_OBJ_OSDEV_GPU ||
               (os.osdev_type == HWLOC_OBJ_OSDEV_COPROC && os.subtype == "LevelZero");
    if (!gpu && !is_nic(os)) continue;
    if (!os.has_pci_parent) {
      std::fprintf(stderr, "wavekit bind: warning: device %s has no PCI parent; skipped\n",
                   os.name.c_str());
      continue;
    }
    if (gpu && !os.gpu_vendor)
      fail(view.origin, "GPU device '" + os.name +
                            "' has no GPUVendor info; mpibind v0.23.1 crashes on it (a NULL "
                            "passed to sscanf). The default mode handles it (rule gpu-detection)");
    if (static_cast<int>(devices.size()) >= kMaxDevices) break;
    devices.push_back(make_device(os, gpu ? DeviceKind::gpu : DeviceKind::nic));
  }
  return devices;
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Old XMLs (hwloc < 2.8) give RSMI/NVML osdevs no subtype; the name says what they are.
bool is_management_gpu(const ViewOsDevice& os) {
  if (os.osdev_type != HWLOC_OBJ_OSDEV_GPU) return false;
  return os.subtype == "RSMI" || os.subtype == "NVML" ||
         (os.subtype.empty() && (starts_with(os.name, "rsmi") || starts_with(os.name, "nvml")));
}

int compute_api_index(const std::string& name) {
  int platform = 0, device = 0;
  if (std::sscanf(name.c_str(), "opencl%dd%d", &platform, &device) == 2) return device;
  if (std::sscanf(name.c_str(), "cuda%d", &device) == 1) return device;
  return smi_from_name(name);
}

std::vector<Device> fixed_devices(const TopologyView& view) {
  std::vector<Device> devices;
  std::vector<std::string> management_busids;
  for (const auto& os : view.os_devices)
    if (is_management_gpu(os) && os.has_pci_parent) management_busids.push_back(os.pci_busid);
  std::vector<std::string> fallback_busids;
  for (const auto& os : view.os_devices) {
    if (!os.has_pci_parent) continue;
    DeviceKind kind;
    if (is_management_gpu(os) ||
        (os.osdev_type == HWLOC_OBJ_OSDEV_COPROC && os.subtype == "LevelZero")) {
      kind = DeviceKind::gpu;
    } else if (os.osdev_type == HWLOC_OBJ_OSDEV_COPROC &&
               (os.subtype == "CUDA" || os.subtype == "OpenCL")) {
      // A fallback GPU: only where no RSMI/NVML device describes that PCI function, and once.
      auto seen = [&](const std::vector<std::string>& ids) {
        return std::find(ids.begin(), ids.end(), os.pci_busid) != ids.end();
      };
      if (seen(management_busids) || seen(fallback_busids)) continue;
      fallback_busids.push_back(os.pci_busid);
      kind = DeviceKind::gpu;
    } else if (is_nic(os)) {
      kind = DeviceKind::nic;
    } else {
      continue;  // DRM cards, disks, plain Ethernet
    }
    if (static_cast<int>(devices.size()) >= kMaxDevices) break;
    Device device = make_device(os, kind);
    if (os.osdev_type == HWLOC_OBJ_OSDEV_COPROC && os.subtype != "LevelZero")
      device.smi = compute_api_index(os.name);
    devices.push_back(std::move(device));
  }
  return devices;
}

// One place tasks can be put: a NUMA node (compat) or a memory domain (fixed).
struct Domain {
  Bitmap cpuset;  // the CPUs under its parent(s): the root of cpu_match and gpu_match
  int root_depth = 0;
  Bitmap weight_nodes;  // NUMA os indexes whose GPU weight it counts (compat)
  Bitmap memory_nodes;  // where the task's memory belongs
  int pus = 0;
};

std::vector<Domain> numa_domains(const TopologyView& view) {
  std::vector<Domain> domains;
  for (const auto& numa : view.numas) {
    Domain domain;
    if (const ViewObject* parent = view.parent_of(numa)) domain.cpuset = parent->cpuset;
    domain.root_depth = numa.parent_depth;
    domain.weight_nodes.set(numa.os_index);
    domain.memory_nodes.set(numa.os_index);
    domain.pus = numa.cpuset.weight();
    domains.push_back(std::move(domain));
  }
  return domains;
}

// Rule memory-domains: NUMA nodes with the same parent, or with intersecting CPU sets, are one
// domain; its memory is its default (DRAM or untyped) nodes, or all of them if none is.
std::vector<Domain> memory_domains(const TopologyView& view, std::vector<std::string>& notes) {
  const auto& numas = view.numas;
  std::vector<int> group(numas.size());
  std::iota(group.begin(), group.end(), 0);
  auto find = [&](int i) {
    while (group[static_cast<std::size_t>(i)] != i) i = group[static_cast<std::size_t>(i)];
    return i;
  };
  for (std::size_t a = 0; a < numas.size(); ++a)
    for (std::size_t b = a + 1; b < numas.size(); ++b) {
      bool same_parent = numas[a].parent_depth == numas[b].parent_depth &&
                         numas[a].parent_index == numas[b].parent_index &&
                         numas[a].parent_index != static_cast<unsigned>(-1);
      if (same_parent || numas[a].cpuset.intersects(numas[b].cpuset)) {
        int ra = find(static_cast<int>(a)), rb = find(static_cast<int>(b));
        group[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
      }
    }
  std::vector<Domain> domains;
  std::vector<int> domain_of_root(numas.size(), -1);
  for (std::size_t i = 0; i < numas.size(); ++i) {
    const ViewObject* parent = view.parent_of(numas[i]);
    if (parent == nullptr || numas[i].cpuset.empty()) {
      notes.push_back("cpuless-memory-skipped: NUMA node " + std::to_string(numas[i].os_index) +
                      " has no CPUs");
      continue;
    }
    int root = find(static_cast<int>(i));
    int& index = domain_of_root[static_cast<std::size_t>(root)];
    if (index < 0) {
      index = static_cast<int>(domains.size());
      Domain domain;
      domain.root_depth = numas[i].parent_depth;
      domains.push_back(std::move(domain));
    } else {
      notes.push_back("memory-domains: NUMA node " + std::to_string(numas[i].os_index) +
                      " joins the domain of another node with the same CPUs");
    }
    Domain& domain = domains[static_cast<std::size_t>(index)];
    domain.cpuset |= parent->cpuset;
    domain.root_depth = std::min(domain.root_depth, numas[i].parent_depth);
    domain.weight_nodes.set(numas[i].os_index);
    const std::string& subtype = numas[i].subtype;
    if (subtype.empty() || subtype == "DRAM") domain.memory_nodes.set(numas[i].os_index);
  }
  for (std::size_t i = 0; i < numas.size(); ++i) {
    int index = domain_of_root[static_cast<std::size_t>(find(static_cast<int>(i)))];
    if (index < 0) continue;
    Domain& domain = domains[static_cast<std::size_t>(index)];
    if (domain.memory_nodes.empty()) domain.memory_nodes = domain.weight_nodes;
  }
  for (auto& domain : domains) domain.pus = domain.cpuset.weight();
  return domains;
}

// Which of `devices` (GPUs) lie in the subtree rooted at `root`, in mpibind-id order: hwloc's
// obj_is_in_subtree compares cpusets, so that is what is compared here.
std::vector<int> gpus_inside(const std::vector<Device>& devices, const Bitmap& root) {
  std::vector<int> result;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == DeviceKind::gpu && root.includes(devices[i].ancestor_cpuset))
      result.push_back(static_cast<int>(i));
  return result;
}

// fill_in_buckets: with at least as many elements as buckets, contiguous blocks; otherwise
// consecutive buckets share an element.
template <typename Element>
std::vector<std::vector<Element>> fill_buckets(const std::vector<Element>& elements, int buckets) {
  std::vector<std::vector<Element>> result(static_cast<std::size_t>(buckets));
  int count = static_cast<int>(elements.size());
  if (count == 0) return result;
  if (count >= buckets) {
    auto sizes = distrib(count, buckets);
    std::size_t next = 0;
    for (int b = 0; b < buckets; ++b)
      for (int k = 0; k < sizes[static_cast<std::size_t>(b)]; ++k)
        result[static_cast<std::size_t>(b)].push_back(elements[next++]);
  } else {
    auto sharers = distrib(buckets, count);
    std::size_t bucket = 0;
    for (int e = 0; e < count; ++e)
      for (int k = 0; k < sharers[static_cast<std::size_t>(e)]; ++k)
        result[bucket++].push_back(elements[static_cast<std::size_t>(e)]);
  }
  return result;
}

// mpibind's cpu_match over one domain; `nthreads` is computed (per domain) when <= 0.
std::vector<Bitmap> cpu_match(const TopologyView& view, const Domain& domain, int ntasks,
                              int& nthreads, int usr_smt, Mode mode) {
  int hw_smt = view.hw_smt();
  int it_smt = (usr_smt > 1 && usr_smt < hw_smt) ? usr_smt : 0;
  if (nthreads <= 0) {
    int depth = usr_smt < hw_smt ? view.core_depth : view.pu_depth;
    int nobjs = view.count_inside(domain.cpuset, depth);
    if (it_smt) nobjs *= it_smt;
    nthreads = nobjs >= ntasks ? nobjs / ntasks : 1;
  }
  int workers = nthreads * ntasks;
  std::vector<Bitmap> cpus(static_cast<std::size_t>(ntasks));
  for (int depth = domain.root_depth; depth <= view.core_depth; ++depth) {
    if (usr_smt && depth != view.core_depth) continue;
    auto objects = view.objects_inside(domain.cpuset, depth);
    int nobjs = static_cast<int>(objects.size());
    if (nobjs < workers && depth != view.core_depth) continue;
    if (nobjs == 0) {
      if (mode == Mode::compat)
        fail(view.origin,
             "a NUMA node's parent has no cores; mpibind v0.23.1 divides by zero here");
      fail(view.origin, "a memory domain has no cores to place tasks on");
    }
    int pus_per_object = 1;
    if (usr_smt) {
      pus_per_object = usr_smt;
    } else if (depth == view.core_depth) {
      for (int i = 1; i <= hw_smt; ++i)
        if (nobjs * i >= workers || i == hw_smt) {
          pus_per_object = i;
          break;
        }
    }
    // Each object contributes its first pus_per_object PUs (ascending OS index).
    std::vector<std::vector<unsigned>> kept(static_cast<std::size_t>(nobjs));
    for (int j = 0; j < nobjs; ++j) {
      const Bitmap& set = objects[static_cast<std::size_t>(j)]->cpuset;
      int pu = -1;
      for (int k = 0; k < pus_per_object && (pu = set.next(pu)) >= 0; ++k)
        kept[static_cast<std::size_t>(j)].push_back(static_cast<unsigned>(pu));
    }
    if (nobjs < ntasks) {
      // Tasks share objects: each object's kept PUs are split among its tasks.
      auto tasks_per_object = distrib(ntasks, nobjs);
      std::size_t task = 0;
      for (int j = 0; j < nobjs; ++j) {
        auto buckets = fill_buckets(kept[static_cast<std::size_t>(j)],
                                    tasks_per_object[static_cast<std::size_t>(j)]);
        for (auto& bucket : buckets) {
          for (unsigned pu : bucket) cpus[task].set(pu);
          ++task;
        }
      }
    } else {
      auto sizes = distrib(nobjs, ntasks);
      std::size_t object = 0;
      for (int t = 0; t < ntasks; ++t)
        for (int k = 0; k < sizes[static_cast<std::size_t>(t)]; ++k, ++object)
          for (unsigned pu : kept[object]) cpus[static_cast<std::size_t>(t)].set(pu);
    }
    break;
  }
  return cpus;
}

void check_params(const TopologyView& view, const Params& params) {
  if (params.ntasks <= 0)
    throw Error("the number of tasks must be positive (got " + std::to_string(params.ntasks) + ")");
  if (params.nthreads < 0)
    throw Error("the number of threads must be 0 (computed) or positive (got " +
                std::to_string(params.nthreads) + ")");
  int hw_smt = view.hw_smt();
  if (params.smt < 0 || params.smt > hw_smt)
    throw Error("smt must be between 0 (automatic) and the node's " + std::to_string(hw_smt) +
                " PUs per core (got " + std::to_string(params.smt) + ")");
}

// The greedy path: fewer tasks than domains, so each task takes whole consecutive domains.
void map_greedy(const TopologyView& view, const std::vector<Domain>& domains, const Params& params,
                Mapping& mapping) {
  auto domains_per_task = distrib(static_cast<int>(domains.size()), params.ntasks);
  std::size_t next = 0;
  for (int t = 0; t < params.ntasks; ++t) {
    TaskMapping& task = mapping.tasks[static_cast<std::size_t>(t)];
    Bitmap gpus;
    for (int k = 0; k < domains_per_task[static_cast<std::size_t>(t)]; ++k, ++next) {
      const Domain& domain = domains[next];
      task.cpus |= domain.cpuset;
      task.memory_nodes |= domain.memory_nodes;
      for (int gpu : gpus_inside(mapping.devices, domain.cpuset))
        gpus.set(static_cast<unsigned>(gpu));
    }
    if (params.mode == Mode::fixed && params.smt > 0) {
      // Rule greedy-honours-smt.
      Bitmap kept;
      for (const ViewObject* core : view.objects_inside(task.cpus, view.core_depth)) {
        int pu = -1;
        for (int k = 0; k < params.smt && (pu = core->cpuset.next(pu)) >= 0; ++k)
          kept.set(static_cast<unsigned>(pu));
      }
      task.cpus = kept;
    }
    for (unsigned gpu : gpus.indexes()) task.gpus.push_back(static_cast<int>(gpu));
    task.nthreads = params.nthreads > 0 ? params.nthreads : task.cpus.weight();
  }
}

// Tasks per domain, weighted by GPUs (gpu_optim) or PUs; the leftover tasks go to the largest
// remainders, ties to the lower index (mpibind relies on glibc's stable merge sort).
std::vector<int> weighted_tasks(const std::vector<long>& weights, int ntasks) {
  long total = std::accumulate(weights.begin(), weights.end(), 0L);
  std::vector<int> tasks(weights.size());
  std::vector<long> remainders(weights.size());
  int assigned = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    tasks[i] = static_cast<int>(ntasks * weights[i] / total);
    remainders[i] = ntasks * weights[i] % total;
    assigned += tasks[i];
  }
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  // A stable descending sort, spelled as an explicit tie-break on the index.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return remainders[a] != remainders[b] ? remainders[a] > remainders[b] : a < b;
  });
  for (int k = 0; k < ntasks - assigned; ++k) ++tasks[order[static_cast<std::size_t>(k)]];
  return tasks;
}

void map_hierarchy(const TopologyView& view, const std::vector<Domain>& domains,
                   const Params& params, Mapping& mapping) {
  std::vector<long> weights;
  for (const auto& domain : domains) {
    long weight = 0;
    if (mapping.gpu_optim) {
      for (const auto& device : mapping.devices) {
        if (device.kind != DeviceKind::gpu) continue;
        bool local = params.mode == Mode::compat
                         ? device.ancestor_nodeset.intersects(domain.weight_nodes)
                         : domain.cpuset.includes(device.ancestor_cpuset);
        if (local) ++weight;
      }
    } else {
      weight = domain.pus;
    }
    weights.push_back(weight);
  }
  if (std::accumulate(weights.begin(), weights.end(), 0L) == 0) {
    if (params.mode == Mode::compat)
      fail(view.origin, "no NUMA node has any weight; mpibind v0.23.1 divides by zero here");
    mapping.notes.push_back("zero-weight-guard: no domain has a local GPU; weighting by PUs");
    mapping.gpu_optim = false;
    weights.clear();
    for (const auto& domain : domains) weights.push_back(domain.pus);
  }
  auto tasks_per_domain = weighted_tasks(weights, params.ntasks);
  std::size_t offset = 0;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    int ntasks = tasks_per_domain[d];
    if (ntasks == 0) continue;
    int nthreads = params.nthreads;
    auto cpus = cpu_match(view, domains[d], ntasks, nthreads, params.smt, params.mode);
    auto gpus = fill_buckets(gpus_inside(mapping.devices, domains[d].cpuset), ntasks);
    for (int t = 0; t < ntasks; ++t) {
      TaskMapping& task = mapping.tasks[offset + static_cast<std::size_t>(t)];
      task.nthreads = nthreads;
      task.cpus = std::move(cpus[static_cast<std::size_t>(t)]);
      task.gpus = std::move(gpus[static_cast<std::size_t>(t)]);
      task.memory_nodes = domains[d].memory_nodes;
    }
    offset += static_cast<std::size_t>(ntasks);
  }
}

}  // namespace

Mapping map(const TopologyView& input, const Params& params) {
  const TopologyView* view = &input;
  TopologyView masked;
  if (params.restrict_set) {
    if (params.mode == Mode::compat)
      throw Error("compat mode restricts the hwloc topology itself: use map_topology");
    masked = input.masked(*params.restrict_set, params.restrict_type);
    if (masked.levels.front().empty() || masked.numas.empty())
      throw Error(std::string("the restriction to ") +
                  (params.restrict_type == RestrictType::cpu ? "CPUs " : "NUMA nodes ") +
                  params.restrict_set->list() + " leaves no CPUs on " + input.origin);
    view = &masked;
  }
  check_params(*view, params);

  Mapping mapping;
  mapping.mode = params.mode;
  mapping.devices = params.mode == Mode::compat ? compat_devices(*view) : fixed_devices(*view);
  if (params.gpu_set) {
    if (params.mode == Mode::compat)
      throw Error("mpibind v0.23.1 takes no GPU set from the resource manager (rule rm-gpu-set)");
    std::erase_if(mapping.devices, [&](const Device& device) {
      return device.kind == DeviceKind::gpu &&
             (device.smi < 0 || !params.gpu_set->contains(static_cast<unsigned>(device.smi)));
    });
  }
  mapping.gpu_optim = params.gpu_optim && mapping.num_gpus() > 0;
  mapping.tasks.resize(static_cast<std::size_t>(params.ntasks));
  auto domains =
      params.mode == Mode::compat ? numa_domains(*view) : memory_domains(*view, mapping.notes);
  if (domains.empty()) fail(view->origin, "no NUMA node with CPUs to place tasks on");

  mapping.greedy = params.greedy && params.ntasks < static_cast<int>(domains.size());
  if (mapping.greedy)
    map_greedy(*view, domains, params, mapping);
  else
    map_hierarchy(*view, domains, params, mapping);

  if (params.mode == Mode::fixed)
    for (std::size_t t = 0; t < mapping.tasks.size(); ++t)
      if (mapping.tasks[t].cpus.empty())
        fail(view->origin, "task " + std::to_string(t) + " would get no CPUs");
  return mapping;
}

Mapping map_topology(const Topology& topology, const Params& params) {
  if (params.restrict_set && params.mode == Mode::compat) {
    Topology restricted = topology.restricted(*params.restrict_set, params.restrict_type);
    Params rest = params;
    rest.restrict_set.reset();
    return map(TopologyView::build(restricted), rest);
  }
  return map(TopologyView::build(topology), params);
}

}  // namespace wavekit::bind
