#include "wavekit/support/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wavekit/support/error.h"

namespace wavekit {
namespace {

std::string system_reason() { return std::strerror(errno); }

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<std::uint8_t> read_file(const std::string& path, std::uint64_t limit) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) fail(path, system_reason());
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) fail(path, system_reason());
  if (S_ISDIR(status.st_mode)) fail(path, "is a directory, not a file");
  const bool regular = S_ISREG(status.st_mode);
  if (regular && static_cast<std::uint64_t>(status.st_size) > limit)
    fail(path, "is " + std::to_string(status.st_size) + " bytes, more than the " +
                   size_text(limit) + " wavekit reads");

  std::vector<std::uint8_t> bytes;
  if (regular) bytes.reserve(static_cast<std::size_t>(status.st_size));
  constexpr std::size_t kChunk = 1 << 16;
  for (;;) {
    const std::size_t used = bytes.size();
    if (used >= limit) {
      // A stream only ends by giving 0 bytes; one that reaches the limit is refused.
      char probe;
      const ssize_t more = ::read(file.fd, &probe, 1);
      if (more == 0) break;
      fail(path, "gives more than the " + size_text(limit) +
                     " wavekit reads (not a regular file: a device or a pipe?)");
    }
    const std::size_t want = std::min<std::uint64_t>(kChunk, limit - used);
    bytes.resize(used + want);
    const ssize_t got = ::read(file.fd, bytes.data() + used, want);
    if (got < 0) {
      if (errno == EINTR) {
        bytes.resize(used);
        continue;
      }
      fail(path, "cannot be read: " + system_reason());
    }
    bytes.resize(used + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  return bytes;
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  const std::string temporary = path + ".wavekit-" + std::to_string(::getpid()) + ".tmp";
  Descriptor file{::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (file.fd < 0) fail(path, "cannot be written: " + system_reason());
  const auto give_up = [&](const std::string& reason) {
    ::unlink(temporary.c_str());
    fail(path, "cannot be written: " + reason);
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) give_up(wrote < 0 ? system_reason() : "the system wrote nothing");
    done += static_cast<std::size_t>(wrote);
  }
  const int closed = ::close(file.fd);
  file.fd = -1;
  if (closed != 0) give_up(system_reason());
  if (::rename(temporary.c_str(), path.c_str()) != 0) give_up(system_reason());
}

void write_file(const std::string& path, const std::string& text) {
  write_file(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace wavekit
