// Internal structures of the execution core: the pre-decoded instruction form, the wave state
// and the per-workgroup state. Nothing here is public API.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "wavekit/emu/emu.h"

namespace wavekit::emu::detail {

struct Wave;
struct Inst;
using Handler = void (*)(Wave&, const Inst&);

// Scalar register file indices follow the hardware's operand encoding (GFX9 ISA, "SSRC"):
// s0..s101, then the special registers at their encoding values, so that a decoded 7/8-bit
// operand field is directly an index.
enum ScalarIndex : std::uint16_t {
  kFlatScratchLo = 102,
  kXnackMaskLo = 104,
  kVccLo = 106,
  kVccHi = 107,
  kTtmp0 = 108,
  kM0 = 124,
  kNull = 125,
  kExecLo = 126,
  kExecHi = 127,
  kScalarFileSize = 128,
};

enum class OperandKind : std::uint8_t {
  none,
  sgpr,      // index into Wave::s (incl. vcc, exec, m0, flat_scratch, ttmp)
  vgpr,      // index into the unified vector file (AGPRs are mapped to vgpr at decode)
  constant,  // inline constant or literal, already expanded to the operand's width
  special,   // src_shared_base etc., vccz, execz, scc: value computed when read
};

// pk_f32: a 64-bit operand holding two f32 (VOP3P v_pk_*_f32): an inline float constant is the
// f32 encoding in the low dword and 0 in the high one (the compiler selects the low dword for
// both halves with op_sel_hi = 0), not the f64 encoding a b64 operand gets.
enum class DataType : std::uint8_t { b32, b64, f16, f32, f64, pk_f32 };

struct Operand {
  OperandKind kind = OperandKind::none;
  bool agpr = false;  // AGPR on gfx908 (separate file): index already offset by kAgprBase
  std::uint16_t index = 0;
  std::uint64_t value = 0;  // constant value, or special-register encoding
  // Float input modifiers, applied to the raw bits: (bits & and_mask) ^ xor_mask (low dword;
  // for 64-bit operands the masks act on the high dword). Identity for integer operands.
  std::uint32_t and_mask = ~0u;
  std::uint32_t xor_mask = 0;
  // SDWA source selection: 0..3 BYTE_0..3, 4/5 WORD_0/1, 6 DWORD; sext for integer sources.
  std::uint8_t sdwa_sel = 6;
  bool sdwa_sext = false;
  std::uint8_t dwords = 1;  // VALU source width (2 for 64-bit operands)
};

// On gfx908 AGPRs are a second file of 256 registers after the 256 VGPRs; on gfx90a/gfx942 the
// file is unified and an AGPR n lives at ACCUM_OFFSET + n, which the launch code applies.
inline constexpr std::uint32_t kVectorRegisters = 512;
inline constexpr std::uint32_t kAgprBase = 256;

enum InstFlags : std::uint32_t {
  kFlagBlockStart = 1u << 0,
  kFlagSdwa = 1u << 1,
  kFlagDpp = 1u << 2,
  kFlagClamp = 1u << 3,
  kFlagBranch = 1u << 4,      // ends a basic block (branch, call, return, end)
  kFlagCondBranch = 1u << 5,  // conditional: the next instruction starts a block
  kFlagOffen = 1u << 7,
  kFlagIdxen = 1u << 8,
  kFlagGlc = 1u << 9,
  kFlagVgprIndexable = 1u << 10,  // VALU: subject to s_set_gpr_idx_on
};

struct Inst {
  Handler handler = nullptr;
  std::uint64_t host_pc = 0;
  std::uint64_t next_pc = 0;
  std::uint32_t flags = 0;
  std::uint32_t block_id = 0;  // index into the object's block table when kFlagBlockStart
  std::uint8_t size = 0;
  std::uint8_t width = 1;      // dwords moved by a memory op / register width of the result
  std::uint8_t omod = 0;       // VOP3 output modifier: 0 none, 1 *2, 2 *4, 3 /2
  std::uint8_t op_sel = 0;     // VOP3/VOP3P op_sel, bit i for source i, bit 3 for dst
  std::uint8_t op_sel_hi = 0;  // VOP3P
  std::uint8_t neg_lo = 0;     // VOP3P
  std::uint8_t neg_hi = 0;     // VOP3P
  std::uint8_t sdwa_dst_sel = 6;
  std::uint8_t sdwa_dst_unused = 0;  // 0 pad with zeros, 1 sign-extend, 2 preserve
  std::uint16_t dpp_ctrl = 0;
  std::uint8_t dpp_row_mask = 0xf;
  std::uint8_t dpp_bank_mask = 0xf;
  bool dpp_bound_ctrl = false;
  Operand dst;                   // vdst / sdst
  Operand sdst;                  // VOP3b carry-out / compare result (vcc or SGPR pair)
  std::array<Operand, 4> src{};  // src0..src2; memory ops: [0]=address [1]=data [2]=data1
  Operand saddr;                 // FLAT saddr / SMEM base / MUBUF resource
  Operand soffset;               // SMEM / MUBUF soffset
  std::int64_t imm = 0;          // offsets, simm16, branch target (absolute host PC)
  std::int64_t imm2 = 0;         // DS offset1, second immediate
  std::uint16_t op = 0;          // family-specific sub-operation selector
  const char* name = nullptr;    // mnemonic, for error reports (owned by the code cache)
};

// A pending memory result: completes (writes its registers) at the s_waitcnt that covers it.
inline constexpr unsigned kPendingDwords = 4 * 64;
struct Pending {
  bool vector = true;   // VGPR destination (else SGPR)
  bool d16_hi = false;  // 16-bit result into the high half (else low half) of the register
  bool d16 = false;     // 16-bit result that preserves the other half of the register
  std::uint16_t dst = 0;
  std::uint8_t width = 0;  // dwords per lane; 0 for a store (counts, writes nothing)
  std::uint64_t lanes = 0;
  std::uint32_t data[kPendingDwords];  // [dword * 64 + lane] (vector) or [dword] (scalar)
};

// A FIFO of the memory operations a wave has issued and not yet seen complete. The capacity is
// the hardware counter's range (vmcnt 6 bits, lgkmcnt 4 bits): issuing into a full queue first
// completes the oldest entry, as the hardware stalls issue until a counter slot frees.
struct PendingQueue {
  std::vector<Pending> entries;  // ring
  std::size_t head = 0, count = 0;
};

enum class WaveState : std::uint8_t { ready, at_barrier, ended, faulted };

inline constexpr std::uint64_t kWaveEnded = ~0ull;  // Wave::stuck_epoch of an ended wave

struct Workgroup;
struct DispatchContext;

struct Wave {
  std::uint32_t s[kScalarFileSize] = {};
  std::uint32_t* v = nullptr;  // kVectorRegisters * 64, lane-minor: v[reg * 64 + lane]
  bool scc = false;
  std::uint64_t pc = 0;
  WaveState state = WaveState::ready;
  std::uint32_t agpr_base = kAgprBase;  // where a0 lives in the vector file
  std::uint32_t hwreg[32] = {};         // s_setreg / s_getreg state (MODE etc.)
  std::uint64_t dpp_lanes = ~0ull;      // lanes a DPP instruction may write (set per use)
  bool gpr_idx_on = false;
  std::uint8_t gpr_idx_mode = 0;  // bit0 src0, bit1 src1, bit2 src2, bit3 dst
  bool yield = false;             // set by s_sleep / s_barrier / a blocking wait: switch waves

  std::uint32_t wave_in_workgroup = 0;
  std::uint64_t linear_id = 0;
  std::uint32_t private_slot = 0;
  std::uint64_t scratch_base = 0, scratch_size = 0;  // this wave's scratch region (host addr)
  Workgroup* group = nullptr;
  DispatchContext* ctx = nullptr;

  PendingQueue vm, lgkm;

  std::uint64_t instructions = 0;
  std::uint64_t injection_executions = 0;  // of DispatchOptions::inject's instruction
  // No-progress detection's state-repeat check (DispatchContext::watch_cycles): the block start
  // the wave was last sampled at, a hash of its state there, the dispatch's progress_events at
  // that sample and the instruction count. stuck_epoch (atomic_ref: the dispatcher reads it
  // from another thread) is progress_events + 1 when the wave came back to the same block
  // start in the same state with no progress in between, kWaveEnded once it ended.
  std::uint64_t cycle_pc = 0, cycle_hash = 0, cycle_events = 0, cycle_sampled = 0;
  std::uint64_t stuck_epoch = 0;
  std::vector<std::uint64_t> block_counts;  // indexed by Inst::block_id of the object
  std::vector<std::uint64_t> block_sequence;
  std::vector<MemoryAccessRecord> memory_accesses;  // PCs are host PCs until retired
  const void* block_object = nullptr;               // the object block ids refer to
  // With record_instruction_counts: per instruction issued, (issues, active lanes summed).
  std::unordered_map<const Inst*, std::pair<std::uint64_t, std::uint64_t>> instruction_counts;

  // A cached memory-map range, to check most accesses without a lookup, and what its device
  // addresses add to become host addresses (0 but for a translated range; modulo 2^64).
  std::uint64_t cached_base = 0, cached_end = 0, cached_host_offset = 0;
  unsigned cached_access = 0;
  std::uint64_t cached_generation = ~0ull;

  // Why the wave stopped with an error (set once; dispatch turns it into the result).
  ErrorKind error = ErrorKind::none;
  std::string error_message;
  std::uint64_t error_address = 0;
  std::uint64_t error_pc = 0;

  std::uint64_t exec() const {
    return std::uint64_t(s[kExecLo]) | (std::uint64_t(s[kExecHi]) << 32);
  }
  void set_exec(std::uint64_t mask) {
    s[kExecLo] = std::uint32_t(mask);
    s[kExecHi] = std::uint32_t(mask >> 32);
  }
  // 64-bit scalar pairs; an encoding naming the last register wraps instead of overrunning.
  std::uint64_t sreg64(unsigned i) const {
    return std::uint64_t(s[i & 127]) | (std::uint64_t(s[(i + 1) & 127]) << 32);
  }
  void set_sreg64(unsigned i, std::uint64_t value) {
    s[i & 127] = std::uint32_t(value);
    s[(i + 1) & 127] = std::uint32_t(value >> 32);
  }
  std::uint32_t* vreg(unsigned index) { return v + std::size_t(index) * 64; }
};

struct Workgroup {
  std::uint32_t id[3] = {0, 0, 0};
  std::uint32_t flat_id = 0;
  std::vector<std::unique_ptr<Wave>> waves;
  std::vector<std::uint8_t> lds;
  std::uint32_t ended = 0;
};

// What every wave of one dispatch shares.
struct DispatchContext {
  Processor processor = Processor::gfx90a;
  MemoryMap* memory = nullptr;
  CodeCache::Impl* code = nullptr;
  DispatchOptions options;
  // Ranges the dispatch itself makes readable: kernarg segment, dispatch packet, queue.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> implicit_ranges;  // [base, end)
  std::uint32_t lds_size = 0;
  // Progress tracking for no-progress detection.
  std::atomic<std::uint64_t> progress_events{0};
  // Set while the resident waves have run no_progress_instructions without progress: the waves
  // then check at block starts whether their state repeats (Wave::cycle_*).
  std::atomic<bool> watch_cycles{false};
  std::uint32_t vgprs_granted = 0;  // VGPRs per wave the kernel descriptor grants (hashed)
  std::atomic<bool> abort{false};
};

// Called by the execution loop; defined in the .cpp files.
void fault(Wave& wave, ErrorKind kind, std::uint64_t address, std::string message);

}  // namespace wavekit::emu::detail
