// Per-dispatch choice under `wavekit run`: a selection (by kernel, position, one in N, time)
// decides at the proxy queue which dispatches run instrumented, and the program or another
// process can change it while it runs. The oracle is the emulator: run with its ground-truth
// trace on, it records for every dispatch the blocks of the code that actually ran, so an
// unselected dispatch must leave exactly the plain run's record (the original kernel ran) and
// a selected one a different one (the rewritten kernel ran), while the tool's results for the
// selected dispatches equal the plain run's ground truth and the program's output is its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "run_support.h"
#include "wavekit/preload/selection.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

using namespace wavekit::preload_tests;
namespace fs = std::filesystem;
using wavekit::preload::DispatchSelection;

std::set<std::string> named(const std::string& kernel, const std::set<unsigned>& dispatches) {
  std::set<std::string> names;
  for (unsigned n : dispatches) names.insert(kernel + "." + std::to_string(n) + ".json");
  return names;
}

// What the emulator recorded for dispatch `name` in `dir`: the blocks it ran, per wave.
nlohmann::json recorded(const fs::path& dir, const std::string& name) {
  return nlohmann::json::parse(slurp(dir / name))["waves"];
}

// Runs `program` under `wavekit run OPTIONS` with the emulator's trace on, and checks each of
// its `total` dispatches of `kernel` against the plain run: the selected ones (`chosen`)
// instrumented, with bbcount's results equal to the ground truth, the others the original.
void expect_only_chosen_instrumented(const std::string& name, const std::string& options,
                                     const std::string& program, const std::string& kernel,
                                     unsigned total, const std::set<unsigned>& chosen) {
  const fs::path dir = scratch("select-" + name);
  const GroundTruth truth = ground_truth(program, dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  const fs::path traced = dir / "traced";
  const Outcome run =
      shell("WAVEKIT_EMU_TRACE_BLOCKS=" + traced.string() + " " + WAVEKIT_CLI + " run " + options +
            " --tool bbcount --tool-out " + (dir / "bbcount").string() + " -- " + program);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, truth.run.out);
  EXPECT_EQ(shim_messages(run.err, ""), 0u) << run.err;

  std::set<unsigned> all;
  for (unsigned n = 0; n < total; ++n) all.insert(n);
  ASSERT_EQ(entry_names(traced, ".json"), named(kernel, all)) << run.err;
  for (unsigned n = 0; n < total; ++n) {
    const std::string file = kernel + "." + std::to_string(n) + ".json";
    if (chosen.count(n))
      EXPECT_NE(recorded(traced, file), recorded(truth.blocks, file)) << file << " ran original";
    else
      EXPECT_EQ(recorded(traced, file), recorded(truth.blocks, file)) << file << " not original";
  }
  // bbcount reported exactly the chosen dispatches, each equal to its ground truth.
  // (No directory at all when nothing was instrumented.)
  ASSERT_EQ(
      fs::exists(dir / "bbcount") ? entry_names(dir / "bbcount", ".json") : std::set<std::string>{},
      named(kernel, chosen));
  for (unsigned n : chosen) {
    const std::string file = kernel + "." + std::to_string(n) + ".json";
    EXPECT_EQ(nlohmann::json::parse(slurp(dir / "bbcount" / file))["waves"],
              recorded(truth.blocks, file))
        << file;
  }
  if (chosen.size() < total)
    EXPECT_NE(run.err.find(kernel + ": " + std::to_string(chosen.size()) + " of " +
                           std::to_string(total) + " dispatches instrumented"),
              std::string::npos)
        << run.err;
  fs::remove_all(dir);
}

TEST(SelectionParse, ClausesCombine) {
  const auto selection = DispatchSelection::parse("kernel=^scale dispatches=10-20,40,100- every=2");
  EXPECT_TRUE(selection.matches_kernel("scale_add"));
  EXPECT_FALSE(selection.matches_kernel("vector_scale"));
  const auto at = [&](std::uint64_t position) {
    return selection.chooses(position, DispatchSelection::Clock::duration::zero());
  };
  EXPECT_FALSE(at(8));
  EXPECT_TRUE(at(10));
  EXPECT_FALSE(at(11));
  EXPECT_TRUE(at(20));
  EXPECT_FALSE(at(22));
  EXPECT_TRUE(at(40));
  EXPECT_FALSE(at(41));
  EXPECT_TRUE(at(100));
  EXPECT_TRUE(at(1'000'000));
  EXPECT_EQ(selection.text(), "kernel=^scale dispatches=10-20,40,100- every=2");
}

TEST(SelectionParse, FirstAndTimeWindow) {
  using std::chrono::milliseconds;
  const auto selection = DispatchSelection::parse("first=3;time=0.5-2");
  EXPECT_FALSE(selection.chooses(0, milliseconds(499)));
  EXPECT_TRUE(selection.chooses(0, milliseconds(500)));
  EXPECT_TRUE(selection.chooses(2, milliseconds(2000)));
  EXPECT_FALSE(selection.chooses(2, milliseconds(2001)));
  EXPECT_FALSE(selection.chooses(3, milliseconds(1000)));
  const auto open_ended = DispatchSelection::parse("time=10-");
  EXPECT_FALSE(open_ended.chooses(0, milliseconds(9999)));
  EXPECT_TRUE(open_ended.chooses(0, std::chrono::hours(24)));
}

TEST(SelectionParse, EmptyAndAllTakeEverything) {
  for (const char* text : {"", "all", "  ;all ; "}) {
    const auto selection = DispatchSelection::parse(text);
    EXPECT_TRUE(selection.matches_kernel("anything")) << text;
    EXPECT_TRUE(selection.chooses(123456, std::chrono::hours(1))) << text;
    EXPECT_EQ(selection.text(), "") << text;
  }
}

TEST(SelectionParse, MalformedClausesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"dispatches=5-2", "range 5-2 ends before it starts"},
      {"dispatches=x", "'x' is not a dispatch position"},
      {"dispatches=,", "no dispatch positions"},
      {"dispatches=99999999999999999999", "is not a dispatch position"},
      {"first=-1", "'-1' is not a count"},
      {"every=0", "one in 0 dispatches is none"},
      {"time=2-1", "the window ends before it starts"},
      {"time=nan", "is not a number of seconds"},
      {"time=1e300", "is not a number of seconds"},
      {"kernel=(", "not a regular expression"},
      {"kernel=", "no value"},
      {"colour=red", "unknown clause 'colour'"},
      {"first", "expected all or NAME=VALUE"},
  };
  for (const auto& [text, why] : cases) {
    try {
      DispatchSelection::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const wavekit::Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(why), std::string::npos) << text << ": " << message;
    }
  }
}

// many_dispatches: 300 dispatches of scale_add, each transforming the previous result, so a
// dispatch that ran the wrong code or none shows in the program's own check too.
TEST(Selection, DispatchRangesAndOneInNRunTheOriginalElsewhere) {
  expect_only_chosen_instrumented("ranges", "--dispatches 10-19,295- --every 2",
                                  example("many_dispatches"), "scale_add", 300,
                                  {10, 12, 14, 16, 18, 296, 298});
}

TEST(Selection, FirstN) {
  expect_only_chosen_instrumented("first", "--first 3", example("many_dispatches"), "scale_add",
                                  300, {0, 1, 2});
}

TEST(Selection, ATimeWindowThatHasNotBegunSelectsNothing) {
  expect_only_chosen_instrumented("time", "--time-window 3600-", example("many_dispatches"),
                                  "scale_add", 300, {});
}

// two_objects dispatches vector_add and divergent: a kernel clause leaves the other original.
TEST(Selection, AKernelRegexLeavesOtherKernelsOriginal) {
  const fs::path dir = scratch("select-kernel");
  const GroundTruth truth = ground_truth(example("two_objects"), dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  const fs::path traced = dir / "traced";
  const Outcome run = shell("WAVEKIT_EMU_TRACE_BLOCKS=" + traced.string() + " " + WAVEKIT_CLI +
                            " run --kernel-regex '^div' --tool bbcount --tool-out " +
                            (dir / "bbcount").string() + " -- " + example("two_objects"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, truth.run.out);
  EXPECT_EQ(entry_names(dir / "bbcount", ".json"), std::set<std::string>{"divergent.0.json"});
  EXPECT_EQ(recorded(traced, "vector_add.0.json"), recorded(truth.blocks, "vector_add.0.json"));
  EXPECT_NE(recorded(traced, "divergent.0.json"), recorded(truth.blocks, "divergent.0.json"));
  EXPECT_NE(run.err.find("vector_add: 0 of 1 dispatches instrumented (none)"), std::string::npos)
      << run.err;
  fs::remove_all(dir);
}

// Unmodified HIP programs (Debian's hipcc and libamdhip64) with every other dispatch
// instrumented: the programs' own checks pass, and the emulator's trace shows the original code
// where a dispatch was not selected.
TEST(Selection, HipProgramsRunTheOriginalKernelsOfUnselectedDispatches) {
  std::size_t originals = 0;
  for (const char* name : {"kernels", "memcpy", "two_units"}) {
    SCOPED_TRACE(name);
    const fs::path program = fs::path(WAVEKIT_HIP_PROGRAMS) / name;
    if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (no hipcc)";
    const fs::path dir = scratch(std::string("select-hip-") + name);
    const GroundTruth truth = ground_truth(program.string(), dir);
    ASSERT_EQ(truth.run.status, 0) << truth.run.err;
    const fs::path traced = dir / "traced";
    const Outcome run = shell("WAVEKIT_EMU_TRACE_BLOCKS=" + traced.string() + " " + WAVEKIT_CLI +
                              " run --every 2 --tool bbcount --tool-out " +
                              (dir / "bbcount").string() + " -- " + program.string());
    ASSERT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_EQ(shim_messages(run.err, ""), 0u) << run.err;
    // Every dispatch the tool did not report ran the original code: its record is the plain run's.
    const std::set<std::string> reported = fs::exists(dir / "bbcount")
                                               ? entry_names(dir / "bbcount", ".json")
                                               : std::set<std::string>{};
    for (const std::string& file : entry_names(traced, ".json")) {
      if (reported.count(file) || !fs::exists(truth.blocks / file)) continue;
      EXPECT_EQ(recorded(traced, file), recorded(truth.blocks, file)) << file;
      ++originals;
    }
    fs::remove_all(dir);
  }
  EXPECT_GT(originals, 0u);
}

// symbols fills __constant__ and __device__ variables from the host: an original kernel in an
// executable of its own would read its own zero copies. Its kernels run instrumented whatever
// the selection, with the reason, and the program's own check passes.
TEST(Selection, KernelsOfObjectsWithGlobalVariablesAlwaysRunInstrumented) {
  const fs::path program = fs::path(WAVEKIT_HIP_PROGRAMS) / "symbols";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (no hipcc)";
  const fs::path dir = scratch("select-symbols");
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --first 0 --tool bbcount --tool-out " +
                            (dir / "bbcount").string() + " -- " + program.string());
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("symbols: ok"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("cannot run (its object has global variables"), std::string::npos)
      << run.err;
  fs::remove_all(dir);
}

TEST(Selection, AMalformedSelectionIsRefusedBeforeTheApplicationStarts) {
  const Outcome run = shell(std::string(WAVEKIT_CLI) +
                            " run --tool bbcount --dispatches 5-2 -- echo APPLICATION-RAN");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find("dispatch selection 'dispatches=5-2': range 5-2 ends before it starts"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out.find("APPLICATION-RAN"), std::string::npos);
  const Outcome signal = shell(std::string(WAVEKIT_CLI) +
                               " run --tool bbcount --control-signal USR9 -- echo APPLICATION-RAN");
  EXPECT_NE(signal.err.find("'USR9' is not a signal"), std::string::npos) << signal.err;
  EXPECT_EQ(signal.out.find("APPLICATION-RAN"), std::string::npos);
}

// The program switches instrumentation itself: 0-3 instrumented, 4-7 off, 8-11 every other
// (api and control file) or all (the signal only toggles).
struct Hand {
  std::string name;
  std::string options;    // of `wavekit run`
  std::string arguments;  // of the program
  std::set<unsigned> chosen;
};

void PrintTo(const Hand& hand, std::ostream* out) { *out << hand.name; }

class RunTimeControl : public testing::TestWithParam<Hand> {};

TEST_P(RunTimeControl, SwitchesTakeEffectAtTheNextDispatch) {
  const Hand& hand = GetParam();
  const fs::path dir = scratch("control-" + hand.name);
  std::string arguments = hand.arguments;
  const std::string control_file = (dir / "control").string();
  if (const auto at = arguments.find("CONTROL_FILE"); at != std::string::npos)
    arguments.replace(at, 12, control_file);
  std::string options = hand.options;
  if (const auto at = options.find("CONTROL_FILE"); at != std::string::npos)
    options.replace(at, 12, control_file);
  const std::string program = std::string(WAVEKIT_CONTROLLED_PROGRAM) + " " + arguments;

  const GroundTruth truth = ground_truth(program, dir);
  ASSERT_EQ(truth.run.status, 0) << truth.run.err;
  fs::remove(control_file);
  const fs::path traced = dir / "traced";
  const Outcome run =
      shell("WAVEKIT_EMU_TRACE_BLOCKS=" + traced.string() + " " + WAVEKIT_CLI + " run " + options +
            " --tool bbcount --tool-out " + (dir / "bbcount").string() + " -- " + program);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("dispatches 8-11: 0 wrong so far"), std::string::npos) << run.out;
  ASSERT_EQ(entry_names(dir / "bbcount", ".json"), named("scale_add", hand.chosen)) << run.err;
  for (unsigned n = 0; n < 12; ++n) {
    const std::string file = "scale_add." + std::to_string(n) + ".json";
    if (hand.chosen.count(n))
      EXPECT_EQ(nlohmann::json::parse(slurp(dir / "bbcount" / file))["waves"],
                recorded(truth.blocks, file))
          << file;
    else
      EXPECT_EQ(recorded(traced, file), recorded(truth.blocks, file)) << file << " not original";
  }
  EXPECT_NE(run.err.find("from dispatch 4: instrumentation off"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("from dispatch 8: instrumentation on"), std::string::npos) << run.err;
  if (hand.name == "api") {
    EXPECT_NE(run.out.find("switch off: previous state 1"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("bad selection refused: dispatch selection 'every=0'"),
              std::string::npos)
        << run.out;
    EXPECT_NE(run.out.find("select: 0"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("switch on: previous state 0"), std::string::npos) << run.out;
    EXPECT_NE(run.err.find("from dispatch 8: selection every=2 (api)"), std::string::npos)
        << run.err;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Hands, RunTimeControl,
    testing::Values(
        Hand{"api", "", "api", {0, 1, 2, 3, 8, 10}},
        Hand{"file", "--control-file CONTROL_FILE", "file CONTROL_FILE", {0, 1, 2, 3, 8, 10}},
        Hand{"signal", "--control-signal USR1", "signal", {0, 1, 2, 3, 8, 9, 10, 11}}),
    [](const testing::TestParamInfo<Hand>& info) { return info.param.name; });

// Without wavekit the program's calls answer -1 and change nothing.
TEST(RunTimeControl, WithoutWavekitTheCallsDoNothing) {
  const Outcome run = plain(std::string(WAVEKIT_CONTROLLED_PROGRAM) + " api");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("switch off: previous state -1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("bad selection refused: not running under wavekit run"), std::string::npos)
      << run.out;
}

// The Python module, in a process that never touches HSA: its calls reach the shim's switches
// (which must not need the shim's HSA side), refuse a bad selection with the shim's reason,
// and do nothing without wavekit.
TEST(RunTimeControl, ThePythonModuleReachesTheSwitches) {
  const std::string script =
      "import wavekit_instrumentation as wi\n"
      "print('available', wi.available())\n"
      "print(wi.enabled(), wi.disable(), wi.enabled(), wi.enable(), wi.enabled())\n"
      "try:\n"
      "    wi.select('every=0')\n"
      "except ValueError as error:\n"
      "    print('refused:', error)\n"
      "wi.select('first=2 kernel=^scale')\n"
      "with wi.disabled():\n"
      "    print('inside', wi.enabled())\n"
      "print('after', wi.enabled())\n";
  const fs::path dir = scratch("python");
  wavekit::write_file((dir / "control.py").string(), script);
  const std::string python = "env PYTHONPATH=" + std::string(WAVEKIT_PYTHON_DIR) +
                             " /usr/bin/python3 " + (dir / "control.py").string();
  const Outcome run = shell(std::string(WAVEKIT_CLI) + " run --tool bbcount --tool-out " +
                            (dir / "out").string() + " -- " + python);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.out,
            "available True\n"
            "True True False False True\n"
            "refused: dispatch selection 'every=0': one in 0 dispatches is none; use first=0\n"
            "inside False\n"
            "after True\n");
  const Outcome alone = shell(python);
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out,
            "available False\n"
            "False False False False False\n"
            "inside False\n"
            "after False\n");
  fs::remove_all(dir);
}

}  // namespace
