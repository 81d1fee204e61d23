#include "wavekit/tune/eval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "wavekit/support/error.h"

namespace wavekit::tune {

std::vector<Fold> stratified_kfold(const std::vector<double>& y, int k, std::uint64_t seed) {
  if (k < 2) fail("stratified k-fold", "k must be at least 2");
  if (y.size() < static_cast<std::size_t>(k)) fail("stratified k-fold", "fewer rows than folds");
  std::mt19937_64 rng(seed);
  std::map<double, std::vector<std::size_t>> by_class;
  for (std::size_t i = 0; i < y.size(); ++i) by_class[y[i]].push_back(i);
  std::vector<int> fold_of(y.size());
  int next = 0;
  for (auto& [label, rows] : by_class) {
    std::shuffle(rows.begin(), rows.end(), rng);
    for (auto r : rows) fold_of[r] = next++ % k;
  }
  std::vector<Fold> folds(k);
  for (std::size_t i = 0; i < y.size(); ++i)
    for (int f = 0; f < k; ++f) (f == fold_of[i] ? folds[f].test : folds[f].train).push_back(i);
  return folds;
}

Fold stratified_holdout(const std::vector<double>& y, double test_fraction, std::uint64_t seed) {
  if (!(test_fraction > 0 && test_fraction < 1)) fail("holdout", "test fraction must be in (0, 1)");
  std::mt19937_64 rng(seed);
  std::map<double, std::vector<std::size_t>> by_class;
  for (std::size_t i = 0; i < y.size(); ++i) by_class[y[i]].push_back(i);
  Fold f;
  for (auto& [label, rows] : by_class) {
    std::shuffle(rows.begin(), rows.end(), rng);
    auto n_test = static_cast<std::size_t>(std::llround(test_fraction * rows.size()));
    for (std::size_t k = 0; k < rows.size(); ++k)
      (k < n_test ? f.test : f.train).push_back(rows[k]);
  }
  std::sort(f.train.begin(), f.train.end());
  std::sort(f.test.begin(), f.test.end());
  return f;
}

std::vector<Fold> group_kfold(const std::vector<int>& groups, int k, std::uint64_t seed) {
  std::map<int, std::vector<std::size_t>> by_group;
  for (std::size_t i = 0; i < groups.size(); ++i) by_group[groups[i]].push_back(i);
  if (by_group.size() < static_cast<std::size_t>(k))
    fail("group k-fold",
         std::to_string(by_group.size()) + " groups cannot make " + std::to_string(k) + " folds");
  std::vector<int> ids;
  for (auto& [g, rows] : by_group) ids.push_back(g);
  std::mt19937_64 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::map<int, std::size_t> shuffled_pos;
  for (std::size_t i = 0; i < ids.size(); ++i) shuffled_pos[ids[i]] = i;
  std::sort(ids.begin(), ids.end(), [&](int a, int b) {
    if (by_group[a].size() != by_group[b].size()) return by_group[a].size() > by_group[b].size();
    return shuffled_pos[a] < shuffled_pos[b];
  });
  std::vector<std::size_t> load(k, 0);
  std::map<int, int> fold_of;
  for (int g : ids) {
    int f = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    fold_of[g] = f;
    load[f] += by_group[g].size();
  }
  std::vector<Fold> folds(k);
  for (std::size_t i = 0; i < groups.size(); ++i)
    for (int f = 0; f < k; ++f)
      (f == fold_of[groups[i]] ? folds[f].test : folds[f].train).push_back(i);
  return folds;
}

void StandardScaler::fit(const Dataset& data, const std::vector<std::size_t>& rows) {
  std::size_t d = data.cols();
  mean_.assign(d, 0);
  scale_.assign(d, 1);
  if (rows.empty()) return;
  for (auto r : rows)
    for (std::size_t k = 0; k < d; ++k) mean_[k] += data.row(r)[k];
  for (auto& m : mean_) m /= static_cast<double>(rows.size());
  std::vector<double> var(d, 0);
  for (auto r : rows)
    for (std::size_t k = 0; k < d; ++k) {
      double t = data.row(r)[k] - mean_[k];
      var[k] += t * t;
    }
  for (std::size_t k = 0; k < d; ++k) {
    double s = std::sqrt(var[k] / static_cast<double>(rows.size()));
    scale_[k] = s > 0 ? s : 1;
  }
}

Dataset StandardScaler::transform(const Dataset& data, const std::vector<std::size_t>& rows) const {
  Dataset out;
  std::size_t d = data.cols();
  std::vector<double> x(d > 0 ? d - 1 : 0);
  for (auto r : rows) {
    // column 0 is LIBSVM's unused index 0 for ordinary data: keep it as is (zero)
    for (std::size_t k = 1; k < d; ++k) x[k - 1] = (data.row(r)[k] - mean_[k]) / scale_[k];
    out.add_dense_row(data.y[r], x);
  }
  out.max_index = static_cast<int>(d) - 1;
  out.densify();
  return out;
}

double roc_auc(const std::vector<double>& truth, const std::vector<double>& scores,
               int positive_label) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return scores[a] < scores[b]; });
  double rank_sum = 0, n_pos = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    double rank = 0.5 * (i + 1 + j);  // average 1-based rank of the tie group
    for (std::size_t k = i; k < j; ++k)
      if (static_cast<int>(truth[order[k]]) == positive_label) rank_sum += rank, n_pos += 1;
    i = j;
  }
  double n_neg = static_cast<double>(scores.size()) - n_pos;
  if (n_pos == 0 || n_neg == 0) return -1;
  return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg);
}

Metrics score(const std::vector<double>& truth, const std::vector<int>& predicted,
              int train_majority, const std::vector<double>* positive_scores, int positive_label) {
  Metrics m;
  m.n = truth.size();
  if (truth.empty()) return m;
  std::map<int, std::pair<std::size_t, std::size_t>> per_class;  // hits, count
  std::size_t hits = 0, baseline = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    int t = static_cast<int>(truth[i]);
    auto& c = per_class[t];
    ++c.second;
    if (predicted[i] == t) ++hits, ++c.first;
    if (t == train_majority) ++baseline;
  }
  m.accuracy = static_cast<double>(hits) / m.n;
  m.majority_baseline = static_cast<double>(baseline) / m.n;
  double recall = 0;
  for (auto& [label, c] : per_class) recall += static_cast<double>(c.first) / c.second;
  m.balanced_accuracy = m.macro_recall = recall / per_class.size();
  if (positive_scores) m.roc_auc = roc_auc(truth, *positive_scores, positive_label);
  return m;
}

namespace {
int majority(const Dataset& d, const std::vector<std::size_t>& rows) {
  std::map<int, std::size_t> count;
  for (auto r : rows) ++count[static_cast<int>(d.y[r])];
  int best = 0;
  std::size_t n = 0;
  for (auto [l, c] : count)
    if (c > n) n = c, best = l;
  return best;
}
}  // namespace

Metrics fit_and_score(const Dataset& data, const Fold& fold, const SvmParams& params, bool scale) {
  Dataset train_set, test_set;
  if (scale) {
    StandardScaler s;
    s.fit(data, fold.train);
    train_set = s.transform(data, fold.train);
    test_set = s.transform(data, fold.test);
  } else {
    train_set = data.subset(fold.train);
    test_set = data.subset(fold.test);
  }
  SvmModel model = train(train_set, params);
  std::vector<std::vector<double>> dec;
  std::vector<int> pred = predict_all(model, test_set, &dec);
  int maj = majority(data, fold.train);
  if (model.nr_class == 2) {
    std::vector<double> s(dec.size());
    for (std::size_t i = 0; i < dec.size(); ++i) s[i] = dec[i][0];
    return score(test_set.y, pred, maj, &s, model.label[0]);
  }
  return score(test_set.y, pred, maj);
}

Metrics cross_validate(const Dataset& data, const std::vector<Fold>& folds, const SvmParams& params,
                       bool scale) {
  Metrics sum;
  int auc_n = 0;
  sum.roc_auc = 0;
  for (auto& f : folds) {
    Metrics m = fit_and_score(data, f, params, scale);
    sum.accuracy += m.accuracy;
    sum.balanced_accuracy += m.balanced_accuracy;
    sum.macro_recall += m.macro_recall;
    sum.majority_baseline += m.majority_baseline;
    sum.n += m.n;
    if (m.roc_auc >= 0) sum.roc_auc += m.roc_auc, ++auc_n;
  }
  double k = static_cast<double>(folds.size());
  sum.accuracy /= k;
  sum.balanced_accuracy /= k;
  sum.macro_recall /= k;
  sum.majority_baseline /= k;
  sum.roc_auc = auc_n ? sum.roc_auc / auc_n : -1;
  return sum;
}

}  // namespace wavekit::tune
