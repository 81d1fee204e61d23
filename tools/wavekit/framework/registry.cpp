#include "wavekit/cli/subcommand.h"

namespace wavekit::cli {

namespace {
std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> commands;  // function-local: safe across static-init order
  return commands;
}
}  // namespace

bool register_subcommand(Subcommand subcommand) {
  registry().push_back(subcommand);
  return true;
}

const std::vector<Subcommand>& subcommands() { return registry(); }

}  // namespace wavekit::cli
