// Mapping time on the largest topology: El Capitan-class (tuo.CPX.xml: 4 MI300A APUs in CPX
// mode, 24 GPU partitions, 96 cores, 192 PUs). Without ../shared/data the same shape is built
// with the machine-description helper. Besides absolute times it prints, from the same run,
// each step's CPU time as a ratio of loading the XML, which is what every caller pays anyway
// (CPU time, because the 2-core machine is shared and wall time mostly measures waiting).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "wavekit/bind/machine.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/bind/topology.h"

namespace {

using namespace wavekit::bind;

const std::string& topology_xml() {
  static const std::string xml = [] {
    std::filesystem::path file =
        std::filesystem::path(WAVEKIT_SHARED_DATA) / "topologies" / "tuo.CPX.xml";
    if (std::filesystem::exists(file)) {
      std::FILE* in = std::fopen(file.c_str(), "rb");
      std::string text;
      char buffer[65536];
      std::size_t n;
      while (in && (n = std::fread(buffer, 1, sizeof buffer, in)) > 0) text.append(buffer, n);
      if (in) std::fclose(in);
      std::printf("topology: %s\n", file.c_str());
      return text;
    }
    std::printf("topology: generated El Capitan-class node (../shared/data absent)\n");
    return machine_xml(parse_machine_description("packages=4,cores=24,smt=2,gpus=1,partitions=6"));
  }();
  return xml;
}

Params params(int ntasks, Mode mode) {
  Params p;
  p.ntasks = ntasks;
  p.mode = mode;
  return p;
}

void LoadXml(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Topology::from_xml_buffer(topology_xml(), "bench"));
}
BENCHMARK(LoadXml)->Unit(benchmark::kMicrosecond);

void BuildView(benchmark::State& state) {
  Topology topology = Topology::from_xml_buffer(topology_xml(), "bench");
  for (auto _ : state) benchmark::DoNotOptimize(TopologyView::build(topology));
}
BENCHMARK(BuildView)->Unit(benchmark::kMicrosecond);

void Map(benchmark::State& state, Mode mode) {
  TopologyView view = TopologyView::build(Topology::from_xml_buffer(topology_xml(), "bench"));
  Params p = params(static_cast<int>(state.range(0)), mode);
  for (auto _ : state) benchmark::DoNotOptimize(map(view, p));
}
BENCHMARK_CAPTURE(Map, fixed, Mode::fixed)
    ->Arg(1)
    ->Arg(4)
    ->Arg(24)
    ->Arg(96)
    ->Arg(192)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Map, compat, Mode::compat)->Arg(24)->Arg(192)->Unit(benchmark::kMicrosecond);

// Compat restriction goes through hwloc_topology_restrict on a copy, then a new view.
void MapRestrictedCompat(benchmark::State& state) {
  Topology topology = Topology::from_xml_buffer(topology_xml(), "bench");
  Params p = params(24, Mode::compat);
  p.restrict_set = Bitmap::parse_list("0-47,96-143", "bench");
  for (auto _ : state) benchmark::DoNotOptimize(map_topology(topology, p));
}
BENCHMARK(MapRestrictedCompat)->Unit(benchmark::kMicrosecond);

// Collects each benchmark's time so the ratios can be printed from this same run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        times[run.benchmark_name()] = run.GetAdjustedCPUTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  topology_xml();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto load = reporter.times.find("LoadXml");
  if (load == reporter.times.end() || load->second <= 0) return 0;
  std::printf("\nCPU-time ratios to LoadXml (same run):\n");
  for (const auto& [name, time] : reporter.times)
    std::printf("  %-28s %8.4f\n", name.c_str(), time / load->second);
  benchmark::Shutdown();
  return 0;
}
