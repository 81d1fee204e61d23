// The machine-description helper: its XML loads in hwloc, and hwloc-calc (hwloc's own command
// line tool, an independent reader) counts the objects the description asked for.
#include "wavekit/bind/machine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test_support.h"
#include "wavekit/support/file.h"

namespace wavekit::bind {
namespace {

std::string hwloc_calc(const std::string& xml_path, const std::string& arguments) {
  auto result = testing::run_command(std::string(WAVEKIT_HWLOC_CALC) + " --input " + xml_path +
                                     " " + arguments + " 2>&1");
  EXPECT_EQ(result.status, 0) << result.output;
  while (!result.output.empty() && result.output.back() == '\n') result.output.pop_back();
  return result.output;
}

TEST(Machine, HwlocCalcCountsWhatWasDescribed) {
  if (std::string(WAVEKIT_HWLOC_CALC).empty()) GTEST_SKIP() << "hwloc-calc is not installed";
  std::string path = ::testing::TempDir() + "bind_machine_" + std::to_string(getpid()) + ".xml";
  write_file(path, machine_xml(parse_machine_description(
                       "packages=2,numa=2,l3=2,cores=4,smt=2,gpus=1,hbm=1,cpuless=1")));
  EXPECT_EQ(hwloc_calc(path, "--number-of package all"), "2");
  EXPECT_EQ(hwloc_calc(path, "--number-of numa all"), "9");  // 4 DRAM + 4 HBM + 1 CPU-less
  EXPECT_EQ(hwloc_calc(path, "--number-of l3 all"), "8");
  EXPECT_EQ(hwloc_calc(path, "--number-of core all"), "32");
  EXPECT_EQ(hwloc_calc(path, "--number-of pu all"), "64");
  // Linux numbering: core 0's PUs are 0 and 32 (siblings last).
  EXPECT_EQ(hwloc_calc(path, "--physical-output --intersect pu core:0"), "0,32");
  EXPECT_EQ(hwloc_calc(path, "--physical-output --intersect pu numa:2"),
            "8,40,9,41,10,42,11,43,12,44,13,45,14,46,15,47");
  std::remove(path.c_str());
}

TEST(Machine, ConsecutiveNumbering) {
  if (std::string(WAVEKIT_HWLOC_CALC).empty()) GTEST_SKIP() << "hwloc-calc is not installed";
  std::string path = ::testing::TempDir() + "bind_machine_c_" + std::to_string(getpid()) + ".xml";
  write_file(path, machine_xml(parse_machine_description("cores=4,smt=4,numbering=consecutive")));
  EXPECT_EQ(hwloc_calc(path, "--physical-output --intersect pu core:1"), "4,5,6,7");
  std::remove(path.c_str());
}

TEST(Machine, GpusAreLocalToTheirDomainAndKeepTheirKind) {
  TopologyView view =
      TopologyView::build(testing::machine("packages=2,numa=2,cores=4,gpus=2,partitions=2,nics=1"));
  int gpus = 0, nics = 0;
  for (const auto& device : view.os_devices) {
    if (device.subtype == "RSMI") {
      ++gpus;
      EXPECT_TRUE(device.has_pci_parent);
      EXPECT_EQ(device.vendor_id, 0x1002u);
      EXPECT_EQ(device.ancestor_cpuset.weight(), 4);  // the domain's Group
    }
    if (device.subtype == "Slingshot") ++nics;
  }
  EXPECT_EQ(gpus, 16);
  EXPECT_EQ(nics, 2);
  // Partitions share the PCI function of their GPU.
  EXPECT_EQ(view.os_devices[0].pci_busid, view.os_devices[1].pci_busid);
  EXPECT_NE(view.os_devices[1].pci_busid, view.os_devices[2].pci_busid);
}

TEST(Machine, BadDescriptionsAreNamed) {
  auto message = [](const char* text) {
    try {
      machine_xml(parse_machine_description(text));
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("packages=0").find("packages='0'"), std::string::npos);
  EXPECT_NE(message("sockets=2").find("unknown key 'sockets'"), std::string::npos);
  EXPECT_NE(message("cores=4,cores=8").find("'cores' given twice"), std::string::npos);
  EXPECT_NE(message("gpu-kind=tpu").find("'tpu'"), std::string::npos);
  EXPECT_NE(message("cores").find("not key=value"), std::string::npos);
  EXPECT_NE(message("gpus-on=core").find("gpus-on='core'"), std::string::npos);
  EXPECT_NE(message("cores=4x").find("cores='4x'"), std::string::npos);
  EXPECT_NE(message("packages=64,cores=512,smt=8").find("16384"), std::string::npos);
}

}  // namespace
}  // namespace wavekit::bind
