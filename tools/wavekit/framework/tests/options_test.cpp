// The option parser every subcommand uses: what it accepts, and that each bad command line is
// a UsageError naming the problem.
#include "wavekit/cli/options.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using wavekit::cli::OptionParser;
using wavekit::cli::UsageError;

struct Parsed {
  bool json = false;
  std::string output;
  std::vector<std::string> kernels;
  std::string input;
  std::vector<std::string> command;
};

// A parser shaped like `wavekit rewrite` / `wavekit run`: a flag, an option with a short
// spelling, a repeated option, an optional positional and a trailing command.
std::optional<int> parse(std::vector<std::string_view> args, Parsed* out) {
  OptionParser parser("wavekit test", "A parser for the tests.");
  parser.flag("--json", &out->json, "print JSON");
  parser.option("--output", &out->output, "OUT", "where to write");
  parser.short_name('o', "--output");
  parser.repeated("--kernel", &out->kernels, "NAME", "a kernel");
  parser.positional("IN", &out->input, "the input", /*required=*/false);
  parser.rest("CMD", &out->command, "the program", /*required=*/false);
  return parser.parse(args);
}

TEST(Options, LongShortInlineRepeatedPositionalAndRest) {
  Parsed p;
  EXPECT_EQ(parse({"in.co", "-o", "out.co", "--kernel=a", "--kernel", "b", "--json", "--", "app",
                   "-o", "x"},
                  &p),
            std::nullopt);
  EXPECT_EQ(p.input, "in.co");
  EXPECT_EQ(p.output, "out.co");
  EXPECT_EQ(p.kernels, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(p.json);
  // After `--` everything is the program's, its own -o included.
  EXPECT_EQ(p.command, (std::vector<std::string>{"app", "-o", "x"}));
}

TEST(Options, HelpShowsTheShortSpellingAndStops) {
  Parsed p;
  testing::internal::CaptureStdout();
  EXPECT_EQ(parse({"--help"}, &p), 0);
  const std::string usage = testing::internal::GetCapturedStdout();
  EXPECT_NE(usage.find("-o, --output OUT"), std::string::npos) << usage;
  EXPECT_NE(usage.find("--kernel NAME (repeatable)"), std::string::npos) << usage;
}

void expect_usage_error(std::vector<std::string_view> args, const std::string& message) {
  Parsed p;
  try {
    parse(args, &p);
    ADD_FAILURE() << "no UsageError for " << args.front();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
  }
}

TEST(Options, BadCommandLinesNameTheProblem) {
  expect_usage_error({"--outptu", "x"}, "unknown option '--outptu'");
  expect_usage_error({"-x"}, "unknown option '-x'");
  expect_usage_error({"-output", "x"}, "unknown option '-output'");
  expect_usage_error({"-o"}, "--output needs a value");
  expect_usage_error({"--json=yes"}, "--json takes no value");
  expect_usage_error({"a", "b"}, "unexpected argument 'b'");
}

TEST(Options, ShortNamesMustNameADeclaredOptionOnce) {
  bool flag = false;
  OptionParser parser("wavekit test", "");
  parser.flag("--json", &flag, "");
  EXPECT_THROW(parser.short_name('j', "--jsno"), std::logic_error);
  parser.short_name('j', "--json");
  EXPECT_THROW(parser.short_name('j', "--json"), std::logic_error);
}

TEST(Options, NumbersAreParsedWhole) {
  EXPECT_EQ(wavekit::cli::parse_unsigned("--grid", "0x10"), 16u);
  EXPECT_EQ(wavekit::cli::parse_signed("--delta", "-3"), -3);
  EXPECT_DOUBLE_EQ(wavekit::cli::parse_double("--rate", "2.5"), 2.5);
  EXPECT_THROW(wavekit::cli::parse_unsigned("--grid", "12abc"), UsageError);
  EXPECT_THROW(wavekit::cli::parse_unsigned("--grid", "-1"), UsageError);
  EXPECT_THROW(wavekit::cli::parse_double("--rate", ""), UsageError);
}

}  // namespace
