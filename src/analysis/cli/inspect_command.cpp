// `wavekit inspect` and `wavekit disasm`: thin wrappers over wavekit/analysis/report.h.
#include <iostream>

#include "wavekit/analysis/report.h"
#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

int run_inspect(wavekit::cli::Arguments args) {
  std::string file, kernel, cfg;
  bool json = false;
  wavekit::cli::OptionParser parser(
      "wavekit inspect",
      "Describe an AMDGPU code object, offload bundle or HIP fat binary: kernels (descriptor,\n"
      "metadata, resources), then functions with their basic blocks, edges, loops and calls.");
  parser.positional("FILE", &file,
                    "code object (.co/.hsaco), bundle, or host object with .hip_fatbin");
  parser.flag("--json", &json,
              "print JSON (the contract of docs/cli.md / issue 2) instead of text");
  parser.option("--kernel", &kernel, "NAME", "only this kernel and the functions it calls");
  parser.option("--cfg", &cfg, "FORMAT", "print the control-flow graph instead; FORMAT: dot");
  if (auto exit_code = parser.parse(args)) return *exit_code;
  if (!cfg.empty() && cfg != "dot") {
    throw wavekit::cli::UsageError("--cfg: unknown format '" + cfg + "' (supported: dot)");
  }
  if (!cfg.empty() && json) throw wavekit::cli::UsageError("--cfg and --json exclude each other");
  std::vector<std::uint8_t> bytes = wavekit::read_file(file);
  wavekit::analysis::ReportOptions options{kernel};
  if (json) {
    std::cout << wavekit::analysis::inspect_json(bytes, file, options).dump(2) << "\n";
  } else if (!cfg.empty()) {
    std::cout << wavekit::analysis::inspect_dot(bytes, file, options);
  } else {
    std::cout << wavekit::analysis::inspect_text(bytes, file, options);
  }
  return 0;
}

int run_disasm(wavekit::cli::Arguments args) {
  std::string file;
  wavekit::cli::OptionParser parser(
      "wavekit disasm",
      "Disassemble every function of an AMDGPU code object, bundle or HIP fat binary, block by\n"
      "block (instruction text as llvm-objdump prints it, with address and encoding).");
  parser.positional("FILE", &file,
                    "code object (.co/.hsaco), bundle, or host object with .hip_fatbin");
  if (auto exit_code = parser.parse(args)) return *exit_code;
  std::cout << wavekit::analysis::disassemble(wavekit::read_file(file), file);
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("inspect",
                   "describe a code object: kernels, functions, blocks (--json, --cfg dot)",
                   run_inspect);
WAVEKIT_SUBCOMMAND("disasm", "disassemble a code object, bundle or fat binary block by block",
                   run_disasm);
