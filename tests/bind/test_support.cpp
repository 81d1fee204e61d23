#include "test_support.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "wavekit/bind/format.h"

namespace wavekit::bind::testing {

std::optional<std::string> topologies_dir() {
  std::filesystem::path dir = std::filesystem::path(WAVEKIT_SHARED_DATA) / "topologies";
  if (!std::filesystem::is_directory(dir)) return std::nullopt;
  return dir.string();
}

std::vector<std::string> topology_files() {
  std::vector<std::string> files;
  if (auto dir = topologies_dir())
    for (const auto& entry : std::filesystem::directory_iterator(*dir))
      if (entry.path().extension() == ".xml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Topology machine(const std::string& description) {
  return Topology::from_xml_buffer(machine_xml(parse_machine_description(description)),
                                   description);
}

std::string summary(const Mapping& mapping) {
  std::string out;
  for (std::size_t t = 0; t < mapping.tasks.size(); ++t)
    out += (t ? " " : "") + mapping.tasks[t].cpus.list() + "/" +
           gpu_smi_list(mapping, static_cast<int>(t));
  return out;
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace wavekit::bind::testing
