#include "test_support.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/YAMLParser.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::codeobj::testing {

namespace fs = std::filesystem;

std::vector<std::string> test_inputs() {
  std::vector<std::string> inputs;
  std::stringstream list(WAVEKIT_CODEOBJ_INPUTS);
  for (std::string path; std::getline(list, path, '|');) inputs.push_back(path);
  return inputs;
}

std::vector<std::string> fat_binaries() {
  std::vector<std::string> paths;
  std::stringstream list(WAVEKIT_CODEOBJ_FATBINS);
  for (std::string path; std::getline(list, path, '|');) paths.push_back(path);
  return paths;
}

std::vector<std::uint8_t> load(const std::string& path) { return read_file(path); }

namespace {

fs::path scratch_directory() {
  return fs::temp_directory_path() / ("wavekit-codeobj-" + std::to_string(getpid()));
}

// Removes the scratch directory when the test program ends.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(scratch_directory(), ignored);
  }
};
[[maybe_unused]] ::testing::Environment* const scratch_cleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::string scratch_path(const std::string& name) {
  fs::create_directories(scratch_directory());
  return (scratch_directory() / name).string();
}

void save(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  write_file(path, bytes);
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw Error("cannot run " + command);
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (status != 0)
    throw Error("command failed (" + std::to_string(status) + "): " + command + "\n" + output);
  return output;
}

nlohmann::json readelf_json(const std::string& path, const std::string& options) {
  std::string text = run(std::string(WAVEKIT_LLVM_READELF) + " --elf-output-style=JSON " + options +
                         " '" + path + "'");
  return nlohmann::json::parse(text).at(0);
}

namespace {

nlohmann::json yaml_node_to_json(llvm::yaml::Node* node) {
  if (auto* map = llvm::dyn_cast<llvm::yaml::MappingNode>(node)) {
    nlohmann::json object = nlohmann::json::object();
    for (auto& entry : *map) {
      auto* key = llvm::cast<llvm::yaml::ScalarNode>(entry.getKey());
      llvm::SmallString<64> storage;
      object[key->getValue(storage).str()] = yaml_node_to_json(entry.getValue());
    }
    return object;
  }
  if (auto* sequence = llvm::dyn_cast<llvm::yaml::SequenceNode>(node)) {
    nlohmann::json array = nlohmann::json::array();
    for (auto& element : *sequence) array.push_back(yaml_node_to_json(&element));
    return array;
  }
  if (auto* scalar = llvm::dyn_cast<llvm::yaml::ScalarNode>(node)) {
    llvm::SmallString<64> storage;
    std::string value = scalar->getValue(storage).str();
    llvm::StringRef raw = scalar->getRawValue();
    bool quoted = raw.starts_with("'") || raw.starts_with("\"");
    if (!quoted) {
      if (value == "true") return true;
      if (value == "false") return false;
      std::uint64_t unsigned_value = 0;
      if (!llvm::StringRef(value).getAsInteger(0, unsigned_value)) return unsigned_value;
      std::int64_t signed_value = 0;
      if (!llvm::StringRef(value).getAsInteger(0, signed_value)) return signed_value;
    }
    return value;
  }
  return nullptr;
}

}  // namespace

nlohmann::json readelf_metadata(const std::string& path) {
  nlohmann::json notes = readelf_json(path, "--notes");
  for (const auto& section : notes.at("NoteSections")) {
    for (const auto& note : section.at("NoteSection").at("Notes")) {
      if (!note.contains("AMDGPU Metadata")) continue;
      std::string yaml = note.at("AMDGPU Metadata").get<std::string>();
      llvm::SourceMgr sources;
      llvm::yaml::Stream stream(yaml, sources);
      auto document = stream.begin();
      if (document == stream.end()) return nullptr;
      return yaml_node_to_json(document->getRoot());
    }
  }
  return nullptr;
}

std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> objdump_directives(
    const std::string& path, const std::string& mcpu) {
  std::string text =
      run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d -j .rodata --mcpu=" + mcpu + " '" + path + "'");
  std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> result;
  std::istringstream lines(text);
  std::string current;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string directive;
    words >> directive;
    if (directive == ".amdhsa_kernel") {
      words >> current;
      current += ".kd";
      result[current];
    } else if (directive == ".end_amdhsa_kernel") {
      current.clear();
    } else if (!current.empty() && directive.rfind(".amdhsa_", 0) == 0) {
      std::int64_t value = 0;
      words >> value;
      result[current].emplace_back(directive.substr(8), value);
    }
  }
  return result;
}

}  // namespace wavekit::codeobj::testing
