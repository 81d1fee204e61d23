// Bad options and bad topology files get clear errors naming the problem, never a crash; and
// the option parser regressions of mpibind (design page, "Regression since v0.22.0").
#include <gtest/gtest.h>
#include <unistd.h>

#include "test_support.h"
#include "wavekit/bind/machine.h"
#include "wavekit/bind/plugin_options.h"
#include "wavekit/support/file.h"

namespace wavekit::bind {
namespace {

template <typename Function>
std::string error_of(Function function) {
  try {
    function();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Errors, TopologyFiles) {
  std::string dir = ::testing::TempDir() + "bind_errors_" + std::to_string(getpid());
  std::string missing = dir + "-missing.xml";
  EXPECT_TRUE(contains(error_of([&] { Topology::from_xml_file(missing); }),
                       missing + ": No such file or directory"));
  const std::string directory = ::testing::TempDir();
  EXPECT_TRUE(contains(error_of([&] { Topology::from_xml_file(directory); }),
                       directory + ": is a directory"));
  EXPECT_TRUE(contains(error_of([&] { Topology::from_xml_file("/dev/zero"); }), "more than"));
  std::string garbage = dir + "-garbage.xml";
  write_file(garbage, "<topology><object type=\"Machine\"");
  std::string message = error_of([&] { Topology::from_xml_file(garbage); });
  EXPECT_TRUE(contains(message, garbage + ": line 1: an <object> tag is not closed")) << message;
  std::string not_hwloc = dir + "-html.xml";
  write_file(not_hwloc, "<?xml version=\"1.0\"?><html><body/></html>\n");
  EXPECT_TRUE(contains(error_of([&] { Topology::from_xml_file(not_hwloc); }), "cannot load"));
  std::string empty = dir + "-empty.xml";
  write_file(empty, "");
  EXPECT_TRUE(contains(error_of([&] { Topology::from_xml_file(empty); }), empty));
  for (const auto& path : {garbage, not_hwloc, empty}) std::remove(path.c_str());
}

// Debian's hwloc 2.9 crashes (as lstopo --input does) on an object with a cpuset or nodeset
// but without the matching complete set; wavekit refuses such a file, naming the object.
TEST(Errors, TopologyObjectsWithoutCompleteSets) {
  const std::string xml = machine_xml(parse_machine_description("packages=1,cores=2,smt=1"));
  const auto without = [&](const std::string& type, const std::string& attribute) {
    const std::size_t object = xml.find("type=\"" + type + "\"");
    EXPECT_NE(object, std::string::npos) << type;
    const std::size_t at = xml.find(" " + attribute + "=\"", object);
    const std::size_t end = xml.find('"', at + attribute.size() + 3);
    return xml.substr(0, at) + xml.substr(end + 1);
  };
  for (const auto& [type, attribute] :
       std::vector<std::pair<std::string, std::string>>{{"Machine", "complete_cpuset"},
                                                        {"PU", "complete_cpuset"},
                                                        {"NUMANode", "complete_nodeset"}}) {
    const std::string message =
        error_of([&] { Topology::from_xml_buffer(without(type, attribute), "broken.xml"); });
    EXPECT_TRUE(contains(message, "broken.xml: line ")) << message;
    EXPECT_TRUE(contains(message, "object " + type)) << message;
    EXPECT_TRUE(contains(message, "no " + attribute)) << message;
  }
  EXPECT_EQ(error_of([&] { Topology::from_xml_buffer(xml, "whole.xml"); }), "no error");
}

TEST(Errors, CoresToPus) {
  TopologyView view = TopologyView::build(testing::machine("packages=2,cores=4,smt=2"));
  EXPECT_EQ(view.pus_of_cores(Bitmap::parse_list("0,5", "x")).list(), "0,5,8,13");
  EXPECT_TRUE(contains(error_of([&] { view.pus_of_cores(Bitmap::parse_list("8", "x")); }),
                       "core 8 does not exist (the node has 8 cores)"));
}

// hwloc truncates an index beyond int (355555555552777779 became another CPU) and allocates
// its bitmap up to the largest index: a list naming one is refused before hwloc sees it.
TEST(Errors, ListIndexesBeyondAnyMachineAreRefused) {
  std::string message = error_of([] { Bitmap::parse_list("0-3,355555555552777779,1", "cpus"); });
  EXPECT_TRUE(contains(message,
                       "cpus: '0-3,355555555552777779,1': index 355555555552777779 is "
                       "out of range (at most 1048575)"))
      << message;
  message = error_of([] { Bitmap::parse_list("2147483648-2147483650", "cpus"); });
  EXPECT_TRUE(contains(message, "index 2147483648 is out of range")) << message;
  EXPECT_EQ(Bitmap::parse_list("1048575", "cpus").list(), "1048575");
  EXPECT_EQ(Bitmap::parse_list("0007,9", "cpus").list(), "7,9");
}

TEST(Errors, Parameters) {
  TopologyView view = TopologyView::build(testing::machine("packages=2,cores=4,smt=2"));
  Params params;
  params.ntasks = 0;
  EXPECT_TRUE(contains(error_of([&] { map(view, params); }), "number of tasks must be positive"));
  params.ntasks = 2;
  params.nthreads = -1;
  EXPECT_TRUE(contains(error_of([&] { map(view, params); }), "threads"));
  params.nthreads = 0;
  params.smt = 3;
  EXPECT_TRUE(contains(error_of([&] { map(view, params); }), "smt must be between 0"));
  params.smt = 0;
  EXPECT_TRUE(contains(error_of([] { Bitmap::parse_list("0-", "--restrict"); }), "--restrict"));
  EXPECT_TRUE(contains(error_of([] { Bitmap::parse_list("a,b", "--restrict"); }), "'a,b'"));
  EXPECT_TRUE(contains(error_of([] { Bitmap::parse_list("", "--restrict"); }), "--restrict"));
  EXPECT_TRUE(contains(error_of([] { Bitmap::parse_list("1,,2", "--restrict"); }), "--restrict"));
  EXPECT_EQ(Bitmap::parse_list("0-3,8", "x").list(), "0-3,8");
  std::string file = ::testing::TempDir() + "bind_restrict_" + std::to_string(getpid());
  write_file(file, "4-7,12\n");
  EXPECT_EQ(Bitmap::parse_list_or_file(file, "x").list(), "4-7,12");
  write_file(file, "4-7;12\n");
  EXPECT_TRUE(contains(error_of([&] { Bitmap::parse_list_or_file(file, "x"); }), "(file " + file));
  std::remove(file.c_str());
}

// mpibind v0.22+'s shared parser: `gpu_optim:0` became gpu=1, `visible_devices` became
// verbose, `verbose:0` became verbose=1. wavekit parses them as written (rule strict-options).
TEST(Errors, PluginOptionRegressionsOfMpibind) {
  EXPECT_EQ(parse_plugin_options("gpu_optim:0").gpu_optim, false);
  EXPECT_EQ(parse_plugin_options("gpu:1").gpu_optim, true);
  PluginOptions visible = parse_plugin_options("visible_devices:0");
  EXPECT_FALSE(visible.visible_devices);
  EXPECT_EQ(visible.verbose, 0);
  EXPECT_EQ(parse_plugin_options("visible_devices").verbose, 0);
  EXPECT_EQ(parse_plugin_options("verbose:0").verbose, 0);
  EXPECT_EQ(parse_plugin_options("verbose").verbose, 1);
  EXPECT_EQ(parse_plugin_options("v").verbose, 1);
  PluginOptions all = parse_plugin_options("off,greedy:0,smt:2,nthreads:3,membind,compat,hip:1");
  EXPECT_FALSE(all.enabled);
  EXPECT_EQ(all.greedy, false);
  EXPECT_EQ(all.smt, 2);
  EXPECT_EQ(all.nthreads, 3);
  EXPECT_TRUE(all.membind && all.compat && all.hip_visible_devices);
  EXPECT_TRUE(parse_plugin_options("").enabled);
}

TEST(Errors, PluginOptionsRejectWhatTheyDoNotKnow) {
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("gpu_optimize:0"); }),
                       "unknown option 'gpu_optimize:0'"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("verb"); }), "unknown option 'verb'"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("gpu:2"); }), "must be 0 or 1"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("smt"); }), "needs a value"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("smt:x"); }), "whole number"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("on:1"); }), "takes no value"));
  EXPECT_TRUE(contains(error_of([] { parse_plugin_options("on,,off"); }), "empty option"));
}

}  // namespace
}  // namespace wavekit::bind
