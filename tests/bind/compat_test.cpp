// Compat mode against mpibind v0.23.1's published answers: the expected.* files of mpibind's
// own test suite (12 cases per topology) and the known answers of the design page (several
// printed by mpibind on a real Tioga node). The topologies are third-party data read in place.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"
#include "wavekit/bind/format.h"

namespace wavekit::bind {
namespace {

using testing::summary;
using testing::topologies_dir;

struct ExpectedCase {
  int number = 0;
  nlohmann::json params;
  std::string threads, cpus, gpus;
};

std::string unquote(const std::string& line) {
  std::string text = line;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
    return text.substr(1, text.size() - 2);
  ADD_FAILURE() << "not a quoted answer line: " << line;
  return text;
}

// mpibind's format: "# N:", a JSON params comment, a description, then three quoted lines.
std::vector<ExpectedCase> read_expected(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);)
    if (!line.empty()) lines.push_back(line);
  std::vector<ExpectedCase> cases;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    int number = 0;
    char colon = 0;
    if (std::sscanf(lines[i].c_str(), "# %d%c", &number, &colon) != 2 || colon != ':') continue;
    ExpectedCase c;
    c.number = number;
    c.params = nlohmann::json::parse(lines.at(i + 1).substr(1))["params"];
    c.threads = unquote(lines.at(i + 3));
    c.cpus = unquote(lines.at(i + 4));
    c.gpus = unquote(lines.at(i + 5));
    cases.push_back(c);
    i += 5;
  }
  return cases;
}

std::string joined(const Mapping& mapping, int what) {
  std::string out;
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t) {
    if (t) out += ";";
    if (what == 0) out += std::to_string(mapping.tasks[t].nthreads);
    if (what == 1) out += mapping.tasks[t].cpus.list();
    if (what == 2) out += gpu_smi_list(mapping, static_cast<int>(t));
  }
  return out;
}

void check_expected_file(const std::string& name, const std::string& xml) {
  auto dir = topologies_dir();
  if (!dir) GTEST_SKIP() << "../shared/data/topologies is absent; mpibind's answers are there";
  auto cases = read_expected(*dir + "/" + name);
  ASSERT_EQ(cases.size(), 12u) << name;
  Topology topology = Topology::from_xml_file(*dir + "/" + xml);
  for (const auto& c : cases) {
    SCOPED_TRACE(name + " case " + std::to_string(c.number));
    Params params;
    params.mode = Mode::compat;
    params.ntasks = c.params["ntasks"];
    params.nthreads = c.params["in_nthreads"];
    params.greedy = c.params["greedy"] == 1;
    params.gpu_optim = c.params["gpu_optim"] == 1;
    params.smt = c.params["smt"];
    if (!c.params["restr_set"].is_null())
      params.restrict_set =
          Bitmap::parse_list(c.params["restr_set"].get<std::string>(), "restr_set");
    params.restrict_type = c.params["restrict_type"] == 1 ? RestrictType::mem : RestrictType::cpu;
    Mapping mapping = map_topology(topology, params);
    // Case 4 predates v0.23.1 honouring a user-given nthreads on the greedy path.
    std::string threads = c.threads;
    if (c.number == 4) {
      threads.clear();
      for (int t = 0; t < params.ntasks; ++t)
        threads += (t ? ";" : "") + std::to_string(params.nthreads);
    }
    EXPECT_EQ(joined(mapping, 0), threads);
    EXPECT_EQ(joined(mapping, 1), c.cpus);
    EXPECT_EQ(joined(mapping, 2), c.gpus);
  }
}

TEST(Compat, ExpectedCoralLassen) {
  check_expected_file("expected.coral-lassen", "coral-lassen.xml");
}
TEST(Compat, ExpectedCts1Quartz) {
  check_expected_file("expected.cts1-quartz", "cts1-quartz-smt1.xml");
}

struct KnownAnswer {
  const char* topology;
  Params params;
  const char* expected;  // summary(): cpus/gpus per task
  int nthreads;          // of task 0; 0: not checked
};

Params p(int ntasks, int nthreads = 0, int smt = 0, bool greedy = true, bool gpu_optim = true,
         const char* restrict_cpus = nullptr) {
  Params params;
  params.mode = Mode::compat;
  params.ntasks = ntasks;
  params.nthreads = nthreads;
  params.smt = smt;
  params.greedy = greedy;
  params.gpu_optim = gpu_optim;
  if (restrict_cpus) params.restrict_set = Bitmap::parse_list(restrict_cpus, "test");
  return params;
}

// The design page's table (section 4); rows marked (hw) there were printed on a real node.
TEST(Compat, DesignPageKnownAnswers) {
  auto dir = topologies_dir();
  if (!dir) GTEST_SKIP() << "../shared/data/topologies is absent";
  const std::vector<KnownAnswer> answers = {
      {"eas-tioga.xml", p(8), "0-7/4 8-15/5 16-23/2 24-31/3 32-39/6 40-47/7 48-55/0 56-63/1", 8},
      {"eas-tioga.xml", p(4), "0-15/4,5 16-31/2,3 32-47/6,7 48-63/0,1", 16},
      {"eas-tioga.xml", p(2), "0-31,64-95/4,5,2,3 32-63,96-127/6,7,0,1", 64},
      {"eas-tioga.xml", p(2, 0, 0, false), "0-15/4,5 16-31/2,3", 16},
      {"eas-tioga.xml", p(8, 0, 2),
       "0-7,64-71/4 8-15,72-79/5 16-23,80-87/2 24-31,88-95/3 32-39,96-103/6 40-47,104-111/7 "
       "48-55,112-119/0 56-63,120-127/1",
       16},
      {"eas-tioga.xml", p(8, 1), "0/4 8/5 16/2 24/3 32/6 40/7 48/0 56/1", 1},
      {"eas-tioga.xml", p(9, 0, 0, true, true, "46-63,110-127"),
       "46/7 110/7 47,111/7 48-50/0 51-53/0 54-56/0 57-59/1 60-61/1 62-63/1", 0},
      {"eas-tioga.xml", p(9, 0, 0, true, false, "46-63,110-127"),
       "46-47/7 48-49/0 50-51/0 52-53/0 54-55/0 56-57/1 58-59/1 60-61/1 62-63/1", 2},
      {"eas-tioga.xml", p(2, 0, 2, true, true, "62-63,126-127"), "62,126/1 63,127/1", 2},
      {"tuo.SPX.xml", p(1), "0-191/0,1,2,3", 192},
      {"corona.xml", p(4), "0-11/2,3 12-23/1,0 24-35/6,7 36-47/5,4", 12},
  };
  for (const auto& answer : answers) {
    SCOPED_TRACE(std::string(answer.topology) + " ntasks " + std::to_string(answer.params.ntasks));
    Mapping mapping =
        map_topology(Topology::from_xml_file(*dir + "/" + answer.topology), answer.params);
    EXPECT_EQ(summary(mapping), answer.expected);
    if (answer.nthreads) EXPECT_EQ(mapping.tasks[0].nthreads, answer.nthreads);
  }
}

// The same answers without ../shared/data: a generated node of Tioga's shape (4 NUMA domains
// of 2 L3s of 8 cores, SMT 2, a GPU on each L3). Its GPUs are numbered in discovery order, so
// Tioga's SMI ids 4,5,2,3,6,7,0,1 read 0..7 here.
TEST(Compat, KnownAnswersOnAGeneratedTiogaShapedNode) {
  Topology topology = testing::machine("packages=1,numa=4,l3=2,cores=8,smt=2,gpus=1,gpus-on=l3");
  const std::vector<std::pair<Params, std::string>> answers = {
      {p(8), "0-7/0 8-15/1 16-23/2 24-31/3 32-39/4 40-47/5 48-55/6 56-63/7"},
      {p(4), "0-15/0,1 16-31/2,3 32-47/4,5 48-63/6,7"},
      {p(2), "0-31,64-95/0,1,2,3 32-63,96-127/4,5,6,7"},
      {p(2, 0, 0, false), "0-15/0,1 16-31/2,3"},
      {p(9, 0, 0, true, true, "46-63,110-127"),
       "46/5 110/5 47,111/5 48-50/6 51-53/6 54-56/6 57-59/7 60-61/7 62-63/7"},
      {p(2, 0, 2, true, true, "62-63,126-127"), "62,126/7 63,127/7"},
  };
  for (const auto& [params, expected] : answers)
    EXPECT_EQ(summary(map_topology(topology, params)), expected) << "ntasks " << params.ntasks;
}

TEST(Compat, TuolumneCpxOnePartitionPerTask) {
  auto dir = topologies_dir();
  if (!dir) GTEST_SKIP() << "../shared/data/topologies is absent";
  Topology topology = Topology::from_xml_file(*dir + "/tuo.CPX.xml");
  Mapping mapping = map_topology(topology, p(24));
  ASSERT_EQ(mapping.tasks.size(), 24u);
  for (int i = 0; i < 24; ++i) {
    // Task i gets cores 4i..4i+3 (one PU each) and GPU partition i.
    EXPECT_EQ(mapping.tasks[static_cast<std::size_t>(i)].cpus.list(),
              std::to_string(4 * i) + "-" + std::to_string(4 * i + 3));
    EXPECT_EQ(gpu_smi_list(mapping, i), std::to_string(i));
  }
  Mapping four = map_topology(topology, p(4));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(four.tasks[static_cast<std::size_t>(i)].gpus.size(), 6u);
  EXPECT_EQ(gpu_smi_list(four, 1), "6,7,8,9,10,11");
}

TEST(Compat, TuolumneSpxSharesAnApuPerThreeTasks) {
  auto dir = topologies_dir();
  if (!dir) GTEST_SKIP() << "../shared/data/topologies is absent";
  Mapping mapping = map_topology(Topology::from_xml_file(*dir + "/tuo.SPX.xml"), p(8));
  EXPECT_EQ(summary(mapping).substr(0, 31), "0-11/0 12-23/0 24-35/1 36-47/1 ");
}

// mpibind_mapping_print's line format, with SMI ids (the CLI's --format mpibind).
TEST(Compat, MappingPrintFormat) {
  auto dir = topologies_dir();
  if (!dir) GTEST_SKIP() << "../shared/data/topologies is absent";
  Mapping mapping = map_topology(Topology::from_xml_file(*dir + "/eas-tioga.xml"), p(2));
  EXPECT_EQ(format_mpibind(mapping),
            "mpibind: task   0 nths 64 gpus 4,5,2,3 cpus 0-31,64-95\n"
            "mpibind: task   1 nths 64 gpus 6,7,0,1 cpus 32-63,96-127\n");
  auto env = task_environment(mapping, 1);
  ASSERT_EQ(env.size(), 4u);
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"OMP_NUM_THREADS", "64"}));
  EXPECT_EQ(env[1].second, "threads");
  EXPECT_EQ(env[2].second, "spread");
  EXPECT_EQ(env[3], (std::pair<std::string, std::string>{"ROCR_VISIBLE_DEVICES", "6,7,0,1"}));
}

// The parameter grid of issue 7 over every topology file. Without mpibind outputs for every
// point, the oracle is mpibind's own invariants plus the fixed mode: on these files no fixed
// rule changes anything (no shared NUMA parents, no DRM devices), so the two code paths must
// agree wherever neither restriction nor a rule is involved.
TEST(Compat, ParameterGridAgreesWithFixedModeOnRegularNodes) {
  auto files = testing::topology_files();
  if (files.empty()) GTEST_SKIP() << "../shared/data/topologies is absent";
  int points = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    Topology topology = Topology::from_xml_file(file);
    TopologyView view = TopologyView::build(topology);
    int numas = static_cast<int>(view.numas.size());
    int l3 = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_L3CACHE);
    int cores = static_cast<int>(view.levels[static_cast<std::size_t>(view.core_depth)].size());
    int pus = view.all_cpus().weight();
    std::vector<int> tasks = {1, 2, numas - 1, numas, numas + 1, l3, cores, cores + 1, pus};
    for (int ntasks : tasks) {
      if (ntasks <= 0) continue;
      for (int nthreads : {0, 1, 2 * numas})
        for (int greedy : {0, 1})
          for (int gpu_optim : {0, 1})
            for (int smt = 0; smt <= view.hw_smt(); ++smt) {
              Params params = p(ntasks, nthreads, smt, greedy, gpu_optim);
              Mapping compat = map(view, params);
              params.mode = Mode::fixed;
              Mapping fixed = map(view, params);
              ++points;
              ASSERT_EQ(compat.tasks.size(), static_cast<std::size_t>(ntasks));
              // Rule greedy-honours-smt is the one rule that applies on these nodes.
              if (!(compat.greedy && smt > 0))
                EXPECT_EQ(summary(compat), summary(fixed))
                    << "ntasks " << ntasks << " nthreads " << nthreads << " greedy " << greedy
                    << " gpu_optim " << gpu_optim << " smt " << smt;
              Bitmap all = view.all_cpus();
              for (const auto& task : compat.tasks) {
                EXPECT_TRUE(all.includes(task.cpus));
                EXPECT_FALSE(task.cpus.empty());
                EXPECT_GE(task.nthreads, 1);
                if (nthreads > 0) EXPECT_EQ(task.nthreads, nthreads);
              }
            }
    }
  }
  EXPECT_GT(points, 500);
}

// mpibind's 12 generated cases (design page, section 5) on every topology file, restrictions
// included (through hwloc_topology_restrict, as mpibind does). Only lassen and quartz have
// published answers; elsewhere the cases must map every task inside the restriction.
TEST(Compat, TwelveGeneratedCasesOnEveryTopology) {
  auto files = testing::topology_files();
  if (files.empty()) GTEST_SKIP() << "../shared/data/topologies is absent";
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    Topology topology = Topology::from_xml_file(file);
    TopologyView view = TopologyView::build(topology);
    int numas = static_cast<int>(view.numas.size());
    int cores = static_cast<int>(view.levels[static_cast<std::size_t>(view.core_depth)].size());
    int hw_smt = view.hw_smt();
    const auto& first_core = view.levels[static_cast<std::size_t>(view.core_depth)].front().cpuset;
    Bitmap first_pu;
    first_pu.set(static_cast<unsigned>(view.all_cpus().first()));
    Bitmap first_numa;
    first_numa.set(view.numas.front().os_index);
    auto restricted = [](Params params, const Bitmap& set, RestrictType type) {
      params.restrict_set = set;
      params.restrict_type = type;
      return params;
    };
    const std::vector<Params> cases = {
        p(cores),
        p(1),
        p(2),
        p(std::max(1, numas - 1), 2 * numas),
        restricted(p(hw_smt), first_core, RestrictType::cpu),
        p(2, 0, 1),
        p(2, 0, hw_smt),
        p(2, 0, std::max(1, hw_smt - 1)),
        restricted(p(2), first_numa, RestrictType::mem),
        p(numas, 0, 0, true, false),
        p(numas, 0, 0, true, true),
        restricted(p(8, 0, 0, true, false), first_pu, RestrictType::cpu),
    };
    for (std::size_t c = 0; c < cases.size(); ++c) {
      SCOPED_TRACE("case " + std::to_string(c + 1));
      Mapping mapping = map_topology(topology, cases[c]);
      ASSERT_EQ(mapping.tasks.size(), static_cast<std::size_t>(cases[c].ntasks));
      Bitmap allowed = view.all_cpus();
      if (cases[c].restrict_set && cases[c].restrict_type == RestrictType::cpu)
        allowed = *cases[c].restrict_set;
      if (cases[c].restrict_set && cases[c].restrict_type == RestrictType::mem)
        allowed = view.numas.front().cpuset;
      for (const auto& task : mapping.tasks) {
        EXPECT_FALSE(task.cpus.empty());
        EXPECT_TRUE(allowed.includes(task.cpus))
            << task.cpus.list() << " outside " << allowed.list();
      }
    }
  }
}

}  // namespace
}  // namespace wavekit::bind
