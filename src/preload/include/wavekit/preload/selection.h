// Which dispatches run instrumented. Both variants of every instrumented kernel are loaded (the
// rewritten one and, in the shim's shadow executable, the original); each dispatch chooses one
// at the proxy queue, by a selection the user gives as text:
//
//   kernel=REGEX        kernels whose name REGEX matches (ECMAScript, anywhere: anchor with ^$)
//   dispatches=RANGES   by position, e.g. 10-20,40,100- (inclusive, counted from 0)
//   first=N             the first N
//   every=N             one in N: positions 0, N, 2N, ...
//   time=A-B            from A to B seconds after the selection took effect (B may be left out)
//   all                 no restriction
//
// Clauses are separated by spaces or ';' and all must hold; the empty selection (or "all")
// takes every dispatch. Positions count the dispatches that pass the kernel clause, over all
// kernels, from the moment the selection took effect (a selection installed at run time starts
// counting again). Everything else runs the original kernel.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wavekit::preload {

class DispatchSelection {
 public:
  using Clock = std::chrono::steady_clock;

  // Every dispatch.
  DispatchSelection() = default;

  // Throws wavekit::Error naming the clause that is malformed.
  static DispatchSelection parse(std::string_view text);

  // Whether dispatches of `kernel` are counted at all (the kernel clause).
  bool matches_kernel(const std::string& kernel) const;
  // Whether the dispatch at `position` among those that match, made `elapsed` after the
  // selection took effect, runs instrumented.
  bool chooses(std::uint64_t position, Clock::duration elapsed) const;

  // The text it was parsed from, normalised ("" for every dispatch).
  const std::string& text() const { return text_; }

 private:
  struct Range {
    std::uint64_t first = 0;
    std::uint64_t last = UINT64_MAX;  // inclusive
  };

  std::string text_;
  std::optional<std::regex> kernel_;
  std::vector<Range> ranges_;  // empty: any position
  std::uint64_t first_ = UINT64_MAX;
  std::uint64_t every_ = 1;
  Clock::duration from_ = Clock::duration::zero();
  std::optional<Clock::duration> until_;
};

}  // namespace wavekit::preload
