#include "wavekit/hostcall/services.h"

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "wavekit/support/error.h"

namespace wavekit::hostcall {
namespace {

using protocol::PrintKind;

const char* kind_name(uint32_t kind) {
  switch (kind) {
    case protocol::kPrintSigned:
      return "a signed integer";
    case protocol::kPrintUnsigned:
      return "an unsigned integer";
    case protocol::kPrintDouble:
      return "a floating-point value";
    case protocol::kPrintPointer:
      return "a pointer";
    case protocol::kPrintChar:
      return "a char";
    default:
      return "of unknown kind";
  }
}

// Formats one conversion with a C-library format we built ourselves (so always well-formed).
template <typename T>
void append_formatted(std::string& out, const std::string& spec, T value) {
  char buffer[512];
  const int n = std::snprintf(buffer, sizeof buffer, spec.c_str(), value);
  if (n > 0) out.append(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof buffer - 1));
}

}  // namespace

std::string format_print(std::string_view format, std::span<const uint64_t> words) {
  std::string out;
  const uint64_t signature = words.empty() ? 0 : words[0];
  const uint32_t count =
      std::min<uint32_t>(static_cast<uint32_t>(signature & 0xf),
                         words.empty() ? 0 : static_cast<uint32_t>(words.size() - 1));
  bool terminated = false;
  if (const size_t nul = format.find('\0'); nul != std::string_view::npos) {
    format = format.substr(0, nul);
    terminated = true;
  }
  uint32_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    // %[flags][width][.precision][length]conversion; length modifiers are dropped and replaced
    // by the one the argument's real width needs.
    size_t j = i + 1;
    std::string spec = "%";
    while (j < format.size() && std::strchr("-+ #0", format[j])) spec += format[j++];
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j])))
      spec += format[j++];
    if (j < format.size() && format[j] == '.') {
      spec += format[j++];
      while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j])))
        spec += format[j++];
    }
    while (j < format.size() && std::strchr("hlLqjzt", format[j])) ++j;
    if (j >= format.size()) {
      out += "[print: incomplete conversion at the end of the format]";
      break;
    }
    const char conversion = format[j];
    i = j;
    if (!std::strchr("diouxXcfFeEgGaAps", conversion)) {
      out += std::string("[print: unsupported conversion '%") + conversion + "']";
      continue;
    }
    if (next >= count) {
      out += std::string("[print: no argument for '%") + conversion + "']";
      continue;
    }
    const uint32_t index = next++;
    const uint32_t kind = static_cast<uint32_t>((signature >> (4 + 4 * index)) & 0xf);
    const uint64_t word = words[1 + index];
    auto mismatch = [&](const char* wanted) {
      out += "[print: argument " + std::to_string(index + 1) + " is " + kind_name(kind) + ", '%" +
             conversion + "' wants " + wanted + "]";
    };
    switch (conversion) {
      case 'd':
      case 'i':
        if (kind == protocol::kPrintSigned || kind == protocol::kPrintChar)
          append_formatted(out, spec + "lld", static_cast<long long>(word));
        else if (kind == protocol::kPrintUnsigned)
          append_formatted(out, spec + "llu", static_cast<unsigned long long>(word));
        else
          mismatch("an integer");
        break;
      case 'o':
      case 'u':
      case 'x':
      case 'X':
        if (kind == protocol::kPrintSigned || kind == protocol::kPrintUnsigned ||
            kind == protocol::kPrintChar || kind == protocol::kPrintPointer)
          append_formatted(out, spec + "ll" + conversion, static_cast<unsigned long long>(word));
        else
          mismatch("an integer");
        break;
      case 'c':
        if (kind == protocol::kPrintChar || kind == protocol::kPrintSigned ||
            kind == protocol::kPrintUnsigned)
          append_formatted(out, spec + "c", static_cast<int>(static_cast<unsigned char>(word)));
        else
          mismatch("a character");
        break;
      case 'p':
        if (kind == protocol::kPrintPointer || kind == protocol::kPrintUnsigned)
          append_formatted(out, spec + "#llx", static_cast<unsigned long long>(word));
        else
          mismatch("a pointer");
        break;
      case 's':
        // A device pointer means nothing on the host.
        out += "[print: '%s' is not supported: argument " + std::to_string(index + 1) +
               " points into device memory]";
        break;
      default:  // floating point
        if (kind == protocol::kPrintDouble)
          append_formatted(out, spec + conversion, std::bit_cast<double>(word));
        else
          mismatch("a floating-point value");
        break;
    }
  }
  if (!terminated) out += "[print: format string truncated]";
  return out;
}

void register_print_service(Runtime& runtime, PrintSink sink) {
  if (!sink) {
    auto stdout_mutex = std::make_shared<std::mutex>();
    sink = [stdout_mutex](uint64_t, std::string_view text) {
      std::lock_guard lock(*stdout_mutex);
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
  }
  runtime.register_handler(protocol::kServicePrint, [sink](Request& request) {
    const auto uniform = request.uniform();
    const std::string_view format(reinterpret_cast<const char*>(uniform.data()), uniform.size());
    std::string text;
    for (uint32_t lane = 0; lane < request.lanes(); ++lane) {
      if (!request.lane_active(lane)) continue;
      auto words = request.lane_words(lane);
      const std::string line = format_print(format, words);
      text += line;
      words[0] = line.size();
      words[1] = 0;
    }
    sink(request.wave_id(), text);
  });
}

// --- file egress ------------------------------------------------------------------------------

struct FileEgress::OpenFile {
  std::mutex mutex;
  std::FILE* file = nullptr;
};

FileEgress::FileEgress(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code error;
  std::filesystem::create_directories(root_, error);
  if (error) fail(root_.string(), "cannot create the egress directory: " + error.message());
}

FileEgress::~FileEgress() {
  for (auto& [handle, file] : files_)
    if (file->file) std::fclose(file->file);
}

std::filesystem::path FileEgress::resolve(std::string_view path_template, uint64_t wave_id) const {
  if (const size_t nul = path_template.find('\0'); nul != std::string_view::npos)
    path_template = path_template.substr(0, nul);
  std::string path(path_template);
  for (size_t at; (at = path.find("{wave}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(wave_id));
  const std::filesystem::path relative(path);
  if (path.empty()) fail("file egress", "empty path");
  if (relative.is_absolute())
    fail("file egress", "'" + path + "' is absolute; paths are relative to the egress directory");
  for (const auto& part : relative)
    if (part == "..") fail("file egress", "'" + path + "' leaves the egress directory");
  return root_ / relative;
}

void FileEgress::register_services(Runtime& runtime) {
  runtime.register_handler(protocol::kServiceFileOpen, [this](Request& r) { open(r); });
  runtime.register_handler(protocol::kServiceFileWrite, [this](Request& r) { write(r); });
  runtime.register_handler(protocol::kServiceFileClose, [this](Request& r) { close(r); });
}

namespace {
// The request's first active lane speaks for the wave (handle, mode).
uint32_t leader_lane(const Request& request) {
  for (uint32_t lane = 0; lane < request.lanes(); ++lane)
    if (request.lane_active(lane)) return lane;
  return request.lanes();
}
void reply_all(Request& request, uint64_t word0, uint64_t word1) {
  for (uint32_t lane = 0; lane < request.lanes(); ++lane) {
    if (!request.lane_active(lane)) continue;
    auto words = request.lane_words(lane);
    words[0] = word0;
    words[1] = word1;
  }
}
}  // namespace

void FileEgress::open(Request& request) {
  const uint32_t leader = leader_lane(request);
  if (leader == request.lanes()) return request.set_status(protocol::kBadRequest);
  const uint64_t mode = request.lane_words(leader)[0];
  const auto uniform = request.uniform();
  std::filesystem::path path;
  try {
    path = resolve(std::string_view(reinterpret_cast<const char*>(uniform.data()), uniform.size()),
                   request.wave_id());
  } catch (const Error&) {
    request.set_status(protocol::kBadRequest);
    return reply_all(request, 0, EINVAL);
  }
  std::error_code ignored;
  std::filesystem::create_directories(path.parent_path(), ignored);
  std::FILE* file = std::fopen(path.c_str(), mode == protocol::kFileAppend ? "ab" : "wb");
  if (!file) return reply_all(request, 0, static_cast<uint64_t>(errno));
  auto entry = std::make_shared<OpenFile>();
  entry->file = file;
  std::lock_guard lock(mutex_);
  const uint64_t handle = next_handle_++;
  files_.emplace(handle, std::move(entry));
  ++files_opened_;
  reply_all(request, handle, 0);
}

std::shared_ptr<FileEgress::OpenFile> FileEgress::find(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  auto it = files_.find(handle);
  return it == files_.end() ? nullptr : it->second;
}

void FileEgress::write(Request& request) {
  const uint32_t leader = leader_lane(request);
  if (leader == request.lanes()) return request.set_status(protocol::kBadRequest);
  auto file = find(request.lane_words(leader)[0]);
  if (!file) {
    request.set_status(protocol::kBadRequest);
    return reply_all(request, 0, EBADF);
  }
  const uint64_t lane_capacity = (request.lane_words(leader).size() - 2) * 8;
  std::lock_guard lock(file->mutex);
  if (!file->file) return reply_all(request, 0, EBADF);
  uint64_t written = 0;
  const auto uniform = request.uniform();
  written += std::fwrite(uniform.data(), 1, uniform.size(), file->file);
  for (uint32_t lane = 0; lane < request.lanes(); ++lane) {
    if (!request.lane_active(lane)) continue;
    auto words = request.lane_words(lane);
    const uint64_t bytes = std::min(words[1], lane_capacity);
    written += std::fwrite(words.data() + 2, 1, bytes, file->file);
  }
  const uint64_t error = std::ferror(file->file) ? static_cast<uint64_t>(EIO) : 0;
  reply_all(request, written, error);
}

void FileEgress::close(Request& request) {
  const uint32_t leader = leader_lane(request);
  if (leader == request.lanes()) return request.set_status(protocol::kBadRequest);
  std::shared_ptr<OpenFile> file;
  {
    std::lock_guard lock(mutex_);
    auto it = files_.find(request.lane_words(leader)[0]);
    if (it != files_.end()) {
      file = std::move(it->second);
      files_.erase(it);
    }
  }
  if (!file) {
    request.set_status(protocol::kBadRequest);
    return reply_all(request, EBADF, 0);
  }
  std::lock_guard lock(file->mutex);
  const int result = std::fclose(file->file);
  file->file = nullptr;
  reply_all(request, result == 0 ? 0 : static_cast<uint64_t>(errno), 0);
}

uint64_t FileEgress::open_files() const {
  std::lock_guard lock(mutex_);
  return files_.size();
}

uint64_t FileEgress::files_opened() const {
  std::lock_guard lock(mutex_);
  return files_opened_;
}

}  // namespace wavekit::hostcall
