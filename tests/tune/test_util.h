// Helpers of the tune tests: commands, temporary files, the sklearn bundled data sets.
#pragma once

#include <optional>
#include <string>

#include "wavekit/tune/svm.h"

namespace wavekit::tune::testing {

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};
CommandResult run_command(const std::string& command);

// A fresh path under the test temporary directory.
std::string temp_path(const std::string& name);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// One of sklearn's bundled sets ("breast_cancer", "wine", "iris", "digits"), each feature
// scaled to [-1, 1] (as svm-scale does), or nullopt when sklearn's data is not installed.
std::optional<Dataset> sklearn_set(const std::string& name);
bool have(const char* program);

}  // namespace wavekit::tune::testing
