// `wavekit fi`: a fault-injection campaign on an unmodified application (wavekit/fi/fi.h).
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <mutex>
#include <regex>

#include "wavekit/cli/options.h"
#include "wavekit/fi/fi.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/install.h"

namespace {

using wavekit::cli::UsageError;
namespace fi = wavekit::fi;

std::uint64_t count(const char* option, const std::string& text, std::uint64_t minimum) {
  const std::uint64_t value = wavekit::cli::parse_unsigned(option, text);
  if (value < minimum)
    throw UsageError(std::string(option) + " must be a whole number of at least " +
                     std::to_string(minimum) + ", not '" + text + "'");
  return value;
}

// One line, rewritten in place on a terminal: "[=====>    ] 37/100  masked 20  SDC 10  DUE 7";
// elsewhere (a log, CI) a line at every tenth of the campaign.
void show_progress(const fi::CampaignResult& partial, std::size_t total) {
  std::size_t counts[3] = {0, 0, 0};
  for (const fi::Injection& injection : partial.injections)
    ++counts[static_cast<int>(injection.outcome)];
  const std::size_t done = partial.injections.size(), width = 30;
  static const bool terminal = isatty(STDERR_FILENO);
  if (!terminal) {
    if (done == total || (done * 10 / total) != ((done - 1) * 10 / total))
      std::cerr << "wavekit fi: " << done << "/" << total << " injections  masked " << counts[0]
                << "  SDC " << counts[1] << "  DUE " << counts[2] << "\n";
    return;
  }
  const std::size_t filled = total ? done * width / total : width;
  std::cerr << "\r[" << std::string(filled, '=') << (filled < width ? ">" : "")
            << std::string(width - std::min(width, filled + 1), ' ') << "] " << done << "/" << total
            << "  masked " << counts[0] << "  SDC " << counts[1] << "  DUE " << counts[2]
            << std::flush;
  if (done == total) std::cerr << "\n";
}

int run_fi(wavekit::cli::Arguments args) {
  fi::CampaignOptions options;
  std::string injections = "100", jobs, seed = "1", group = "all", timeout, out = "wavekit-fi",
              json_path;
  bool verify = false;
  wavekit::cli::OptionParser parser(
      "wavekit fi",
      "Fault injection into an unmodified GPU application on wavekit's emulator, as NVBitFI does\n"
      "on NVIDIA GPUs: a golden run; a profile of every instruction's dynamic executions per\n"
      "wave (bbcount); then INJECTIONS runs, each flipping one bit of one destination register\n"
      "(one lane of a VGPR) right after one dynamic instance, chosen uniformly over every\n"
      "execution of an instruction of GROUP that writes a register, by a probe that changes the\n"
      "register by reference, in that one dispatch only. Each run is classified against the\n"
      "golden one: masked (same stdout and exit status), SDC (silent data corruption: same exit\n"
      "status, other stdout) or DUE (detected or unrecoverable: other exit status, a signal, an\n"
      "emulator fault, a hang cut off at the time limit). Prints the rates with Wilson 95 %\n"
      "intervals per kernel and per group; --verify makes each injection a second time with the\n"
      "emulator's own injection and checks that both flipped the same bit in the same lane\n"
      "(runs that then ended differently, where the result depends on the schedule or on\n"
      "addresses, are listed apart).\n"
      "Groups: all (every instruction that writes a register: valu, salu and load), valu, salu,\n"
      "load (memory reads and returning atomics), store (the value a store writes to memory is\n"
      "flipped; the register keeps its own).");
  parser.option("--injections", &injections, "N", "runs with one injected fault (default 100)");
  parser.option("--jobs", &jobs, "J", "runs at a time (default: the cores)");
  parser.option("--seed", &seed, "S", "the campaign's random seed (default 1)");
  parser.option("--group", &group, "GROUP", "instructions to choose from (default all)");
  parser.option("--kernel-regex", &options.kernel_regex, "REGEX", "only kernels it matches");
  parser.option("--timeout", &timeout, "SECONDS",
                "per run (default: 10x the golden run, at least 20 s)");
  parser.option("--emu-target", &options.emulated_target, "GFX", "the GPU the emulator reports");
  parser.option("--out", &out, "DIR",
                "work directory: profile, per-run files (default wavekit-fi)");
  parser.option("--json", &json_path, "FILE", "every injection and its outcome, as JSON");
  parser.flag("--verify", &verify, "check every injection against the emulator's own");
  parser.rest("CMD [ARGS]", &options.command, "the application and its arguments");
  if (auto exit_code = parser.parse(args)) return *exit_code;
  if (options.command.empty()) throw UsageError("give the application after --");
  options.injections = static_cast<unsigned>(count("--injections", injections, 1));
  if (!jobs.empty()) options.jobs = static_cast<unsigned>(count("--jobs", jobs, 1));
  options.seed = count("--seed", seed, 0);
  try {
    options.group = fi::parse_group(group);
  } catch (const wavekit::Error& error) {
    throw UsageError(std::string("--group: ") + error.what());
  }
  try {
    std::regex(options.kernel_regex, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    throw UsageError("--kernel-regex '" + options.kernel_regex +
                     "' is not a regular expression: " + error.what());
  }
  if (!timeout.empty())
    options.timeout_seconds = static_cast<double>(count("--timeout", timeout, 1));
  options.verify = verify;
  options.work_directory = std::filesystem::absolute(out).string();

  const fi::Installation installation{
      wavekit::companion_path("libwavekit-preload.so", WAVEKIT_PRELOAD_LIBRARY),
      wavekit::companion_path("emulator", WAVEKIT_EMULATOR_RUNTIME_DIR),
      wavekit::rewrite::tool_probe_directory()};
  std::cerr << "wavekit fi: golden run and profile of " << options.command[0] << "\n";
  const fi::CampaignResult result = fi::run_campaign(
      options, installation,
      [&](const fi::CampaignResult& partial) { show_progress(partial, options.injections); });
  std::cout << "wavekit fi: " << result.injections.size() << " injections into "
            << result.population << " dynamic instruction instances (group " << group << ", seed "
            << options.seed << ")\n";
  if (!result.excluded_kernels.empty()) {
    std::cout << "left out (their objects have global variables, so their other dispatches cannot "
                 "run the original):";
    for (const std::string& kernel : result.excluded_kernels) std::cout << " " << kernel;
    std::cout << "\n";
  }
  std::cout << fi::summary_table(result);
  if (verify) {
    std::size_t flips = 0, outcomes = 0;
    for (const fi::Injection& injection : result.injections) {
      flips += injection.disagreement.empty();
      outcomes += injection.outcome_difference.empty();
    }
    std::cout << "against the emulator's own injection: the same flip in " << flips << " of "
              << result.injections.size() << ", the same outcome in " << outcomes << "\n";
    for (const fi::Injection& injection : result.injections) {
      const std::string where = injection.target.kernel + " dispatch " +
                                std::to_string(injection.target.dispatch) + " (" +
                                injection.target.instruction + ")";
      if (!injection.disagreement.empty())
        std::cout << "  flips differ at " << where << ": " << injection.disagreement << "\n";
      if (!injection.outcome_difference.empty())
        std::cout << "  outcomes differ at " << where << ": " << injection.outcome_difference
                  << "\n";
    }
  }
  if (!json_path.empty()) wavekit::write_file(json_path, result.to_json().dump(1) + "\n");
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("fi", "fault-injection campaigns on an unmodified GPU application", run_fi);
