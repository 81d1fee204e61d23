// `wavekit`: one CLI, one subcommand per job. Subcommands live with their parts and register
// themselves; this file only dispatches and turns errors into messages and exit codes. The
// subcommands that need LLVM live in a module loaded only when one of them runs or the overview
// lists them (wavekit/cli/subcommand.h says why).
#include <dlfcn.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/support/install.h"

namespace {

using wavekit::cli::Subcommand;

// The module's subcommands, loaded on first use (and kept loaded: their handlers and strings
// live in it). Empty, with a message, when there is no module or it does not load.
const std::vector<Subcommand>& llvm_subcommands() {
  static const std::vector<Subcommand>* const commands = []() -> const std::vector<Subcommand>* {
    static const std::vector<Subcommand> none;
    const std::string path =
        wavekit::companion_path("libwavekit-llvm-commands.so", WAVEKIT_LLVM_COMMANDS_MODULE);
    // RTLD_LOCAL: libLLVM and the parts' code stay out of the executable's symbol scope.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const auto entry = module ? reinterpret_cast<wavekit::cli::ModuleSubcommands>(
                                    dlsym(module, wavekit::cli::module_subcommands_symbol))
                              : nullptr;
    if (!entry) {
      std::cerr << "wavekit: the commands that need LLVM are unavailable: " << dlerror() << "\n";
      return &none;
    }
    return entry();
  }();
  return *commands;
}

void print_overview() {
  std::vector<Subcommand> commands = wavekit::cli::subcommands();
  commands.insert(commands.end(), llvm_subcommands().begin(), llvm_subcommands().end());
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

const Subcommand* find_subcommand(std::string_view name) {
  const auto find_in = [name](const std::vector<Subcommand>& commands) -> const Subcommand* {
    auto it = std::find_if(commands.begin(), commands.end(),
                           [name](const auto& c) { return c.name == name; });
    return it == commands.end() ? nullptr : &*it;
  };
  if (const Subcommand* command = find_in(wavekit::cli::subcommands())) return command;
  return find_in(llvm_subcommands());
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
  const Subcommand* command = find_subcommand(args[0]);
  if (!command) {
    std::cerr << "wavekit: unknown command '" << args[0] << "' (see 'wavekit --help')\n";
    return 2;
  }
  try {
    return command->run(wavekit::cli::Arguments(args).subspan(1));
  } catch (const wavekit::cli::UsageError& error) {
    std::cerr << "wavekit " << command->name << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "wavekit " << command->name << ": error: " << error.what() << "\n";
    return 1;
  }
}
