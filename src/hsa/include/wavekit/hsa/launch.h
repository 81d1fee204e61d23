// `wavekit launch`: run one kernel of a code object on the emulator with arguments from the
// command line, and the launch state a packet processor and a HIP-like runtime would set up:
// the kernarg segment (explicit arguments matched to the metadata `.args`, COV4/COV5 hidden
// arguments filled from the grid), the AQL packet's sizes, scratch and LDS from the note.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wavekit/hostcall/runtime.h"
#include "wavekit/hsa/ground_truth.h"
#include "wavekit/hsa/loader.h"

namespace wavekit::hsa {

// One `--arg` value: a buffer (file:PATH, zeros:BYTES) whose pointer is passed, or a scalar
// passed by value (i32:V u32:V i64:V u64:V f32:V f64:V), or a struct passed by value
// (struct:FIELD,FIELD,... with fields i8/u8/i16/u16/i32/u32/i64/u64/f32/f64:V laid out as C
// lays out a struct of those members: each at its natural alignment, the whole padded to the
// largest).
struct ArgumentSpec {
  enum class Kind { file, zeros, i32, u32, i64, u64, f32, f64, by_value_struct };
  Kind kind = Kind::zeros;
  std::string text;                 // as given, for messages
  std::vector<std::uint8_t> bytes;  // buffer contents, or the scalar's little-endian bytes
  // A buffer that is the instrumentation's own (a probe arena): the emulator does not count
  // writes into it as progress (emu::MemoryMap::kToolMemory).
  bool tool_memory = false;
  bool is_buffer() const { return kind == Kind::file || kind == Kind::zeros; }
};

// Parses one SPEC; throws wavekit::Error naming the spec (e.g. "--arg i32:x: 'x' is not an
// integer", "--arg file:/nope: cannot open ...").
ArgumentSpec parse_argument(const std::string& spec);

// "X[,Y[,Z]]" -> {X, Y, Z} (missing components are 1) and the number given; every component
// must be >= 1. Throws wavekit::Error naming `option`.
struct Dimensions {
  std::array<std::uint32_t, 3> size{1, 1, 1};
  unsigned count = 1;
};
Dimensions parse_dimensions(const std::string& option, const std::string& text);

// Values the hidden arguments take that do not come from the grid.
struct HiddenArgumentValues {
  std::uint64_t hostcall_buffer = 0;
  std::uint64_t printf_buffer = 0;
  std::uint64_t queue_ptr = 0;
  std::uint64_t heap = 0;
};

// Writes every hidden argument `kernel`'s metadata lists at its metadata offset (COV4 and COV5
// alike: the offsets come from the note): block counts, group sizes, remainders, global offsets
// (0), grid dimensions, the private/shared aperture bases of the emulated GPU, and the buffers
// in `values`. `kernarg` must hold kernel.kernarg_segment_size bytes.
void fill_hidden_arguments(const KernelInfo& kernel, const Dimensions& grid,
                           const Dimensions& block, const HiddenArgumentValues& values,
                           std::uint8_t* kernarg);

// Checks `specs` against the explicit (non-hidden) arguments of `kernel`, in order: the count
// must match, a buffer spec needs a pointer-sized argument (global_buffer, or any 8-byte
// argument of address space global/generic), a scalar spec an argument of its size. Throws
// wavekit::Error naming the argument (index, name, kind, size) that does not fit.
void check_arguments(const KernelInfo& kernel, const std::vector<ArgumentSpec>& specs);

struct LaunchRequest {
  std::string code_object;  // path
  // More code objects loaded into the same executable before it is frozen (a probe library,
  // whose symbols resolve the kernel's undefined STT_NOTYPE references).
  std::vector<std::string> libraries;
  std::string kernel;
  Dimensions grid;   // work-items per dimension (the AQL convention)
  Dimensions block;  // work-items per workgroup
  std::vector<ArgumentSpec> arguments;
  // A buffer that is none of the kernel's explicit arguments: its pointer goes into the kernarg
  // segment at kernarg_offset (the rewriter's per-wave arena, a hidden argument of the
  // instrumented kernel), its bytes after the dispatch into LaunchOutcome::hidden_buffer.
  struct HiddenBuffer {
    std::uint64_t kernarg_offset = 0;
    ArgumentSpec spec;
  };
  std::optional<HiddenBuffer> hidden_buffer;
  // Where the hostcall file services may write (the probes' "trace/wave-{wave}.txt"...);
  // empty: no file services.
  std::string hostcall_file_root;
  // Refuse to launch unless a loaded object uses the hostcall ring (a rewritten object whose
  // WAVEKIT note says needs_hostcall, without the probe library that would use it).
  bool require_hostcall = false;
  unsigned host_threads = 0;        // 0: every core
  unsigned max_resident_waves = 0;  // 0: the emulator's default
  // Dynamic LDS per workgroup (HIP's dynamic shared memory, the launch's sharedMemBytes): added
  // to the kernel's .group_segment_fixed_size in the packet's group_segment_size.
  std::uint32_t dynamic_lds_bytes = 0;
  // Buffers and the kernarg segment are whole pages as on a GPU; with exact_bounds an access
  // past the bytes asked for is reported (emu::DispatchOptions::exact_bounds).
  bool exact_bounds = false;
  // The dispatch's budget (emu::DispatchOptions::max_instructions / max_seconds); 0: none.
  std::uint64_t max_instructions = 0;
  double max_seconds = 0;
  bool record_block_counts = false;
  bool record_block_sequence = false;
  bool record_memory_accesses = false;
  // Per-instruction issue and active-lane counts (LaunchOutcome::instruction_counts).
  bool record_instruction_counts = false;
  // One bit flipped in one dynamic instance (emu::FaultInjection; LaunchOutcome::injected).
  std::optional<emu::FaultInjection> inject;
  // Keep the emulator's per-wave memory records as they are (LaunchOutcome::memory_records)
  // instead of the memory_trace document; needs record_memory_accesses.
  bool keep_memory_records = false;
};

struct LaunchOutcome {
  std::string kernel;
  std::string target;
  bool ok = false;
  std::string error;  // the emulator's report when !ok (kind, waves, PCs, addresses)
  // Buffer argument i (position in the argument list) -> its bytes after the dispatch.
  std::vector<std::pair<unsigned, std::vector<std::uint8_t>>> buffers;
  std::vector<std::uint8_t> hidden_buffer;  // LaunchRequest::hidden_buffer's bytes after it
  std::uint64_t workgroups = 0;
  std::uint64_t waves = 0;
  std::uint32_t waves_per_workgroup = 0;
  std::uint64_t instructions = 0;
  double seconds = 0;
  // --trace-blocks document ({"kernel", "waves": [...]}) and per-wave block sequences.
  nlohmann::json block_trace;
  BlockSequences block_sequences;
  // --trace-memory document: {"kernel", "waves": [{"id", "workgroup", "wave_in_workgroup",
  // "accesses": [{"object", "pc", "kind", "exec", "addresses": [...]}]}]}: the code object (its
  // name as loaded) and original address of the instruction, addresses (hex strings) one per
  // lane set in "exec", as emu::MemoryAccessRecord defines them.
  nlohmann::json memory_trace;
  // With record_instruction_counts: emu::DispatchResult::instruction_counts, and the load
  // base of each code object by name (InstructionCount::object is a load base).
  std::vector<emu::InstructionCount> instruction_counts;
  emu::InjectedFault injected;  // with LaunchRequest::inject
  std::vector<std::pair<std::string, std::uint64_t>> object_bases;
  // With keep_memory_records: per wave (linear id order), its memory accesses.
  std::vector<std::vector<emu::MemoryAccessRecord>> memory_records;
  // The hostcall service's statistics, when it ran (a loaded object uses the ring).
  std::optional<hostcall::Statistics> hostcall;
};

// Loads the object, checks and binds the arguments, dispatches, and collects the results.
// Throws wavekit::Error for anything the user can fix (bad object, unknown kernel, argument
// mismatch, a block larger than the kernel allows). The grid need not be a multiple of the
// block: partial workgroups are allowed, as in AQL. Emulator faults come back in
// LaunchOutcome::error.
LaunchOutcome launch(const LaunchRequest& request);

}  // namespace wavekit::hsa
