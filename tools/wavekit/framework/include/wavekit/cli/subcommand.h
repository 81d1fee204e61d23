// Subcommands of the `wavekit` CLI register themselves with WAVEKIT_SUBCOMMAND in their own
// source file, which the part's CMakeLists adds to the `wavekit` executable
// (target_sources(wavekit PRIVATE ...)), or, for a subcommand that needs LLVM, to the module
// `wavekit` loads on demand (target_sources(wavekit_llvm_commands PRIVATE ...)). Subcommands
// stay thin: parse options, call the part's library, print.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace wavekit::cli {

// Arguments after the subcommand name (argv[0] of the subcommand is not included).
using Arguments = std::span<const std::string_view>;
using Handler = int (*)(Arguments args);

struct Subcommand {
  std::string_view name;
  std::string_view summary;  // one line for `wavekit --help`
  Handler run;
};

// Registers at static-initialisation time; returns true so it can seed a static.
bool register_subcommand(Subcommand subcommand);
const std::vector<Subcommand>& subcommands();

// The module of the subcommands that need LLVM (libwavekit-llvm-commands.so) has a registry
// of its own and exports it through this function, by this name. `wavekit` loads the module
// only to run or list one of them: loading libLLVM costs 15-20 ms a process, which the other
// subcommands (tune's svm-train and svm-predict, run twice per tuning evaluation) need not pay.
using ModuleSubcommands = const std::vector<Subcommand>* (*)();
inline constexpr const char* module_subcommands_symbol = "wavekit_module_subcommands";

}  // namespace wavekit::cli

#define WAVEKIT_CLI_CONCAT_INNER(a, b) a##b
#define WAVEKIT_CLI_CONCAT(a, b) WAVEKIT_CLI_CONCAT_INNER(a, b)
#define WAVEKIT_SUBCOMMAND(name, summary, handler)                                         \
  [[maybe_unused]] static const bool WAVEKIT_CLI_CONCAT(wavekit_subcommand_, __LINE__) = \
      ::wavekit::cli::register_subcommand({name, summary, handler})
