// A small, strict option parser for subcommands: `--name value`, `--name=value`, flags,
// repeated options, positionals, and everything after `--` kept verbatim. Unknown options,
// missing values and missing positionals are usage errors that name the problem; `--help`
// prints a generated usage text.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/cli/subcommand.h"

namespace wavekit::cli {

// Thrown for bad command lines; the CLI prints "wavekit <sub>: <message>" and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OptionParser {
 public:
  // `command` is e.g. "wavekit inspect"; `description` is printed under the usage line.
  OptionParser(std::string command, std::string description);

  void flag(std::string name, bool* out, std::string help);
  void option(std::string name, std::string* out, std::string metavar, std::string help);
  void repeated(std::string name, std::vector<std::string>* out, std::string metavar,
                std::string help);
  void positional(std::string name, std::string* out, std::string help, bool required = true);
  // Collects everything after `--` (e.g. the application command line of `wavekit run`).
  void rest(std::string name, std::vector<std::string>* out, std::string help,
            bool required = true);
  // A one-letter spelling of a flag or option declared before, e.g. short_name('o', "--output"):
  // `-o OUT` then means `--output OUT`. Only before `--`: the program's own -o stays its own.
  void short_name(char letter, const std::string& name);

  // Parses `args`. Returns an exit code when the caller should stop (0 after --help), or
  // std::nullopt to continue. Throws UsageError for a bad command line.
  std::optional<int> parse(Arguments args);

  std::string usage() const;

 private:
  struct Spec {
    enum class Kind { flag, option, repeated, positional, rest } kind;
    std::string name;
    std::string metavar;
    std::string help;
    bool required = false;
    bool* flag_out = nullptr;
    std::string* value_out = nullptr;
    std::vector<std::string>* values_out = nullptr;
    char letter = 0;  // the short spelling, or 0
  };
  const Spec* find_option(std::string_view name) const;
  const Spec* find_short(std::string_view arg) const;

  std::string command_;
  std::string description_;
  std::vector<Spec> specs_;
};

// Strict number parsing for option values: the whole text must be a number in range.
// Errors name the option, e.g. "--grid: 'abc' is not an unsigned integer".
std::uint64_t parse_unsigned(std::string_view option, std::string_view text);
std::int64_t parse_signed(std::string_view option, std::string_view text);
double parse_double(std::string_view option, std::string_view text);

}  // namespace wavekit::cli
