// Search spaces read from JSON and the tuners that search them. Every tuner works in the unit
// cube (one coordinate per parameter; log-scaled floats and ints are mapped in log space,
// categoricals by their index), minimises, and is deterministic under its seed for a given
// sequence of ask/tell calls.
//
// Space JSON:
//   {"parameters": [
//      {"name": "C", "type": "float", "low": 0.1, "high": 100, "log": true, "default": 1},
//      {"name": "n", "type": "int", "low": 1, "high": 64},
//      {"name": "kernel", "type": "categorical", "choices": ["rbf", "mixed"]},
//      {"name": "a", "type": "float", "low": 0, "high": 1,
//       "condition": {"parameter": "kernel", "in": ["mixed"]}}]}
// A parameter whose condition does not hold is inactive: left out of the configuration given
// to the objective (its coordinate is held at its default for the surrogate).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace wavekit::tune {

struct Parameter {
  enum class Type { real, integer, categorical } type = Type::real;
  std::string name;
  double low = 0, high = 1;
  bool log = false;
  std::vector<std::string> choices;  // categorical
  std::string default_value;         // as text; empty: the middle of the range / first choice
  std::string condition_parameter;   // empty: always active
  std::vector<std::string> condition_in;
};

// One configuration: every active parameter's value as text (numbers in %.17g, ints as ints)
// and as a number (categoricals: the choice index).
struct Config {
  std::map<std::string, std::string> text;
  std::map<std::string, double> number;
};

class Space {
 public:
  static Space from_json(const std::string& json_text, const std::string& name = "space");
  static Space from_file(const std::string& path);

  const std::vector<Parameter>& parameters() const { return params_; }
  std::size_t dims() const { return params_.size(); }
  // Unit-cube point -> configuration (ints rounded, categoricals by bin, inactive left out).
  Config decode(const std::vector<double>& u) const;
  // Snaps a unit point to what decode() would give back (ints, bins, inactive -> default).
  std::vector<double> canonical(const std::vector<double>& u) const;
  std::vector<double> defaults() const;
  // Configuration (as from a history file) -> unit point.
  std::vector<double> encode(const std::map<std::string, double>& number) const;
  void add(Parameter p);  // validates (low < high, log needs low > 0, names unique, conditions)

 private:
  double to_unit(const Parameter& p, double value) const;
  double from_unit(const Parameter& p, double u) const;
  std::vector<Parameter> params_;
};

class Tuner {
 public:
  virtual ~Tuner() = default;
  // The next point to evaluate, given the points still being evaluated (for a constant liar).
  virtual std::vector<double> ask(const std::vector<std::vector<double>>& pending) = 0;
  virtual void tell(const std::vector<double>& x, double y) = 0;
  virtual std::string name() const = 0;
};

struct TunerOptions {
  std::string kind = "rf";  // random, lhs, rf, gp, tpe
  std::uint64_t seed = 1;
  int initial_points = 10;               // random/LHS points before the model is used
  int budget = 128;                      // for the LHS design
  std::string acquisition = "gp_hedge";  // rf and gp: ei, pi, lcb, gp_hedge
  double kappa = 1.96, xi = 0.01;
  // acquisition optimisation: random candidates (0: 10,000 for rf, skopt's "sampling";
  // 2,000 for gp) and Gaussian steps around the five best points (-1: for gp, not for rf)
  int candidates = 0;
  int local_candidates = -1;
  // pending points in model fits: a constant liar (max: skopt's cl_max, min, mean) or the
  // model's own prediction (believer, the default)
  std::string liar;
};

std::unique_ptr<Tuner> make_tuner(const Space& space, const TunerOptions& options);

// Known test functions on their usual domains, for examples and benchmarks.
double branin(double x1, double x2);  // x1 in [-5, 10], x2 in [0, 15]; min 0.397887
double hartmann6(const double* x);    // x in [0, 1]^6; min -3.32237

}  // namespace wavekit::tune
