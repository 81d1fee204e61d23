#include "wavekit/bind/topology.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::bind {
namespace {

// The largest topologies hwloc exports are a few MiB; anything far beyond is not one.
constexpr std::uint64_t kTopologyFileLimit = std::uint64_t{256} << 20;

// mpibind_load_topology's filters: levels that add no structure are merged (which is why the
// core level is looked up with get_type_or_below_depth), and important PCI/OS devices are kept
// so GPUs and NICs are visible.
hwloc_topology_t new_topology_with_mpibind_filters() {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) < 0) throw Error("hwloc_topology_init failed");
  hwloc_topology_set_flags(topology, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
  hwloc_topology_set_all_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_STRUCTURE);
  hwloc_topology_set_type_filter(topology, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topology, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  return topology;
}

void check_usable(hwloc_topology_t topology, const std::string& origin) {
  if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU) <= 0) {
    hwloc_topology_destroy(topology);
    fail(origin, "the topology has no PU (processing unit) objects");
  }
  if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) <= 0) {
    hwloc_topology_destroy(topology);
    fail(origin, "the topology has no NUMA node");
  }
}

// Debian's hwloc 2.9 dereferences a complete set that an XML object lacks (lstopo --input
// crashes on such a file too), so every object's sets are checked before hwloc sees the XML:
// an object with a cpuset must carry its complete_cpuset, one with a nodeset its
// complete_nodeset, as hwloc's own exporter always writes them.
void check_object_sets(const std::string& xml, const std::string& origin) {
  std::size_t line = 1;
  std::size_t counted_to = 0;
  for (std::size_t at = xml.find("<object"); at != std::string::npos;
       at = xml.find("<object", at + 1)) {
    const char after = at + 7 < xml.size() ? xml[at + 7] : '>';
    if (after != ' ' && after != '\t' && after != '\n' && after != '\r' && after != '/' &&
        after != '>')
      continue;  // <objects ...> or another tag name
    line +=
        static_cast<std::size_t>(std::count(xml.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                            xml.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    counted_to = at;
    // The tag's attributes, up to its closing '>' outside quotes.
    std::map<std::string, std::string> attributes;
    std::size_t i = at + 7;
    for (;;) {
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size())
        fail(origin, "line " + std::to_string(line) + ": an <object> tag is not closed");
      if (xml[i] == '>' || xml[i] == '/') break;
      const std::size_t name_start = i;
      while (i < xml.size() && xml[i] != '=' && xml[i] != '>' &&
             !std::isspace(static_cast<unsigned char>(xml[i])))
        ++i;
      const std::string name = xml.substr(name_start, i - name_start);
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size() || xml[i] != '=') {
        attributes[name];
        continue;
      }
      ++i;
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\''))
        fail(origin, "line " + std::to_string(line) + ": attribute " + name +
                         " of an <object> has no quoted value");
      const char quote = xml[i++];
      const std::size_t end = xml.find(quote, i);
      if (end == std::string::npos)
        fail(origin, "line " + std::to_string(line) + ": attribute " + name + " is not closed");
      attributes[name] = xml.substr(i, end - i);
      i = end + 1;
    }
    const auto has = [&](const char* name) { return attributes.count(name) != 0; };
    const auto missing = [&](const char* set, const char* complete) {
      if (!has(set) || has(complete)) return;
      std::string what = has("type") ? attributes["type"] : std::string("object");
      if (has("os_index")) what += " P#" + attributes["os_index"];
      fail(origin, "line " + std::to_string(line) + ": object " + what + " has a " + set +
                       " but no " + complete +
                       " (hwloc would crash on it; re-export the topology with lstopo)");
    };
    missing("cpuset", "complete_cpuset");
    missing("nodeset", "complete_nodeset");
  }
}

std::string object_name(hwloc_obj_t object) {
  char text[64];
  hwloc_obj_type_snprintf(text, sizeof text, object, 1);
  return text;
}

const char* info(hwloc_obj_t object, const char* name) {
  return hwloc_obj_get_info_by_name(object, name);
}

}  // namespace

Topology::Topology(hwloc_topology_t topology, std::string origin)
    : topology_(topology), origin_(std::move(origin)) {}

Topology::Topology(Topology&& other) noexcept
    : topology_(std::exchange(other.topology_, nullptr)), origin_(std::move(other.origin_)) {}

Topology& Topology::operator=(Topology&& other) noexcept {
  std::swap(topology_, other.topology_);
  std::swap(origin_, other.origin_);
  return *this;
}

Topology::~Topology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

Topology Topology::live() {
  hwloc_topology_t topology = new_topology_with_mpibind_filters();
  if (hwloc_topology_load(topology) < 0) {
    hwloc_topology_destroy(topology);
    throw Error("hwloc could not discover this machine's topology");
  }
  check_usable(topology, "this machine");
  return Topology(topology, "this machine");
}

Topology Topology::from_xml_file(const std::string& path) {
  // Read here, not by hwloc, so that a file that cannot be read says why (permissions, a
  // directory, a device) instead of "malformed".
  const std::vector<std::uint8_t> bytes = read_file(path, kTopologyFileLimit);
  return from_xml_buffer(std::string(bytes.begin(), bytes.end()), path);
}

Topology Topology::from_xml_buffer(const std::string& xml, const std::string& what) {
  if (xml.size() >= static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fail(what, "the topology XML is too large for hwloc");
  check_object_sets(xml, what);
  hwloc_topology_t topology = new_topology_with_mpibind_filters();
  if (hwloc_topology_set_xmlbuffer(topology, xml.c_str(), static_cast<int>(xml.size()) + 1) < 0 ||
      hwloc_topology_load(topology) < 0) {
    hwloc_topology_destroy(topology);
    fail(what, "hwloc cannot load it as a topology XML (malformed or not hwloc XML)");
  }
  check_usable(topology, what);
  return Topology(topology, what);
}

Topology Topology::restricted(const Bitmap& set, RestrictType type) const {
  hwloc_topology_t copy = nullptr;
  if (hwloc_topology_dup(&copy, topology_) < 0) throw Error("hwloc_topology_dup failed");
  unsigned long flags = type == RestrictType::cpu
                            ? HWLOC_RESTRICT_FLAG_REMOVE_CPULESS
                            : (HWLOC_RESTRICT_FLAG_BYNODESET | HWLOC_RESTRICT_FLAG_REMOVE_MEMLESS);
  // mpibind only warns when the restriction fails and goes on with the whole node.
  if (hwloc_topology_restrict(copy, set.get(), flags) < 0)
    std::fprintf(stderr, "wavekit bind: warning: hwloc could not restrict the topology to %s\n",
                 set.list().c_str());
  return Topology(copy, origin_);
}

TopologyView TopologyView::build(const Topology& topology) {
  hwloc_topology_t topo = topology.get();
  TopologyView view;
  view.origin = topology.origin();
  int depth_count = hwloc_topology_get_depth(topo);
  view.levels.resize(static_cast<std::size_t>(depth_count));
  for (int depth = 0; depth < depth_count; ++depth) {
    int count = hwloc_get_nbobjs_by_depth(topo, depth);
    for (int i = 0; i < count; ++i) {
      hwloc_obj_t object = hwloc_get_obj_by_depth(topo, depth, static_cast<unsigned>(i));
      if (object->cpuset == nullptr || hwloc_bitmap_iszero(object->cpuset)) continue;
      view.levels[static_cast<std::size_t>(depth)].push_back(
          ViewObject{object->type, object->logical_index, object->os_index, Bitmap(object->cpuset),
                     Bitmap(object->nodeset), object_name(object)});
    }
  }
  view.core_depth = hwloc_get_type_or_below_depth(topo, HWLOC_OBJ_CORE);
  view.pu_depth = depth_count - 1;

  for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr);
       numa != nullptr; numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)) {
    ViewNuma entry{numa->os_index,
                   numa->logical_index,
                   numa->subtype ? numa->subtype : "",
                   Bitmap(numa->cpuset),
                   Bitmap(numa->nodeset),
                   numa->parent->depth,
                   0};
    const auto& parents = view.levels[static_cast<std::size_t>(numa->parent->depth)];
    for (std::size_t i = 0; i < parents.size(); ++i)
      if (parents[i].logical_index == numa->parent->logical_index)
        entry.parent_index = static_cast<unsigned>(i);
    if (parents.empty() || hwloc_bitmap_iszero(numa->parent->cpuset)) {
      // A parent without CPUs is not in the level list; keep the NUMA node with its own
      // (empty) cpuset so CPU-less memory is still visible to the modes that care.
      entry.parent_index = static_cast<unsigned>(-1);
    }
    view.numas.push_back(std::move(entry));
  }

  for (hwloc_obj_t device = hwloc_get_next_osdev(topo, nullptr); device != nullptr;
       device = hwloc_get_next_osdev(topo, device)) {
    ViewOsDevice entry;
    entry.name = device->name ? device->name : "";
    entry.subtype = device->subtype ? device->subtype : "";
    entry.osdev_type = device->attr->osdev.type;
    hwloc_obj_t pci = device->parent;
    if (pci != nullptr && pci->type == HWLOC_OBJ_PCI_DEVICE) {
      entry.has_pci_parent = true;
      char busid[32];
      std::snprintf(busid, sizeof busid, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                    pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
      entry.pci_busid = busid;
      entry.vendor_id = pci->attr->pcidev.vendor_id;
    }
    if (const char* vendor = info(device, "GPUVendor")) entry.gpu_vendor = vendor;
    if (const char* model = info(device, "GPUModel")) entry.model = model;
    for (const char* key :
         {"AMDUUID", "NVIDIAUUID", "LevelZeroUUID", "NodeGUID", "BXIUUID", "Address"}) {
      if (const char* value = info(device, key)) {
        entry.uuid = value;
        break;
      }
    }
    hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topo, device);
    entry.ancestor_cpuset = Bitmap(ancestor->cpuset);
    entry.ancestor_nodeset = Bitmap(ancestor->nodeset);
    view.os_devices.push_back(std::move(entry));
  }
  return view;
}

TopologyView TopologyView::masked(const Bitmap& set, RestrictType type) const {
  Bitmap cpu_mask;
  if (type == RestrictType::cpu) {
    cpu_mask = set;
  } else {
    for (const auto& numa : numas)
      if (set.contains(numa.os_index)) cpu_mask |= numa.cpuset;
  }
  TopologyView view;
  view.origin = origin;
  view.core_depth = core_depth;
  view.pu_depth = pu_depth;
  view.levels.resize(levels.size());
  // Old index -> new index per level, so NUMA parents can be found again.
  std::vector<std::vector<int>> renumber(levels.size());
  for (std::size_t depth = 0; depth < levels.size(); ++depth) {
    renumber[depth].assign(levels[depth].size(), -1);
    for (std::size_t i = 0; i < levels[depth].size(); ++i) {
      ViewObject object = levels[depth][i];
      object.cpuset &= cpu_mask;
      if (object.cpuset.empty()) continue;
      renumber[depth][i] = static_cast<int>(view.levels[depth].size());
      view.levels[depth].push_back(std::move(object));
    }
  }
  for (const auto& numa : numas) {
    if (type == RestrictType::mem && !set.contains(numa.os_index)) continue;
    ViewNuma entry = numa;
    entry.cpuset &= cpu_mask;
    if (entry.cpuset.empty() || numa.parent_index == static_cast<unsigned>(-1)) continue;
    int parent = renumber[static_cast<std::size_t>(numa.parent_depth)][numa.parent_index];
    if (parent < 0) continue;
    entry.parent_index = static_cast<unsigned>(parent);
    view.numas.push_back(std::move(entry));
  }
  for (const auto& device : os_devices) {
    ViewOsDevice entry = device;
    entry.ancestor_cpuset &= cpu_mask;
    if (entry.ancestor_cpuset.empty()) continue;
    view.os_devices.push_back(std::move(entry));
  }
  return view;
}

int TopologyView::hw_smt() const {
  if (core_depth >= pu_depth) return 1;
  const auto& cores = levels[static_cast<std::size_t>(core_depth)];
  if (cores.empty()) return 1;
  int arity = cores.front().cpuset.weight();
  return arity == 0 ? 1 : arity;
}

Bitmap TopologyView::all_cpus() const { return levels.front().front().cpuset; }

std::vector<const ViewObject*> TopologyView::objects_inside(const Bitmap& root, int depth) const {
  std::vector<const ViewObject*> result;
  for (const auto& object : levels[static_cast<std::size_t>(depth)])
    if (root.includes(object.cpuset)) result.push_back(&object);
  return result;
}

int TopologyView::count_inside(const Bitmap& root, int depth) const {
  int count = 0;
  for (const auto& object : levels[static_cast<std::size_t>(depth)])
    if (root.includes(object.cpuset)) ++count;
  return count;
}

Bitmap TopologyView::pus_of_cores(const Bitmap& logical_cores) const {
  const auto& cores = levels[static_cast<std::size_t>(core_depth)];
  Bitmap pus;
  for (unsigned index : logical_cores.indexes()) {
    if (index >= cores.size())
      fail(origin, "core " + std::to_string(index) + " does not exist (the node has " +
                       std::to_string(cores.size()) + " cores)");
    pus |= cores[index].cpuset;
  }
  return pus;
}

const ViewObject* TopologyView::parent_of(const ViewNuma& numa) const {
  if (numa.parent_index == static_cast<unsigned>(-1)) return nullptr;
  return &levels[static_cast<std::size_t>(numa.parent_depth)][numa.parent_index];
}

}  // namespace wavekit::bind
