// Counts as expressions of a program's size parameters: "4*n", "2*n^2 + 3*n + 12",
// "(nx*ny)/32". Grammar: numbers (decimal, exponent allowed), parameter names
// ([A-Za-z_][A-Za-z0-9_]*), + - * / ^ (power, right-associative), unary minus, parentheses.
#pragma once

#include <map>
#include <set>
#include <string>

namespace wavekit::model {

using Parameters = std::map<std::string, double>;

// Evaluates `text` with `parameters`. Throws wavekit::Error naming the expression for a syntax
// error or a parameter that has no value ("'4*m': parameter 'm' has no value").
double evaluate(const std::string& text, const Parameters& parameters);

// The parameter names `text` uses (throws for a syntax error, as evaluate does).
std::set<std::string> parameter_names(const std::string& text);

// A number as an expression term: integers exactly, others with 12 significant digits.
std::string format_number(double value);

}  // namespace wavekit::model
