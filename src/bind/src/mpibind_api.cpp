// The mpibind-compatible C API over wavekit::bind::map. Strings and arrays handed out stay
// owned by the handle until mpibind_finalize or the next mpibind(), as in mpibind.
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "wavekit/bind/apply.h"
#include "wavekit/bind/format.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/bind/mpibind.h"
#include "wavekit/support/error.h"

using wavekit::bind::Bitmap;

struct mpibind_t {
  int ntasks = 0;
  int nthreads = 0;
  int greedy = 1;
  int gpu_optim = 1;
  int smt = 0;
  char* restrict_ids = nullptr;  // borrowed, as in mpibind
  int restrict_type = MPIBIND_RESTRICT_CPU;
  int gpu_id_type = MPIBIND_ID_SMI;
  bool compat = false;
  hwloc_topology_t topology = nullptr;  // borrowed; the caller destroys it
  std::unique_ptr<wavekit::bind::Mapping> mapping;
  std::string error;
  // Storage behind the pointers handed out.
  std::vector<int> nthreads_out;
  std::vector<hwloc_bitmap_t> cpus_out, gpus_out;
  std::vector<std::vector<int>> cpus_ptask;
  std::vector<std::vector<std::string>> gpus_ptask_strings;
  std::vector<std::vector<char*>> gpus_ptask;
  std::vector<std::string> env_names_strings;
  std::vector<char*> env_names;
  std::vector<std::vector<std::string>> env_value_strings;
  std::vector<std::vector<char*>> env_values;
  bool env_ready = false;
};

namespace {

void free_outputs(mpibind_t* h) {
  for (auto* set : h->cpus_out) hwloc_bitmap_free(set);
  for (auto* set : h->gpus_out) hwloc_bitmap_free(set);
  h->cpus_out.clear();
  h->gpus_out.clear();
  h->env_ready = false;
}

std::string device_id(const wavekit::bind::Device& device, int type, int mpibind_id) {
  switch (type) {
    case MPIBIND_ID_UNIV:
      return device.uuid;
    case MPIBIND_ID_PCIBUS:
      return device.pci_busid;
    case MPIBIND_ID_NAME:
      return device.name;
    case MPIBIND_ID_SMI:
      return std::to_string(device.smi);
    default:
      return std::to_string(mpibind_id);
  }
}

}  // namespace

extern "C" {

int mpibind_init(mpibind_t** handle) {
  if (handle == nullptr) return 1;
  *handle = new (std::nothrow) mpibind_t;
  return *handle == nullptr;
}

int mpibind_finalize(mpibind_t* handle) {
  if (handle == nullptr) return 1;
  free_outputs(handle);
  delete handle;
  return 0;
}

int mpibind(mpibind_t* h) {
  if (h == nullptr) return 1;
  try {
    free_outputs(h);
    wavekit::bind::Params params;
    params.ntasks = h->ntasks;
    params.nthreads = h->nthreads;
    params.greedy = h->greedy != 0;
    params.gpu_optim = h->gpu_optim != 0;
    params.smt = h->smt;
    params.mode = h->compat ? wavekit::bind::Mode::compat : wavekit::bind::Mode::fixed;
    params.restrict_type = h->restrict_type == MPIBIND_RESTRICT_MEM
                               ? wavekit::bind::RestrictType::mem
                               : wavekit::bind::RestrictType::cpu;
    if (h->restrict_ids != nullptr)
      params.restrict_set = Bitmap::parse_list_or_file(h->restrict_ids, "restrict ids");
    if (h->topology == nullptr) {
      hwloc_topology_t topology;
      if (hwloc_topology_init(&topology) < 0 || mpibind_load_topology(topology) != 0)
        throw wavekit::Error("cannot load this machine's topology");
      h->topology = topology;
    }
    // Wrap the caller's topology without taking ownership: dup it.
    hwloc_topology_t copy = nullptr;
    if (hwloc_topology_dup(&copy, h->topology) < 0)
      throw wavekit::Error("hwloc_topology_dup failed");
    std::string xml;
    {
      char* buffer = nullptr;
      int length = 0;
      if (hwloc_topology_export_xmlbuffer(copy, &buffer, &length, 0) < 0) {
        hwloc_topology_destroy(copy);
        throw wavekit::Error("cannot export the topology");
      }
      xml.assign(buffer, static_cast<std::size_t>(length > 0 ? length - 1 : 0));
      hwloc_free_xmlbuffer(copy, buffer);
      hwloc_topology_destroy(copy);
    }
    auto topology = wavekit::bind::Topology::from_xml_buffer(xml, "the handle's topology");
    h->mapping = std::make_unique<wavekit::bind::Mapping>(map_topology(topology, params));
    const auto& tasks = h->mapping->tasks;
    h->nthreads_out.clear();
    h->cpus_ptask.assign(tasks.size(), {});
    h->gpus_ptask_strings.assign(tasks.size(), {});
    h->gpus_ptask.assign(tasks.size(), {});
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      h->nthreads_out.push_back(tasks[t].nthreads);
      h->cpus_out.push_back(hwloc_bitmap_dup(tasks[t].cpus.get()));
      hwloc_bitmap_t gpus = hwloc_bitmap_alloc();
      for (int gpu : tasks[t].gpus) hwloc_bitmap_set(gpus, static_cast<unsigned>(gpu));
      h->gpus_out.push_back(gpus);
      for (unsigned cpu : tasks[t].cpus.indexes())
        h->cpus_ptask[t].push_back(static_cast<int>(cpu));
    }
    h->error.clear();
    return 0;
  } catch (const std::exception& error) {
    h->mapping.reset();
    h->error = error.what();
    return 1;
  }
}

#define WAVEKIT_SETTER(field)                        \
  int mpibind_set_##field(mpibind_t* h, int value) { \
    if (h == nullptr) return 1;                      \
    h->field = value;                                \
    return 0;                                        \
  }                                                  \
  int mpibind_get_##field(mpibind_t* h) { return h ? h->field : -1; }
WAVEKIT_SETTER(ntasks)
WAVEKIT_SETTER(greedy)
WAVEKIT_SETTER(gpu_optim)
WAVEKIT_SETTER(smt)
WAVEKIT_SETTER(restrict_type)
#undef WAVEKIT_SETTER

int mpibind_set_nthreads(mpibind_t* h, int nthreads) {
  if (h == nullptr) return 1;
  h->nthreads = nthreads;
  return 0;
}

int mpibind_set_restrict_ids(mpibind_t* h, char* restrict_ids) {
  if (h == nullptr) return 1;
  h->restrict_ids = restrict_ids;
  return 0;
}

char* mpibind_get_restrict_ids(mpibind_t* h) { return h ? h->restrict_ids : nullptr; }

int mpibind_set_topology(mpibind_t* h, hwloc_topology_t topo) {
  if (h == nullptr) return 1;
  h->topology = topo;
  return 0;
}

hwloc_topology_t mpibind_get_topology(mpibind_t* h) { return h ? h->topology : nullptr; }

int mpibind_set_gpu_ids(mpibind_t* h, int id_type) {
  if (h == nullptr || id_type < MPIBIND_ID_UNIV || id_type > MPIBIND_ID_NAME) return 1;
  h->gpu_id_type = id_type;
  return 0;
}

int* mpibind_get_nthreads(mpibind_t* h) {
  return h && h->mapping ? h->nthreads_out.data() : nullptr;
}
hwloc_bitmap_t* mpibind_get_cpus(mpibind_t* h) {
  return h && h->mapping ? h->cpus_out.data() : nullptr;
}
hwloc_bitmap_t* mpibind_get_gpus(mpibind_t* h) {
  return h && h->mapping ? h->gpus_out.data() : nullptr;
}

int* mpibind_get_cpus_ptask(mpibind_t* h, int taskid, int* ncpus) {
  if (h == nullptr || !h->mapping || taskid < 0 || taskid >= static_cast<int>(h->cpus_ptask.size()))
    return nullptr;
  auto& cpus = h->cpus_ptask[static_cast<std::size_t>(taskid)];
  if (ncpus) *ncpus = static_cast<int>(cpus.size());
  return cpus.data();
}

char** mpibind_get_gpus_ptask(mpibind_t* h, int taskid, int* ngpus) {
  if (h == nullptr || !h->mapping || taskid < 0 || taskid >= static_cast<int>(h->gpus_ptask.size()))
    return nullptr;
  auto t = static_cast<std::size_t>(taskid);
  auto& strings = h->gpus_ptask_strings[t];
  strings.clear();
  for (int gpu : h->mapping->tasks[t].gpus)
    strings.push_back(
        device_id(h->mapping->devices[static_cast<std::size_t>(gpu)], h->gpu_id_type, gpu));
  auto& pointers = h->gpus_ptask[t];
  pointers.clear();
  for (auto& text : strings) pointers.push_back(text.data());
  if (ngpus) *ngpus = static_cast<int>(pointers.size());
  return pointers.data();
}

int mpibind_get_num_gpus(mpibind_t* h) { return h && h->mapping ? h->mapping->num_gpus() : 0; }

int mpibind_set_env_vars(mpibind_t* h) {
  if (h == nullptr || !h->mapping) return 1;
  h->env_names_strings.clear();
  h->env_value_strings.clear();
  for (std::size_t t = 0; t < h->mapping->tasks.size(); ++t) {
    auto env = wavekit::bind::task_environment(*h->mapping, static_cast<int>(t));
    for (const auto& [name, value] : env) {
      std::size_t index = 0;
      while (index < h->env_names_strings.size() && h->env_names_strings[index] != name) ++index;
      if (index == h->env_names_strings.size()) {
        h->env_names_strings.push_back(name);
        h->env_value_strings.emplace_back(h->mapping->tasks.size());
      }
      h->env_value_strings[index][t] = value;
    }
  }
  h->env_names.clear();
  for (auto& name : h->env_names_strings) h->env_names.push_back(name.data());
  h->env_values.clear();
  for (auto& values : h->env_value_strings) {
    h->env_values.emplace_back();
    for (auto& value : values) h->env_values.back().push_back(value.data());
  }
  h->env_ready = true;
  return 0;
}

char** mpibind_get_env_var_names(mpibind_t* h, int* count) {
  if (h == nullptr || !h->env_ready) return nullptr;
  if (count) *count = static_cast<int>(h->env_names.size());
  return h->env_names.data();
}

char** mpibind_get_env_var_values(mpibind_t* h, const char* name) {
  if (h == nullptr || !h->env_ready || name == nullptr) return nullptr;
  for (std::size_t i = 0; i < h->env_names_strings.size(); ++i)
    if (h->env_names_strings[i] == name) return h->env_values[i].data();
  return nullptr;
}

int mpibind_mapping_snprint(char* buf, size_t size, mpibind_t* h) {
  if (h == nullptr || !h->mapping || buf == nullptr) return -1;
  std::string text = wavekit::bind::format_mpibind(*h->mapping);
  return std::snprintf(buf, size, "%s", text.c_str());
}

int mpibind_mapping_ptask_snprint(char* buf, size_t size, mpibind_t* h, int taskid) {
  if (h == nullptr || !h->mapping || buf == nullptr || taskid < 0 ||
      taskid >= static_cast<int>(h->mapping->tasks.size()))
    return -1;
  std::string text = wavekit::bind::format_mpibind(*h->mapping);
  std::istringstream lines(text);
  std::string line;
  for (int t = 0; t <= taskid; ++t) std::getline(lines, line);
  return std::snprintf(buf, size, "%s", line.c_str());
}

void mpibind_mapping_print(mpibind_t* h) {
  if (h == nullptr || !h->mapping) return;
  std::fputs(wavekit::bind::format_mpibind(*h->mapping).c_str(), stdout);
}

int mpibind_apply(mpibind_t* h, int taskid) {
  if (h == nullptr || !h->mapping) return 1;
  try {
    wavekit::bind::ApplyOptions options;
    options.set_environment = false;  // mpibind_apply only binds CPUs
    wavekit::bind::apply_task(*h->mapping, taskid, options);
    return 0;
  } catch (const std::exception& error) {
    h->error = error.what();
    return 1;
  }
}

int mpibind_load_topology(hwloc_topology_t topo) {
  if (topo == nullptr) return 1;
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
  hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_STRUCTURE);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  return hwloc_topology_load(topo) < 0 ? 1 : 0;
}

int wavekit_bind_set_compat(mpibind_t* h, int compat) {
  if (h == nullptr) return 1;
  h->compat = compat != 0;
  return 0;
}

const char* wavekit_bind_last_error(mpibind_t* h) { return h ? h->error.c_str() : "no handle"; }

}  // extern "C"
