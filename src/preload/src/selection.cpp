#include "wavekit/preload/selection.h"

#include <charconv>
#include <cmath>

#include "wavekit/support/error.h"

namespace wavekit::preload {

namespace {

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of(separators, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

[[noreturn]] void refuse(std::string_view clause, const std::string& why) {
  throw Error("dispatch selection '" + std::string(clause) + "': " + why);
}

std::uint64_t count_in(std::string_view clause, std::string_view text, const char* what) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    refuse(clause, "'" + std::string(text) + "' is not " + what);
  return value;
}

DispatchSelection::Clock::duration seconds_in(std::string_view clause, std::string_view text) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  // A year bounds what a duration of steady_clock ticks holds with room to spare.
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(seconds) || seconds < 0 || seconds > 365.0 * 24 * 3600)
    refuse(clause, "'" + std::string(text) + "' is not a number of seconds (0 to a year)");
  return std::chrono::duration_cast<DispatchSelection::Clock::duration>(
      std::chrono::duration<double>(seconds));
}

}  // namespace

DispatchSelection DispatchSelection::parse(std::string_view text) {
  DispatchSelection selection;
  for (std::string_view clause : split(text, " \t\n;")) {
    if (clause == "all") continue;
    const std::size_t equals = clause.find('=');
    if (equals == std::string_view::npos)
      refuse(clause, "expected all or NAME=VALUE (kernel=, dispatches=, first=, every=, time=)");
    const std::string_view name = clause.substr(0, equals);
    const std::string_view value = clause.substr(equals + 1);
    if (value.empty()) refuse(clause, "no value");
    if (name == "kernel") {
      try {
        selection.kernel_.emplace(std::string(value),
                                  std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& error) {
        refuse(clause, std::string("not a regular expression: ") + error.what());
      }
    } else if (name == "dispatches") {
      for (std::string_view range : split(value, ",")) {
        const std::size_t dash = range.find('-');
        Range parsed;
        parsed.first = count_in(clause, range.substr(0, dash), "a dispatch position");
        if (dash == std::string_view::npos)
          parsed.last = parsed.first;
        else if (dash + 1 < range.size())
          parsed.last = count_in(clause, range.substr(dash + 1), "a dispatch position");
        if (parsed.last < parsed.first)
          refuse(clause, "range " + std::string(range) + " ends before it starts");
        selection.ranges_.push_back(parsed);
      }
      if (selection.ranges_.empty()) refuse(clause, "no dispatch positions");
    } else if (name == "first") {
      selection.first_ = count_in(clause, value, "a count");
    } else if (name == "every") {
      selection.every_ = count_in(clause, value, "a count");
      if (selection.every_ == 0) refuse(clause, "one in 0 dispatches is none; use first=0");
    } else if (name == "time") {
      const std::size_t dash = value.find('-');
      selection.from_ = seconds_in(clause, value.substr(0, dash));
      if (dash != std::string_view::npos && dash + 1 < value.size()) {
        selection.until_ = seconds_in(clause, value.substr(dash + 1));
        if (*selection.until_ < selection.from_) refuse(clause, "the window ends before it starts");
      }
    } else {
      refuse(clause, "unknown clause '" + std::string(name) +
                         "' (known: kernel, dispatches, first, every, time)");
    }
    selection.text_ += (selection.text_.empty() ? "" : " ") + std::string(clause);
  }
  return selection;
}

bool DispatchSelection::matches_kernel(const std::string& kernel) const {
  return !kernel_ || std::regex_search(kernel, *kernel_);
}

bool DispatchSelection::chooses(std::uint64_t position, Clock::duration elapsed) const {
  if (position >= first_ || position % every_ != 0) return false;
  if (elapsed < from_ || (until_ && elapsed > *until_)) return false;
  if (ranges_.empty()) return true;
  for (const Range& range : ranges_)
    if (position >= range.first && position <= range.last) return true;
  return false;
}

}  // namespace wavekit::preload
