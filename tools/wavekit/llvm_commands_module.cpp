// The entry point of libwavekit-llvm-commands.so: the subcommands linked into the module
// registered themselves in its registry while it loaded; `wavekit` asks for them here.
#include "wavekit/cli/subcommand.h"

extern "C" __attribute__((visibility("default"))) const std::vector<wavekit::cli::Subcommand>*
wavekit_module_subcommands() {
  return &wavekit::cli::subcommands();
}

// main.cpp casts the looked-up symbol to ModuleSubcommands: the definition must match it.
[[maybe_unused]] static constexpr wavekit::cli::ModuleSubcommands entry_point_type_check =
    &wavekit_module_subcommands;
