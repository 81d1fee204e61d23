#include "wavekit/model/expression.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "wavekit/support/error.h"

namespace wavekit::model {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const Parameters* parameters, std::set<std::string>* names)
      : text_(text), parameters_(parameters), names_(names) {}

  double parse() {
    double value = sum();
    skip();
    if (pos_ != text_.size()) error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return value;
  }

 private:
  [[noreturn]] void error(const std::string& message) const {
    throw Error("expression '" + text_ + "': " + message + " at column " +
                std::to_string(pos_ + 1));
  }
  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  double sum() {
    double value = product();
    for (;;) {
      if (accept('+'))
        value += product();
      else if (accept('-'))
        value -= product();
      else
        return value;
    }
  }
  double product() {
    double value = unary();
    for (;;) {
      if (accept('*')) {
        value *= unary();
      } else if (accept('/')) {
        double divisor = unary();
        if (divisor == 0 && !names_) error("division by zero");
        value = divisor == 0 ? 0 : value / divisor;
      } else {
        return value;
      }
    }
  }
  double unary() {
    if (accept('-')) return -unary();
    if (accept('+')) return unary();
    return power();
  }
  double power() {
    double base = primary();
    if (accept('^')) return std::pow(base, unary());
    return base;
  }
  double primary() {
    skip();
    if (pos_ >= text_.size()) error("expected a number, a parameter or '('");
    if (accept('(')) {
      double value = sum();
      if (!accept(')')) error("expected ')'");
      return value;
    }
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = text_.c_str() + pos_;
      char* end = nullptr;
      double value = std::strtod(begin, &end);
      if (end == begin) error("bad number");
      pos_ += std::size_t(end - begin);
      return value;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      if (names_) {
        names_->insert(name);
        return 1;
      }
      auto found = parameters_->find(name);
      if (found == parameters_->end())
        throw Error("expression '" + text_ + "': parameter '" + name + "' has no value");
      return found->second;
    }
    error("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& text_;
  const Parameters* parameters_;
  std::set<std::string>* names_;
  std::size_t pos_ = 0;
};

}  // namespace

double evaluate(const std::string& text, const Parameters& parameters) {
  if (text.empty()) throw Error("empty expression");
  return Parser(text, &parameters, nullptr).parse();
}

std::set<std::string> parameter_names(const std::string& text) {
  std::set<std::string> names;
  if (text.empty()) throw Error("empty expression");
  Parser(text, nullptr, &names).parse();
  return names;
}

std::string format_number(double value) {
  if (std::isfinite(value) && std::fabs(value) < 9e15 && value == std::round(value)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.12g", value);
  return buffer;
}

}  // namespace wavekit::model
