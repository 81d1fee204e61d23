// libwavekit-model-observer.so: the dispatch observer (wavekit/hsa/dispatch_observer.h) of the
// model's whole-program path. Inside an unmodified application running on wavekit's emulated
// HSA runtime, it asks the emulator for instruction counts (and the address stream, for the L2
// model) of the dispatches it counts, turns each into a kernel model with count_dispatch, the
// kernel path's own counting, and appends it as one JSON line to the file the program path
// reads (program.cpp sets the variables below; one write() per line on an O_APPEND file, so
// the lines of several queues and forked processes stay whole).
//
//   WAVEKIT_MODEL_OUT       the JSON-lines file (required)
//   WAVEKIT_MODEL_MACHINE   the machine whose L2 model gives DRAM bytes; "" or unset: no cache
//                           model (no address stream is recorded)
//   WAVEKIT_MODEL_KERNELS   an ECMAScript regex: only the kernels whose (demangled) name it
//                           finds are counted
//   WAVEKIT_MODEL_LAUNCHES  count the first N dispatches of each kernel (0 or unset: all)
//
// A dispatch that is not counted still gets a line ({"kernel", "counted": false}), so the
// program path knows how many launches each kernel had. Every line has the dispatch's launch
// index among its kernel's and its place among the process's dispatches ("dispatch").
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>

#include "llvm/Demangle/Demangle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/hsa/dispatch_observer.h"
#include "wavekit/model/binary.h"
#include "wavekit/model/counts.h"
#include "wavekit/model/machine.h"
#include "wavekit/support/error.h"

namespace {

using namespace wavekit;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

class ModelObserver final : public hsa::DispatchObserver {
 public:
  ModelObserver() : output_(environment("WAVEKIT_MODEL_OUT")) {
    if (output_.empty()) throw Error("WAVEKIT_MODEL_OUT names no file for the counts");
    if (const std::string machine = environment("WAVEKIT_MODEL_MACHINE"); !machine.empty()) {
      options_.cache = model::CacheModel::of(model::load_machine(machine));
      options_.simulate_cache = true;
    } else {
      options_.simulate_cache = false;
    }
    if (const std::string pattern = environment("WAVEKIT_MODEL_KERNELS"); !pattern.empty()) {
      try {
        kernels_.emplace(pattern);
      } catch (const std::regex_error& error) {
        throw Error("WAVEKIT_MODEL_KERNELS: '" + pattern +
                    "' is not a regular expression: " + error.what());
      }
    }
    if (const std::string launches = environment("WAVEKIT_MODEL_LAUNCHES"); !launches.empty()) {
      char* end = nullptr;
      launches_ = std::strtoull(launches.c_str(), &end, 10);
      if (*end || launches.empty()) throw Error("WAVEKIT_MODEL_LAUNCHES: not a count: " + launches);
    }
  }

  bool prepare(const std::string& kernel, emu::DispatchOptions& options) override {
    std::lock_guard lock(mutex_);
    // completed() runs on this thread, the queue's, right after this dispatch.
    pending_ = {launches_of_[kernel]++, dispatches_++};
    const bool counted = (!launches_ || pending_.launch < launches_) &&
                         (!kernels_ || std::regex_search(llvm::demangle(kernel), *kernels_));
    if (!counted) {
      write_line({{"kernel", llvm::demangle(kernel)},
                  {"symbol", kernel},
                  {"launch", pending_.launch},
                  {"dispatch", pending_.dispatch},
                  {"counted", false}});
      return false;
    }
    options.record_instruction_counts = true;
    options.record_memory_accesses = options_.simulate_cache;
    return true;
  }

  void completed(hsa::ObservedDispatch& dispatch) override {
    const Pending pending = pending_;
    std::lock_guard lock(mutex_);
    nlohmann::json line;
    try {
      line = {{"model", model::to_json(count(dispatch))}};
    } catch (const std::exception& error) {
      line = {{"kernel", llvm::demangle(dispatch.kernel)}, {"error", error.what()}};
    }
    line["symbol"] = dispatch.kernel;
    line["launch"] = pending.launch;
    line["dispatch"] = pending.dispatch;
    line["counted"] = line.contains("model");
    write_line(line);
  }

 private:
  model::KernelModel count(hsa::ObservedDispatch& dispatch) {
    const codeobj::CodeObject& object = object_at(dispatch.object_base, dispatch.code_object);
    emu::DispatchResult& result = *dispatch.result;
    model::DispatchRecords records;
    for (int axis = 0; axis < 3; ++axis) {
      records.grid[axis] = dispatch.grid[axis];
      records.block[axis] = dispatch.workgroup[axis];
    }
    const codeobj::Kernel* kernel = object.find_kernel(dispatch.kernel);
    const std::uint32_t fixed = kernel ? kernel->descriptor.group_segment_fixed_size : 0;
    records.dynamic_lds_bytes =
        dispatch.group_segment_size > fixed ? dispatch.group_segment_size - fixed : 0;
    records.object_base = dispatch.object_base;
    records.instruction_counts = std::move(result.instruction_counts);
    if (options_.simulate_cache)
      for (emu::WaveRecord& wave : result.waves)
        records.memory_records.push_back(std::move(wave.memory_accesses));
    records.waves = result.total_waves;
    records.instructions = result.total_instructions;
    records.waves_per_workgroup = result.waves_per_workgroup;
    return model::count_dispatch(object, dispatch.kernel, records, options_,
                                 "the code object of " + dispatch.kernel);
  }

  // The parsed code object loaded at `base`, parsed once (a later object at the same base, after
  // the first was unloaded, is parsed again).
  const codeobj::CodeObject& object_at(std::uint64_t base, std::span<const std::uint8_t> elf) {
    Parsed& parsed = objects_[base];
    if (!parsed.object || parsed.bytes.size() != elf.size() ||
        std::memcmp(parsed.bytes.data(), elf.data(), elf.size()) != 0) {
      parsed.bytes.assign(elf.begin(), elf.end());
      parsed.object = std::make_unique<codeobj::CodeObject>(codeobj::CodeObject::parse(
          parsed.bytes, "the code object at load base " + std::to_string(base)));
    }
    return *parsed.object;
  }

  void write_line(const nlohmann::json& line) {
    const std::string text = line.dump() + "\n";
    const int fd = open(output_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot write " + output_ + ": " + std::strerror(errno));
    const ssize_t written = write(fd, text.data(), text.size());
    close(fd);
    if (written != ssize_t(text.size())) throw Error("cannot write " + output_);
  }

  struct Parsed {
    std::vector<std::uint8_t> bytes;
    std::unique_ptr<codeobj::CodeObject> object;
  };

  std::mutex mutex_;
  std::string output_;
  model::CountOptions options_;
  std::optional<std::regex> kernels_;
  std::uint64_t launches_ = 0;
  std::map<std::string, std::uint64_t> launches_of_;
  std::uint64_t dispatches_ = 0;  // of the process, in the order they were prepared
  struct Pending {
    std::uint64_t launch = 0;    // of its kernel (symbol)
    std::uint64_t dispatch = 0;  // of the process
  };
  static thread_local Pending pending_;
  std::map<std::uint64_t, Parsed> objects_;
};

thread_local ModelObserver::Pending ModelObserver::pending_;

}  // namespace

extern "C" __attribute__((visibility("default"))) wavekit::hsa::DispatchObserver*
wavekit_make_dispatch_observer() {
  return new ModelObserver();  // lives until the process ends (dispatch_observer.h)
}
