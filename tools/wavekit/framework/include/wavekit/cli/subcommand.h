// Subcommands of the `wavekit` CLI register themselves with WAVEKIT_SUBCOMMAND in their own
// source file, which the part's CMakeLists adds to the `wavekit` executable
// (target_sources(wavekit PRIVATE ...)). Subcommands stay thin: parse options, call the
// part's library, print.
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

}  // namespace wavekit::cli

#define WAVEKIT_CLI_CONCAT_INNER(a, b) a##b
#define WAVEKIT_CLI_CONCAT(a, b) WAVEKIT_CLI_CONCAT_INNER(a, b)
#define WAVEKIT_SUBCOMMAND(name, summary, handler)                                         \
  [[maybe_unused]] static const bool WAVEKIT_CLI_CONCAT(wavekit_subcommand_, __LINE__) = \
      ::wavekit::cli::register_subcommand({name, summary, handler})
