// Evaluation done honestly: splits made before anything is fit (stratified k-fold, holdout,
// group k-fold), the scaler fit inside each training fold only, and metrics that always come
// with the majority-class baseline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wavekit/tune/svm.h"

namespace wavekit::tune {

struct Fold {
  std::vector<std::size_t> train, test;
};

// Stratified k-fold: each class's rows shuffled (seeded) and dealt round-robin to the folds.
std::vector<Fold> stratified_kfold(const std::vector<double>& y, int k, std::uint64_t seed);
// One stratified holdout split with `test_fraction` of each class in the test part.
Fold stratified_holdout(const std::vector<double>& y, double test_fraction, std::uint64_t seed);
// Group k-fold: whole groups (e.g. ECG records) go to one fold; groups shuffled (seeded) and
// assigned greedily to the fold with the fewest rows so far. Needs >= k groups.
std::vector<Fold> group_kfold(const std::vector<int>& groups, int k, std::uint64_t seed);

// Standardisation fit on training rows only, applied to any rows.
class StandardScaler {
 public:
  void fit(const Dataset& data, const std::vector<std::size_t>& rows);
  Dataset transform(const Dataset& data, const std::vector<std::size_t>& rows) const;

 private:
  std::vector<double> mean_, scale_;
};

struct Metrics {
  double accuracy = 0;
  double balanced_accuracy = 0;  // mean per-class recall (= macro recall)
  double macro_recall = 0;
  double roc_auc = -1;           // binary tasks with decision values; -1 otherwise
  double majority_baseline = 0;  // accuracy of always predicting the training majority class
  std::size_t n = 0;
};

// `train_majority`: the most frequent training label (the baseline's constant prediction).
Metrics score(const std::vector<double>& truth, const std::vector<int>& predicted,
              int train_majority, const std::vector<double>* positive_scores = nullptr,
              int positive_label = 0);
// ROC-AUC (Mann-Whitney, ties counted half) of scores for positive_label.
double roc_auc(const std::vector<double>& truth, const std::vector<double>& scores,
               int positive_label);

// Train on `train` rows, test on `test` rows, the scaler fit on `train` only when `scale`.
Metrics fit_and_score(const Dataset& data, const Fold& fold, const SvmParams& params, bool scale);
// Mean of the metrics over folds.
Metrics cross_validate(const Dataset& data, const std::vector<Fold>& folds, const SvmParams& params,
                       bool scale);

}  // namespace wavekit::tune
