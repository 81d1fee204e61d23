// The tuners: random search, a Latin hypercube, random-forest BO (skopt's RF surrogate with
// EI/PI/LCB and the gp_hedge portfolio, as ytopt configures it), GP-BO (Matern-5/2 with ARD,
// hyperparameters by marginal likelihood) and TPE (univariate Parzen estimators, as Optuna's
// default). All minimise over the unit cube; pending points enter model fits as a constant liar.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "wavekit/support/error.h"
#include "wavekit/tune/tuner.h"

namespace wavekit::tune {
namespace {

using Point = std::vector<double>;
constexpr double kPi = 3.14159265358979323846;

double norm_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double norm_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * kPi); }

// Everything model-based tuners share: the history, the initial design, the candidates.
class Base : public Tuner {
 public:
  Base(const Space& space, const TunerOptions& o) : space_(space), o_(o), rng_(o.seed) {
    d_ = space.dims();
    if (o_.liar.empty()) o_.liar = "believer";
    if (o_.candidates <= 0) o_.candidates = o.kind == "rf" ? 10000 : 2000;
    if (o_.local_candidates < 0) o_.local_candidates = o.kind == "rf" ? 0 : 1;
    if (o_.liar != "max" && o_.liar != "min" && o_.liar != "mean" && o_.liar != "believer")
      fail("tuner", "unknown liar '" + o_.liar + "' (max, min, mean, believer)");
    make_lhs(std::max(o.initial_points, 1));
  }
  void tell(const Point& x, double y) override {
    if (!std::isfinite(y)) fail("tuner", "tell() needs a finite value");
    xs_.push_back(space_.canonical(x));
    ys_.push_back(y);
  }

 protected:
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  Point random_point() {
    Point p(d_);
    for (auto& v : p) v = uniform();
    return space_.canonical(p);
  }
  void make_lhs(int n) {
    design_.assign(n, Point(d_));
    for (std::size_t k = 0; k < d_; ++k) {
      std::vector<int> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng_);
      for (int i = 0; i < n; ++i) design_[i][k] = (perm[i] + uniform()) / n;
    }
    for (auto& p : design_) p = space_.canonical(p);
    next_design_ = 0;
  }
  bool initial_phase(std::size_t pending) const {
    return xs_.size() + pending < static_cast<std::size_t>(o_.initial_points) || xs_.size() < 2;
  }
  Point next_initial() {
    if (next_design_ < design_.size()) return design_[next_design_++];
    return random_point();
  }
  // The fit data with the constant liar for pending points.
  void fit_data(const std::vector<Point>& pending, std::vector<Point>* x, std::vector<double>* y) {
    *x = xs_;
    *y = ys_;
    if (pending.empty()) return;
    double lie = *std::max_element(ys_.begin(), ys_.end());
    if (o_.liar == "min") lie = *std::min_element(ys_.begin(), ys_.end());
    if (o_.liar == "mean") lie = std::accumulate(ys_.begin(), ys_.end(), 0.0) / ys_.size();
    for (auto& p : pending) {
      x->push_back(space_.canonical(p));
      y->push_back(lie);
    }
  }
  // Random candidates plus Gaussian steps around the best points seen.
  std::vector<Point> candidates() {
    std::vector<Point> c;
    c.reserve(o_.candidates + 600);
    for (int i = 0; i < o_.candidates; ++i) c.push_back(random_point());
    std::vector<std::size_t> order(ys_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return ys_[a] < ys_[b]; });
    std::normal_distribution<double> n01(0, 1);
    std::size_t around = o_.local_candidates ? 5 : 0;
    for (std::size_t r = 0; r < std::min<std::size_t>(around, order.size()); ++r)
      for (double sigma : {0.1, 0.03, 0.01})
        for (int i = 0; i < 40; ++i) {
          Point p = xs_[order[r]];
          for (auto& v : p) v = std::clamp(v + sigma * n01(rng_), 0.0, 1.0);
          c.push_back(space_.canonical(p));
        }
    return c;
  }

  const Space& space_;
  TunerOptions o_;
  std::mt19937_64 rng_;
  std::size_t d_;
  std::vector<Point> xs_;
  std::vector<double> ys_;
  std::vector<Point> design_;
  std::size_t next_design_ = 0;
};

class RandomTuner : public Base {
 public:
  using Base::Base;
  Point ask(const std::vector<Point>&) override { return random_point(); }
  std::string name() const override { return "random"; }
};

class LhsTuner : public Base {
 public:
  LhsTuner(const Space& s, const TunerOptions& o) : Base(s, o) { make_lhs(std::max(o.budget, 1)); }
  Point ask(const std::vector<Point>&) override { return next_initial(); }
  std::string name() const override { return "lhs"; }
};

// ---- surrogates ----

struct Prediction {
  double mean, sd;
};

class Surrogate {
 public:
  virtual ~Surrogate() = default;
  virtual void fit(const std::vector<Point>& x, const std::vector<double>& y) = 0;
  virtual Prediction predict(const Point& x) const = 0;
  // A fit that may keep the hyperparameters of the last fit().
  virtual void refit(const std::vector<Point>& x, const std::vector<double>& y) { fit(x, y); }
};

// skopt's RandomForestRegressor surrogate (its "RF": 100 bootstrapped CART trees, at least 3
// samples a leaf); the spread is the law of total variance over trees and leaves.
class Forest : public Surrogate {
 public:
  Forest(int trees, std::mt19937_64* rng) : trees_(trees), rng_(rng) {}
  void fit(const std::vector<Point>& x, const std::vector<double>& y) override {
    x_ = &x;
    y_ = &y;
    nodes_.clear();
    roots_.clear();
    std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
    for (int t = 0; t < trees_; ++t) {
      std::vector<std::size_t> idx(x.size());
      for (auto& i : idx) i = pick(*rng_);
      roots_.push_back(build(idx));
    }
    x_ = nullptr;
    y_ = nullptr;
  }
  Prediction predict(const Point& x) const override {
    double m = 0, s = 0;
    for (int root : roots_) {
      int n = root;
      while (nodes_[n].feature >= 0)
        n = x[nodes_[n].feature] <= nodes_[n].threshold ? nodes_[n].left : nodes_[n].right;
      m += nodes_[n].mean;
      s += nodes_[n].var + nodes_[n].mean * nodes_[n].mean;
    }
    m /= roots_.size();
    s = s / roots_.size() - m * m;
    return {m, std::sqrt(std::max(s, 0.0))};
  }

 private:
  struct Node {
    int feature = -1;
    double threshold = 0;
    int left = -1, right = -1;
    double mean = 0, var = 0;
  };
  int build(std::vector<std::size_t>& idx) {
    const auto& x = *x_;
    const auto& y = *y_;
    Node node;
    double sum = 0, sq = 0;
    for (auto i : idx) sum += y[i], sq += y[i] * y[i];
    double n = static_cast<double>(idx.size());
    node.mean = sum / n;
    node.var = std::max(sq / n - node.mean * node.mean, 0.0);
    int best_f = -1;
    double best_t = 0, best_score = sq - sum * sum / n - 1e-12;
    const std::size_t min_leaf = 3;
    if (idx.size() >= 2 * min_leaf && node.var > 0) {
      std::size_t d = x[0].size();
      std::vector<std::size_t> order = idx;
      for (std::size_t f = 0; f < d; ++f) {
        std::sort(order.begin(), order.end(), [&](auto a, auto b) { return x[a][f] < x[b][f]; });
        double ls = 0, lq = 0;
        for (std::size_t k = 0; k + 1 < order.size(); ++k) {
          double v = y[order[k]];
          ls += v;
          lq += v * v;
          if (x[order[k]][f] == x[order[k + 1]][f]) continue;
          if (k + 1 < min_leaf || order.size() - (k + 1) < min_leaf) continue;
          double nl = static_cast<double>(k + 1), nr = n - nl;
          double rs = sum - ls, rq = sq - lq;
          double score = (lq - ls * ls / nl) + (rq - rs * rs / nr);
          if (score < best_score) {
            best_score = score;
            best_f = static_cast<int>(f);
            best_t = 0.5 * (x[order[k]][f] + x[order[k + 1]][f]);
          }
        }
      }
    }
    int id = static_cast<int>(nodes_.size());
    nodes_.push_back(node);
    if (best_f < 0) return id;
    std::vector<std::size_t> l, r;
    for (auto i : idx) (x[i][best_f] <= best_t ? l : r).push_back(i);
    nodes_[id].feature = best_f;
    nodes_[id].threshold = best_t;
    int li = build(l);
    int ri = build(r);
    nodes_[id].left = li;
    nodes_[id].right = ri;
    return id;
  }
  int trees_;
  std::mt19937_64* rng_;
  std::vector<Node> nodes_;
  std::vector<int> roots_;
  const std::vector<Point>* x_ = nullptr;
  const std::vector<double>* y_ = nullptr;
};

// A GP with a Matern-5/2 ARD kernel on standardised targets; hyperparameters (log length
// scales, log signal variance, log noise) by maximising the log marginal likelihood with a
// pattern search warm-started from the previous fit.
class Gp : public Surrogate {
 public:
  explicit Gp(std::size_t d) : theta_(d + 2, 0.0) {
    for (std::size_t k = 0; k < d; ++k) theta_[k] = std::log(0.3);
    theta_[d] = 0;                   // log signal variance
    theta_[d + 1] = std::log(1e-4);  // log noise variance
  }
  void fit(const std::vector<Point>& x, const std::vector<double>& y) override {
    set_data(x, y);
    optimise();
    factor(theta_);
  }
  void refit(const std::vector<Point>& x, const std::vector<double>& y) override {
    set_data(x, y);
    factor(theta_);
  }
  void set_data(const std::vector<Point>& x, const std::vector<double>& y) {
    x_ = x;
    std::size_t n = y.size();
    mean_ = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double var = 0;
    for (double v : y) var += (v - mean_) * (v - mean_);
    scale_ = std::sqrt(var / n);
    if (!(scale_ > 0)) scale_ = 1;
    yn_.resize(n);
    for (std::size_t i = 0; i < n; ++i) yn_(i) = (y[i] - mean_) / scale_;
  }
  Prediction predict(const Point& x) const override {
    std::size_t n = x_.size();
    Eigen::VectorXd k(n);
    for (std::size_t i = 0; i < n; ++i) k(i) = kern(theta_, x, x_[i]);
    double m = k.dot(alpha_);
    Eigen::VectorXd v = llt_.matrixL().solve(k);
    double s2 = std::exp(theta_[x.size()]) - v.squaredNorm();
    return {mean_ + scale_ * m, scale_ * std::sqrt(std::max(s2, 1e-12))};
  }

 private:
  double kern(const std::vector<double>& th, const Point& a, const Point& b) const {
    double r2 = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      double t = (a[k] - b[k]) / std::exp(th[k]);
      r2 += t * t;
    }
    double r = std::sqrt(5 * r2);
    return std::exp(th[a.size()]) * (1 + r + r * r / 3) * std::exp(-r);
  }
  // Returns the log marginal likelihood (and leaves the factor in llt_, alpha_).
  double factor(const std::vector<double>& th) {
    std::size_t n = x_.size();
    Eigen::MatrixXd K(n, n);
    double noise = std::exp(th[th.size() - 1]);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) K(i, j) = K(j, i) = kern(th, x_[i], x_[j]);
    for (std::size_t i = 0; i < n; ++i) K(i, i) += noise + 1e-10;
    llt_.compute(K);
    if (llt_.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
    alpha_ = llt_.solve(yn_);
    double logdet = 0;
    for (std::size_t i = 0; i < n; ++i) logdet += std::log(llt_.matrixL()(i, i));
    return -0.5 * yn_.dot(alpha_) - logdet - 0.5 * n * std::log(2 * kPi);
  }
  void optimise() {
    std::size_t d = theta_.size() - 2;
    auto clampt = [&](std::vector<double>& th) {
      for (std::size_t k = 0; k < d; ++k) th[k] = std::clamp(th[k], std::log(0.01), std::log(20.0));
      th[d] = std::clamp(th[d], std::log(0.05), std::log(20.0));
      th[d + 1] = std::clamp(th[d + 1], std::log(1e-6), std::log(0.2));
    };
    auto search = [&](std::vector<double> th, double step, int budget) {
      clampt(th);
      double best = factor(th);
      int evals = 1;
      while (step > 0.02 && evals < budget) {
        bool improved = false;
        for (std::size_t k = 0; k < th.size() && evals < budget; ++k)
          for (double dir : {1.0, -1.0}) {
            std::vector<double> t = th;
            t[k] += dir * step;
            clampt(t);
            double v = factor(t);
            ++evals;
            if (v > best + 1e-9) {
              best = v;
              th = t;
              improved = true;
              break;
            }
          }
        if (!improved) step /= 2;
      }
      return std::pair{best, th};
    };
    auto warm = search(theta_, 0.5, 120);
    std::vector<double> fresh(theta_.size(), std::log(0.3));
    fresh[d] = 0;
    fresh[d + 1] = std::log(1e-3);
    auto cold = search(fresh, 1.0, 120);
    theta_ = warm.first >= cold.first ? warm.second : cold.second;
  }

  std::vector<double> theta_;
  std::vector<Point> x_;
  Eigen::VectorXd yn_, alpha_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  double mean_ = 0, scale_ = 1;
};

// BO with a surrogate and EI / PI / LCB or skopt's gp_hedge portfolio over the three.
class BoTuner : public Base {
 public:
  BoTuner(const Space& s, const TunerOptions& o)
      : Base(s, o), name_(o.kind), forest_rng_(o.seed ^ 0x9e3779b97f4a7c15ULL) {
    if (o.kind == "gp")
      model_ = std::make_unique<Gp>(s.dims());
    else
      model_ = std::make_unique<Forest>(100, &forest_rng_);
    if (o.acquisition != "ei" && o.acquisition != "pi" && o.acquisition != "lcb" &&
        o.acquisition != "gp_hedge")
      fail("tuner", "unknown acquisition '" + o.acquisition + "' (ei, pi, lcb, gp_hedge)");
  }
  Point ask(const std::vector<Point>& pending) override {
    if (initial_phase(pending.size())) return next_initial();
    std::vector<Point> x;
    std::vector<double> y;
    if (o_.liar == "believer" && !pending.empty()) {
      // the "kriging believer": pending points at the model's own prediction
      model_->fit(xs_, ys_);
      x = xs_;
      y = ys_;
      for (auto& p : pending) {
        x.push_back(space_.canonical(p));
        y.push_back(model_->predict(x.back()).mean);
      }
      model_->refit(x, y);
    } else {
      fit_data(pending, &x, &y);
      model_->fit(x, y);
    }
    if (!proposals_.empty()) {  // gp_hedge: reward each acquisition's last proposal
      for (std::size_t a = 0; a < 3; ++a) gains_[a] -= model_->predict(proposals_[a]).mean;
      proposals_.clear();
    }
    double best = *std::min_element(ys_.begin(), ys_.end());
    auto cands = candidates();
    std::vector<Prediction> pred(cands.size());
    for (std::size_t i = 0; i < cands.size(); ++i) pred[i] = model_->predict(cands[i]);
    // scores to minimise, per acquisition: lcb, -ei, -pi
    auto score = [&](int a, const Prediction& p) {
      double sd = std::max(p.sd, 1e-12);
      double imp = best - p.mean - o_.xi;
      if (a == 0) return p.mean - o_.kappa * p.sd;
      if (a == 1) return -(imp * norm_cdf(imp / sd) + sd * norm_pdf(imp / sd));
      return -norm_cdf(imp / sd);
    };
    auto argmin = [&](int a) {
      std::size_t arg = 0;
      double v = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < cands.size(); ++i) {
        double s = score(a, pred[i]);
        if (s < v) v = s, arg = i;
      }
      return cands[arg];
    };
    if (o_.acquisition == "lcb") return argmin(0);
    if (o_.acquisition == "ei") return argmin(1);
    if (o_.acquisition == "pi") return argmin(2);
    for (int a = 0; a < 3; ++a) proposals_.push_back(argmin(a));
    double mx = *std::max_element(gains_, gains_ + 3);
    double p[3], total = 0;
    for (int a = 0; a < 3; ++a) total += p[a] = std::exp(gains_[a] - mx);
    double u = uniform() * total;
    int chosen = u < p[0] ? 0 : (u < p[0] + p[1] ? 1 : 2);
    return proposals_[chosen];
  }
  std::string name() const override { return name_; }

 private:
  std::unique_ptr<Surrogate> model_;
  std::string name_;
  std::mt19937_64 forest_rng_;
  double gains_[3] = {0, 0, 0};
  std::vector<Point> proposals_;
};

// TPE: good/bad split at gamma(n) = min(ceil(0.1 n), 25), per-coordinate Parzen estimators
// with a uniform prior component and Optuna's bandwidth clipping, 24 candidates from l(x),
// the one maximising l(x)/g(x). Pending points join the bad set (a constant liar).
class TpeTuner : public Base {
 public:
  using Base::Base;
  Point ask(const std::vector<Point>& pending) override {
    if (initial_phase(pending.size())) return next_initial();
    std::vector<std::size_t> order(ys_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return ys_[a] < ys_[b] || (ys_[a] == ys_[b] && a < b); });
    std::size_t n = ys_.size();
    std::size_t n_good = std::min<std::size_t>(std::ceil(0.1 * n), 25);
    n_good = std::max<std::size_t>(n_good, 1);
    std::vector<Point> good, bad;
    for (std::size_t r = 0; r < n; ++r) (r < n_good ? good : bad).push_back(xs_[order[r]]);
    for (auto& p : pending) bad.push_back(space_.canonical(p));
    Point best_x;
    double best_score = -std::numeric_limits<double>::infinity();
    std::vector<Parzen> lk(d_), gk(d_);
    for (std::size_t k = 0; k < d_; ++k) {
      lk[k] = Parzen(good, k);
      gk[k] = Parzen(bad, k);
    }
    for (int c = 0; c < 24; ++c) {
      Point x(d_);
      for (std::size_t k = 0; k < d_; ++k) x[k] = lk[k].sample(rng_);
      x = space_.canonical(x);
      double s = 0;
      for (std::size_t k = 0; k < d_; ++k) s += lk[k].log_pdf(x[k]) - gk[k].log_pdf(x[k]);
      if (s > best_score) best_score = s, best_x = x;
    }
    return best_x;
  }
  std::string name() const override { return "tpe"; }

 private:
  struct Parzen {
    std::vector<double> mu, sigma;  // the last component is the prior
    Parzen() = default;
    Parzen(const std::vector<Point>& pts, std::size_t k) {
      std::vector<double> m;
      for (auto& p : pts) m.push_back(p[k]);
      std::vector<double> sorted = m;
      std::sort(sorted.begin(), sorted.end());
      double n = static_cast<double>(m.size());
      double lo_clip = 1.0 / std::min(100.0, 1.0 + n), hi_clip = 1.0;
      for (double v : m) {
        auto it = std::lower_bound(sorted.begin(), sorted.end(), v);
        double left = it == sorted.begin() ? v - 0.0 : v - *(it - 1);
        auto jt = std::upper_bound(sorted.begin(), sorted.end(), v);
        double right = jt == sorted.end() ? 1.0 - v : *jt - v;
        mu.push_back(v);
        sigma.push_back(std::clamp(std::max(left, right), lo_clip, hi_clip));
      }
      mu.push_back(0.5);
      sigma.push_back(1.0);
    }
    double sample(std::mt19937_64& rng) const {
      std::size_t c = std::uniform_int_distribution<std::size_t>(0, mu.size() - 1)(rng);
      std::normal_distribution<double> g(mu[c], sigma[c]);
      for (int tries = 0; tries < 100; ++tries) {
        double v = g(rng);
        if (v >= 0 && v <= 1) return v;
      }
      return std::clamp(mu[c], 0.0, 1.0);
    }
    double log_pdf(double x) const {
      double total = 0;
      for (std::size_t c = 0; c < mu.size(); ++c) {
        double z = (x - mu[c]) / sigma[c];
        double mass = norm_cdf((1 - mu[c]) / sigma[c]) - norm_cdf((0 - mu[c]) / sigma[c]);
        total += norm_pdf(z) / (sigma[c] * std::max(mass, 1e-12));
      }
      return std::log(total / mu.size() + 1e-300);
    }
  };
};

}  // namespace

std::unique_ptr<Tuner> make_tuner(const Space& space, const TunerOptions& o) {
  if (o.kind == "random") return std::make_unique<RandomTuner>(space, o);
  if (o.kind == "lhs") return std::make_unique<LhsTuner>(space, o);
  if (o.kind == "tpe") return std::make_unique<TpeTuner>(space, o);
  if (o.kind == "rf" || o.kind == "gp") return std::make_unique<BoTuner>(space, o);
  fail("tuner", "unknown tuner '" + o.kind + "' (random, lhs, rf, gp, tpe)");
}

}  // namespace wavekit::tune
