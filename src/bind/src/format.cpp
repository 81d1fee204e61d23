#include "wavekit/bind/format.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace wavekit::bind {
namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string result;
  for (std::size_t i = 0; i < items.size(); ++i) result += (i ? separator : "") + items[i];
  return result;
}

std::string vendor_variable_compat(const Mapping& mapping) {
  unsigned vendor = 0;
  for (const auto& device : mapping.devices)
    if (device.kind == DeviceKind::gpu) vendor = device.vendor_id;
  if (vendor == 0x1002) return "ROCR_VISIBLE_DEVICES";
  if (vendor == 0x10de) return "CUDA_VISIBLE_DEVICES";
  return "VISIBLE_DEVICES";
}

std::vector<std::string> smi_ids(const Mapping& mapping, int task, std::optional<GpuVendor> only) {
  std::vector<std::string> ids;
  for (int gpu : mapping.tasks[static_cast<std::size_t>(task)].gpus) {
    const Device& device = mapping.devices[static_cast<std::size_t>(gpu)];
    if (!only || device.vendor() == *only) ids.push_back(std::to_string(device.smi));
  }
  return ids;
}

}  // namespace

std::string gpu_smi_list(const Mapping& mapping, int task) {
  return join(smi_ids(mapping, task, std::nullopt), ",");
}

std::string format_mpibind(const Mapping& mapping) {
  std::string out;
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t) {
    char head[64];
    std::snprintf(head, sizeof head, "mpibind: task %3d nths %2d gpus ", static_cast<int>(t),
                  mapping.tasks[t].nthreads);
    out += head + gpu_smi_list(mapping, static_cast<int>(t)) + " cpus " +
           mapping.tasks[t].cpus.list() + "\n";
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> task_environment(const Mapping& mapping, int task,
                                                                  const EnvOptions& options) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"OMP_NUM_THREADS", std::to_string(mapping.tasks[static_cast<std::size_t>(task)].nthreads)},
      {"OMP_PLACES", "threads"},
      {"OMP_PROC_BIND", "spread"},
  };
  if (mapping.num_gpus() == 0) return env;
  if (mapping.mode == Mode::compat) {
    env.emplace_back(vendor_variable_compat(mapping), gpu_smi_list(mapping, task));
    return env;
  }
  auto present = [&](GpuVendor vendor) {
    for (const auto& device : mapping.devices)
      if (device.kind == DeviceKind::gpu && device.vendor() == vendor) return true;
    return false;
  };
  if (present(GpuVendor::amd)) {
    std::string ids = join(smi_ids(mapping, task, GpuVendor::amd), ",");
    env.emplace_back("ROCR_VISIBLE_DEVICES", ids);
    if (options.hip_visible_devices) env.emplace_back("HIP_VISIBLE_DEVICES", ids);
  }
  if (present(GpuVendor::nvidia)) {
    std::vector<std::string> ids = smi_ids(mapping, task, GpuVendor::nvidia);
    if (options.cuda_uuids) {
      // NVML reports "GPU-<uuid>", which CUDA_VISIBLE_DEVICES accepts as it is.
      ids.clear();
      for (int gpu : mapping.tasks[static_cast<std::size_t>(task)].gpus) {
        const Device& device = mapping.devices[static_cast<std::size_t>(gpu)];
        if (device.vendor() == GpuVendor::nvidia) ids.push_back(device.uuid);
      }
    }
    env.emplace_back("CUDA_VISIBLE_DEVICES", join(ids, ","));
  }
  if (present(GpuVendor::intel))
    env.emplace_back("ZE_AFFINITY_MASK", join(smi_ids(mapping, task, GpuVendor::intel), ","));
  if (present(GpuVendor::other))
    env.emplace_back("VISIBLE_DEVICES", join(smi_ids(mapping, task, GpuVendor::other), ","));
  return env;
}

std::string format_env(const Mapping& mapping, const EnvOptions& options) {
  std::string out;
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t) {
    out += "# task " + std::to_string(t) + "\n";
    for (const auto& [name, value] : task_environment(mapping, static_cast<int>(t), options))
      out += name + "=" + value + "\n";
  }
  return out;
}

std::string format_json(const Mapping& mapping, const TopologyView& view,
                        const EnvOptions& options) {
  nlohmann::ordered_json root;
  root["topology"] = view.origin;
  root["mode"] = mapping.mode == Mode::compat ? "mpibind-0.23.1" : "default";
  root["greedy"] = mapping.greedy;
  root["gpu_optim"] = mapping.gpu_optim;
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < mapping.devices.size(); ++i) {
    const Device& d = mapping.devices[i];
    devices.push_back({{"id", i},
                       {"kind", d.kind == DeviceKind::gpu ? "gpu" : "nic"},
                       {"name", d.name},
                       {"subtype", d.subtype},
                       {"smi", d.smi},
                       {"pci", d.pci_busid},
                       {"vendor_id", d.vendor_id},
                       {"uuid", d.uuid},
                       {"model", d.model}});
  }
  root["devices"] = devices;
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t) {
    const TaskMapping& task = mapping.tasks[t];
    nlohmann::ordered_json entry;
    entry["task"] = t;
    entry["nthreads"] = task.nthreads;
    entry["cpus"] = task.cpus.list();
    entry["cpu_list"] = task.cpus.indexes();
    nlohmann::ordered_json smi = nlohmann::ordered_json::array();
    for (int gpu : task.gpus) smi.push_back(mapping.devices[static_cast<std::size_t>(gpu)].smi);
    entry["gpus"] = smi;
    entry["gpu_ids"] = task.gpus;
    entry["memory_nodes"] = task.memory_nodes.list();
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const auto& [name, value] : task_environment(mapping, static_cast<int>(t), options))
      env[name] = value;
    entry["env"] = env;
    tasks.push_back(entry);
  }
  root["tasks"] = tasks;
  root["notes"] = mapping.notes;
  return root.dump(2) + "\n";
}

std::string format_text(const Mapping& mapping, const TopologyView& view) {
  // Which tasks use each PU, so every object can list the tasks placed on it.
  std::map<unsigned, std::vector<int>> tasks_on_pu;
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t)
    for (unsigned pu : mapping.tasks[t].cpus.indexes())
      tasks_on_pu[pu].push_back(static_cast<int>(t));
  auto tasks_on = [&](const Bitmap& cpus) {
    std::vector<int> tasks;
    for (unsigned pu : cpus.indexes())
      for (int t : tasks_on_pu[pu])
        if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
    std::sort(tasks.begin(), tasks.end());
    return tasks;
  };
  auto task_label = [](const std::vector<int>& tasks) {
    if (tasks.empty()) return std::string("  (idle)");
    std::string label = "  <- task";
    label += tasks.size() > 1 ? "s " : " ";
    // Ranges keep long lists short: "tasks 0-7".
    for (std::size_t i = 0; i < tasks.size();) {
      std::size_t j = i;
      while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
      label +=
          (i ? "," : "") + std::to_string(tasks[i]) + (j > i ? "-" + std::to_string(tasks[j]) : "");
      i = j + 1;
    }
    return label;
  };
  std::ostringstream out;
  out << "node " << view.origin << ": " << view.levels.front().front().cpuset.weight() << " PUs, "
      << view.levels[static_cast<std::size_t>(view.core_depth)].size() << " cores, "
      << view.numas.size() << " NUMA nodes, " << mapping.num_gpus() << " GPUs; mode "
      << (mapping.mode == Mode::compat ? "mpibind-0.23.1" : "default")
      << (mapping.greedy ? ", greedy" : "") << (mapping.gpu_optim ? ", gpu-optimised" : "") << "\n";
  // The tree down to the level above the cores (cores are summarised per parent): objects at
  // each depth are nested under the object of the previous depth that contains them.
  int last_depth = std::max(1, view.core_depth - 1);
  std::function<void(int, const ViewObject&, const std::string&)> draw;
  draw = [&](int depth, const ViewObject& object, const std::string& indent) {
    out << indent << object.name << " L#" << object.logical_index << " cpus "
        << object.cpuset.list();
    for (const auto& numa : view.numas)
      if (view.parent_of(numa) == &object) out << " [NUMA " << numa.os_index << "]";
    for (std::size_t i = 0; i < mapping.devices.size(); ++i) {
      const Device& device = mapping.devices[i];
      if (device.kind != DeviceKind::gpu || !(device.ancestor_cpuset == object.cpuset)) continue;
      // Shown once, at the deepest drawn object with the ancestor's CPUs.
      bool child_has_same_cpus = false;
      if (depth < last_depth)
        for (const ViewObject* child : view.objects_inside(object.cpuset, depth + 1))
          child_has_same_cpus |= child->cpuset == object.cpuset;
      if (!child_has_same_cpus) out << " [GPU " << device.smi << "]";
    }
    out << task_label(tasks_on(object.cpuset)) << "\n";
    if (depth >= last_depth) return;
    for (const ViewObject* child : view.objects_inside(object.cpuset, depth + 1))
      draw(depth + 1, *child, indent + "  ");
  };
  draw(0, view.levels.front().front(), "");
  out << "\n";
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t) {
    const TaskMapping& task = mapping.tasks[t];
    std::string gpus = gpu_smi_list(mapping, static_cast<int>(t));
    out << "task " << t << ": " << task.nthreads << " thread" << (task.nthreads == 1 ? "" : "s")
        << ", cpus " << task.cpus.list() << ", gpus " << (gpus.empty() ? "none" : gpus)
        << ", memory " << task.memory_nodes.list() << "\n";
  }
  for (const auto& note : mapping.notes) out << "note: " << note << "\n";
  return out.str();
}

}  // namespace wavekit::bind
