// The default (fixed) mode: properties that must hold on every node, and the quirk cases of
// the design page, built with the machine-description helper, where compat mode reproduces
// mpibind's defect and the fixed mode applies its named rule.
#include <gtest/gtest.h>

#include <map>

#include "test_support.h"
#include "wavekit/bind/format.h"

namespace wavekit::bind {
namespace {

using testing::machine;
using testing::summary;

Params params_for(int ntasks, Mode mode = Mode::fixed) {
  Params params;
  params.ntasks = ntasks;
  params.mode = mode;
  return params;
}

// The memory domains of a view as the fixed mode sees them: NUMA parents' cpusets merged when
// they intersect.
std::vector<Bitmap> domains_of(const TopologyView& view) {
  std::vector<Bitmap> domains;
  for (const auto& numa : view.numas) {
    const ViewObject* parent = view.parent_of(numa);
    if (parent == nullptr || numa.cpuset.empty()) continue;
    Bitmap cpus = parent->cpuset;
    bool merged = false;
    for (auto& domain : domains)
      if (domain.intersects(cpus)) domain |= cpus, merged = true;
    if (!merged) domains.push_back(cpus);
  }
  return domains;
}

void check_properties(const TopologyView& view, const Params& params) {
  SCOPED_TRACE(view.origin + " ntasks " + std::to_string(params.ntasks) + " greedy " +
               std::to_string(params.greedy) + " gpu_optim " + std::to_string(params.gpu_optim));
  Mapping mapping = map(view, params);
  ASSERT_EQ(mapping.tasks.size(), static_cast<std::size_t>(params.ntasks));  // counts add up
  Mapping again = map(view, params);
  EXPECT_EQ(summary(mapping), summary(again));  // deterministic
  int pus = view.all_cpus().weight();
  auto domains = domains_of(view);
  std::map<std::size_t, std::vector<std::size_t>> gpu_counts_per_domain;
  Bitmap used;
  bool overlap = false;
  for (const auto& task : mapping.tasks) {
    EXPECT_FALSE(task.cpus.empty());
    EXPECT_GE(task.nthreads, 1);
    if (used.intersects(task.cpus)) overlap = true;
    used |= task.cpus;
    if (!mapping.greedy) {
      std::size_t home = domains.size();
      for (std::size_t d = 0; d < domains.size(); ++d)
        if (domains[d].includes(task.cpus)) home = d;
      EXPECT_LT(home, domains.size()) << "task spans domains: " << task.cpus.list();
      gpu_counts_per_domain[home].push_back(task.gpus.size());
    }
  }
  // With PU weights and enough PUs every task has PUs of its own.
  if (params.ntasks <= pus && !mapping.gpu_optim && !mapping.greedy)
    EXPECT_FALSE(overlap) << summary(mapping);
  for (const auto& [domain, counts] : gpu_counts_per_domain) {
    auto [low, high] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*high - *low, 1u) << "GPU split in domain " << domain << ": " << summary(mapping);
  }
}

void check_grid(const TopologyView& view) {
  int numas = static_cast<int>(view.numas.size());
  int cores = static_cast<int>(view.levels[static_cast<std::size_t>(view.core_depth)].size());
  for (int ntasks : {1, 2, 3, numas, numas + 1, cores, cores + 1, view.all_cpus().weight()})
    for (bool greedy : {false, true})
      for (bool gpu_optim : {false, true}) {
        Params params = params_for(ntasks);
        params.greedy = greedy;
        params.gpu_optim = gpu_optim;
        check_properties(view, params);
      }
}

TEST(Fixed, PropertiesOnSyntheticNodes) {
  for (const char* description :
       {"packages=1,cores=4", "packages=2,numa=2,l3=2,cores=4,smt=2,gpus=1",
        "packages=1,numa=4,l3=2,cores=8,smt=2,gpus=2",
        "packages=4,numa=1,l3=3,cores=8,smt=2,gpus=1,partitions=6",
        "packages=2,numa=2,cores=5,smt=4,gpus=3,gpu-kind=nvml",
        "packages=2,numa=1,cores=6,hbm=1,gpus=1", "packages=2,cores=4,smt=2,cpuless=2",
        "packages=2,numa=2,cores=3,numbering=consecutive,smt=2,gpus=1,gpu-kind=levelzero"}) {
    check_grid(TopologyView::build(machine(description)));
  }
}

TEST(Fixed, PropertiesOnTopologyFiles) {
  auto files = testing::topology_files();
  if (files.empty()) GTEST_SKIP() << "../shared/data/topologies is absent";
  for (const auto& file : files) check_grid(TopologyView::build(Topology::from_xml_file(file)));
}

// Quirk 1: two NUMA nodes under one parent (KNL SNC + HBM, Grace-Hopper on hwloc < 2.12).
TEST(Fixed, NumaNodesSharingAParentAreOneDomain) {
  Topology topology = machine("packages=2,numa=1,cores=4,hbm=1");
  TopologyView view = TopologyView::build(topology);
  ASSERT_EQ(view.numas.size(), 4u);
  Params params = params_for(4, Mode::compat);
  // mpibind v0.23.1: tasks 0 and 1 (DRAM and HBM node of package 0) get the same CPUs.
  EXPECT_EQ(summary(map(view, params)), "0-3/ 0-3/ 4-7/ 4-7/");
  params.mode = Mode::fixed;
  Mapping fixed = map(view, params);
  EXPECT_EQ(summary(fixed), "0-1/ 2-3/ 4-5/ 6-7/");
  EXPECT_EQ(fixed.tasks[0].memory_nodes.list(), "0");  // the DRAM node, not the HBM one
  EXPECT_EQ(fixed.tasks[3].memory_nodes.list(), "2");
}

// Quirk 2: CPU-less NUMA nodes must not get tasks (no empty cpuset).
TEST(Fixed, CpulessNumaNodesGetNoTasks) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=2,cpuless=2"));
  ASSERT_EQ(view.numas.size(), 4u);
  for (int ntasks : {1, 2, 3, 4, 5}) {
    Params params = params_for(ntasks);
    params.greedy = false;
    Mapping mapping = map(view, params);
    for (const auto& task : mapping.tasks) EXPECT_FALSE(task.cpus.empty()) << summary(mapping);
  }
  // Greedy counts domains with CPUs only: 2 tasks take one package each. mpibind counts the
  // CPU-less nodes too and hands task 1 their parent, the whole machine: both tasks get 0-3.
  EXPECT_EQ(summary(map(view, params_for(2))), "0-1/ 2-3/");
  EXPECT_EQ(summary(map(view, params_for(2, Mode::compat))), "0-3/ 0-3/");
}

// Quirk 3 and 4: DRM cards carry no GPUVendor; mpibind v0.23.1 segfaults on them.
TEST(Fixed, DrmCardsAreNotGpus) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=4,gpus=1,gpu-kind=drm"));
  try {
    map(view, params_for(2, Mode::compat));
    FAIL() << "compat mode should refuse what crashes mpibind";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("card0"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("crashes"), std::string::npos) << error.what();
  }
  Mapping fixed = map(view, params_for(2));
  EXPECT_EQ(fixed.num_gpus(), 0);
  EXPECT_FALSE(fixed.gpu_optim);
}

// Quirk 5: CUDA/OpenCL-only XMLs show no GPUs to mpibind; the fixed mode falls back to them.
TEST(Fixed, CudaOnlyNodesStillHaveGpus) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=4,gpus=2,gpu-kind=cuda"));
  EXPECT_EQ(map(view, params_for(4, Mode::compat)).num_gpus(), 0);
  Mapping fixed = map(view, params_for(4));
  EXPECT_EQ(fixed.num_gpus(), 4);
  EXPECT_EQ(summary(fixed), "0-1/0 2-3/1 4-5/2 6-7/3");
  EXPECT_EQ(task_environment(fixed, 2).back(),
            (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "2"}));
}

// Quirk 6: the visible-devices variable follows the vendor, LevelZero included.
TEST(Fixed, LevelZeroGetsZeAffinityMask) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=4,gpus=1,gpu-kind=levelzero"));
  Mapping compat = map(view, params_for(2, Mode::compat));
  EXPECT_EQ(task_environment(compat, 1).back().first, "VISIBLE_DEVICES");
  Mapping fixed = map(view, params_for(2));
  EXPECT_EQ(task_environment(fixed, 1).back(),
            (std::pair<std::string, std::string>{"ZE_AFFINITY_MASK", "1"}));
  EnvOptions hip;
  hip.hip_visible_devices = true;
  Mapping amd = map(TopologyView::build(machine("packages=2,cores=4,gpus=1")), params_for(2));
  auto env = task_environment(amd, 1, hip);
  ASSERT_EQ(env.size(), 5u);
  EXPECT_EQ(env[3], (std::pair<std::string, std::string>{"ROCR_VISIBLE_DEVICES", "1"}));
  EXPECT_EQ(env[4], (std::pair<std::string, std::string>{"HIP_VISIBLE_DEVICES", "1"}));
}

// GPU partitions sharing one PCI function are kept apart (MI300A CPX): 3 partitions, 2 tasks.
TEST(Fixed, PartitionsSharingAPciIdAreSeparateGpus) {
  TopologyView view = TopologyView::build(machine("packages=1,cores=6,gpus=1,partitions=3"));
  for (Mode mode : {Mode::compat, Mode::fixed}) {
    Params params = params_for(2, mode);
    EXPECT_EQ(summary(map(view, params)), "0-2/0,1 3-5/2");
  }
}

// Rule zero-weight-guard: a GPU on the machine's own host bridge is local to no domain, so the
// GPU weights are all zero. mpibind counts it by nodeset in every NUMA node instead.
TEST(Fixed, ZeroGpuWeightFallsBackToPus) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=4,gpus=1"));
  for (auto& device : view.os_devices) {
    device.ancestor_cpuset = view.all_cpus();
    device.ancestor_nodeset = Bitmap::parse_list("0-1", "test");
  }
  Mapping fixed = map(view, params_for(2));
  EXPECT_EQ(summary(fixed), "0-3/ 4-7/");
  EXPECT_FALSE(fixed.gpu_optim);
  ASSERT_FALSE(fixed.notes.empty());
  EXPECT_EQ(fixed.notes.back().rfind("zero-weight-guard", 0), 0u);
  EXPECT_EQ(summary(map(view, params_for(2, Mode::compat))), "0-3/ 4-7/");
}

// Rule restrict-as-mask; a restriction that leaves nothing is an error, not an empty mapping.
TEST(Fixed, RestrictionIsALogicalMask) {
  TopologyView view = TopologyView::build(machine("packages=2,numa=2,cores=4,smt=2,gpus=1"));
  Params params = params_for(2);
  params.restrict_set = Bitmap::parse_list("8-15,24-31", "test");
  EXPECT_EQ(summary(map(view, params)), "8-11/2 12-15/3");
  params.restrict_type = RestrictType::mem;
  params.restrict_set = Bitmap::parse_list("1", "test");
  EXPECT_EQ(summary(map(view, params)), "4-5/1 6-7/1");
  params.restrict_type = RestrictType::cpu;
  params.restrict_set = Bitmap::parse_list("100-120", "test");
  EXPECT_THROW(map(view, params), Error);
}

TEST(Fixed, GreedyHonoursSmt) {
  TopologyView view = TopologyView::build(machine("packages=2,numa=2,cores=2,smt=2"));
  Params params = params_for(1);
  params.smt = 1;
  Mapping fixed = map(view, params);
  EXPECT_EQ(fixed.tasks[0].cpus.list(), "0-7");
  EXPECT_EQ(fixed.tasks[0].nthreads, 8);
  params.mode = Mode::compat;
  EXPECT_EQ(map(view, params).tasks[0].cpus.list(), "0-15");
}

// Rule rm-gpu-set: only the GPUs the resource manager gave are handed out, and tasks are
// weighted by those.
TEST(Fixed, ResourceManagerGpuSet) {
  TopologyView view = TopologyView::build(machine("packages=2,cores=4,gpus=2"));
  Params params = params_for(2);
  params.gpu_set = Bitmap::parse_list("2-3", "test");
  EXPECT_EQ(summary(map(view, params)), "4-5/2 6-7/3");
  params.mode = Mode::compat;
  EXPECT_THROW(map(view, params), Error);
}

// Rule cuda-uuids: CUDA_VISIBLE_DEVICES can name GPUs by UUID.
TEST(Fixed, CudaVisibleDevicesByUuid) {
  Mapping mapping =
      map(TopologyView::build(machine("packages=2,cores=4,gpus=1,gpu-kind=nvml")), params_for(2));
  EnvOptions uuids;
  uuids.cuda_uuids = true;
  EXPECT_EQ(task_environment(mapping, 1).back().second, "1");
  EXPECT_EQ(task_environment(mapping, 1, uuids).back().second, mapping.devices[1].uuid);
  EXPECT_EQ(mapping.devices[1].uuid, "000000000000a001");
}

TEST(Fixed, RulesAreNamed) {
  std::vector<std::string> names;
  for (const auto& rule : kRules) names.emplace_back(rule.name);
  for (const char* name :
       {"gpu-detection", "memory-domains", "cpuless-memory-skipped", "zero-weight-guard",
        "restrict-as-mask", "visible-devices-per-vendor", "strict-options", "memory-binding"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

}  // namespace
}  // namespace wavekit::bind
