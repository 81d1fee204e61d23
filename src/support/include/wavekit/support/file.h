#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wavekit {

// Whole-file I/O; errors name the path and the system's reason.
//
// read_file refuses a directory, and reads at most `limit` bytes: a regular file larger than
// that, or a stream (a pipe, /dev/zero) that gives more, is an error naming the limit instead
// of an allocation that never ends.
inline constexpr std::uint64_t kReadLimit = std::uint64_t{4} << 30;  // 4 GiB
std::vector<std::uint8_t> read_file(const std::string& path, std::uint64_t limit = kReadLimit);

// write_file replaces `path` atomically: the bytes go to a temporary file beside it, renamed
// over `path` only once they are all written, so that a failed write (a full disk) leaves no
// truncated file behind, only the error.
void write_file(const std::string& path, std::span<const std::uint8_t> bytes);
void write_file(const std::string& path, const std::string& text);

}  // namespace wavekit
