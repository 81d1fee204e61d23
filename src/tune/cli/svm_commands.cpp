// `wavekit svm-train` and `wavekit svm-predict`: LIBSVM's svm-train and svm-predict, same
// options, data and model files (a LIBSVM user changes only the command name), plus the mixed
// kernel (-t 5) and threads (-j).
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/tune/svm.h"

namespace {

using wavekit::cli::UsageError;
using namespace wavekit::tune;

const char* kTrainHelp =
    "Usage: wavekit svm-train [options] training_set_file [model_file]\n"
    "LIBSVM's svm-train (C-SVC, LIBSVM 3.24's solver: same model, decision values and\n"
    "predictions on the same data and options), plus a mixed kernel and threads.\n"
    "options:\n"
    "-s svm_type : 0 -- C-SVC (the only type; LIBSVM's 1-4 are refused)\n"
    "-t kernel_type : set type of kernel function (default 2)\n"
    "\t0 -- linear: u'*v\n"
    "\t1 -- polynomial: (gamma*u'*v + coef0)^degree\n"
    "\t2 -- radial basis function: exp(-gamma*|u-v|^2)\n"
    "\t3 -- sigmoid: tanh(gamma*u'*v + coef0)\n"
    "\t4 -- precomputed kernel (kernel values in training_set_file)\n"
    "\t5 -- mixed: (1-a)*K1 + a*K2 of two of the kernels 0-3 (default K1 sigmoid, K2 rbf:\n"
    "\t     (1-a)*tanh(gamma*u'*v + coef0) + a*exp(-gamma2*|u-v|^2), the ANL study's kernel)\n"
    "-d degree : set degree in kernel function (default 3)\n"
    "-g gamma : set gamma in kernel function (default 1/num_features)\n"
    "-r coef0 : set coef0 in kernel function (default 0)\n"
    "-c cost : set the parameter C of C-SVC (default 1)\n"
    "-m cachesize : set cache memory size in MB (default 100)\n"
    "-e epsilon : set tolerance of termination criterion (default 0.001)\n"
    "-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)\n"
    "-b probability_estimates : whether to train a model for probability estimates, 0 or 1\n"
    "   (default 0)\n"
    "-wi weight : set the parameter C of class i to weight*C (default 1)\n"
    "-v n : n-fold cross validation mode (LIBSVM's folds)\n"
    "-q : quiet mode (no outputs)\n"
    "wavekit's additions:\n"
    "-a a : the mixed kernel's weight of K2, in [0, 1] (default 0.5)\n"
    "-k K1,K2 : the mixed kernel's components as kernel types 0-3 (default 3,2)\n"
    "-G gamma2 : gamma of K2 (default 1/num_features); -g -r -d are K1's\n"
    "-R coef02 : coef0 of K2 (default 0)\n"
    "-D degree2 : degree of K2 (default 3)\n"
    "-B 1 : balanced class weights, C of class c times n/(classes*n_c), before any -w\n"
    "-j threads : threads computing kernel rows (default 1)\n"
    "Models of kernels 0-4 are LIBSVM model files; a mixed-kernel model adds mixed_kernels,\n"
    "mix_weight, gamma_2, coef0_2 and degree_2 lines (LIBSVM's svm-predict cannot read it).\n";

const char* kPredictHelp =
    "Usage: wavekit svm-predict [options] test_file model_file output_file\n"
    "LIBSVM's svm-predict for C-SVC models (LIBSVM's own, or wavekit svm-train's).\n"
    "options:\n"
    "-b probability_estimates : whether to predict probability estimates, 0 or 1 (default 0)\n"
    "-q : quiet mode (no outputs)\n"
    "-j threads : threads (default 1)\n";

bool wants_help(wavekit::cli::Arguments args) {
  for (auto a : args)
    if (a == "--help" || a == "-?") return true;
  return false;
}

double number(const std::string& option, const std::string& text) {
  return wavekit::cli::parse_double(option, text);
}

int integer(const std::string& option, const std::string& text) {
  double v = number(option, text);
  if (v != static_cast<int>(v)) throw UsageError(option + ": '" + text + "' is not an integer");
  return static_cast<int>(v);
}

Kernel kernel_type(const std::string& option, const std::string& text, int max) {
  int t = integer(option, text);
  if (t < 0 || t > max)
    throw UsageError(option + ": unknown kernel type " + text + " (0 to " + std::to_string(max) +
                     ")");
  return static_cast<Kernel>(t);
}

int run_svm_train(wavekit::cli::Arguments args) {
  if (wants_help(args)) {
    std::cout << kTrainHelp;
    return 0;
  }
  SvmParams p;
  p.quiet = false;
  int folds = 0;
  std::size_t i = 0;
  for (; i < args.size() && args[i].size() > 1 && args[i][0] == '-'; ++i) {
    std::string opt(args[i]);
    if (opt == "-q") {
      p.quiet = true;
      continue;
    }
    if (i + 1 >= args.size()) throw UsageError(opt + " needs a value");
    std::string v(args[++i]);
    char c = opt[1];
    if (opt.size() != 2 && c != 'w') throw UsageError("unknown option " + opt);
    switch (c) {
      case 's':
        if (integer(opt, v) != 0)
          throw UsageError("-s " + v + ": only C-SVC (-s 0) is implemented");
        break;
      case 't':
        p.kernel.type = kernel_type(opt, v, 5);
        break;
      case 'd':
        p.kernel.degree = p.first.degree = integer(opt, v);
        break;
      case 'g':
        p.kernel.gamma = p.first.gamma = number(opt, v);
        break;
      case 'r':
        p.kernel.coef0 = p.first.coef0 = number(opt, v);
        break;
      case 'c':
        p.C = number(opt, v);
        break;
      case 'm':
        p.cache_mb = number(opt, v);
        break;
      case 'e':
        p.eps = number(opt, v);
        break;
      case 'h':
        p.shrinking = integer(opt, v) != 0;
        break;
      case 'b':
        p.probability = integer(opt, v) != 0;
        break;
      case 'v':
        folds = integer(opt, v);
        if (folds < 2) throw UsageError("-v " + v + ": n-fold cross validation: n must >= 2");
        break;
      case 'w': {
        std::string label = opt.substr(2);
        if (label.empty()) throw UsageError("-w needs a class label: -wLABEL WEIGHT");
        p.weights.emplace_back(integer(opt, label), number(opt, v));
        break;
      }
      case 'a':
        p.mix = number(opt, v);
        break;
      case 'k': {
        auto comma = v.find(',');
        if (comma == std::string::npos) throw UsageError("-k: expected K1,K2, e.g. 3,2");
        p.first.type = kernel_type(opt, v.substr(0, comma), 3);
        p.second.type = kernel_type(opt, v.substr(comma + 1), 3);
        break;
      }
      case 'G':
        p.second.gamma = number(opt, v);
        break;
      case 'R':
        p.second.coef0 = number(opt, v);
        break;
      case 'D':
        p.second.degree = integer(opt, v);
        break;
      case 'B':
        p.balanced = integer(opt, v) != 0;
        break;
      case 'j':
        p.threads = integer(opt, v);
        if (p.threads < 1 || p.threads > 1024) throw UsageError("-j: 1 to 1024 threads");
        break;
      default:
        throw UsageError("unknown option " + opt + " (wavekit svm-train --help)");
    }
  }
  if (i >= args.size()) throw UsageError("missing training_set_file (wavekit svm-train --help)");
  std::string train_file(args[i++]);
  std::string model_file;
  if (i < args.size()) {
    model_file = std::string(args[i++]);
  } else {
    auto slash = train_file.rfind('/');
    model_file =
        (slash == std::string::npos ? train_file : train_file.substr(slash + 1)) + ".model";
  }
  if (i < args.size()) throw UsageError("unexpected argument '" + std::string(args[i]) + "'");

  Dataset data = read_libsvm(train_file);
  if (folds) {
    auto target = cross_validation(data, p, folds);
    std::size_t correct = 0;
    for (std::size_t k = 0; k < target.size(); ++k) correct += target[k] == data.y[k];
    std::printf("Cross Validation Accuracy = %g%%\n", 100.0 * correct / data.rows());
    return 0;
  }
  SvmModel model = train(data, p);
  save_model(model_file, model);
  return 0;
}

int run_svm_predict(wavekit::cli::Arguments args) {
  if (wants_help(args)) {
    std::cout << kPredictHelp;
    return 0;
  }
  bool probability = false, quiet = false;
  int threads = 1;
  std::size_t i = 0;
  for (; i < args.size() && args[i].size() > 1 && args[i][0] == '-'; ++i) {
    std::string opt(args[i]);
    if (opt == "-q") {
      quiet = true;
      continue;
    }
    if (i + 1 >= args.size()) throw UsageError(opt + " needs a value");
    std::string v(args[++i]);
    if (opt == "-b")
      probability = integer(opt, v) != 0;
    else if (opt == "-j")
      threads = integer(opt, v);
    else
      throw UsageError("unknown option " + opt + " (wavekit svm-predict --help)");
  }
  if (args.size() - i != 3)
    throw UsageError("expected test_file model_file output_file (wavekit svm-predict --help)");
  std::string test_file(args[i]), model_file(args[i + 1]), output_file(args[i + 2]);
  SvmModel model = load_model(model_file);
  model.params.threads = std::max(threads, 1);
  Dataset data = read_libsvm(test_file);
  if (probability && model.prob_a.empty())
    throw wavekit::Error(model_file + ": the model does not support probability estimates");
  if (!probability && !model.prob_a.empty() && !quiet)
    std::printf("Model supports probability estimates, but disabled in prediction.\n");
  std::set<int> known(model.label.begin(), model.label.end());
  std::map<double, int> unknown;
  std::string out;
  std::size_t correct = 0;
  char buf[64];
  if (probability) {
    out = "labels";
    for (int l : model.label) out += " " + std::to_string(l);
    out += "\n";
    for (std::size_t k = 0; k < data.rows(); ++k) {
      std::vector<double> prob;
      int label = predict_probability(model, data.row(k), data.cols(), &prob);
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(label));
      out += buf;
      for (double pr : prob) {
        std::snprintf(buf, sizeof buf, " %g", pr);
        out += buf;
      }
      out += "\n";
      correct += label == data.y[k];
    }
  } else {
    auto labels = predict_all(model, data);
    for (std::size_t k = 0; k < data.rows(); ++k) {
      std::snprintf(buf, sizeof buf, "%.17g\n", static_cast<double>(labels[k]));
      out += buf;
      correct += labels[k] == data.y[k];
    }
  }
  for (double y : data.y)
    if (!known.count(static_cast<int>(y)) || y != static_cast<int>(y)) ++unknown[y];
  wavekit::write_file(output_file, out);
  if (!unknown.empty()) {
    std::string list;
    for (auto [y, n] : unknown) {
      std::snprintf(buf, sizeof buf, "%s%g (%d)", list.empty() ? "" : ", ", y, n);
      list += buf;
    }
    std::fprintf(stderr,
                 "wavekit svm-predict: warning: %s: labels the model does not know (counted as "
                 "wrong): %s\n",
                 test_file.c_str(), list.c_str());
  }
  if (!quiet)
    std::printf("Accuracy = %g%% (%zu/%zu) (classification)\n",
                data.rows() ? 100.0 * correct / data.rows() : 0.0, correct, data.rows());
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("svm-train", "train a C-SVC as LIBSVM's svm-train does (plus a mixed kernel)",
                   run_svm_train);
WAVEKIT_SUBCOMMAND("svm-predict", "predict with a LIBSVM C-SVC model as LIBSVM's svm-predict",
                   run_svm_predict);
