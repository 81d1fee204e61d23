// `wavekit`: one CLI, one subcommand per job. Subcommands live with their parts and register
// themselves; this file only dispatches and turns errors into messages and exit codes.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"

namespace {

void print_overview() {
  std::vector<wavekit::cli::Subcommand> commands = wavekit::cli::subcommands();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::cout << "usage: wavekit <command> [options]\n\n"
               "Performance tools for GPU supercomputers: AMD GPU binary instrumentation, an\n"
               "AMDGPU emulator, kernel profiling and topology-aware binding.\n\ncommands:\n";
  for (const auto& command : commands) {
    std::cout << "  " << command.name;
    std::cout << std::string(command.name.size() < 14 ? 14 - command.name.size() : 1, ' ');
    std::cout << command.summary << "\n";
  }
  std::cout << "\n'wavekit <command> --help' describes a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_overview();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "wavekit 0.1.0\n";
    return 0;
  }
  const auto& commands = wavekit::cli::subcommands();
  auto it = std::find_if(commands.begin(), commands.end(),
                         [&](const auto& c) { return c.name == args[0]; });
  if (it == commands.end()) {
    std::cerr << "wavekit: unknown command '" << args[0] << "' (see 'wavekit --help')\n";
    return 2;
  }
  try {
    return it->run(wavekit::cli::Arguments(args).subspan(1));
  } catch (const wavekit::cli::UsageError& error) {
    std::cerr << "wavekit " << it->name << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "wavekit " << it->name << ": error: " << error.what() << "\n";
    return 1;
  }
}
