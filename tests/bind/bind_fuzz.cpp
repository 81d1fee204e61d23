// libFuzzer over everything in bind that reads text a user or a launcher gives it: plugin
// option strings, restrict lists, node descriptions, and the mapping itself on the nodes those
// descriptions make, with parameters from the input. Errors must be wavekit::Error; anything
// else (a crash, a sanitizer report, a division by zero) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wavekit/bind/machine.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/bind/plugin_options.h"
#include "wavekit/support/error.h"

namespace {

using namespace wavekit::bind;

void map_described_node(const std::string& description, const std::uint8_t* knobs) {
  MachineDescription node = parse_machine_description(description);
  long pus = static_cast<long>(node.packages) * node.numa_per_package * node.l3_per_numa *
             node.cores_per_l3 * node.smt;
  if (pus > 512) return;  // keep each input fast; size is not what is being fuzzed
  Topology topology = Topology::from_xml_buffer(machine_xml(node), "fuzz");
  Params params;
  params.ntasks = 1 + knobs[0] % 64;
  params.nthreads = knobs[1] % 5;
  params.smt = knobs[2] % (node.smt + 1);
  params.greedy = knobs[3] & 1;
  params.gpu_optim = knobs[3] & 2;
  params.mode = knobs[3] & 4 ? Mode::compat : Mode::fixed;
  if (knobs[3] & 8) {
    Bitmap set;  // the first few CPUs (or NUMA nodes)
    for (unsigned i = 0; i <= knobs[4] % 64u; ++i) set.set(i);
    params.restrict_set = set;
    params.restrict_type = knobs[3] & 16 ? RestrictType::mem : RestrictType::cpu;
  }
  Mapping mapping = map_topology(topology, params);
  if (static_cast<int>(mapping.tasks.size()) != params.ntasks) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 6, size - 6);
  try {
    switch (data[5] % 4) {
      case 0:
        parse_plugin_options(text);
        break;
      case 1:
        Bitmap::parse_list(text, "fuzz");
        break;
      case 2:
        parse_machine_description(text);
        break;
      default:
        map_described_node(text, data);
        break;
    }
  } catch (const wavekit::Error&) {
  }
  return 0;
}
