// Search spaces, tuners on functions with known optima (Branin 0.397887, Hartmann-6 -3.32237),
// the manager/worker loop with its history, the command objective, and the evaluation tools.
#include "wavekit/tune/tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "test_util.h"
#include "wavekit/support/error.h"
#include "wavekit/tune/eval.h"
#include "wavekit/tune/loop.h"
#include "wavekit/tune/mpi.h"

namespace wavekit::tune {
namespace {

using testing::read_text;
using testing::run_command;
using testing::temp_path;
using testing::write_text;

std::string wavekit(const std::string& args) { return std::string(WAVEKIT_BINARY) + " " + args; }

void expect_space_error(const std::string& json, const std::string& part) {
  try {
    Space::from_json(json);
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Space, ParsesTypesScalesAndConditions) {
  Space s = Space::from_json(R"({"parameters": [
    {"name": "C", "type": "float", "low": 0.1, "high": 1000, "log": true, "default": 1},
    {"name": "n", "type": "int", "low": 1, "high": 8},
    {"name": "kernel", "type": "categorical", "choices": ["rbf", "mixed"]},
    {"name": "a", "type": "float", "low": 0, "high": 1,
     "condition": {"parameter": "kernel", "in": ["mixed"]}}]})");
  ASSERT_EQ(s.dims(), 4u);
  Config c = s.decode({0.5, 1.0, 0.9, 0.25});
  EXPECT_NEAR(c.number.at("C"), 10.0, 1e-9);  // log-scale midpoint of 0.1..1000
  EXPECT_EQ(c.text.at("n"), "8");
  EXPECT_EQ(c.text.at("kernel"), "mixed");
  EXPECT_DOUBLE_EQ(c.number.at("a"), 0.25);
  Config off = s.decode({0.5, 0.0, 0.1, 0.25});
  EXPECT_EQ(off.text.at("kernel"), "rbf");
  EXPECT_EQ(off.text.at("n"), "1");
  EXPECT_EQ(off.number.count("a"), 0u);  // inactive
  auto d = s.decode(s.defaults());
  EXPECT_NEAR(d.number.at("C"), 1.0, 1e-12);
  EXPECT_EQ(d.text.at("kernel"), "rbf");
  // encode inverts decode
  auto u = s.encode(c.number);
  Config back = s.decode(u);
  EXPECT_EQ(back.text, c.text);
}

TEST(Space, BadSpacesAreRefusedWithTheReason) {
  expect_space_error(R"([{"name": "x", "low": 2, "high": 1}])", "low (2) must be below high (1)");
  expect_space_error(R"([{"name": "x", "low": 0, "high": 1, "log": true}])", "needs low > 0");
  expect_space_error(R"([{"name": "x", "low": 0, "high": 1}, {"name": "x", "low": 0, "high": 1}])",
                     "defined twice");
  expect_space_error(R"([{"name": "x", "type": "categorical", "choices": []}])", "needs choices");
  expect_space_error(R"([{"name": "x", "low": 0, "high": 1, "condition": {"parameter": "k",
                      "in": ["a"]}}])",
                     "not a parameter defined before it");
  expect_space_error(R"([{"name": "x", "type": "complex", "low": 0, "high": 1}])",
                     "unknown type 'complex'");
  expect_space_error("{nope", "not JSON");
  expect_space_error(R"([{"name": "x", "low": 0, "high": 1, "default": 3}])", "out of range");
}

std::vector<Record> run_function(const std::string& fn, const std::string& kind, int budget,
                                 std::uint64_t seed, int workers = 1) {
  Space s = function_space(fn);
  TunerOptions o;
  o.kind = kind;
  o.seed = seed;
  o.budget = budget;
  auto tuner = make_tuner(s, o);
  auto obj = function_objective(fn);
  LoopOptions lo;
  lo.budget = budget;
  lo.workers = workers;
  lo.simulate = true;
  return run_loop(s, *tuner, *obj, lo);
}

double best_of(const std::vector<Record>& r) {
  double b = INFINITY;
  for (auto& x : r) b = std::min(b, x.value);
  return b;
}

TEST(Tuners, DeterministicUnderASeed) {
  for (std::string kind : {"random", "lhs", "rf", "gp", "tpe"}) {
    auto a = run_function("branin", kind, 20, 5, 2);
    auto b = run_function("branin", kind, 20, 5, 2);
    auto c = run_function("branin", kind, 20, 6, 2);
    ASSERT_EQ(a.size(), 20u) << kind;
    bool same = true, differs = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      same &= a[i].config.text == b[i].config.text;
      differs |= a[i].config.text != c[i].config.text;
    }
    EXPECT_TRUE(same) << kind;
    EXPECT_TRUE(differs) << kind << ": another seed gave the same points";
  }
}

TEST(Tuners, FindKnownOptima) {
  // medians over three seeds, far below what random search reaches at the same budget
  auto median3 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[1];
  };
  std::vector<double> gp_b, rf_b, tpe_b, rnd_h, gp_h;
  for (std::uint64_t seed : {1, 2, 3}) {
    gp_b.push_back(best_of(run_function("branin", "gp", 40, seed)));
    rf_b.push_back(best_of(run_function("branin", "rf", 64, seed, 4)));
    tpe_b.push_back(best_of(run_function("branin", "tpe", 64, seed)));
    rnd_h.push_back(best_of(run_function("hartmann6", "random", 64, seed)));
    gp_h.push_back(best_of(run_function("hartmann6", "gp", 64, seed)));
  }
  EXPECT_LT(median3(gp_b), 0.40);  // optimum 0.397887
  EXPECT_GT(median3(gp_b), 0.397886);
  EXPECT_LT(median3(rf_b), 0.6);
  EXPECT_LT(median3(tpe_b), 1.0);
  EXPECT_LT(median3(gp_h), -3.2);  // optimum -3.32237
  EXPECT_GT(median3(gp_h), -3.3224);
  EXPECT_LT(median3(gp_h), median3(rnd_h) - 0.3);
}

TEST(Loop, ThreadsHistoryAndResume) {
  Space s = function_space("branin");
  auto obj = function_objective("branin");
  std::string hist = temp_path("h.jsonl");
  TunerOptions o;
  o.kind = "rf";
  LoopOptions lo;
  lo.budget = 12;
  lo.workers = 3;
  lo.history = hist;
  auto t1 = make_tuner(s, o);
  auto first = run_loop(s, *t1, *obj, lo);
  ASSERT_EQ(first.size(), 12u);
  std::set<int> workers, ids;
  for (auto& r : first) workers.insert(r.worker), ids.insert(r.id);
  EXPECT_EQ(ids.size(), 12u);
  EXPECT_GT(workers.size(), 1u);
  auto back = read_history(hist, s);
  ASSERT_EQ(back.size(), 12u);
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].id, first[i].id);
    EXPECT_EQ(back[i].value, first[i].value);
  }
  lo.budget = 20;
  lo.resume = true;
  auto t2 = make_tuner(s, o);
  auto all = run_loop(s, *t2, *obj, lo);
  EXPECT_EQ(all.size(), 20u);
  EXPECT_EQ(read_history(hist, s).size(), 20u);
  // a line cut short by a killed run is dropped, not an error
  std::ofstream(hist, std::ios::app) << "{\"id\": 20, \"numb";
  EXPECT_EQ(read_history(hist, s).size(), 20u);
}

Space xy_space() {
  return Space::from_json(R"([{"name": "x", "low": -2, "high": 2}, {"name": "y", "type": "int",
                                "low": 0, "high": 3}])");
}

TEST(CommandObjective, SubstitutesRunsAndParses) {
  Space s = xy_space();
  CommandSpec spec;
  spec.command_template = "echo 'noise 7'; echo \"result: $(( {y} * 10 ))\" ; echo '{{}}'";
  spec.metric_regex = "result: ([0-9.]+)";
  auto obj = command_objective(spec, s);
  Config c = s.decode({0.5, 1.0});
  EvalResult r = obj->evaluate(c);
  EXPECT_EQ(r.status, "ok") << r.note;
  EXPECT_DOUBLE_EQ(r.value, 30);
  spec.maximize = true;
  EXPECT_DOUBLE_EQ(command_objective(spec, s)->evaluate(c).value, -30);
  spec.command_template = "echo {z}";
  EXPECT_THROW(command_objective(spec, s), Error);
  spec.command_template = "echo x";
  spec.metric_regex = "no group";
  EXPECT_THROW(command_objective(spec, s), Error);
}

TEST(CommandObjective, CrashesAndHangsGetTheWorstValue) {
  Space s = xy_space();
  CommandSpec spec;
  // y = 0: crashes; y = 3: hangs; otherwise prints x
  spec.command_template =
      "if [ {y} = 0 ]; then echo boom; exit 3; fi; if [ {y} = 3 ]; then sleep 60; fi; echo "
      "'v {x}'";
  spec.metric_regex = "v ([-0-9.e]+)";
  spec.timeout_s = 0.5;
  auto obj = command_objective(spec, s);
  EvalResult crash = obj->evaluate(s.decode({0.5, 0.0}));
  EXPECT_EQ(crash.status, "failed");
  EXPECT_NE(crash.note.find("exit code 3: boom"), std::string::npos) << crash.note;
  EvalResult hang = obj->evaluate(s.decode({0.5, 1.0}));
  EXPECT_EQ(hang.status, "timeout");

  TunerOptions o;
  o.kind = "random";
  auto tuner = make_tuner(s, o);
  LoopOptions lo;
  lo.budget = 16;
  lo.workers = 4;
  lo.history = temp_path("cmd.jsonl");
  auto records = run_loop(s, *tuner, *obj, lo);
  ASSERT_EQ(records.size(), 16u);
  double worst = -INFINITY;
  for (auto& r : records)
    if (r.status == "ok") worst = std::max(worst, r.value);
  int bad = 0;
  for (auto& r : records)
    if (r.status != "ok") {
      ++bad;
      EXPECT_LE(r.value, worst);
      EXPECT_NE(r.note.find("worst value"), std::string::npos);
    }
  EXPECT_GT(bad, 0);
  EXPECT_EQ(read_history(lo.history, s).size(), 16u);
}

TEST(Evaluation, FoldsPartitionAndStratify) {
  std::vector<double> y;
  for (int i = 0; i < 100; ++i) y.push_back(i < 90 ? 0 : 1);
  auto folds = stratified_kfold(y, 5, 3);
  std::vector<int> seen(100, 0);
  for (auto& f : folds) {
    EXPECT_EQ(f.train.size() + f.test.size(), 100u);
    int pos = 0;
    for (auto i : f.test) ++seen[i], pos += y[i] == 1;
    EXPECT_EQ(pos, 2);
  }
  for (int c : seen) EXPECT_EQ(c, 1);
  std::vector<int> groups;
  for (int i = 0; i < 100; ++i) groups.push_back(i / 7);
  auto gf = group_kfold(groups, 4, 1);
  for (auto& f : gf) {
    std::set<int> tr, te;
    for (auto i : f.train) tr.insert(groups[i]);
    for (auto i : f.test) te.insert(groups[i]);
    for (int g : te) EXPECT_EQ(tr.count(g), 0u) << "group " << g << " on both sides";
  }
  EXPECT_THROW(group_kfold({1, 1, 2}, 3, 1), Error);
  Fold h = stratified_holdout(y, 0.2, 1);
  EXPECT_EQ(h.test.size(), 20u);
}

TEST(Evaluation, MetricsAndBaseline) {
  // sklearn's roc_auc_score documentation example: 0.75
  EXPECT_DOUBLE_EQ(roc_auc({0, 0, 1, 1}, {0.1, 0.4, 0.35, 0.8}, 1), 0.75);
  std::vector<double> truth = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  std::vector<int> constant(10, 0);
  Metrics m = score(truth, constant, 0);
  EXPECT_DOUBLE_EQ(m.accuracy, 0.9);
  EXPECT_DOUBLE_EQ(m.majority_baseline, 0.9);
  EXPECT_DOUBLE_EQ(m.balanced_accuracy, 0.5);
  std::vector<int> minority(10, 1);
  EXPECT_DOUBLE_EQ(score(truth, minority, 0).accuracy, 0.1);
}

TEST(Evaluation, ScalerIsFitOnTrainingRowsOnly) {
  Dataset d;
  for (int i = 0; i < 4; ++i) d.add_dense_row(0, {static_cast<double>(i)});  // 0..3
  d.add_dense_row(1, {100.0});
  d.densify();
  StandardScaler s;
  s.fit(d, {0, 1, 2, 3});
  Dataset t = s.transform(d, {4});
  // mean 1.5, sd sqrt(1.25)
  EXPECT_NEAR(t.row(0)[1], (100 - 1.5) / std::sqrt(1.25), 1e-12);
}

TEST(TuneCli, HelpErrorsAndARun) {
  auto help = run_command(wavekit("tune --help"));
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("constant liar"), std::string::npos);
  EXPECT_NE(help.output.find("gp_hedge"), std::string::npos);
  auto none = run_command(wavekit("tune --budget 3"));
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.output.find("exactly one objective"), std::string::npos) << none.output;
  std::string bad = temp_path("bad.json");
  write_text(bad, R"([{"name": "x", "low": 5, "high": 1}])");
  auto r = run_command(wavekit("tune --space " + bad + " --command 'echo {x}'"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("low (5) must be below high (1)"), std::string::npos) << r.output;
  auto ok = run_command(wavekit("tune --function branin --tuner tpe --budget 30 --quiet"));
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("best so far"), std::string::npos);
  EXPECT_NE(ok.output.find("30 evaluations, 0 failed"), std::string::npos) << ok.output;
}

TEST(TuneCli, SvmObjectiveReportsHeldOutBesideTheBaseline) {
  auto data = testing::sklearn_set("breast_cancer");
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  Fold split = stratified_holdout(data->y, 0.3, 5);
  std::string train = temp_path("bc_train.txt"), test = temp_path("bc_test.txt");
  write_text(train, format_libsvm(data->subset(split.train)));
  write_text(test, format_libsvm(data->subset(split.test)));
  std::string space = temp_path("bc.json");
  write_text(space, R"([{"name": "gamma", "low": 1e-3, "high": 1, "log": true},
                        {"name": "C", "low": 0.1, "high": 100, "log": true}])");
  auto r = run_command(wavekit("tune --svm " + train + " --kernel rbf --space " + space +
                               " --folds 3 --budget 8 --quiet --no-chart --test " + test));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cross-validation balanced_accuracy 0.9"), std::string::npos) << r.output;
  auto at = r.output.find("held-out test (171 rows): accuracy 0.9");
  EXPECT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("majority-class baseline 0.62", at), std::string::npos) << r.output;
  // nested cross-validation: tuned afresh inside each outer fold
  auto nested = run_command(wavekit("tune --svm " + train + " --kernel rbf --space " + space +
                                    " --folds 3 --outer-folds 2 --budget 4 --quiet --no-chart"));
  ASSERT_EQ(nested.status, 0) << nested.output;
  EXPECT_NE(nested.output.find("outer fold 2/2: inner CV balanced_accuracy 0.9"), std::string::npos)
      << nested.output;
  EXPECT_NE(nested.output.find("nested estimate over 2 outer folds: accuracy 0.9"),
            std::string::npos)
      << nested.output;
  EXPECT_EQ(run_command(wavekit("tune --svm " + train + " --space " + space +
                                " --outer-folds 2 --test " + test))
                .status,
            2);
  // group ids must match the rows
  std::string groups = temp_path("g.txt");
  write_text(groups, "1\n2\n3\n");
  auto g = run_command(wavekit("tune --svm " + train + " --kernel rbf --space " + space +
                               " --groups " + groups + " --budget 2 --quiet"));
  EXPECT_EQ(g.status, 1);
  EXPECT_NE(g.output.find("3 group ids for 398 rows"), std::string::npos) << g.output;
}

TEST(TuneMpi, RanksEvaluateAndTheHistoryIsKept) {
  if (!mpi_built()) {
    auto r = run_command(wavekit("tune --mpi --function branin --budget 2"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.output.find("built without MPI"), std::string::npos) << r.output;
    GTEST_SKIP() << "this build has no MPI (libopenmpi-dev): checked the message instead";
  }
  if (!testing::have(WAVEKIT_MPIRUN)) GTEST_SKIP() << "mpirun (openmpi-bin) is not installed";
  std::string hist = temp_path("mpi.jsonl");
  auto r = run_command(std::string(WAVEKIT_MPIRUN) +
                       " --allow-run-as-root --oversubscribe -np 3 " WAVEKIT_BINARY
                       " tune --mpi --function branin --tuner rf --budget 14 --no-chart "
                       "--history " +
                       hist);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("on 3 MPI ranks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("14 evaluations, 0 failed"), std::string::npos) << r.output;
  auto records = read_history(hist, function_space("branin"));
  ASSERT_EQ(records.size(), 14u);
  std::set<int> ranks;
  for (auto& rec : records) ranks.insert(rec.worker);
  EXPECT_EQ(ranks, (std::set<int>{1, 2}));  // rank 0 manages only
}

}  // namespace
}  // namespace wavekit::tune
