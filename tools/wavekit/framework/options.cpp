#include "wavekit/cli/options.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace wavekit::cli {

OptionParser::OptionParser(std::string command, std::string description)
    : command_(std::move(command)), description_(std::move(description)) {}

void OptionParser::flag(std::string name, bool* out, std::string help) {
  specs_.push_back({Spec::Kind::flag, std::move(name), "", std::move(help), false, out});
}

void OptionParser::option(std::string name, std::string* out, std::string metavar,
                          std::string help) {
  Spec spec{Spec::Kind::option, std::move(name), std::move(metavar), std::move(help)};
  spec.value_out = out;
  specs_.push_back(std::move(spec));
}

void OptionParser::repeated(std::string name, std::vector<std::string>* out, std::string metavar,
                            std::string help) {
  Spec spec{Spec::Kind::repeated, std::move(name), std::move(metavar), std::move(help)};
  spec.values_out = out;
  specs_.push_back(std::move(spec));
}

void OptionParser::positional(std::string name, std::string* out, std::string help, bool required) {
  Spec spec{Spec::Kind::positional, std::move(name), "", std::move(help), required};
  spec.value_out = out;
  specs_.push_back(std::move(spec));
}

void OptionParser::rest(std::string name, std::vector<std::string>* out, std::string help,
                        bool required) {
  Spec spec{Spec::Kind::rest, std::move(name), "", std::move(help), required};
  spec.values_out = out;
  specs_.push_back(std::move(spec));
}

void OptionParser::short_name(char letter, const std::string& name) {
  if (find_short(std::string{'-', letter}))
    throw std::logic_error("-" + std::string(1, letter) + " is given twice");
  for (Spec& spec : specs_)
    if (find_option(name) == &spec) {
      spec.letter = letter;
      return;
    }
  throw std::logic_error("short_name: no option " + name);
}

const OptionParser::Spec* OptionParser::find_short(std::string_view arg) const {
  if (arg.size() != 2 || arg[0] != '-' || arg[1] == '-') return nullptr;
  for (const Spec& spec : specs_)
    if (spec.letter == arg[1]) return &spec;
  return nullptr;
}

const OptionParser::Spec* OptionParser::find_option(std::string_view name) const {
  for (const Spec& spec : specs_) {
    bool named = spec.kind == Spec::Kind::flag || spec.kind == Spec::Kind::option ||
                 spec.kind == Spec::Kind::repeated;
    if (named && spec.name == name) return &spec;
  }
  return nullptr;
}

std::optional<int> OptionParser::parse(Arguments args) {
  std::vector<const Spec*> positionals;
  const Spec* rest_spec = nullptr;
  for (const Spec& spec : specs_) {
    if (spec.kind == Spec::Kind::positional) positionals.push_back(&spec);
    if (spec.kind == Spec::Kind::rest) rest_spec = &spec;
  }
  std::size_t next_positional = 0;
  bool saw_rest = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage();
      return 0;
    }
    if (arg == "--") {
      if (!rest_spec) throw UsageError("unexpected '--': this command takes no trailing command");
      for (++i; i < args.size(); ++i) rest_spec->values_out->emplace_back(args[i]);
      saw_rest = true;
      break;
    }
    const Spec* short_spec = find_short(arg);
    if (short_spec || (arg.size() > 2 && arg.starts_with("--"))) {
      std::string_view name = short_spec ? std::string_view(short_spec->name) : arg;
      std::optional<std::string_view> inline_value;
      if (auto eq = arg.find('='); !short_spec && eq != std::string_view::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
      }
      const Spec* spec = short_spec ? short_spec : find_option(name);
      if (!spec) throw UsageError("unknown option '" + std::string(name) + "' (see --help)");
      if (spec->kind == Spec::Kind::flag) {
        if (inline_value) throw UsageError(std::string(name) + " takes no value");
        *spec->flag_out = true;
        continue;
      }
      std::string value;
      if (inline_value) {
        value = *inline_value;
      } else {
        if (i + 1 >= args.size()) throw UsageError(std::string(name) + " needs a value");
        value = args[++i];
      }
      if (spec->kind == Spec::Kind::option)
        *spec->value_out = std::move(value);
      else
        spec->values_out->push_back(std::move(value));
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && arg != "-")
      throw UsageError("unknown option '" + std::string(arg) + "' (see --help)");
    if (next_positional >= positionals.size())
      throw UsageError("unexpected argument '" + std::string(arg) + "' (see --help)");
    *positionals[next_positional++]->value_out = std::string(arg);
  }
  for (std::size_t p = next_positional; p < positionals.size(); ++p)
    if (positionals[p]->required) throw UsageError("missing " + positionals[p]->name);
  if (rest_spec && rest_spec->required && (!saw_rest || rest_spec->values_out->empty()))
    throw UsageError("missing " + rest_spec->name + " after '--'");
  return std::nullopt;
}

std::string OptionParser::usage() const {
  std::ostringstream out;
  out << "usage: " << command_;
  for (const Spec& spec : specs_) {
    switch (spec.kind) {
      case Spec::Kind::positional:
        out << (spec.required ? " " : " [") << spec.name << (spec.required ? "" : "]");
        break;
      case Spec::Kind::rest:
        out << (spec.required ? " -- " : " [-- ") << spec.name << (spec.required ? "" : "]");
        break;
      default:
        break;
    }
  }
  out << " [options]\n\n" << description_ << "\n";
  bool any_option = false;
  for (const Spec& spec : specs_) {
    std::string left = spec.letter ? std::string{'-', spec.letter, ',', ' '} : "";
    switch (spec.kind) {
      case Spec::Kind::flag:
        left += spec.name;
        break;
      case Spec::Kind::option:
        left += spec.name + " " + spec.metavar;
        break;
      case Spec::Kind::repeated:
        left += spec.name + " " + spec.metavar + " (repeatable)";
        break;
      default:
        left += spec.name;
        break;
    }
    if (!any_option) out << "\n";
    any_option = true;
    out << "  " << left;
    if (left.size() < 28)
      out << std::string(28 - left.size(), ' ');
    else
      out << "\n  " << std::string(28, ' ');
    out << spec.help << "\n";
  }
  out << "  --help                      show this text\n";
  return out.str();
}

namespace {
template <typename T>
T parse_integer(std::string_view option, std::string_view text, const char* what) {
  T value{};
  int base = 10;
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    base = 16;
    digits.remove_prefix(2);
  }
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
    throw UsageError(std::string(option) + ": '" + std::string(text) + "' is not " + what);
  return value;
}
}  // namespace

std::uint64_t parse_unsigned(std::string_view option, std::string_view text) {
  return parse_integer<std::uint64_t>(option, text, "an unsigned integer");
}

std::int64_t parse_signed(std::string_view option, std::string_view text) {
  return parse_integer<std::int64_t>(option, text, "an integer");
}

double parse_double(std::string_view option, std::string_view text) {
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || errno != 0 || end != copy.c_str() + copy.size())
    throw UsageError(std::string(option) + ": '" + copy + "' is not a number");
  return value;
}

}  // namespace wavekit::cli
