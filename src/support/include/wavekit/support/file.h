#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wavekit {

// Whole-file I/O; errors name the path and the system's reason.
std::vector<std::uint8_t> read_file(const std::string& path);
void write_file(const std::string& path, std::span<const std::uint8_t> bytes);
void write_file(const std::string& path, const std::string& text);

}  // namespace wavekit
