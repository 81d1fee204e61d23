// `wavekit profile`: run a program under the profiler; `wavekit profile-view`: read profiles.
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/profile/profile_data.h"
#include "wavekit/profile/view.h"
#include "wavekit/support/error.h"
#include "wavekit/support/install.h"
#include "wavekit/support/process.h"

namespace {

using wavekit::cli::OptionParser;
using wavekit::cli::UsageError;

// The injected libraries this wavekit was built with: installed, in <prefix>/<libdir>/wavekit;
// in the build tree, where the build put them.
#ifdef WAVEKIT_PROFILE_CUPTI_LIBRARY
const std::string kDefaultLibrary =
    wavekit::companion_path("libwavekit_profile_cupti.so", WAVEKIT_PROFILE_CUPTI_LIBRARY);
const std::string kEventsLibrary =
    wavekit::companion_path("libwavekit_profile_events.so", WAVEKIT_PROFILE_EVENTS_LIBRARY);
constexpr const char* kLibcupti = WAVEKIT_PROFILE_LIBCUPTI;
#else
const std::string kDefaultLibrary;
const std::string kEventsLibrary;
constexpr const char* kLibcupti = "";
#endif
#ifdef WAVEKIT_PROFILE_HSA_LIBRARY
const std::string kDefaultHsaLibrary =
    wavekit::companion_path("libwavekit_profile_hsa.so", WAVEKIT_PROFILE_HSA_LIBRARY);
#else
const std::string kDefaultHsaLibrary;
#endif

int run_profile(wavekit::cli::Arguments args) {
  std::string output, mode = "full", duty, backend = "cupti", graphs, phase_ms, include, exclude,
                      trace, library, time_every;
  bool preload = false, nvtx = false, start_disabled = false, hsa = false;
  std::vector<std::string> command;
  OptionParser parser(
      "wavekit profile",
      "Runs CMD with the kernel profiler attached (NVIDIA: CUPTI, through\n"
      "CUDA_INJECTION64_PATH or LD_PRELOAD, or CUDA events without CUPTI; AMD: HSA).\n"
      "Writes OUT/profile.hatchet (Proton/hatchet JSON),\n"
      "OUT/phase-NNNNNN.wkp (compact binary per phase) and, with --trace, OUT/trace.json\n"
      "(Chrome/Perfetto). Read them with 'wavekit profile-view OUT'.");
  parser.option("--output", &output, "OUT", "output directory (created)");
  parser.option("--mode", &mode, "MODE",
                "full: every kernel; sampled: collect only in duty-cycle windows");
  parser.option("--duty", &duty, "ON/PERIOD",
                "sampled-mode window and period in ms (default 50/1000 with CUPTI, whose "
                "switches are slow; 1/100 with --backend events)");
  parser.option("--backend", &backend, "NAME",
                "cupti (the default: every kernel as CUPTI traces it, capture sites, NVTX) or "
                "events (no CUPTI: each kernel and graph launch timed with a pair of CUDA "
                "events; preloads libwavekit_profile_events.so; the cheapest always-on mode "
                "with --mode sampled)");
  parser.option("--time-every", &time_every, "N",
                "--backend events: count and attribute every kernel launch, time about one in "
                "N (at random, and each kernel's first) and estimate the others' times from "
                "them (marked ~); the cheapest mode that still counts every launch");
  parser.option("--graphs", &graphs, "LEVEL",
                "CUDA graph launches with CUPTI: kernel (one record per kernel node, the "
                "default) or graph (one per launch; CUPTI's per-node cost goes)");
  parser.option("--phase-ms", &phase_ms, "MS", "advance the phase every MS milliseconds");
  parser.option("--include", &include, "REGEX", "profile only kernels whose name matches");
  parser.option("--exclude", &exclude, "REGEX", "skip kernels whose name matches");
  parser.option("--trace", &trace, "N", "also keep the last N kernels as a Chrome trace");
  parser.flag("--nvtx", &nvtx, "turn NVTX ranges into scopes (sets NVTX_INJECTION64_PATH)");
  parser.flag("--preload", &preload, "attach with LD_PRELOAD instead of CUDA_INJECTION64_PATH");
  parser.flag("--hsa", &hsa, "AMD: attach as an HSA tools library (HSA_TOOLS_LIB)");
  parser.flag("--start-disabled", &start_disabled,
              "attach, but collect only after the program calls enable");
  parser.option("--library", &library, "PATH", "the injection library (default: the built one)");
  parser.rest("CMD", &command, "the program and its arguments");
  parser.short_name('o', "--output");
  if (auto code = parser.parse(args)) return *code;

  if (output.empty()) throw UsageError("-o OUT is required");
  if (mode != "full" && mode != "sampled")
    throw UsageError("--mode: '" + mode + "' is neither 'full' nor 'sampled'");
  if (backend != "cupti" && backend != "events")
    throw UsageError("--backend: '" + backend + "' is neither 'cupti' nor 'events'");
  const bool events = backend == "events";
  if (!graphs.empty() && graphs != "kernel" && graphs != "graph")
    throw UsageError("--graphs: '" + graphs + "' is neither 'kernel' nor 'graph'");
  if (events && graphs == "kernel")
    throw UsageError(
        "--graphs kernel needs CUPTI; --backend events times each graph launch as a whole");
  if (!duty.empty() && mode != "sampled") throw UsageError("--duty needs --mode sampled");
  if (events && hsa) throw UsageError("--backend events is for NVIDIA (not --hsa)");
  if (events && nvtx) throw UsageError("--nvtx needs CUPTI (not --backend events)");
  if (!time_every.empty()) {
    const auto n = wavekit::cli::parse_unsigned("--time-every", time_every);
    if (n < 1 || n > 1000000) throw UsageError("--time-every: N must be between 1 and 1000000");
    if (!events)
      throw UsageError("--time-every needs --backend events (CUPTI times every kernel anyway)");
  }
  // The event backend hooks the driver's entry points, which only a preloaded library can do.
  if (events) preload = true;
  if (!phase_ms.empty()) wavekit::cli::parse_unsigned("--phase-ms", phase_ms);
  if (!trace.empty()) wavekit::cli::parse_unsigned("--trace", trace);
  if (hsa && preload) throw UsageError("--hsa and --preload exclude each other");
  if (library.empty())
    library = hsa ? kDefaultHsaLibrary : events ? kEventsLibrary : kDefaultLibrary;
  if (library.empty())
    wavekit::fail("wavekit profile",
                  hsa ? "this wavekit was built without the HSA headers, so it has no AMD "
                        "backend; pass --library PATH to a built libwavekit_profile_hsa.so"
                      : "this wavekit was built without CUPTI, so it has no NVIDIA backend; "
                        "pass --library PATH to a built libwavekit_profile_cupti.so");
  if (!std::filesystem::exists(library)) wavekit::fail(library, "injection library not found");

  wavekit::ChildProgram program;
  program.command = command;
  program.tool = "wavekit profile";
  std::map<std::string, std::string>& environment = program.environment;
  environment["WAVEKIT_PROFILE_OUTPUT"] = std::filesystem::absolute(output).string();
  if (mode == "sampled")
    environment["WAVEKIT_PROFILE_DUTY"] = !duty.empty() ? duty : events ? "1/100" : "50/1000";
  environment["WAVEKIT_PROFILE_BACKEND"] = backend;
  if (!graphs.empty()) environment["WAVEKIT_PROFILE_GRAPHS"] = graphs;
  if (!phase_ms.empty()) environment["WAVEKIT_PROFILE_PHASE_MS"] = phase_ms;
  if (!include.empty()) environment["WAVEKIT_PROFILE_INCLUDE"] = include;
  if (!exclude.empty()) environment["WAVEKIT_PROFILE_EXCLUDE"] = exclude;
  if (!trace.empty()) environment["WAVEKIT_PROFILE_TRACE"] = trace;
  if (!time_every.empty()) environment["WAVEKIT_PROFILE_TIME_EVERY"] = time_every;
  if (start_disabled) environment["WAVEKIT_PROFILE_START_DISABLED"] = "1";
  if (nvtx && *kLibcupti) environment["NVTX_INJECTION64_PATH"] = kLibcupti;
  if (hsa) {
    environment["HSA_TOOLS_LIB"] = library;
  } else if (preload) {
    environment["LD_PRELOAD"] = wavekit::prepend_path("LD_PRELOAD", library);
  } else {
    environment["CUDA_INJECTION64_PATH"] = library;
    environment["WAVEKIT_PROFILE_NO_AUTOSTART"] = "1";  // the driver starts it, once
  }

  const wavekit::ProgramExit ended = wavekit::run_program(program);
  if (ended.signal)
    std::cerr << "wavekit profile: '" << command[0] << "' died of "
              << wavekit::describe_signal(ended.signal) << "\n";
  return ended.status;
}

int run_profile_view(wavekit::cli::Arguments args) {
  std::string input, diff, top = "20", depth, threshold, clock, json_out;
  wavekit::profile::ViewOptions options;
  bool json = false, show_top = false, show_self = false;
  OptionParser parser("wavekit profile-view",
                      "Prints a profile: the calling-context tree with time, count, average,\n"
                      "FLOP/s and utilisation (of the GPU's peak for the declared precisions),\n"
                      "the top kernels, or the difference between two profiles. PROFILE is an\n"
                      "output directory of 'wavekit profile', a .wkp phase file, or a hatchet\n"
                      "JSON file (ours or Proton's).");
  parser.positional("PROFILE", &input, "the profile to read");
  parser.option("--diff", &diff, "OTHER", "compare with OTHER (rows: frames, by change in time)");
  parser.flag("--top", &show_top, "list the kernels by total time instead of the tree");
  parser.option("--rows", &top, "N", "rows for --top and --diff (default 20)");
  parser.option("--include", &options.include, "REGEX", "keep frames on paths to matches");
  parser.option("--exclude", &options.exclude, "REGEX", "drop matching frames and subtrees");
  parser.option("--depth", &depth, "N", "print the tree N levels deep");
  parser.option("--threshold", &threshold, "FRACTION", "hide frames under this share of time");
  parser.option("--device", &options.device_model, "GPU",
                "peaks of GPU (H100, H200, A100, MI250X, MI300X) instead of the profile's");
  parser.option("--clock-mhz", &clock, "MHZ", "scale peaks to this SM clock");
  parser.flag("--self", &show_self, "also print the profiler's own metrics");
  parser.flag("--json", &json, "print JSON instead of text");
  if (auto code = parser.parse(args)) return *code;

  options.top = wavekit::cli::parse_unsigned("--rows", top);
  if (!depth.empty()) options.max_depth = wavekit::cli::parse_unsigned("--depth", depth);
  if (!threshold.empty())
    options.min_fraction = wavekit::cli::parse_double("--threshold", threshold);
  if (!clock.empty()) options.clock_mhz = wavekit::cli::parse_double("--clock-mhz", clock);

  using namespace wavekit::profile;
  Profile profile = load_profile(input);
  if (!diff.empty()) {
    Profile other = load_profile(diff);
    std::cout << (json ? diff_json(profile, other, options) : render_diff(profile, other, options));
    return 0;
  }
  if (show_top)
    std::cout << (json ? top_json(profile, options) : render_top(profile, options));
  else
    std::cout << (json ? tree_json(profile, options) : render_tree(profile, options));
  if (show_self && !json) std::cout << render_self(profile);
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("profile", "run a program under the low-overhead kernel profiler", run_profile);
WAVEKIT_SUBCOMMAND("profile-view", "print, filter and compare kernel profiles", run_profile_view);
