// The mpibind-compatible C API gives what the C++ mapping gives, through mpibind's calls.
#include <gtest/gtest.h>

#include "test_support.h"
#include "wavekit/bind/format.h"
#include "wavekit/bind/machine.h"
#include "wavekit/bind/mpibind.h"

namespace wavekit::bind {
namespace {

TEST(CApi, MirrorsMpibindCalls) {
  std::string xml =
      machine_xml(parse_machine_description("packages=2,numa=2,cores=4,smt=2,gpus=1"));
  hwloc_topology_t topology;
  ASSERT_EQ(hwloc_topology_init(&topology), 0);
  ASSERT_EQ(hwloc_topology_set_xmlbuffer(topology, xml.c_str(), static_cast<int>(xml.size()) + 1),
            0);
  ASSERT_EQ(mpibind_load_topology(topology), 0);

  mpibind_t* handle = nullptr;
  ASSERT_EQ(mpibind_init(&handle), 0);
  ASSERT_EQ(mpibind_set_topology(handle, topology), 0);
  ASSERT_EQ(mpibind_set_ntasks(handle, 8), 0);
  ASSERT_EQ(mpibind(handle), 0) << wavekit_bind_last_error(handle);
  EXPECT_EQ(mpibind_get_num_gpus(handle), 4);

  Params params;
  params.ntasks = 8;
  Mapping reference =
      map(TopologyView::build(testing::machine("packages=2,numa=2,cores=4,smt=2,gpus=1")), params);
  int* nthreads = mpibind_get_nthreads(handle);
  hwloc_bitmap_t* cpus = mpibind_get_cpus(handle);
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(nthreads[t], reference.tasks[static_cast<std::size_t>(t)].nthreads);
    EXPECT_EQ(Bitmap(cpus[t]), reference.tasks[static_cast<std::size_t>(t)].cpus);
    int ngpus = 0;
    char** gpus = mpibind_get_gpus_ptask(handle, t, &ngpus);
    ASSERT_EQ(ngpus, 1);
    EXPECT_EQ(std::string(gpus[0]), gpu_smi_list(reference, t));
    int ncpus = 0;
    int* cpu_list = mpibind_get_cpus_ptask(handle, t, &ncpus);
    ASSERT_EQ(ncpus, reference.tasks[static_cast<std::size_t>(t)].cpus.weight());
    EXPECT_EQ(static_cast<unsigned>(cpu_list[0]),
              reference.tasks[static_cast<std::size_t>(t)].cpus.indexes()[0]);
  }
  ASSERT_EQ(mpibind_set_gpu_ids(handle, MPIBIND_ID_PCIBUS), 0);
  int ngpus = 0;
  char** busids = mpibind_get_gpus_ptask(handle, 0, &ngpus);
  ASSERT_EQ(ngpus, 1);
  EXPECT_EQ(std::string(busids[0]), reference.devices[0].pci_busid);

  ASSERT_EQ(mpibind_set_env_vars(handle), 0);
  int count = 0;
  char** names = mpibind_get_env_var_names(handle, &count);
  ASSERT_EQ(count, 4);
  EXPECT_STREQ(names[0], "OMP_NUM_THREADS");
  EXPECT_STREQ(names[3], "ROCR_VISIBLE_DEVICES");
  char** values = mpibind_get_env_var_values(handle, "ROCR_VISIBLE_DEVICES");
  ASSERT_NE(values, nullptr);
  EXPECT_STREQ(values[7], "3");

  char line[256];
  ASSERT_GT(mpibind_mapping_ptask_snprint(line, sizeof line, handle, 1), 0);
  EXPECT_EQ(std::string(line), "mpibind: task   1 nths  2 gpus 0 cpus 2-3");

  // Errors are reported, not crashed on.
  ASSERT_EQ(mpibind_set_smt(handle, 5), 0);
  EXPECT_EQ(mpibind(handle), 1);
  EXPECT_NE(std::string(wavekit_bind_last_error(handle)).find("smt"), std::string::npos);
  EXPECT_EQ(mpibind_get_cpus(handle), nullptr);

  mpibind_finalize(handle);
  hwloc_topology_destroy(topology);
}

TEST(CApi, CompatModeAndRestriction) {
  std::string xml = machine_xml(parse_machine_description("packages=2,cores=4,hbm=1"));
  hwloc_topology_t topology;
  ASSERT_EQ(hwloc_topology_init(&topology), 0);
  ASSERT_EQ(hwloc_topology_set_xmlbuffer(topology, xml.c_str(), static_cast<int>(xml.size()) + 1),
            0);
  ASSERT_EQ(mpibind_load_topology(topology), 0);
  mpibind_t* handle = nullptr;
  ASSERT_EQ(mpibind_init(&handle), 0);
  mpibind_set_topology(handle, topology);
  mpibind_set_ntasks(handle, 4);
  wavekit_bind_set_compat(handle, 1);
  ASSERT_EQ(mpibind(handle), 0) << wavekit_bind_last_error(handle);
  char text[512];
  mpibind_mapping_snprint(text, sizeof text, handle);
  EXPECT_EQ(std::string(text),
            "mpibind: task   0 nths  4 gpus  cpus 0-3\nmpibind: task   1 nths  4 gpus  cpus 0-3\n"
            "mpibind: task   2 nths  4 gpus  cpus 4-7\nmpibind: task   3 nths  4 gpus  cpus 4-7\n");
  char restrict_ids[] = "4-7";
  mpibind_set_restrict_ids(handle, restrict_ids);
  mpibind_set_ntasks(handle, 2);
  ASSERT_EQ(mpibind(handle), 0) << wavekit_bind_last_error(handle);
  mpibind_mapping_snprint(text, sizeof text, handle);
  EXPECT_EQ(std::string(text),
            "mpibind: task   0 nths  4 gpus  cpus 4-7\nmpibind: task   1 nths  4 gpus  cpus 4-7\n");
  mpibind_finalize(handle);
  hwloc_topology_destroy(topology);
}

}  // namespace
}  // namespace wavekit::bind
