// `wavekit probe-lib`: post-process a linked probe library (STT_OBJECT aliases, footprint note).
// cmake/ProbeLibrary.cmake runs it; it is also how to look at a library's footprints.
#include <iostream>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/probe_library.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

int run_probe_lib(wavekit::cli::Arguments args) {
  std::string input, output;
  bool json = false;
  wavekit::cli::OptionParser parser(
      "wavekit probe-lib",
      "Post-processes a probe library (a code object of WAVEKIT_PROBE device functions, linked\n"
      "by ld.lld-22 -shared): adds an STT_OBJECT alias __wavekit_probe.<name> per probe, which\n"
      "is what the loader resolves a rewritten object's calls against, and a WAVEKIT note with\n"
      "each probe's transitive register and scratch footprint computed from its disassembly.\n"
      "Without --output it only prints the footprints.");
  parser.positional("LIB", &input, "the linked probe library");
  parser.option("--output", &output, "OUT", "where to write the post-processed library");
  parser.flag("--json", &json, "print the footprints as JSON");
  parser.short_name('o', "--output");
  if (auto code = parser.parse(args)) return *code;

  const auto library = wavekit::codeobj::CodeObject::parse(wavekit::read_file(input), input);
  std::vector<wavekit::rewrite::ProbeFootprint> probes;
  const std::vector<std::uint8_t> bytes =
      wavekit::rewrite::post_process_probe_library(library, &probes);
  if (!output.empty()) wavekit::write_file(output, bytes);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& probe : probes) list.push_back(wavekit::rewrite::footprint_to_json(probe));
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& probe : probes)
    std::cout << probe.name << ": " << probe.sgpr_count << " SGPRs, " << probe.vgpr_count
              << " VGPRs, " << probe.agpr_count << " AGPRs, " << probe.scratch_bytes
              << (probe.scratch_unbounded ? "+ (unbounded)" : "") << " scratch bytes/lane"
              << (probe.calls ? ", calls" : "") << "; writes " << probe.clobbers << "\n";
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("probe-lib", "post-process a probe library (aliases, footprint note)",
                   run_probe_lib);
