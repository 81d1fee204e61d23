// Objectives and the asynchronous manager/worker loop: the manager asks the tuner for one
// point whenever a worker is free (the points in flight go to the tuner as pending, for its
// constant liar), tells it each result as it completes, and appends every evaluation to a
// JSONL history the run can resume from. A crash, a timeout or a non-finite value gets the
// worst value seen so far and a note.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "wavekit/tune/eval.h"
#include "wavekit/tune/svm.h"
#include "wavekit/tune/tuner.h"

namespace wavekit::tune {

struct EvalResult {
  double value = 0;           // what the tuner minimises
  std::string status = "ok";  // ok, failed, timeout
  std::string note;
  double score = 0;  // the objective's own metric (e.g. accuracy), for reports
};

class Objective {
 public:
  virtual ~Objective() = default;
  // Called from worker threads concurrently: implementations must be thread-safe.
  virtual EvalResult evaluate(const Config& config) = 0;
  virtual std::string describe() const = 0;
};

// branin (parameters x1 in [-5,10], x2 in [0,15]) or hartmann6 (x1..x6 in [0,1]).
std::unique_ptr<Objective> function_objective(const std::string& name);
Space function_space(const std::string& name);

// Any program: `{name}` in the template is replaced by the parameter's value ("{{" is a
// literal brace), the command runs under /bin/sh, the first capture group of `metric_regex`
// in its output (stdout and stderr, the last match) is the metric; `maximize` negates it.
// Past `timeout_s` seconds the command's process group is killed.
struct CommandSpec {
  std::string command_template;
  std::string metric_regex = "([-+0-9.eE]+)";
  bool maximize = false;
  double timeout_s = 300;
};
std::unique_ptr<Objective> command_objective(const CommandSpec& spec, const Space& space);

// The ANL study's objective, done honestly: a C-SVC with the mixed kernel (or any kernel),
// hyperparameters from the configuration (a, s = the sigmoid's gamma, g = the RBF's gamma,
// coef0, C; also gamma, degree, kernel), scored by cross-validation on the given folds with
// the scaler fit inside each fold. Minimises -metric.
struct SvmObjectiveSpec {
  Dataset data;
  std::vector<Fold> folds;
  SvmParams base;                            // kernel type, weights, balanced, threads...
  std::string metric = "balanced_accuracy";  // or accuracy, roc_auc
  bool scale = true;
};
std::unique_ptr<Objective> svm_objective(SvmObjectiveSpec spec);
// The parameters of a configuration applied to `base` (what svm_objective trains).
SvmParams svm_params_for(const SvmParams& base, const Config& config);

struct Record {
  int id = 0;
  Config config;
  double value = 0;
  double raw = 0;  // the objective's value before a failure was given the worst value
  double score = 0;
  std::string status, note;
  double seconds = 0;
  int worker = 0;
};

struct LoopOptions {
  int budget = 128;
  int workers = 1;
  std::string history;  // JSONL path; empty: none
  bool resume = false;  // read `history` first and continue from it
  bool progress = false;
  // Workers simulated in the manager's thread: `workers` points in flight, the oldest
  // completes first. Reproducible under a seed; for benchmarks of the tuners.
  bool simulate = false;
};

// Where evaluations run: slots() points in flight; submit() one, wait() for any to complete.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual int slots() = 0;
  virtual void submit(const Record& job) = 0;
  virtual Record wait() = 0;
};

// One evaluation: the objective's result, or "failed" with the exception's message.
Record evaluate_job(Objective& objective, const Record& job);

// Runs the loop; `progress` (if given) gets one line per completed evaluation. Without an
// executor: threads (options.workers), or in this thread when options.simulate.
std::vector<Record> run_loop(const Space& space, Tuner& tuner, Objective& objective,
                             const LoopOptions& options, std::ostream* progress = nullptr,
                             Executor* executor = nullptr);

std::vector<Record> read_history(const std::string& path, const Space& space);

// A terminal chart of the best value so far against evaluations.
std::string best_so_far_chart(const std::vector<Record>& records, int width = 60, int height = 12);

}  // namespace wavekit::tune
