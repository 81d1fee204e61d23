#include "wavekit/bind/machine.h"

#include <hwloc.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include "wavekit/bind/bitmap.h"
#include "wavekit/support/error.h"

namespace wavekit::bind {
namespace {

std::string hex(const Bitmap& set) {
  char* text = nullptr;
  hwloc_bitmap_asprintf(&text, set.get());
  std::string result(text ? text : "0x0");
  std::free(text);
  return result;
}

struct GpuKind {
  std::string_view name;
  hwloc_obj_osdev_type_t osdev_type;
  std::string_view device_prefix;  // OS device name prefix
  std::string_view subtype;
  unsigned vendor_id;
  std::string_view vendor;  // GPUVendor info; empty: none (DRM devices carry none)
  std::string_view uuid_key;
};

const std::vector<GpuKind> kGpuKinds = {
    {"rsmi", HWLOC_OBJ_OSDEV_GPU, "rsmi", "RSMI", 0x1002, "AMD", "AMDUUID"},
    {"nvml", HWLOC_OBJ_OSDEV_GPU, "nvml", "NVML", 0x10de, "NVIDIA Corporation", "NVIDIAUUID"},
    {"levelzero", HWLOC_OBJ_OSDEV_COPROC, "ze", "LevelZero", 0x8086, "Intel", "LevelZeroUUID"},
    {"cuda", HWLOC_OBJ_OSDEV_COPROC, "cuda", "CUDA", 0x10de, "NVIDIA Corporation", ""},
    {"opencl", HWLOC_OBJ_OSDEV_COPROC, "opencl0d", "OpenCL", 0x1002, "AMD", ""},
    {"drm", HWLOC_OBJ_OSDEV_GPU, "card", "", 0x1a03, "", ""},
};

const GpuKind& gpu_kind(const std::string& name) {
  for (const auto& kind : kGpuKinds)
    if (kind.name == name) return kind;
  throw Error("machine description: gpu-kind '" + name +
              "' is not one of rsmi, nvml, levelzero, cuda, opencl, drm");
}

int parse_count(std::string_view key, std::string_view value, int minimum, int maximum) {
  std::string text(value);
  char* end = nullptr;
  long number = text.empty() ? -1 : std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || number < minimum || number > maximum)
    throw Error("machine description: " + std::string(key) + "='" + text +
                "' is not a whole number from " + std::to_string(minimum) + " to " +
                std::to_string(maximum));
  return static_cast<int>(number);
}

class XmlWriter {
 public:
  void open(const std::string& attributes) {
    out_ << std::string(2 * depth_, ' ') << "<object " << attributes << " gp_index=\""
         << next_gp_index_++ << "\">\n";
    ++depth_;
  }
  void info(const std::string& name, const std::string& value) {
    out_ << std::string(2 * depth_, ' ') << "<info name=\"" << name << "\" value=\"" << value
         << "\"/>\n";
  }
  void close() {
    --depth_;
    out_ << std::string(2 * depth_, ' ') << "</object>\n";
  }
  void leaf(const std::string& attributes) {
    open(attributes);
    close();
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int depth_ = 1;
  int next_gp_index_ = 1;
};

std::string sets(const Bitmap& cpus, const Bitmap& nodes) {
  return "cpuset=\"" + hex(cpus) + "\" complete_cpuset=\"" + hex(cpus) + "\" nodeset=\"" +
         hex(nodes) + "\" complete_nodeset=\"" + hex(nodes) + "\"";
}

}  // namespace

MachineDescription parse_machine_description(std::string_view text) {
  MachineDescription d;
  std::set<std::string> seen;
  std::string all(text);
  std::stringstream items(all);
  std::string item;
  while (std::getline(items, item, ',')) {
    auto equals = item.find('=');
    if (equals == std::string::npos)
      throw Error("machine description: '" + item + "' is not key=value");
    std::string key = item.substr(0, equals), value = item.substr(equals + 1);
    if (!seen.insert(key).second) throw Error("machine description: '" + key + "' given twice");
    if (key == "packages")
      d.packages = parse_count(key, value, 1, 64);
    else if (key == "numa")
      d.numa_per_package = parse_count(key, value, 1, 64);
    else if (key == "l3")
      d.l3_per_numa = parse_count(key, value, 1, 64);
    else if (key == "cores")
      d.cores_per_l3 = parse_count(key, value, 1, 512);
    else if (key == "smt")
      d.smt = parse_count(key, value, 1, 8);
    else if (key == "gpus")
      d.gpus_per_numa = parse_count(key, value, 0, 16);
    else if (key == "partitions")
      d.partitions_per_gpu = parse_count(key, value, 1, 8);
    else if (key == "hbm")
      d.hbm_per_numa = parse_count(key, value, 0, 4);
    else if (key == "cpuless")
      d.cpuless_numa = parse_count(key, value, 0, 16);
    else if (key == "nics")
      d.nics_per_package = parse_count(key, value, 0, 16);
    else if (key == "gpu-kind") {
      gpu_kind(value);  // throws for an unknown kind
      d.gpu_kind = value;
    } else if (key == "gpus-on") {
      if (value != "numa" && value != "l3")
        throw Error("machine description: gpus-on='" + value + "' is not numa or l3");
      d.gpus_on_l3 = value == "l3";
    } else if (key == "numbering") {
      if (value != "siblings-last" && value != "consecutive")
        throw Error("machine description: numbering='" + value +
                    "' is not siblings-last or consecutive");
      d.siblings_last = value == "siblings-last";
    } else {
      throw Error(
          "machine description: unknown key '" + key +
          "' (known: packages, numa, l3, cores, smt, gpus, gpus-on, gpu-kind, partitions, hbm, "
          "cpuless, nics, numbering)");
    }
  }
  if (seen.empty()) throw Error("machine description: empty (e.g. packages=2,cores=8,smt=2)");
  return d;
}

std::string machine_xml(const MachineDescription& d) {
  const GpuKind& kind = gpu_kind(d.gpu_kind);
  const int domains = d.packages * d.numa_per_package;
  const int cores_per_domain = d.l3_per_numa * d.cores_per_l3;
  const int total_cores = domains * cores_per_domain;
  if (static_cast<long>(total_cores) * d.smt > 16384)
    throw Error("machine description: more than 16384 PUs");
  const int memory_nodes_per_domain = 1 + d.hbm_per_numa;
  auto pu_index = [&](int core, int thread) {
    return d.siblings_last ? core + thread * total_cores : core * d.smt + thread;
  };
  auto cpus_of_cores = [&](int first, int count) {
    Bitmap set;
    for (int c = first; c < first + count; ++c)
      for (int t = 0; t < d.smt; ++t) set.set(static_cast<unsigned>(pu_index(c, t)));
    return set;
  };
  auto nodes_of_domains = [&](int first, int count) {
    Bitmap set;
    for (int n = first * memory_nodes_per_domain; n < (first + count) * memory_nodes_per_domain;
         ++n)
      set.set(static_cast<unsigned>(n));
    return set;
  };
  Bitmap all_nodes = nodes_of_domains(0, domains);
  const int first_cpuless = domains * memory_nodes_per_domain;
  for (int n = 0; n < d.cpuless_numa; ++n) all_nodes.set(static_cast<unsigned>(first_cpuless + n));
  Bitmap all_cpus = cpus_of_cores(0, total_cores);

  XmlWriter xml;
  xml.open("type=\"Machine\" os_index=\"0\" " + sets(all_cpus, all_nodes) + " allowed_cpuset=\"" +
           hex(all_cpus) + "\" allowed_nodeset=\"" + hex(all_nodes) + "\"");
  xml.info("Backend", "wavekit-bind-machine");
  int gpu_number = 0, nic_number = 0, pci_bus = 0x10;
  auto pci_function = [&](unsigned vendor_id, const std::string& pci_class) {
    char bus[16];
    std::snprintf(bus, sizeof bus, "%02x", pci_bus);
    char type[64];
    std::snprintf(type, sizeof type, "%s [%04x:%04x] [%04x:0000] 00", pci_class.c_str(), vendor_id,
                  0x1000u + static_cast<unsigned>(pci_bus), vendor_id);
    xml.open("type=\"Bridge\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[" +
             std::string(bus) + "-" + bus + "]\"");
    xml.open("type=\"PCIDev\" pci_busid=\"0000:" + std::string(bus) + ":00.0\" pci_type=\"" + type +
             "\" pci_link_speed=\"31.5\"");
    ++pci_bus;
  };
  // GPUs: each a PCI function under a host bridge of the current object (the domain's parent
  // or an L3); partitions are several OS devices of one function.
  auto write_gpus = [&] {
    for (int g = 0; g < d.gpus_per_numa; ++g) {
      pci_function(kind.vendor_id, kind.name == "drm" ? "0300" : "0380");
      for (int part = 0; part < d.partitions_per_gpu; ++part, ++gpu_number) {
        std::string name = std::string(kind.device_prefix) + std::to_string(gpu_number);
        std::string attributes = "type=\"OSDev\" name=\"" + name + "\" osdev_type=\"" +
                                 std::to_string(static_cast<int>(kind.osdev_type)) + "\"";
        if (!kind.subtype.empty()) attributes += " subtype=\"" + std::string(kind.subtype) + "\"";
        xml.open(attributes);
        if (!kind.vendor.empty()) {
          xml.info("GPUVendor", std::string(kind.vendor));
          xml.info("GPUModel", "wavekit described GPU");
        }
        if (!kind.uuid_key.empty()) {
          char uuid[32];
          std::snprintf(uuid, sizeof uuid, "%016x", 0xa000 + gpu_number);
          xml.info(std::string(kind.uuid_key), uuid);
        }
        xml.close();
      }
      xml.close();
      xml.close();
    }
  };
  for (int p = 0; p < d.packages; ++p) {
    int first_domain = p * d.numa_per_package;
    Bitmap package_cpus =
        cpus_of_cores(first_domain * cores_per_domain, d.numa_per_package * cores_per_domain);
    Bitmap package_nodes = nodes_of_domains(first_domain, d.numa_per_package);
    xml.open("type=\"Package\" os_index=\"" + std::to_string(p) + "\" " +
             sets(package_cpus, package_nodes));
    for (int n = 0; n < d.numa_per_package; ++n) {
      int domain = first_domain + n;
      int first_core = domain * cores_per_domain;
      Bitmap domain_cpus = cpus_of_cores(first_core, cores_per_domain);
      Bitmap domain_nodes = nodes_of_domains(domain, 1);
      bool grouped = d.numa_per_package > 1;
      if (grouped)
        xml.open("type=\"Group\" " + sets(domain_cpus, domain_nodes) +
                 " kind=\"1001\" subkind=\"0\"");
      for (int m = 0; m < memory_nodes_per_domain; ++m) {
        int node = domain * memory_nodes_per_domain + m;
        Bitmap node_set;
        node_set.set(static_cast<unsigned>(node));
        xml.open("type=\"NUMANode\" os_index=\"" + std::to_string(node) + "\" " +
                 sets(domain_cpus, node_set) + " local_memory=\"17179869184\"" +
                 (m == 0 ? "" : " subtype=\"HBM\""));
        xml.close();
      }
      for (int l = 0; l < d.l3_per_numa; ++l) {
        int l3_first = first_core + l * d.cores_per_l3;
        Bitmap l3_cpus = cpus_of_cores(l3_first, d.cores_per_l3);
        xml.open("type=\"L3Cache\" os_index=\"" + std::to_string(domain * d.l3_per_numa + l) +
                 "\" " + sets(l3_cpus, domain_nodes) +
                 " cache_size=\"33554432\" depth=\"3\" cache_linesize=\"64\" "
                 "cache_associativity=\"16\" cache_type=\"0\"");
        for (int c = l3_first; c < l3_first + d.cores_per_l3; ++c) {
          Bitmap core_cpus = cpus_of_cores(c, 1);
          xml.open("type=\"L2Cache\" os_index=\"" + std::to_string(c) + "\" " +
                   sets(core_cpus, domain_nodes) +
                   " cache_size=\"524288\" depth=\"2\" cache_linesize=\"64\" "
                   "cache_associativity=\"8\" cache_type=\"0\"");
          xml.open("type=\"Core\" os_index=\"" + std::to_string(c) + "\" " +
                   sets(core_cpus, domain_nodes));
          for (int t = 0; t < d.smt; ++t) {
            Bitmap pu;
            pu.set(static_cast<unsigned>(pu_index(c, t)));
            xml.leaf("type=\"PU\" os_index=\"" + std::to_string(pu_index(c, t)) + "\" " +
                     sets(pu, domain_nodes));
          }
          xml.close();
          xml.close();
        }
        if (d.gpus_on_l3) write_gpus();
        xml.close();
      }
      if (!d.gpus_on_l3) write_gpus();
      if (grouped) xml.close();
    }
    for (int k = 0; k < d.nics_per_package; ++k, ++nic_number) {
      pci_function(0x17db, "0200");
      xml.open("type=\"OSDev\" name=\"hsi" + std::to_string(nic_number) +
               "\" osdev_type=\"2\" subtype=\"Slingshot\"");
      xml.close();
      xml.close();
      xml.close();
    }
    xml.close();
  }
  for (int n = 0; n < d.cpuless_numa; ++n) {
    Bitmap node_set;
    node_set.set(static_cast<unsigned>(first_cpuless + n));
    xml.open("type=\"NUMANode\" os_index=\"" + std::to_string(first_cpuless + n) + "\" " +
             sets(Bitmap(), node_set) + " local_memory=\"8589934592\"");
    xml.close();
  }
  xml.close();
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
         "<topology version=\"2.0\">\n" +
         xml.text() + "</topology>\n";
}

}  // namespace wavekit::bind
