// Shared helpers for the bind tests: where the shared topology data is, loading views, and
// running the mapping with a one-line parameter set.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wavekit/bind/machine.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/bind/topology.h"
#include "wavekit/support/error.h"

namespace wavekit::bind::testing {

// ../shared/data/topologies, or nullopt when the shared data is not there.
std::optional<std::string> topologies_dir();
// The topology XML files there (sorted), empty without the data.
std::vector<std::string> topology_files();

Topology machine(const std::string& description);

// "cpus/gpus" per task joined by a space, e.g. "0-7/4 8-15/5", for compact comparisons.
std::string summary(const Mapping& mapping);

// Runs `command` through the shell, returning its standard output and exit status.
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);

}  // namespace wavekit::bind::testing
