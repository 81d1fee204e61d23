// Helpers shared by the codeobj tests: the test inputs and the independent oracles
// (llvm-readelf-22, llvm-objdump-22) run as separate processes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wavekit::codeobj::testing {

// Every code object the tests run over: those compiled for these tests, plus the corpus's
// code objects when the corpus is configured.
std::vector<std::string> test_inputs();
// The HIP fat binaries (host objects with .hip_fatbin): ours and the corpus's.
std::vector<std::string> fat_binaries();
std::vector<std::uint8_t> load(const std::string& path);
// A path in a per-process scratch directory.
std::string scratch_path(const std::string& name);
void save(const std::string& path, const std::vector<std::uint8_t>& bytes);

// Runs a shell command; returns its stdout, or throws (with the output) if it exits non-zero.
std::string run(const std::string& command);
// `llvm-readelf-22 --elf-output-style=JSON <options> <path>`, the first (only) file's object.
nlohmann::json readelf_json(const std::string& path, const std::string& options);
// The AMDGPU metadata note as llvm-readelf-22 --notes prints it (YAML), converted to JSON
// with LLVM's YAML parser: plain scalars that are integers become numbers, true/false
// booleans, everything else strings.
nlohmann::json readelf_metadata(const std::string& path);
// Per descriptor symbol, the .amdhsa_* directives llvm-objdump-22 prints (without the prefix).
std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> objdump_directives(
    const std::string& path, const std::string& mcpu);
std::string file_name(const std::string& path);

}  // namespace wavekit::codeobj::testing
