// The emulator's execution core: runs one AMDGPU kernel dispatch (gfx908, gfx90a, gfx942; wave64)
// on host threads. Device pointers are host pointers; every access the emulated code makes is
// checked against a MemoryMap, and a miss stops the dispatch with a memory-fault report instead
// of touching the host. Code is decoded once per loaded object (CodeCache) through LLVM MC and
// kept in a pre-decoded form, so that the execution loop never parses text or MCInsts.
//
// Typical use (the hsa part's packet processor does exactly this):
//   MemoryMap memory;  memory.add(buffer, bytes);  memory.add(kernarg, kernarg_bytes, ...);
//   CodeCache code;    code.add_object(Processor::gfx90a, image_base, image_size, 0);
//   DispatchParams p;  p.kernel_descriptor = image_base + kd_vaddr; p.kernarg = kernarg; ...
//   DispatchResult r = dispatch(p, memory, code);   // r.ok() or r.error / r.message / r.faults
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wavekit::emu {

enum class Processor { gfx908, gfx90a, gfx942 };

// "gfx908" / "gfx90a" / "gfx942" (a ":feature+" suffix is accepted and ignored); anything else
// (including the wave32 RDNA targets) throws wavekit::Error naming the target.
Processor parse_processor(std::string_view name);
std::string_view processor_name(Processor processor);

// The flat-address apertures the emulated GPU reports (src_shared_base / src_private_base, and
// the values a runtime writes into hidden_shared_base / hidden_private_base). A generic (flat)
// address whose upper 32 bits equal an aperture's is an LDS or private (scratch) address; both
// lie above the 47-bit user address space, so no host pointer can alias them.
inline constexpr std::uint64_t kSharedApertureBase = 0x0001'0000'0000'0000ull;
inline constexpr std::uint64_t kPrivateApertureBase = 0x0002'0000'0000'0000ull;

// The host address ranges the emulated GPU may touch: allocations, loaded code-object segments,
// kernarg segments, hostcall buffers. Thread-safe; ranges may be added and removed while a
// dispatch runs (e.g. by a hostcall service allocating device memory).
class MemoryMap {
 public:
  // kToolMemory marks the instrumentation's own memory (probe arenas, the hostcall ring):
  // writes into it do not count as progress for no-progress detection, since probes write
  // there on every pass of a loop that may be stuck (DispatchOptions::no_progress_instructions).
  enum Access : unsigned { kRead = 1, kWrite = 2, kReadWrite = 3, kToolMemory = 4 };
  struct Range {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    unsigned access = kReadWrite;
    std::string label;  // for fault reports, e.g. "kernarg", "arg0", "code object foo.co"
    // The bytes the program asked for (0: all of size). The rest of the range is the
    // allocation granularity's padding, which a GPU's page mapping makes reachable (a merged
    // s_load_dwordx4 past a kernarg segment's end, a kernel writing one element past its
    // buffer); DispatchOptions::exact_bounds reports any access to it.
    std::uint64_t requested = 0;
    // Where the byte at `base` is in the host's address space: `base` itself (device pointers
    // are host pointers), except for a range added with add_translated().
    std::uint64_t host_base = 0;
  };

  MemoryMap();
  ~MemoryMap();
  MemoryMap(const MemoryMap&) = delete;
  MemoryMap& operator=(const MemoryMap&) = delete;

  // Ranges must not overlap an existing range (throws wavekit::Error naming both); size > 0.
  void add(const void* base, std::size_t size, unsigned access = kReadWrite, std::string label = {},
           std::size_t requested = 0);
  // A range the emulated GPU reaches at `device_base` whose bytes are the host's at `host`, as a
  // GPU page table maps pages at a virtual address of their own: user memory a driver registers
  // at a new GPU address (src/kfd). The emulated code's accesses are translated; overlaps are
  // checked by device address, as for add().
  void add_translated(std::uint64_t device_base, const void* host, std::size_t size,
                      unsigned access = kReadWrite, std::string label = {});
  // Removes the range that starts at `base`; returns false when there is none.
  bool remove(const void* base);
  // Adds kToolMemory to the range that starts at `base`; returns false when there is none.
  bool mark_tool_memory(const void* base);
  // True when [address, address + size) lies inside one range that allows `access`.
  bool contains(std::uint64_t address, std::size_t size, unsigned access) const;
  std::optional<Range> find(std::uint64_t address) const;
  // The range that starts closest below `address` (it may end before it); for reports.
  std::optional<Range> find_below(std::uint64_t address) const;
  std::vector<Range> ranges() const;
  // Increments on every add/remove; lets executing waves keep a cheap snapshot.
  std::uint64_t generation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Decoded-once code per loaded object. An object is registered with the host range it occupies
// and the virtual address of its first byte in the original ELF (0 when the whole image, from
// vaddr 0, was mapped at host_base). Instructions are decoded lazily at first fetch and cached,
// so data between functions is never decoded. Thread-safe.
class CodeCache {
 public:
  CodeCache();
  ~CodeCache();
  CodeCache(const CodeCache&) = delete;
  CodeCache& operator=(const CodeCache&) = delete;

  // Registers [host_base, host_base + size) as code of `processor`; throws wavekit::Error when
  // it overlaps an object already registered.
  void add_object(Processor processor, const void* host_base, std::size_t size,
                  std::uint64_t original_vaddr_base = 0);
  bool remove_object(const void* host_base);

  // Basic-block starts (ORIGINAL virtual addresses) of an object, normally from the analysis
  // library. Ground-truth block counts are keyed by these. Without them the emulator uses the
  // leaders it finds itself (entry points, branch targets, the instruction after a branch).
  void set_block_starts(const void* host_base, std::span<const std::uint64_t> original_vaddrs);

  // Host PC -> original virtual address (nullopt when the PC is in no registered object).
  std::optional<std::uint64_t> original_address(std::uint64_t host_pc) const;
  // Original virtual address -> host PC within the object registered at host_base.
  std::optional<std::uint64_t> host_address(const void* host_base,
                                            std::uint64_t original_vaddr) const;
  // The disassembly text of the instruction at host_pc ("" when not decodable); for reports.
  std::string instruction_text(std::uint64_t host_pc) const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One bit of one register flipped once, right after one dynamic execution of one instruction:
// the emulator's own fault injection, the independent oracle of `wavekit fi` (which flips the
// same bit through a rewritten kernel's probe). The instance is the `execution`-th time (from
// 0) that wave `wave` (its linear id) executes the instruction at original address `pc`;
// loads in flight land first. A VGPR changes in one lane, the (lane_pick mod n)-th of the n
// lanes EXEC has after the instruction (none active: nothing changes); an SGPR is the wave's.
// With `read`, the bit is flipped just before the instruction and put back right after it: the
// instruction reads the flipped value (a store stores it) and the register keeps its own.
struct FaultInjection {
  std::uint64_t pc = 0;
  std::uint64_t wave = 0;
  std::uint64_t execution = 0;
  bool vgpr = true;
  unsigned reg = 0;  // v0..v255 / s0..s101
  unsigned bit = 0;  // 0..31
  std::uint32_t lane_pick = 0;
  bool read = false;
};

// What a FaultInjection did (DispatchResult::injected).
struct InjectedFault {
  bool reached = false;    // the instance ran
  bool flipped = false;    // a bit changed (false: no lane active for a VGPR)
  std::uint32_t lane = 0;  // VGPRs: the lane changed
  std::uint32_t before = 0, after = 0;
};

struct DispatchOptions {
  unsigned host_threads = 0;  // 0: every core of the host
  // Waves resident at once (whole workgroups are admitted; a resident wave stays until it
  // ends). 0: 1,024. Lower it to expose forward-progress bugs; each resident wave holds a
  // 128 KiB register file and its private segment.
  unsigned max_resident_waves = 0;
  bool record_block_counts = false;
  bool record_block_sequence = false;  // per wave, every executed block start in order
  // Per wave, every executed memory instruction with the addresses its active lanes access
  // (WaveRecord::memory_accesses), recorded where the emulator computes them.
  bool record_memory_accesses = false;
  // Per instruction of the dispatch, how often it issued and the lanes active (EXEC) each time,
  // summed over every wave (DispatchResult::instruction_counts); the performance model's counts.
  bool record_instruction_counts = false;
  // Instructions a wave runs before its workgroup switches to its next wave (waves also switch
  // at s_barrier, at an s_waitcnt that has to wait, and at s_sleep).
  unsigned interleave_quantum = 256;
  // Checker mode: an access to the padding of an allocation (MemoryMap::Range::requested) is a
  // memory fault naming the allocation and how far past its end the access was, the way
  // compute-sanitizer reports out-of-bounds accesses a GPU's page mapping lets through.
  bool exact_bounds = false;
  // No-progress detection: when the resident waves together execute this many instructions
  // without any of them storing to memory (other than MemoryMap::kToolMemory), changing memory
  // with an atomic, ending, or passing a barrier, AND at least no_progress_seconds of wall time
  // passed since that last progress, the dispatch stops with ErrorKind::no_progress.
  std::uint64_t no_progress_instructions = 1ull << 26;
  double no_progress_seconds = 2.0;
  // 0: the two limits above decide alone. Otherwise long loops that never store (an energy sum
  // over every atom, a read-only memory pass, a cycle-counting loop) are not taken for a hang:
  // once the limits are reached the waves check, at block starts, whether their state (SGPRs,
  // granted VGPRs, results in flight, LDS) comes back the same at the same pc with no progress
  // in between, and the dispatch is declared stuck only when every resident wave does (or waits
  // at a barrier), or when the resident waves executed this many instructions per resident wave
  // without progress (a spin whose state keeps changing, e.g. counting its tries). The HSA
  // runtime sets it (WAVEKIT_EMU_NO_PROGRESS_WORK_PER_WAVE, docs/hsa.md).
  std::uint64_t no_progress_work_per_wave = 0;
  // Progress the emulator cannot see: waves that spin on memory a host thread answers (the
  // hostcall ring) wait on the host, not on each other, however long a loaded host takes.
  // Asked only when the two limits above are both reached; returning true counts as progress
  // (the limits start again). It should return true when the outside made progress since the
  // previous call or has work outstanding (hostcall::Runtime::made_progress does exactly this),
  // so that only waves waiting on each other, or on something nobody will ever do, are
  // reported. Called from the dispatch's worker threads, one at a time.
  std::function<bool()> outside_progress;
  // A budget for the whole dispatch (0: none): once its waves together executed
  // max_instructions wave-instructions, or max_seconds of wall time passed, the dispatch stops
  // with ErrorKind::budget_exceeded and the waves that had not ended listed where they stood.
  // Checked after every round of a workgroup, so a dispatch may overrun by one round
  // (interleave_quantum instructions per wave of a workgroup). This is what ends a kernel that
  // loops forever while storing, which no-progress detection cannot tell from work.
  std::uint64_t max_instructions = 0;
  double max_seconds = 0;
  std::optional<FaultInjection> inject;
};

struct DispatchParams {
  Processor processor = Processor::gfx90a;
  const void* kernel_descriptor = nullptr;  // host address of the 64-byte kernel descriptor
  const void* kernarg = nullptr;            // kernarg segment (explicit + hidden arguments)
  std::uint32_t grid[3] = {1, 1, 1};        // in work-items, as in the AQL packet
  std::uint32_t workgroup[3] = {1, 1, 1};   // work-items per workgroup
  // Bytes per work-item (AQL packet). The emulator uses at least the descriptor's fixed size,
  // and at least 4 KiB when the descriptor says the kernel uses a dynamic stack.
  std::uint32_t private_segment_size = 0;
  std::uint32_t group_segment_size = 0;   // bytes of LDS per workgroup (AQL packet; >= KD's)
  const void* dispatch_packet = nullptr;  // hsa_kernel_dispatch_packet_t*, dispatch-ptr SGPRs
  const void* queue = nullptr;            // hsa_queue_t* / amd_queue_t*, queue-ptr SGPRs
  std::uint64_t dispatch_id = 0;
  DispatchOptions options;
};

enum class ErrorKind {
  none,
  invalid_dispatch,           // bad parameters or kernel descriptor (message says which)
  memory_fault,               // access outside the MemoryMap / LDS / scratch
  illegal_instruction,        // bytes that do not decode, or a PC outside registered code
  unimplemented_instruction,  // decodes, but the emulator has no semantics for it
  trap,                       // s_trap
  no_progress,                // resident waves spin without progress (faults = waiting waves)
  budget_exceeded,            // DispatchOptions::max_instructions / max_seconds reached
};
std::string_view error_kind_name(ErrorKind kind);

struct WaveLocation {
  std::uint64_t linear_wave_id = 0;
  std::uint32_t workgroup[3] = {0, 0, 0};
  std::uint32_t wave_in_workgroup = 0;
  std::uint64_t host_pc = 0;
  std::uint64_t pc = 0;       // original virtual address (host_pc when not in a registered object)
  std::string instruction;    // disassembly of the instruction at pc, when decodable
  std::uint64_t address = 0;  // memory_fault: the faulting address (first faulting lane)
  // no_progress: what the wave was doing when the dispatch stopped: "at s_barrier" (waiting for
  // the other waves of its workgroup) or "spinning" (running without progress, e.g. polling
  // memory nobody writes); budget_exceeded: "at s_barrier" or "running". Empty for the other
  // errors.
  std::string state;
};

// The kind of a memory instruction, as its address is formed.
enum class MemoryAccessKind : std::uint8_t { scalar, global, flat, scratch, lds, buffer };
std::string_view memory_access_kind_name(MemoryAccessKind kind);  // "scalar", "lds", ...

// One executed memory instruction and the addresses the emulator computed for it. What an
// address is, by kind:
//   scalar   s_load / s_store / s_atomic: SBASE + offset (+ SOFFSET), bits 1:0 cleared;
//            s_buffer_*: the V#'s 48-bit base + offset (+ SOFFSET), bits 1:0 cleared. One value
//            per wave (lanes = 1).
//   global   the 64-bit global address (SADDR + 32-bit VADDR, or the VADDR pair) + offset.
//   flat     the 64-bit generic address (VADDR pair + offset), before the aperture check.
//   scratch  the lane's 32-bit private address (SADDR + VADDR + offset): address space 5.
//   lds      the lane's 32-bit LDS address (VADDR + offset; the 2-address forms: VADDR +
//            offset0 * element size (x64 for *st64), the first of the two). ds_bpermute,
//            ds_permute and ds_swizzle touch no LDS memory and are not recorded.
//   buffer   the 64-bit address of the lane's first byte: the V#'s base + SOFFSET + the index
//            (IDXEN) times the stride + VOFFSET (OFFEN) + offset, or the swizzled form of it
//            when the V# enables swizzling.
struct MemoryAccessRecord {
  std::uint64_t pc = 0;  // original virtual address (host PC when in no registered object)
  // Host base of the registered code object that holds the instruction (0: none): the PCs of
  // two objects loaded together (a kernel's and a probe library's) may be equal.
  std::uint64_t object = 0;
  MemoryAccessKind kind = MemoryAccessKind::global;
  std::uint64_t lanes = 0;               // the lanes that accessed memory (EXEC; scalar: 1)
  std::vector<std::uint64_t> addresses;  // one per set bit of lanes, in lane order
};

struct WaveRecord {
  std::uint64_t linear_wave_id = 0;  // (wg.x + wg.y*ngx + wg.z*ngx*ngy) * waves_per_wg + wave
  std::uint32_t workgroup[3] = {0, 0, 0};
  std::uint32_t wave_in_workgroup = 0;
  std::uint64_t instructions = 0;  // executed wave-instructions
  // (original block start vaddr, times entered), sorted by address; with record_block_counts.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> block_counts;
  std::vector<std::uint64_t> block_sequence;        // with record_block_sequence
  std::vector<MemoryAccessRecord> memory_accesses;  // in execution order; with the option
};

// One instruction of a dispatch (with DispatchOptions::record_instruction_counts): how many
// times waves issued it and the active lanes (the popcount of EXEC as it issued) summed over
// those issues.
struct InstructionCount {
  std::uint64_t object = 0;  // host base of the code object holding it (0: none)
  std::uint64_t pc = 0;      // original virtual address (host PC when in no registered object)
  std::uint64_t executions = 0;
  std::uint64_t lanes = 0;
};

struct DispatchResult {
  ErrorKind error = ErrorKind::none;
  std::string message;  // human-readable; names the wave, PC, instruction, address
  // The faulting wave, or (no_progress) every wave of every resident workgroup that had not
  // ended, ordered by workgroup and wave.
  std::vector<WaveLocation> faults;
  // no_progress: workgroups of the grid that never became resident (the residency limit held
  // them back behind the stuck ones).
  std::uint64_t workgroups_not_started = 0;
  std::vector<WaveRecord> waves;  // sorted by linear_wave_id; every wave that ran
  std::vector<InstructionCount> instruction_counts;  // sorted by (object, pc); with the option
  InjectedFault injected;                            // with DispatchOptions::inject
  std::uint64_t total_instructions = 0;
  std::uint64_t total_waves = 0;
  std::uint32_t waves_per_workgroup = 0;
  bool ok() const { return error == ErrorKind::none; }
};

// Runs the dispatch to completion (or to the first error) on options.host_threads threads.
// Never throws for faults of the emulated code; throws wavekit::Error only for misuse that
// cannot be reported as a result (none at present: bad parameters are ErrorKind::invalid_dispatch).
DispatchResult dispatch(const DispatchParams& params, MemoryMap& memory, CodeCache& code);

}  // namespace wavekit::emu
