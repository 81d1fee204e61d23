// Search spaces: JSON in, unit-cube coordinates out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/tune/tuner.h"

namespace wavekit::tune {
namespace {

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

void Space::add(Parameter p) {
  const std::string where = "search space: parameter '" + p.name + "'";
  if (p.name.empty()) fail("search space", "a parameter without a name");
  for (auto& q : params_)
    if (q.name == p.name) fail(where, "defined twice");
  if (p.type == Parameter::Type::categorical) {
    if (p.choices.empty()) fail(where, "a categorical parameter needs choices");
    std::set<std::string> seen(p.choices.begin(), p.choices.end());
    if (seen.size() != p.choices.size()) fail(where, "repeated choices");
    if (!p.default_value.empty() &&
        std::find(p.choices.begin(), p.choices.end(), p.default_value) == p.choices.end())
      fail(where, "default '" + p.default_value + "' is not one of the choices");
  } else {
    if (!std::isfinite(p.low) || !std::isfinite(p.high)) fail(where, "low and high must be finite");
    if (!(p.low < p.high))
      fail(where,
           "low (" + number_text(p.low) + ") must be below high (" + number_text(p.high) + ")");
    if (p.log && p.low <= 0) fail(where, "a log-scaled range needs low > 0");
    if (p.type == Parameter::Type::integer &&
        (p.low != std::floor(p.low) || p.high != std::floor(p.high)))
      fail(where, "an int parameter needs integer low and high");
    if (!p.default_value.empty()) {
      char* end;
      double v = std::strtod(p.default_value.c_str(), &end);
      if (*end || end == p.default_value.c_str())
        fail(where, "default '" + p.default_value + "' is not a number");
      if (v < p.low || v > p.high) fail(where, "default " + p.default_value + " is out of range");
    }
  }
  if (!p.condition_parameter.empty()) {
    auto it = std::find_if(params_.begin(), params_.end(),
                           [&](const Parameter& q) { return q.name == p.condition_parameter; });
    if (it == params_.end())
      fail(where, "its condition names '" + p.condition_parameter +
                      "', which is not a parameter defined before it");
    if (p.condition_in.empty()) fail(where, "its condition lists no values");
  }
  params_.push_back(std::move(p));
}

Space Space::from_json(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(name, std::string("not JSON: ") + e.what());
  }
  const nlohmann::json* list = &j;
  if (j.is_object()) {
    if (!j.contains("parameters")) fail(name, "expected {\"parameters\": [...]}");
    list = &j["parameters"];
  }
  if (!list->is_array()) fail(name, "\"parameters\" must be a list");
  Space s;
  auto text_of = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : number_text(v.get<double>());
  };
  try {
    for (auto& e : *list) {
      Parameter p;
      p.name = e.at("name").get<std::string>();
      std::string type = e.value("type", "float");
      if (type == "float" || type == "real") {
        p.type = Parameter::Type::real;
      } else if (type == "int" || type == "integer") {
        p.type = Parameter::Type::integer;
      } else if (type == "categorical") {
        p.type = Parameter::Type::categorical;
      } else {
        fail(name,
             "parameter '" + p.name + "': unknown type '" + type + "' (float, int, categorical)");
      }
      if (p.type == Parameter::Type::categorical) {
        for (auto& c : e.at("choices")) p.choices.push_back(text_of(c));
      } else {
        p.low = e.at("low").get<double>();
        p.high = e.at("high").get<double>();
        p.log = e.value("log", false);
      }
      if (e.contains("default")) p.default_value = text_of(e["default"]);
      if (e.contains("condition")) {
        auto& c = e["condition"];
        p.condition_parameter = c.at("parameter").get<std::string>();
        if (c.contains("in"))
          for (auto& v : c["in"]) p.condition_in.push_back(text_of(v));
        if (c.contains("equals")) p.condition_in.push_back(text_of(c["equals"]));
      }
      s.add(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(name, std::string("bad parameter: ") + e.what());
  }
  if (s.params_.empty()) fail(name, "no parameters");
  return s;
}

Space Space::from_file(const std::string& path) {
  auto bytes = read_file(path);
  return from_json(std::string(bytes.begin(), bytes.end()), path);
}

double Space::to_unit(const Parameter& p, double v) const {
  if (p.type == Parameter::Type::categorical)
    return (v + 0.5) / static_cast<double>(p.choices.size());
  if (p.log) return (std::log(v) - std::log(p.low)) / (std::log(p.high) - std::log(p.low));
  return (v - p.low) / (p.high - p.low);
}

double Space::from_unit(const Parameter& p, double u) const {
  u = std::clamp(u, 0.0, 1.0);
  if (p.type == Parameter::Type::categorical) {
    double k = static_cast<double>(p.choices.size());
    return std::min(std::floor(u * k), k - 1);
  }
  double v = p.log ? std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)))
                   : p.low + u * (p.high - p.low);
  if (p.type == Parameter::Type::integer) v = std::round(v);
  return std::clamp(v, p.low, p.high);
}

std::vector<double> Space::defaults() const {
  std::vector<double> u(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Parameter& p = params_[k];
    if (p.type == Parameter::Type::categorical) {
      std::size_t idx = 0;
      if (!p.default_value.empty())
        idx = std::find(p.choices.begin(), p.choices.end(), p.default_value) - p.choices.begin();
      u[k] = to_unit(p, static_cast<double>(idx));
    } else if (!p.default_value.empty()) {
      u[k] = to_unit(p, std::strtod(p.default_value.c_str(), nullptr));
    } else {
      u[k] = to_unit(p, from_unit(p, 0.5));
    }
  }
  return u;
}

Config Space::decode(const std::vector<double>& u) const {
  Config c;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Parameter& p = params_[k];
    if (!p.condition_parameter.empty()) {
      auto it = c.text.find(p.condition_parameter);
      if (it == c.text.end() || std::find(p.condition_in.begin(), p.condition_in.end(),
                                          it->second) == p.condition_in.end())
        continue;
    }
    double v = from_unit(p, u.at(k));
    c.number[p.name] = v;
    if (p.type == Parameter::Type::categorical)
      c.text[p.name] = p.choices[static_cast<std::size_t>(v)];
    else if (p.type == Parameter::Type::integer)
      c.text[p.name] = std::to_string(static_cast<long long>(v));
    else
      c.text[p.name] = number_text(v);
  }
  return c;
}

std::vector<double> Space::canonical(const std::vector<double>& u) const {
  Config c = decode(u);
  std::vector<double> d = defaults(), out(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Parameter& p = params_[k];
    auto it = c.number.find(p.name);
    if (it == c.number.end())
      out[k] = d[k];
    else if (p.type == Parameter::Type::real)
      out[k] = std::clamp(u[k], 0.0, 1.0);
    else
      out[k] = to_unit(p, it->second);
  }
  return out;
}

std::vector<double> Space::encode(const std::map<std::string, double>& number) const {
  std::vector<double> d = defaults(), out(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    auto it = number.find(params_[k].name);
    out[k] = it == number.end() ? d[k] : to_unit(params_[k], it->second);
  }
  return out;
}

double branin(double x1, double x2) {
  const double pi = 3.14159265358979323846;
  double a = 1, b = 5.1 / (4 * pi * pi), c = 5 / pi, r = 6, s = 10, t = 1 / (8 * pi);
  double q = x2 - b * x1 * x1 + c * x1 - r;
  return a * q * q + s * (1 - t) * std::cos(x1) + s;
}

double hartmann6(const double* x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double A[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double P[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      double d = x[j] - P[i][j] * 1e-4;
      inner += A[i][j] * d * d;
    }
    sum += alpha[i] * std::exp(-inner);
  }
  return -sum;
}

}  // namespace wavekit::tune
