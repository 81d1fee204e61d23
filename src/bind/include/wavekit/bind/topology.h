// The node as the mapper sees it. `Topology` owns an hwloc topology loaded the way mpibind
// loads it (live or from an XML file); `TopologyView` is a read-only snapshot of the facts the
// mapping needs (levels of normal objects, NUMA nodes, I/O devices in discovery order), so the
// mapping itself is a pure function and tests can build views from any XML.
#pragma once

#include <hwloc.h>

#include <optional>
#include <string>
#include <vector>

#include "wavekit/bind/bitmap.h"

namespace wavekit::bind {

enum class RestrictType { cpu, mem };

class Topology {
 public:
  // The machine this process runs on, with mpibind's filters (structure-only levels merged,
  // important PCI and OS devices kept).
  static Topology live();
  // An hwloc XML file; errors name the file and what is wrong with it.
  static Topology from_xml_file(const std::string& path);
  static Topology from_xml_buffer(const std::string& xml, const std::string& what);

  Topology(Topology&& other) noexcept;
  Topology& operator=(Topology&& other) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology();

  // A copy restricted with hwloc_topology_restrict exactly as mpibind v0.23.1 does
  // (REMOVE_CPULESS for cpu; BYNODESET|REMOVE_MEMLESS for mem). Objects, and the I/O devices
  // attached to them, outside the set disappear.
  Topology restricted(const Bitmap& set, RestrictType type) const;

  hwloc_topology_t get() const { return topology_; }
  const std::string& origin() const { return origin_; }

 private:
  Topology(hwloc_topology_t topology, std::string origin);
  hwloc_topology_t topology_;
  std::string origin_;  // "this machine" or the file name, for messages
};

struct ViewObject {
  hwloc_obj_type_t type;
  unsigned logical_index;
  unsigned os_index;
  Bitmap cpuset;
  Bitmap nodeset;
  std::string name;  // e.g. "L3Cache", "Core", "Group0"
};

struct ViewNuma {
  unsigned os_index;
  unsigned logical_index;
  std::string subtype;  // "DRAM", "HBM", ... or "" (hwloc >= 2.8 fills it in)
  Bitmap cpuset;        // the CPUs local to it (its parent's cpuset)
  Bitmap nodeset;
  int parent_depth;       // depth of its parent among normal objects
  unsigned parent_index;  // index of its parent in levels[parent_depth]; -1u: no CPUs
};

// An OS device as hwloc reports it, before any mode decides whether it counts as a GPU.
struct ViewOsDevice {
  std::string name;     // "rsmi4", "nvml0", "card1", "cuda0", "mlx5_0", "hsi0"
  std::string subtype;  // "RSMI", "NVML", "LevelZero", "CUDA", "OpenCL", "Slingshot", ...
  hwloc_obj_osdev_type_t osdev_type;
  bool has_pci_parent = false;
  std::string pci_busid;  // "%04x:%02x:%02x.%01x" of the PCI parent
  unsigned vendor_id = 0;
  std::optional<std::string> gpu_vendor;  // info "GPUVendor", absent on DRM devices
  std::string model;                      // info "GPUModel"
  std::string uuid;                       // AMDUUID / NVIDIAUUID / LevelZeroUUID / NodeGUID ...
  Bitmap ancestor_cpuset;                 // of hwloc_get_non_io_ancestor_obj
  Bitmap ancestor_nodeset;
};

class TopologyView {
 public:
  // Reads `topology`; never modifies it.
  static TopologyView build(const Topology& topology);
  // The view restricted logically (the default mode's restriction): for `cpu` the mask is a
  // cpuset; for `mem` it is a nodeset, turned into the CPUs of those NUMA nodes, and only those
  // NUMA nodes stay. Every object's cpuset is intersected with the mask; objects and NUMA nodes
  // left without CPUs are dropped, and so are devices whose ancestor lost all its CPUs. Logical
  // indexes are kept, unlike hwloc_topology_restrict, which renumbers.
  TopologyView masked(const Bitmap& set, RestrictType type) const;

  // levels[d] = normal objects at depth d with a non-empty cpuset, in logical order.
  std::vector<std::vector<ViewObject>> levels;
  std::vector<ViewNuma> numas;           // logical order
  std::vector<ViewOsDevice> os_devices;  // hwloc's OS-device order (discovery order)
  int core_depth = 0;                    // hwloc_get_type_or_below_depth(CORE)
  int pu_depth = 0;
  std::string origin;

  // Arity of the first Core object (1 when 0): mpibind's hw_smt.
  int hw_smt() const;
  Bitmap all_cpus() const;  // the root's cpuset
  // Objects at `depth` whose non-empty cpuset lies inside `root` (hwloc's "inside cpuset").
  std::vector<const ViewObject*> objects_inside(const Bitmap& root, int depth) const;
  int count_inside(const Bitmap& root, int depth) const;
  // The PUs of the cores with these logical indexes (mpibind's cores_to_pus), for resource
  // managers that hand out cores (Slurm's S_STEP_ALLOC_CORES). Throws for an index past the
  // last core.
  Bitmap pus_of_cores(const Bitmap& logical_cores) const;
  // The normal object a NUMA node hangs from; null when that parent has no CPUs.
  const ViewObject* parent_of(const ViewNuma& numa) const;
};

}  // namespace wavekit::bind
