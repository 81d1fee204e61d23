// wavekit's own hostcall services: formatted print and per-wave file egress. Their wire
// encodings are in protocol.h (next to the device-side calls); these are the host halves.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wavekit/hostcall/runtime.h"

namespace wavekit::hostcall {

// Formats one lane's print request: `format` with the arguments that `words` (signature word,
// then one word per argument) describe. Never trusts the device: an unsupported or mismatched
// conversion, a missing argument or a truncated format string is rendered as a bracketed
// "[print: ...]" note naming the problem instead of being passed to the C library.
std::string format_print(std::string_view format, std::span<const uint64_t> words);

// Receives one request's text: all active lanes' output, in lane order, so that one wave's
// output is never interleaved with another's.
using PrintSink = std::function<void(uint64_t wave_id, std::string_view text)>;

// Registers kServicePrint. The default sink writes to stdout.
void register_print_service(Runtime& runtime, PrintSink sink = {});

// The file egress service: open / write / close from the device, confined to one directory.
// Paths are relative, without "..", and "{wave}" in them becomes the request's wave id, so
// "trace/wave-{wave}.bin" gives every wave a file of its own.
class FileEgress {
 public:
  explicit FileEgress(std::filesystem::path root);
  ~FileEgress();  // closes the files the device left open
  FileEgress(const FileEgress&) = delete;
  FileEgress& operator=(const FileEgress&) = delete;

  // Registers kServiceFileOpen, kServiceFileWrite and kServiceFileClose; this object must
  // outlive the runtime's service threads.
  void register_services(Runtime& runtime);

  // The path a device path template names for a wave; throws wavekit::Error for an absolute
  // path, a ".." component or an empty path.
  std::filesystem::path resolve(std::string_view path_template, uint64_t wave_id) const;

  uint64_t open_files() const;
  uint64_t files_opened() const;

 private:
  struct OpenFile;
  void open(Request& request);
  void write(Request& request);
  void close(Request& request);
  std::shared_ptr<OpenFile> find(uint64_t handle) const;

  std::filesystem::path root_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<OpenFile>> files_;
  uint64_t next_handle_ = 1;
  uint64_t files_opened_ = 0;
};

}  // namespace wavekit::hostcall
