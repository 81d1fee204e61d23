// `wavekit tune`: search a space with a tuner, evaluating an objective (an SVM on a data set,
// any command, or a test function) on worker threads, with a resumable history.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/support/error.h"
#include "wavekit/tune/eval.h"
#include "wavekit/tune/loop.h"
#include "wavekit/tune/mpi.h"
#include "wavekit/tune/svm.h"
#include "wavekit/tune/tuner.h"

namespace {

using wavekit::cli::UsageError;
using namespace wavekit::tune;

const char* kDescription =
    "Searches a space of parameters for the configuration that minimises an objective (or\n"
    "maximises it, with --maximize), asking a tuner for one point whenever a worker is free\n"
    "and telling it each result as it completes (points still running enter its model as a\n"
    "constant liar). Every evaluation is appended to --history (JSONL); --resume continues\n"
    "from it. A crash, a timeout or a non-finite value gets the worst value seen and a note.\n"
    "\n"
    "objectives (one of):\n"
    "  --command 'CMD {x} {y}'  any program: {name} is replaced by the parameter's value, the\n"
    "                           metric is the first group of --metric-regex in its output\n"
    "                           (the last match); --timeout kills it\n"
    "  --svm TRAIN.txt          a C-SVC on a LIBSVM data file, scored by stratified k-fold\n"
    "                           (--folds) or group k-fold (--groups FILE: one group id a line,\n"
    "                           e.g. the ECG record of each beat), the scaler fit inside each\n"
    "                           fold; parameters a, s (sigmoid gamma), g (RBF gamma), coef0, C\n"
    "                           for the mixed kernel (1-a)*tanh(s<x,y>+coef0) + a*exp(-g|x-y|^2),\n"
    "                           or gamma/coef0/degree/C for --kernel "
    "rbf|sigmoid|polynomial|linear.\n"
    "                           --test TEST.txt trains the best configuration on all of TRAIN and\n"
    "                           reports it on TEST (data the tuner never saw) beside the majority\n"
    "                           baseline; --outer-folds K instead gives a nested\n"
    "                           cross-validation estimate (tuned afresh in each outer fold)\n"
    "  --function branin|hartmann6  a test function with a known optimum (no --space needed)\n"
    "\n"
    "the space (--space FILE.json):\n"
    "  {\"parameters\": [\n"
    "     {\"name\": \"C\", \"type\": \"float\", \"low\": 0.1, \"high\": 100, \"log\": true},\n"
    "     {\"name\": \"threads\", \"type\": \"int\", \"low\": 32, \"high\": 1024, \"log\": true},\n"
    "     {\"name\": \"kernel\", \"type\": \"categorical\", \"choices\": [\"rbf\", \"mixed\"]},\n"
    "     {\"name\": \"a\", \"type\": \"float\", \"low\": 0, \"high\": 1, \"default\": 0.5,\n"
    "      \"condition\": {\"parameter\": \"kernel\", \"in\": [\"mixed\"]}}]}\n"
    "  (a parameter whose condition fails is left out of the configuration)\n"
    "\n"
    "tuners (--tuner):\n"
    "  gp      GP-BO, Matern-5/2 with ARD, hyperparameters by marginal likelihood (default:\n"
    "          the best at 64 and 128 evaluations in docs/benchmarks/tune.md)\n"
    "  rf      random-forest BO, the ANL study's ytopt/scikit-optimize configuration\n"
    "  Both take --acq ei|pi|lcb|gp_hedge (default gp_hedge, skopt's portfolio).\n"
    "  tpe     tree-structured Parzen estimators (Optuna's default sampler)\n"
    "  random  uniform random search;  lhs  a Latin hypercube of --budget points\n"
    "  The first --initial points (default 10) of rf, gp and tpe are a Latin hypercube.\n"
    "\n"
    "examples:\n"
    "  wavekit tune --function branin --tuner gp --budget 64\n"
    "  wavekit tune --space s.json --command './bench --block {block}' \\\n"
    "               --metric-regex 'time: ([0-9.]+) ms' --workers 4 --history h.jsonl\n"
    "  wavekit tune --space svm.json --svm train.txt --folds 5 --test test.txt --budget 64\n";

int run_tune(wavekit::cli::Arguments args) {
  std::string space_file, command,
      metric_regex = "([-+0-9.eE]+)", timeout = "300", svm_file, groups_file, test_file,
      kernel = "mixed", folds = "5", metric = "balanced_accuracy", function, tuner_kind = "gp",
      acq = "gp_hedge", budget = "64", workers = "1", initial = "10", seed = "1", history,
      svm_threads = "1", liar, outer;
  bool maximize = false, resume = false, quiet = false, balanced = false, no_chart = false,
       mpi = false, simulate = false;
  wavekit::cli::OptionParser parser("wavekit tune", kDescription);
  parser.option("--space", &space_file, "FILE.json", "the search space");
  parser.option("--command", &command, "TEMPLATE", "objective: a command with {name} fields");
  parser.option("--metric-regex", &metric_regex, "REGEX",
                "the metric in the command's output (first capture group)");
  parser.flag("--maximize", &maximize, "maximise the command's metric");
  parser.option("--timeout", &timeout, "SECONDS", "kill a command after this long (default 300)");
  parser.option("--svm", &svm_file, "TRAIN.txt", "objective: a C-SVC on this LIBSVM data file");
  parser.option("--kernel", &kernel, "NAME", "SVM kernel: mixed (default), rbf, sigmoid, ...");
  parser.option("--folds", &folds, "K", "SVM: k-fold cross-validation inside the tuner (5)");
  parser.option("--groups", &groups_file, "FILE", "SVM: group k-fold by these group ids");
  parser.option("--metric", &metric, "NAME",
                "SVM: balanced_accuracy (default), accuracy or roc_auc");
  parser.flag("--balanced", &balanced, "SVM: balanced class weights (sklearn's)");
  parser.option("--test", &test_file, "TEST.txt", "SVM: report the best configuration on this");
  parser.option("--outer-folds", &outer, "K",
                "SVM: nested cross-validation: tune on each of K outer training parts (inner "
                "folds: --folds), score the choice on its outer fold");
  parser.option("--svm-threads", &svm_threads, "N", "SVM: threads per fit (default 1)");
  parser.option("--function", &function, "NAME", "objective: branin or hartmann6");
  parser.option("--tuner", &tuner_kind, "NAME", "gp (default), rf, tpe, random, lhs");
  parser.option("--acq", &acq, "NAME", "rf/gp acquisition: gp_hedge (default), ei, pi, lcb");
  parser.option("--liar", &liar, "NAME",
                "pending points in rf/gp fits: believer (the model's prediction, default), max "
                "(skopt's cl_max, as ytopt), min, mean");
  parser.option("--budget", &budget, "N", "evaluations in all (default 64)");
  parser.option("--workers", &workers, "N", "evaluations in flight (default 1)");
  parser.option("--initial", &initial, "N", "Latin-hypercube points first (default 10)");
  parser.option("--seed", &seed, "S", "the tuner's seed (default 1)");
  parser.option("--history", &history, "FILE.jsonl", "append every evaluation here");
  parser.flag("--resume", &resume, "continue from --history");
  parser.flag("--simulate", &simulate,
              "run the workers' evaluations one after another in this thread (reproducible)");
  parser.flag("--mpi", &mpi,
              "under mpirun: rank 0 manages, every other rank evaluates (--workers is ignored)");
  parser.flag("--no-chart", &no_chart, "no best-so-far chart at the end");
  parser.flag("--quiet", &quiet, "no progress lines");
  if (auto code = parser.parse(args)) return *code;

  if (mpi && !mpi_built())
    throw UsageError(
        "--mpi: this wavekit was built without MPI (install libopenmpi-dev and reconfigure); "
        "use --workers N for threads on this node");
  if (mpi && simulate) throw UsageError("--mpi and --simulate exclude each other");
  int n_objectives = !command.empty() + !svm_file.empty() + !function.empty();
  if (n_objectives != 1)
    throw UsageError("give exactly one objective: --command, --svm or --function");
  if (resume && history.empty()) throw UsageError("--resume needs --history");

  Space space = !function.empty() && space_file.empty() ? function_space(function)
                : !space_file.empty()
                    ? Space::from_file(space_file)
                    : throw UsageError("--space FILE.json is needed (wavekit tune --help)");
  std::unique_ptr<Objective> objective;
  SvmObjectiveSpec svm;
  std::vector<int> groups;
  if (!function.empty()) {
    objective = function_objective(function);
  } else if (!command.empty()) {
    CommandSpec c;
    c.command_template = command;
    c.metric_regex = metric_regex;
    c.maximize = maximize;
    c.timeout_s = wavekit::cli::parse_double("--timeout", timeout);
    objective = command_objective(c, space);
  } else {
    svm.data = read_libsvm(svm_file);
    svm.base.kernel.type = kernel_from_name(kernel == "poly" ? "polynomial" : kernel);
    svm.base.balanced = balanced;
    svm.base.threads = static_cast<int>(wavekit::cli::parse_unsigned("--svm-threads", svm_threads));
    svm.metric = metric;
    int k = static_cast<int>(wavekit::cli::parse_unsigned("--folds", folds));
    if (!groups_file.empty()) {
      std::ifstream in(groups_file);
      if (!in) throw wavekit::Error(groups_file + ": cannot read");
      for (int g; in >> g;) groups.push_back(g);
      if (groups.size() != svm.data.rows())
        throw wavekit::Error(groups_file + ": " + std::to_string(groups.size()) +
                             " group ids for " + std::to_string(svm.data.rows()) + " rows");
      svm.folds = group_kfold(groups, k, 1);
    } else {
      svm.folds = stratified_kfold(svm.data.y, k, 1);
    }
    objective = svm_objective(svm);
  }

  TunerOptions to;
  to.kind = tuner_kind;
  to.acquisition = acq;
  to.liar = liar;
  to.seed = wavekit::cli::parse_unsigned("--seed", seed);
  to.initial_points = static_cast<int>(wavekit::cli::parse_unsigned("--initial", initial));
  LoopOptions lo;
  lo.budget = static_cast<int>(wavekit::cli::parse_unsigned("--budget", budget));
  lo.workers = static_cast<int>(wavekit::cli::parse_unsigned("--workers", workers));
  to.budget = lo.budget;
  lo.history = history;
  lo.resume = resume;
  lo.simulate = simulate;
  if (!outer.empty()) {
    if (svm_file.empty()) throw UsageError("--outer-folds needs --svm");
    if (mpi || resume || !test_file.empty())
      throw UsageError("--outer-folds excludes --mpi, --resume and --test");
    int ko = static_cast<int>(wavekit::cli::parse_unsigned("--outer-folds", outer));
    int k = static_cast<int>(wavekit::cli::parse_unsigned("--folds", folds));
    auto outer_folds =
        groups.empty() ? stratified_kfold(svm.data.y, ko, 2) : group_kfold(groups, ko, 2);
    std::vector<Metrics> results;
    for (std::size_t f = 0; f < outer_folds.size(); ++f) {
      SvmObjectiveSpec inner = svm;
      inner.data = svm.data.subset(outer_folds[f].train);
      if (groups.empty()) {
        inner.folds = stratified_kfold(inner.data.y, k, 1);
      } else {
        std::vector<int> g;
        for (auto r : outer_folds[f].train) g.push_back(groups[r]);
        inner.folds = group_kfold(g, k, 1);
      }
      auto obj = svm_objective(inner);
      auto t = make_tuner(space, to);
      LoopOptions lf = lo;
      if (!history.empty()) lf.history = history + ".outer" + std::to_string(f + 1);
      auto recs = run_loop(space, *t, *obj, lf, quiet ? nullptr : &std::cerr);
      const Record* b = nullptr;
      for (auto& r : recs)
        if (r.status == "ok" && (!b || r.value < b->value)) b = &r;
      if (!b)
        throw wavekit::Error("outer fold " + std::to_string(f + 1) + ": no evaluation succeeded");
      Metrics m =
          fit_and_score(svm.data, outer_folds[f], svm_params_for(svm.base, b->config), true);
      results.push_back(m);
      std::printf(
          "outer fold %zu/%zu: inner CV %s %.4f; outer fold (%zu rows): accuracy %.4f, "
          "balanced accuracy %.4f, majority-class baseline %.4f\n",
          f + 1, outer_folds.size(), metric.c_str(), b->score, m.n, m.accuracy, m.balanced_accuracy,
          m.majority_baseline);
    }
    auto mean_sd = [&](auto get) {
      double mean = 0, sd = 0;
      for (auto& m : results) mean += get(m);
      mean /= results.size();
      for (auto& m : results) sd += (get(m) - mean) * (get(m) - mean);
      return std::pair{mean, std::sqrt(sd / std::max<std::size_t>(results.size() - 1, 1))};
    };
    auto [acc, acc_sd] = mean_sd([](const Metrics& m) { return m.accuracy; });
    auto [bal, bal_sd] = mean_sd([](const Metrics& m) { return m.balanced_accuracy; });
    auto [maj, maj_sd] = mean_sd([](const Metrics& m) { return m.majority_baseline; });
    std::printf(
        "nested estimate over %zu outer folds: accuracy %.4f +- %.4f, balanced accuracy "
        "%.4f +- %.4f, majority-class baseline %.4f\n",
        results.size(), acc, acc_sd, bal, bal_sd, maj);
    (void)maj_sd;
    return 0;
  }
  auto tuner = make_tuner(space, to);
  struct MpiSession {
    bool on;
    explicit MpiSession(bool on) : on(on) {
      if (on) mpi_init(nullptr, nullptr);
    }
    ~MpiSession() {
      if (on) mpi_finalize();
    }
  } session(mpi);
  if (mpi && mpi_rank() != 0) {  // a worker: evaluate until rank 0 says stop
    run_loop_mpi(space, *tuner, *objective, lo, nullptr);
    return 0;
  }
  if (mpi) lo.workers = std::max(mpi_size() - 1, 1);
  std::cerr << "wavekit tune: " << tuner->name() << " over " << space.dims()
            << " parameters, objective " << objective->describe() << ", budget " << lo.budget
            << ", " << lo.workers << " in flight\n";
  std::cerr << (mpi ? "  on " + std::to_string(mpi_size()) + " MPI ranks (rank 0 the manager)\n"
                    : std::string());
  auto records = mpi ? run_loop_mpi(space, *tuner, *objective, lo, quiet ? nullptr : &std::cerr)
                     : run_loop(space, *tuner, *objective, lo, quiet ? nullptr : &std::cerr);

  const Record* best = nullptr;
  int failed = 0;
  for (auto& r : records) {
    if (r.status != "ok") ++failed;
    if (r.status == "ok" && (!best || r.value < best->value)) best = &r;
  }
  if (!no_chart) std::cout << best_so_far_chart(records);
  std::cout << records.size() << " evaluations, " << failed << " failed or timed out\n";
  if (!best) {
    std::cout << "no evaluation succeeded\n";
    return 1;
  }
  std::cout << "best value " << best->value << " (evaluation " << best->id << ")";
  if (!command.empty() && maximize) std::cout << ", metric " << best->score;
  std::cout << "\nbest configuration:";
  for (auto& [k, v] : best->config.text) std::cout << " " << k << "=" << v;
  std::cout << "\n";
  if (!svm_file.empty()) {
    std::cout << "cross-validation " << metric << " " << best->score << " (" << best->note << ")\n";
    if (!test_file.empty()) {
      Dataset test = read_libsvm(test_file);
      SvmParams p = svm_params_for(svm.base, best->config);
      // the scaler fit on the whole training file, applied to the test file
      Dataset both = svm.data;
      std::size_t n_train = both.rows();
      for (std::size_t i = 0; i < test.rows(); ++i) {
        both.y.push_back(test.y[i]);
        for (auto k = test.row_start[i]; k < test.row_start[i + 1]; ++k) {
          both.index.push_back(test.index[k]);
          both.value.push_back(test.value[k]);
        }
        both.row_start.push_back(static_cast<std::int64_t>(both.index.size()));
      }
      both.densify();
      Fold f;
      for (std::size_t i = 0; i < both.rows(); ++i) (i < n_train ? f.train : f.test).push_back(i);
      Metrics m = fit_and_score(both, f, p, true);
      char auc[32] = "n/a (not binary)";
      if (m.roc_auc >= 0) std::snprintf(auc, sizeof auc, "%.4f", m.roc_auc);
      std::printf(
          "held-out test (%zu rows): accuracy %.4f, balanced accuracy %.4f, ROC-AUC %s, "
          "majority-class baseline %.4f\n",
          m.n, m.accuracy, m.balanced_accuracy, auc, m.majority_baseline);
    }
  }
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("tune", "autotune parameters: BO (RF, GP), TPE, random; SVMs or any command",
                   run_tune);
