// One dispatch: the launch state each wave starts with (AMDGPUUsage "Initial Kernel Execution
// State"), the workgroup scheduler over a host thread pool with a resident-wave limit, and
// no-progress detection.
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <sstream>
#include <thread>

#include "code_cache.h"
#include "internal.h"
#include "memory.h"
#include "wavekit/support/text.h"

namespace wavekit::emu {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none:
      return "none";
    case ErrorKind::invalid_dispatch:
      return "invalid_dispatch";
    case ErrorKind::memory_fault:
      return "memory_fault";
    case ErrorKind::illegal_instruction:
      return "illegal_instruction";
    case ErrorKind::unimplemented_instruction:
      return "unimplemented_instruction";
    case ErrorKind::trap:
      return "trap";
    case ErrorKind::no_progress:
      return "no_progress";
    case ErrorKind::budget_exceeded:
      return "budget_exceeded";
  }
  return "?";
}

std::string_view memory_access_kind_name(MemoryAccessKind kind) {
  switch (kind) {
    case MemoryAccessKind::scalar:
      return "scalar";
    case MemoryAccessKind::global:
      return "global";
    case MemoryAccessKind::flat:
      return "flat";
    case MemoryAccessKind::scratch:
      return "scratch";
    case MemoryAccessKind::lds:
      return "lds";
    case MemoryAccessKind::buffer:
      return "buffer";
  }
  return "?";
}

namespace detail {

void fault(Wave& wave, ErrorKind kind, std::uint64_t address, std::string message) {
  if (wave.error != ErrorKind::none) return;
  wave.error = kind;
  wave.error_address = address;
  wave.error_message = std::move(message);
  wave.state = WaveState::faulted;
}

}  // namespace detail

namespace {

using namespace detail;

// The fields of the 64-byte kernel descriptor (llvm/Support/AMDHSAKernelDescriptor.h).
struct KernelDescriptor {
  std::uint32_t group_segment_fixed_size, private_segment_fixed_size, kernarg_size;
  std::int64_t entry_offset;
  std::uint32_t rsrc3, rsrc1, rsrc2;
  std::uint16_t properties;
};

KernelDescriptor read_descriptor(const void* address) {
  const std::uint8_t* bytes = static_cast<const std::uint8_t*>(address);
  KernelDescriptor kd;
  std::memcpy(&kd.group_segment_fixed_size, bytes + 0, 4);
  std::memcpy(&kd.private_segment_fixed_size, bytes + 4, 4);
  std::memcpy(&kd.kernarg_size, bytes + 8, 4);
  std::memcpy(&kd.entry_offset, bytes + 16, 8);
  std::memcpy(&kd.rsrc3, bytes + 44, 4);
  std::memcpy(&kd.rsrc1, bytes + 48, 4);
  std::memcpy(&kd.rsrc2, bytes + 52, 4);
  std::memcpy(&kd.properties, bytes + 56, 2);
  return kd;
}

// hsa_kernel_dispatch_packet_t, for dispatches that come without one (tests, the CLI).
struct DispatchPacket {
  std::uint16_t header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
  std::uint32_t grid_size_x, grid_size_y, grid_size_z, private_segment_size, group_segment_size;
  std::uint64_t kernel_object, kernarg_address, reserved2, completion_signal;
};
static_assert(sizeof(DispatchPacket) == 64);

constexpr unsigned kDefaultResidentWaves = 1024;
constexpr std::uint32_t kDynamicStackBytes = 4096;
// The most private memory a gfx9 wave can have: COMPUTE_TMPRING_SIZE.WAVESIZE is a 13-bit
// count of 1 KiB units (8,191 KiB per wave, 131,056 bytes per work-item of a wave64).
constexpr std::uint64_t kMaxScratchPerWave = std::uint64_t{8191} * 1024;

// The private segments of the resident waves. Only address space is reserved up front: pages
// are backed when a wave first touches them, so a kernel that declares a large private segment
// costs the memory it uses, not the memory it declares.
class ScratchMemory {
 public:
  ScratchMemory() = default;
  ScratchMemory(const ScratchMemory&) = delete;
  ScratchMemory& operator=(const ScratchMemory&) = delete;
  ~ScratchMemory() {
    if (base_) ::munmap(base_, size_);
  }
  bool reserve(std::uint64_t bytes) {
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return false;
    base_ = base;
    size_ = bytes;
    return true;
  }
  std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(base_); }

 private:
  void* base_ = nullptr;
  std::uint64_t size_ = 0;
};

class Dispatcher {
 public:
  Dispatcher(const DispatchParams& params, MemoryMap& memory, CodeCache& code)
      : params_(params), code_(code) {
    ctx_.processor = params.processor;
    ctx_.memory = &memory;
    ctx_.code = &code.impl();
    ctx_.options = params.options;
  }

  DispatchResult run();

 private:
  bool validate();
  std::unique_ptr<Workgroup> make_workgroup(std::uint32_t flat_id);
  void init_wave(Wave& wave, Workgroup& group, std::uint32_t wave_index,
                 const std::uint32_t local_size[3]);
  std::unique_ptr<Wave> take_wave();
  void retire_workgroup(std::unique_ptr<Workgroup> group);
  void worker();
  // Runs the waves of `group` round robin until each had its quantum or is blocked; returns the
  // number of instructions executed.
  std::uint64_t run_round(Workgroup& group);
  void run_wave(Wave& wave, std::uint64_t budget);
  // DispatchOptions::inject at the instance it names: `before` the instruction runs (the
  // read mode, which returns the register to flip back once it ran) or after it.
  std::uint32_t* inject(Wave& wave, bool before);
  void record_fault(Wave& wave);
  void check_progress(std::uint64_t executed);
  // The state-repeat check of no-progress detection, at a block start (DispatchContext::
  // watch_cycles): marks the wave stuck when it is back at the block start it was sampled at,
  // in the same state, with no progress anywhere in between.
  void sample_cycle(Wave& wave, std::uint64_t pc);
  // Whether every wave of every resident workgroup ended, waits at a barrier or repeats its
  // state (Wave::stuck_epoch) since progress_events was `events`; called with mutex_ held.
  bool every_wave_stuck(std::uint64_t events) const;
  // Stops the dispatch with `kind` (no_progress, budget_exceeded); called with mutex_ held.
  void stop(ErrorKind kind);
  // Fills the report of a stopped dispatch from the resident workgroups, once the workers
  // stopped: `cause` opens the message, every wave that had not ended is listed.
  void report_resident_waves(const std::string& cause);

  const DispatchParams& params_;
  CodeCache& code_;
  DispatchContext ctx_;
  DispatchResult result_;
  KernelDescriptor kd_{};
  std::uint64_t entry_ = 0;
  std::uint64_t injection_host_pc_ = 0;  // DispatchOptions::inject's instruction; 0: none
  std::uint32_t groups_[3] = {1, 1, 1};
  std::uint32_t total_groups_ = 0;
  std::uint32_t waves_per_group_ = 0;
  unsigned max_resident_ = 0;
  DispatchPacket packet_{};
  ScratchMemory scratch_;  // private segment backing, one slot per resident wave
  std::uint64_t scratch_per_wave_ = 0;

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Workgroup>> run_queue_;
  std::uint32_t next_group_ = 0;
  unsigned resident_waves_ = 0;
  unsigned running_ = 0;  // workgroups taken off the queue by workers
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::unique_ptr<Wave>> wave_pool_;
  std::vector<std::unique_ptr<std::uint32_t[]>> vgpr_pool_;
  std::vector<WaveRecord> records_;
  std::vector<Workgroup*> resident_;  // the workgroups admitted and not retired
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>
      instruction_totals_;  // host PC -> (issues, lanes), with record_instruction_counts
  bool failed_ = false;

  // No-progress detection.
  std::atomic<std::uint64_t> since_progress_{0};
  std::uint64_t stalled_instructions_ = 0;  // since_progress_ when no progress was declared
  bool stalled_in_cycles_ = false;          // declared because every wave repeated its state
  std::uint64_t last_progress_events_ = 0;
  std::chrono::steady_clock::time_point last_progress_time_ = std::chrono::steady_clock::now();
  // The dispatch's budget (DispatchOptions::max_instructions, max_seconds).
  std::uint64_t executed_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

bool Dispatcher::validate() {
  auto invalid = [&](const std::string& message) {
    result_.error = ErrorKind::invalid_dispatch;
    result_.message = "invalid dispatch: " + message;
    return false;
  };
  if (!params_.kernel_descriptor) return invalid("no kernel descriptor");
  for (int d = 0; d < 3; ++d) {
    if (params_.workgroup[d] == 0 || params_.grid[d] == 0)
      return invalid("grid and workgroup sizes must be at least 1 in every dimension");
  }
  std::uint64_t local =
      std::uint64_t(params_.workgroup[0]) * params_.workgroup[1] * params_.workgroup[2];
  if (local > 1024)
    return invalid("workgroup of " + std::to_string(local) + " work-items exceeds 1024");
  kd_ = read_descriptor(params_.kernel_descriptor);
  if (kd_.properties & (1u << 10)) return invalid("the kernel is wave32; the emulator runs wave64");
  entry_ =
      reinterpret_cast<std::uint64_t>(params_.kernel_descriptor) + std::uint64_t(kd_.entry_offset);
  if (!code_.original_address(entry_))
    return invalid("kernel entry " + hex(entry_) + " is not in a registered code object");
  std::uint64_t total = 1;
  for (int d = 0; d < 3; ++d) {
    // In 64 bits: a grid near 2^32 work-items must not wrap to no workgroups.
    groups_[d] = std::uint32_t((std::uint64_t(params_.grid[d]) + params_.workgroup[d] - 1) /
                               params_.workgroup[d]);
    total *= groups_[d];
  }
  if (total > 0xffffffffull) return invalid("more than 2^32 workgroups");
  total_groups_ = std::uint32_t(total);
  waves_per_group_ = std::uint32_t((local + 63) / 64);
  max_resident_ = params_.options.max_resident_waves ? params_.options.max_resident_waves
                                                     : kDefaultResidentWaves;
  if (max_resident_ < waves_per_group_)
    return invalid("max_resident_waves " + std::to_string(max_resident_) + " is below the " +
                   std::to_string(waves_per_group_) + " waves of one workgroup");
  ctx_.lds_size = std::max(params_.group_segment_size, kd_.group_segment_fixed_size);
  if (ctx_.lds_size > 65536)
    return invalid("LDS of " + std::to_string(ctx_.lds_size) + " bytes exceeds 64 KiB");
  return true;
}

std::unique_ptr<Workgroup> Dispatcher::make_workgroup(std::uint32_t flat_id) {
  auto group = std::make_unique<Workgroup>();
  group->flat_id = flat_id;
  group->id[0] = flat_id % groups_[0];
  group->id[1] = (flat_id / groups_[0]) % groups_[1];
  group->id[2] = flat_id / (groups_[0] * groups_[1]);
  group->lds.assign(ctx_.lds_size, 0);
  std::uint32_t local_size[3];
  for (int d = 0; d < 3; ++d) {
    // Partial workgroups at the grid's edge have the remaining size (AQL semantics).
    std::uint32_t start = group->id[d] * params_.workgroup[d];
    local_size[d] = std::min(params_.workgroup[d], params_.grid[d] - start);
  }
  std::uint32_t items = local_size[0] * local_size[1] * local_size[2];
  std::uint32_t waves = (items + 63) / 64;
  for (std::uint32_t w = 0; w < waves; ++w) {
    std::unique_ptr<Wave> wave = take_wave();
    init_wave(*wave, *group, w, local_size);
    group->waves.push_back(std::move(wave));
  }
  return group;
}

std::unique_ptr<Wave> Dispatcher::take_wave() {
  // Called with mutex_ held.
  std::unique_ptr<Wave> wave;
  if (!wave_pool_.empty()) {
    wave = std::move(wave_pool_.back());
    wave_pool_.pop_back();
  } else {
    wave = std::make_unique<Wave>();
    vgpr_pool_.push_back(std::make_unique<std::uint32_t[]>(std::size_t(kVectorRegisters) * 64));
    wave->v = vgpr_pool_.back().get();
    wave->vm.entries.resize(64);
    wave->lgkm.entries.resize(16);
  }
  std::uint32_t* v = wave->v;
  std::vector<Pending> vm = std::move(wave->vm.entries), lgkm = std::move(wave->lgkm.entries);
  *wave = Wave{};
  wave->v = v;
  wave->vm.entries = std::move(vm);
  wave->lgkm.entries = std::move(lgkm);
  wave->private_slot = free_slots_.back();
  free_slots_.pop_back();
  return wave;
}

void Dispatcher::init_wave(Wave& wave, Workgroup& group, std::uint32_t wave_index,
                           const std::uint32_t local_size[3]) {
  wave.ctx = &ctx_;
  wave.group = &group;
  wave.wave_in_workgroup = wave_index;
  wave.linear_id = std::uint64_t(group.flat_id) * waves_per_group_ + wave_index;
  wave.pc = entry_;
  wave.injection_executions = 0;
  wave.scratch_size = scratch_per_wave_;
  wave.scratch_base =
      scratch_per_wave_ ? scratch_.address() + wave.private_slot * scratch_per_wave_ : 0;
  std::uint64_t wave_offset = std::uint64_t(wave.private_slot) * scratch_per_wave_;
  std::uint64_t scratch_base = scratch_.address();
  // AGPRs: gfx908 has a separate file; gfx90a/gfx942 place them at ACCUM_OFFSET in the unified
  // file (compute_pgm_rsrc3 bits 5:0, in units of 4 registers).
  wave.agpr_base = params_.processor == Processor::gfx908 ? kAgprBase : ((kd_.rsrc3 & 63) + 1) * 4;
  // The hardware leaves VGPRs undefined at launch; the emulator zeroes the ones the descriptor
  // grants (DispatchContext::vgprs_granted) so that runs are reproducible.
  const unsigned granted = ctx_.vgprs_granted;
  std::memset(wave.v, 0, std::size_t(granted) * 64 * sizeof(std::uint32_t));
  if (params_.processor == Processor::gfx908)
    std::memset(
        wave.vreg(kAgprBase), 0,
        std::size_t(std::min(granted, kVectorRegisters - kAgprBase)) * 64 * sizeof(std::uint32_t));

  // User SGPRs, in order, each present when the kernel descriptor enables it.
  unsigned s = 0;
  auto put64 = [&](std::uint64_t value) {
    wave.s[s++] = std::uint32_t(value);
    wave.s[s++] = std::uint32_t(value >> 32);
  };
  const std::uint16_t p = kd_.properties;
  if (p &
      (1u << 0)) {  // private segment buffer V#: swizzled, 64-lane index stride, 4-byte elements
    put64(scratch_base | (1ull << 63));
    wave.s[s++] = 0xffffffffu;
    wave.s[s++] = 0x00ea4facu;
  }
  if (p & (1u << 1))
    put64(reinterpret_cast<std::uint64_t>(params_.dispatch_packet ? params_.dispatch_packet
                                                                  : &packet_));
  if (p & (1u << 2)) put64(reinterpret_cast<std::uint64_t>(params_.queue));
  if (p & (1u << 3)) put64(reinterpret_cast<std::uint64_t>(params_.kernarg));
  if (p & (1u << 4)) put64(params_.dispatch_id);
  if ((p & (1u << 5)) && params_.processor != Processor::gfx942) put64(scratch_base);
  if (p & (1u << 6)) wave.s[s++] = params_.private_segment_size;
  // System SGPRs follow the USER_SGPR_COUNT the descriptor declares.
  s = (kd_.rsrc2 >> 1) & 31;
  const std::uint32_t r2 = kd_.rsrc2;
  if (r2 & (1u << 7)) wave.s[s++] = group.id[0];
  if (r2 & (1u << 8)) wave.s[s++] = group.id[1];
  if (r2 & (1u << 9)) wave.s[s++] = group.id[2];
  if (r2 & (1u << 10)) {  // workgroup info: last wave index etc. are unused by compilers
    wave.s[s++] = 0;
  }
  if (r2 & (1u << 0)) wave.s[s++] = std::uint32_t(wave_offset);
  if (params_.processor == Processor::gfx942)
    wave.set_sreg64(kFlatScratchLo, scratch_base + wave_offset);

  // EXEC and the work-item id VGPRs.
  std::uint64_t exec = 0;
  unsigned vgpr_ids = (r2 >> 11) & 3;
  bool packed = params_.processor != Processor::gfx908;
  std::uint32_t* v0 = wave.vreg(0);
  std::uint32_t* v1 = wave.vreg(1);
  std::uint32_t* v2 = wave.vreg(2);
  for (unsigned lane = 0; lane < 64; ++lane) {
    std::uint32_t flat = wave_index * 64 + lane;
    if (flat >= local_size[0] * local_size[1] * local_size[2]) break;
    exec |= 1ull << lane;
    std::uint32_t x = flat % local_size[0];
    std::uint32_t y = (flat / local_size[0]) % local_size[1];
    std::uint32_t z = flat / (local_size[0] * local_size[1]);
    if (packed) {
      v0[lane] = x | (vgpr_ids >= 1 ? y << 10 : 0) | (vgpr_ids >= 2 ? z << 20 : 0);
    } else {
      v0[lane] = x;
      if (vgpr_ids >= 1) v1[lane] = y;
      if (vgpr_ids >= 2) v2[lane] = z;
    }
  }
  wave.set_exec(exec);
  if (params_.options.record_block_counts) wave.block_counts.assign(64, 0);
}

void Dispatcher::record_fault(Wave& wave) {
  // Called with mutex_ held.
  if (failed_) return;
  failed_ = true;
  ctx_.abort.store(true);
  result_.error = wave.error;
  WaveLocation where;
  where.linear_wave_id = wave.linear_id;
  std::copy(wave.group->id, wave.group->id + 3, where.workgroup);
  where.wave_in_workgroup = wave.wave_in_workgroup;
  where.host_pc = wave.error_pc;
  where.pc = code_.original_address(wave.error_pc).value_or(wave.error_pc);
  where.instruction = code_.instruction_text(wave.error_pc);
  where.address = wave.error_address;
  std::ostringstream message;
  message << error_kind_name(wave.error) << " in wave " << wave.linear_id << " (workgroup "
          << where.workgroup[0] << "," << where.workgroup[1] << "," << where.workgroup[2]
          << ", wave " << where.wave_in_workgroup << ") at pc " << hex(where.pc);
  if (!where.instruction.empty()) message << " '" << where.instruction << "'";
  message << ": " << wave.error_message;
  result_.message = message.str();
  result_.faults.push_back(std::move(where));
}

void Dispatcher::run_wave(Wave& wave, std::uint64_t budget) {
  CodeCache::Impl& code = *ctx_.code;
  CodeObject* object = nullptr;
  const bool count_blocks = params_.options.record_block_counts;
  const bool sequence = params_.options.record_block_sequence;
  const bool count_instructions = params_.options.record_instruction_counts;
  const bool watch_cycles = ctx_.watch_cycles.load(std::memory_order_relaxed);
  wave.yield = false;
  while (budget--) {
    std::uint64_t pc = wave.pc;
    const Inst* inst = nullptr;
    if (object && pc - object->host_base < object->size) {
      inst = object->slots[(pc - object->host_base) >> 2].load(std::memory_order_acquire);
    }
    if (!inst) {
      ErrorKind kind = ErrorKind::none;
      std::string message;
      inst = code.fetch_slow(pc, kind, message);
      if (!inst) {
        wave.error_pc = pc;
        fault(wave, kind, pc, message);
        return;
      }
      std::lock_guard lock(code.mutex);
      object = code.object_at(pc);
    }
    if (inst->flags & kFlagBlockStart) {
      if (count_blocks) {
        if (inst->block_id >= wave.block_counts.size())
          wave.block_counts.resize(inst->block_id + 64, 0);
        ++wave.block_counts[inst->block_id];
      }
      if (sequence) wave.block_sequence.push_back(inst->block_id);
      if (watch_cycles) sample_cycle(wave, pc);
    }
    if (count_instructions) {
      auto& count = wave.instruction_counts[inst];
      ++count.first;
      count.second += std::uint64_t(std::popcount(wave.exec()));
    }
    wave.pc = inst->next_pc;
    std::uint32_t* restore = pc == injection_host_pc_ ? inject(wave, true) : nullptr;
    inst->handler(wave, *inst);
    ++wave.instructions;
    if (restore) *restore ^= 1u << params_.options.inject->bit;
    if (pc == injection_host_pc_ && wave.state != WaveState::faulted) inject(wave, false);
    if (wave.state != WaveState::ready || wave.yield) {
      if (wave.state == WaveState::faulted) wave.error_pc = pc;
      return;
    }
  }
}

std::uint32_t* Dispatcher::inject(Wave& wave, bool before) {
  const FaultInjection& fault = *params_.options.inject;
  if (before != fault.read || wave.linear_id != fault.wave ||
      wave.injection_executions++ != fault.execution)
    return nullptr;
  complete_until(wave, wave.vm, 0);
  complete_until(wave, wave.lgkm, 0);
  InjectedFault& done = result_.injected;  // one wave reaches it: no other writes it
  done.reached = true;
  std::uint32_t* value = nullptr;
  if (fault.vgpr) {
    const std::uint64_t exec = wave.exec();
    const unsigned active = unsigned(std::popcount(exec));
    if (!active) return nullptr;
    std::uint64_t lanes = exec;
    for (std::uint32_t skip = fault.lane_pick % active; skip; --skip) lanes &= lanes - 1;
    done.lane = std::uint32_t(std::countr_zero(lanes));
    value = &wave.vreg(fault.reg)[done.lane];
  } else {
    value = &wave.s[fault.reg];
  }
  done.before = *value;
  *value ^= 1u << fault.bit;
  done.after = *value;
  done.flipped = true;
  return value;
}

std::uint64_t Dispatcher::run_round(Workgroup& group) {
  std::uint64_t executed = 0;
  for (auto& wave : group.waves) {
    if (wave->state == WaveState::at_barrier)  // stuck until the barrier releases (progress)
      std::atomic_ref(wave->stuck_epoch)
          .store(ctx_.progress_events.load(std::memory_order_relaxed) + 1,
                 std::memory_order_relaxed);
    if (wave->state != WaveState::ready) continue;
    std::uint64_t before = wave->instructions;
    run_wave(*wave, params_.options.interleave_quantum);
    executed += wave->instructions - before;
    if (wave->state == WaveState::faulted) return executed;
    if (wave->state == WaveState::ended) {
      ++group.ended;
      std::atomic_ref(wave->stuck_epoch).store(kWaveEnded, std::memory_order_relaxed);
      ctx_.progress_events.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Barrier: released when every wave that has not ended is waiting at it.
  std::uint32_t waiting = 0;
  for (auto& wave : group.waves) waiting += wave->state == WaveState::at_barrier;
  if (waiting && waiting + group.ended == group.waves.size()) {
    for (auto& wave : group.waves)
      if (wave->state == WaveState::at_barrier) wave->state = WaveState::ready;
    ctx_.progress_events.fetch_add(1, std::memory_order_relaxed);
  }
  return executed;
}

void Dispatcher::retire_workgroup(std::unique_ptr<Workgroup> group) {
  // Called with mutex_ held.
  for (auto& wave : group->waves) {
    WaveRecord record;
    record.linear_wave_id = wave->linear_id;
    std::copy(group->id, group->id + 3, record.workgroup);
    record.wave_in_workgroup = wave->wave_in_workgroup;
    record.instructions = wave->instructions;
    for (std::size_t id = 0; id < wave->block_counts.size(); ++id) {
      if (wave->block_counts[id])
        record.block_counts.emplace_back(ctx_.code->block_vaddr(std::uint32_t(id)),
                                         wave->block_counts[id]);
    }
    std::sort(record.block_counts.begin(), record.block_counts.end());
    for (std::uint64_t id : wave->block_sequence)
      record.block_sequence.push_back(ctx_.code->block_vaddr(std::uint32_t(id)));
    if (!wave->memory_accesses.empty()) {
      std::lock_guard code_lock(ctx_.code->mutex);
      for (MemoryAccessRecord& access : wave->memory_accesses)
        if (const detail::CodeObject* object = ctx_.code->object_at(access.pc)) {
          access.pc = access.pc - object->host_base + object->vaddr_base;
          access.object = object->host_base;
        }
      record.memory_accesses = std::move(wave->memory_accesses);
    }
    for (const auto& [inst, count] : wave->instruction_counts) {
      auto& total = instruction_totals_[inst->host_pc];
      total.first += count.first;
      total.second += count.second;
    }
    result_.total_instructions += wave->instructions;
    records_.push_back(std::move(record));
    free_slots_.push_back(wave->private_slot);
    wave_pool_.push_back(std::move(wave));
  }
  resident_waves_ -= std::uint32_t(group->waves.size());
  resident_.erase(std::find(resident_.begin(), resident_.end(), group.get()));
  // Admit further workgroups while their waves fit under the residency limit.
  while (next_group_ < total_groups_ && resident_waves_ + waves_per_group_ <= max_resident_) {
    run_queue_.push_back(make_workgroup(next_group_++));
    resident_.push_back(run_queue_.back().get());
    resident_waves_ += std::uint32_t(run_queue_.back()->waves.size());
    ctx_.progress_events.fetch_add(1, std::memory_order_relaxed);
  }
}

void Dispatcher::stop(ErrorKind kind) {
  failed_ = true;
  ctx_.abort.store(true);
  result_.error = kind;
  stalled_instructions_ = since_progress_;
  ready_.notify_all();
}

void Dispatcher::check_progress(std::uint64_t executed) {
  std::uint64_t events = ctx_.progress_events.load(std::memory_order_relaxed);
  auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  executed_ += executed;
  const DispatchOptions& options = params_.options;
  if (!failed_ &&
      ((options.max_instructions && executed_ >= options.max_instructions) ||
       (options.max_seconds > 0 &&
        std::chrono::duration<double>(now - started_).count() >= options.max_seconds))) {
    stop(ErrorKind::budget_exceeded);
    return;
  }
  if (events != last_progress_events_) {
    last_progress_events_ = events;
    last_progress_time_ = now;
    since_progress_ = 0;
    if (ctx_.watch_cycles.load(std::memory_order_relaxed))
      ctx_.watch_cycles.store(false, std::memory_order_relaxed);
    return;
  }
  since_progress_ += executed;
  double seconds = std::chrono::duration<double>(now - last_progress_time_).count();
  if (since_progress_ < options.no_progress_instructions || seconds < options.no_progress_seconds ||
      failed_)
    return;
  bool cycles = false;
  if (const std::uint64_t per_wave = options.no_progress_work_per_wave) {
    // Legitimate long loops change the waves' state; a stuck wave's state repeats. The waves
    // check that from now on; stop once every one repeats (or waits at a barrier), or once the
    // work limit for loops that never repeat (a spin counting its tries) is reached too.
    if (!ctx_.watch_cycles.load(std::memory_order_relaxed)) {
      ctx_.watch_cycles.store(true, std::memory_order_relaxed);
      return;
    }
    cycles = every_wave_stuck(events);
    const std::uint64_t limit = per_wave > ~0ull / std::max(resident_waves_, 1u)
                                    ? ~0ull
                                    : per_wave * std::max(resident_waves_, 1u);
    if (!cycles && since_progress_ < limit) return;
  }
  if (options.outside_progress && options.outside_progress()) {
    last_progress_time_ = now;
    since_progress_ = 0;
    return;
  }
  stalled_in_cycles_ = cycles;
  stop(ErrorKind::no_progress);
}

bool Dispatcher::every_wave_stuck(std::uint64_t events) const {
  for (const Workgroup* group : resident_)
    for (const auto& wave : group->waves) {
      const std::uint64_t mark = std::atomic_ref(wave->stuck_epoch).load(std::memory_order_relaxed);
      if (mark != kWaveEnded && mark != events + 1) return false;
    }
  return true;
}

// A hash of what decides a wave's future at a given pc when memory does not change: its SGPRs
// and SCC, the VGPRs (and AGPRs) its descriptor grants, its hardware registers, the results
// still in flight and its workgroup's LDS.
std::uint64_t state_hash(const Wave& wave, const DispatchContext& ctx) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (; bytes >= 8; bytes -= 8, p += 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      h = (h ^ word) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    for (; bytes; --bytes, ++p) h = (h ^ *p) * 0x100000001b3ull;
  };
  mix(wave.s, sizeof wave.s);
  const std::uint64_t flags = std::uint64_t(wave.scc) | std::uint64_t(wave.gpr_idx_on) << 1 |
                              std::uint64_t(wave.gpr_idx_mode) << 2;
  mix(&flags, sizeof flags);
  mix(wave.hwreg, sizeof wave.hwreg);
  mix(wave.v, std::size_t(ctx.vgprs_granted) * 64 * sizeof(std::uint32_t));
  if (ctx.processor == Processor::gfx908)
    mix(wave.v + std::size_t(kAgprBase) * 64,
        std::size_t(std::min(ctx.vgprs_granted, kVectorRegisters - kAgprBase)) * 64 *
            sizeof(std::uint32_t));
  for (const PendingQueue* queue : {&wave.vm, &wave.lgkm}) {
    mix(&queue->count, sizeof queue->count);
    for (std::size_t i = 0; i < queue->count; ++i) {
      const Pending& entry = queue->entries[(queue->head + i) % queue->entries.size()];
      const std::uint64_t head[3] = {entry.dst, entry.width, entry.lanes};
      mix(head, sizeof head);
      mix(entry.data, std::size_t(entry.width) * (entry.vector ? 64 : 1) * sizeof(std::uint32_t));
    }
  }
  if (wave.group) mix(wave.group->lds.data(), wave.group->lds.size());
  return h;
}

// Block starts between two state samples at the same block start (a spin loop comes back
// many times; sampling each time would cost more than the loop), and without coming back to it
// before the wave takes a new one (it was not a loop, or an outer one).
constexpr std::uint64_t kCycleSampleGap = 4096, kCycleAnchorLife = 1u << 16;

void Dispatcher::sample_cycle(Wave& wave, std::uint64_t pc) {
  const std::uint64_t events = ctx_.progress_events.load(std::memory_order_relaxed);
  const std::uint64_t since = wave.instructions - wave.cycle_sampled;
  if (wave.cycle_pc == pc && wave.cycle_events == events) {
    if (since < kCycleSampleGap) return;
    const std::uint64_t hash = state_hash(wave, ctx_);
    wave.cycle_sampled = wave.instructions;
    if (hash == wave.cycle_hash)
      std::atomic_ref(wave.stuck_epoch).store(events + 1, std::memory_order_relaxed);
    else
      wave.cycle_hash = hash;
    return;
  }
  if (wave.cycle_pc && wave.cycle_events == events && since < kCycleAnchorLife) return;
  wave.cycle_pc = pc;
  wave.cycle_events = events;
  wave.cycle_sampled = wave.instructions;
  wave.cycle_hash = state_hash(wave, ctx_);
}

void Dispatcher::report_resident_waves(const std::string& cause) {
  // Called after the workers stopped: every resident workgroup is back in the run queue, and
  // its waves stand where they stopped.
  std::vector<const Workgroup*> resident;
  for (const auto& group : run_queue_) resident.push_back(group.get());
  std::sort(resident.begin(), resident.end(),
            [](const Workgroup* a, const Workgroup* b) { return a->flat_id < b->flat_id; });
  result_.workgroups_not_started = total_groups_ - next_group_;
  std::ostringstream message;
  message << cause << "; " << resident.size() << " workgroup(s) resident, "
          << result_.workgroups_not_started
          << " not started (waiting for residency); waiting waves:";
  for (const Workgroup* group : resident) {
    for (const auto& wave : group->waves) {
      if (wave->state == WaveState::ended) continue;
      WaveLocation where;
      where.linear_wave_id = wave->linear_id;
      std::copy(group->id, group->id + 3, where.workgroup);
      where.wave_in_workgroup = wave->wave_in_workgroup;
      // A wave at a barrier has its pc past the s_barrier (4 bytes, SOPP); name the barrier.
      const bool at_barrier = wave->state == WaveState::at_barrier;
      where.host_pc = at_barrier ? wave->pc - 4 : wave->pc;
      where.pc = code_.original_address(where.host_pc).value_or(where.host_pc);
      where.instruction = code_.instruction_text(where.host_pc);
      // A stuck wave spins; one stopped by the budget was simply running.
      where.state = at_barrier                                ? "at s_barrier"
                    : result_.error == ErrorKind::no_progress ? "spinning"
                                                              : "running";
      message << " wave " << where.linear_wave_id << " (workgroup " << where.workgroup[0] << ","
              << where.workgroup[1] << "," << where.workgroup[2] << ") at " << hex(where.pc) << " "
              << where.state << ";";
      result_.faults.push_back(std::move(where));
    }
  }
  result_.message = message.str();
}

void Dispatcher::worker() {
  for (;;) {
    std::unique_ptr<Workgroup> group;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] {
        return !run_queue_.empty() || failed_ || (running_ == 0 && next_group_ >= total_groups_);
      });
      if (failed_ || run_queue_.empty()) {
        ready_.notify_all();
        return;
      }
      group = std::move(run_queue_.front());
      run_queue_.pop_front();
      ++running_;
    }
    std::uint64_t executed = run_round(*group);
    Wave* faulted = nullptr;
    for (auto& wave : group->waves)
      if (wave->state == WaveState::faulted) faulted = wave.get();
    {
      std::unique_lock lock(mutex_);
      --running_;
      if (faulted) {
        record_fault(*faulted);
        ready_.notify_all();
        return;
      }
      if (group->ended == group->waves.size()) {
        retire_workgroup(std::move(group));
      } else {
        run_queue_.push_back(std::move(group));
      }
      ready_.notify_all();
    }
    check_progress(executed);
    // A stopped dispatch leaves the waves where they are (the report lists them).
    if (ctx_.abort.load()) return;
  }
}

DispatchResult Dispatcher::run() {
  if (!validate()) return std::move(result_);
  result_.waves_per_workgroup = waves_per_group_;
  packet_.setup = 3;
  packet_.workgroup_size_x = std::uint16_t(params_.workgroup[0]);
  packet_.workgroup_size_y = std::uint16_t(params_.workgroup[1]);
  packet_.workgroup_size_z = std::uint16_t(params_.workgroup[2]);
  packet_.grid_size_x = params_.grid[0];
  packet_.grid_size_y = params_.grid[1];
  packet_.grid_size_z = params_.grid[2];
  packet_.private_segment_size = params_.private_segment_size;
  packet_.group_segment_size = params_.group_segment_size;
  packet_.kernel_object = reinterpret_cast<std::uint64_t>(params_.kernel_descriptor);
  packet_.kernarg_address = reinterpret_cast<std::uint64_t>(params_.kernarg);
  auto implicit = [&](const void* base, std::uint64_t size) {
    if (base && size) {
      std::uint64_t b = reinterpret_cast<std::uint64_t>(base);
      ctx_.implicit_ranges.emplace_back(b, b + size);
    }
  };
  implicit(params_.dispatch_packet ? params_.dispatch_packet : &packet_, 64);
  implicit(params_.kernarg, kd_.kernarg_size);
  implicit(params_.queue, 256);
  implicit(params_.kernel_descriptor, 64);

  std::uint32_t private_size =
      std::max(params_.private_segment_size, kd_.private_segment_fixed_size);
  // A kernel with a dynamic stack (recursion, calls of unknown depth) gets at least
  // kDynamicStackBytes per work-item, as a runtime sizes its scratch from a stack limit.
  if (kd_.properties & (1u << 11)) private_size = std::max(private_size, kDynamicStackBytes);
  scratch_per_wave_ = (std::uint64_t(private_size) + 15) / 16 * 16 * 64;
  if (scratch_per_wave_ > kMaxScratchPerWave) {
    result_.error = ErrorKind::invalid_dispatch;
    result_.message = "invalid dispatch: the kernel needs " + std::to_string(private_size) +
                      " bytes of private (scratch) memory per work-item; a gfx9 wave has at "
                      "most " +
                      std::to_string(kMaxScratchPerWave) + " bytes (" +
                      std::to_string(kMaxScratchPerWave / 64) + " per work-item)";
    return std::move(result_);
  }
  unsigned slots =
      std::min<std::uint64_t>(max_resident_, std::uint64_t(total_groups_) * waves_per_group_);
  if (scratch_per_wave_ && !scratch_.reserve(scratch_per_wave_ * slots)) {
    result_.error = ErrorKind::invalid_dispatch;
    result_.message = "invalid dispatch: cannot reserve " +
                      std::to_string(scratch_per_wave_ * slots) + " bytes of address space for " +
                      std::to_string(slots) + " resident waves' private segments";
    return std::move(result_);
  }
  for (unsigned slot = slots; slot-- > 0;) free_slots_.push_back(slot);

  code_.impl().prepare_entry(entry_);
  if (const auto& fault = params_.options.inject) {
    if (fault->bit > 31 || (fault->vgpr ? fault->reg > 255 : fault->reg > 101)) {
      result_.error = ErrorKind::invalid_dispatch;
      result_.message = "invalid dispatch: fault injection into " +
                        std::string(fault->vgpr ? "v" : "s") + std::to_string(fault->reg) +
                        " bit " + std::to_string(fault->bit) + " (v0-v255 or s0-s101, bit 0-31)";
      return std::move(result_);
    }
    // The instruction in the kernel's own code object, at its original address.
    std::lock_guard lock(ctx_.code->mutex);
    if (const detail::CodeObject* object = ctx_.code->object_at(entry_);
        object && fault->pc >= object->vaddr_base && fault->pc - object->vaddr_base < object->size)
      injection_host_pc_ = object->host_base + (fault->pc - object->vaddr_base);
  }
  // compute_pgm_rsrc1's granule: 8 registers on gfx90a/gfx942's unified file, 4 VGPRs plus as
  // many AGPRs on gfx908. Before any workgroup is made: their waves' registers are zeroed by it.
  ctx_.vgprs_granted =
      std::min(((kd_.rsrc1 & 63) + 1) * (params_.processor == Processor::gfx908 ? 4u : 8u),
               kVectorRegisters);
  {
    std::lock_guard lock(mutex_);
    while (next_group_ < total_groups_ && resident_waves_ + waves_per_group_ <= max_resident_) {
      run_queue_.push_back(make_workgroup(next_group_++));
      resident_.push_back(run_queue_.back().get());
      resident_waves_ += std::uint32_t(run_queue_.back()->waves.size());
    }
  }
  unsigned threads = params_.options.host_threads
                         ? params_.options.host_threads
                         : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, total_groups_);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back([this] { worker(); });
  worker();
  for (auto& thread : pool) thread.join();
  if (result_.error == ErrorKind::no_progress)
    report_resident_waves("no progress: the resident waves executed " +
                          std::to_string(stalled_instructions_) +
                          " instructions without storing, ending or passing a barrier" +
                          (stalled_in_cycles_ ? " (each one waiting at a barrier or back where "
                                                "it was in the same state: a spin)"
                                              : ""));
  if (result_.error == ErrorKind::budget_exceeded)
    report_resident_waves(
        "budget exceeded: the dispatch was stopped after " + std::to_string(executed_) +
        " wave-instructions and " +
        std::to_string(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()) +
        " s (limits: " +
        (params_.options.max_instructions ? std::to_string(params_.options.max_instructions)
                                          : std::string("no")) +
        " instructions, " +
        (params_.options.max_seconds > 0 ? std::to_string(params_.options.max_seconds) + " s"
                                         : std::string("no time limit")) +
        ")");

  std::sort(records_.begin(), records_.end(), [](const WaveRecord& a, const WaveRecord& b) {
    return a.linear_wave_id < b.linear_wave_id;
  });
  result_.total_waves = records_.size();
  result_.waves = std::move(records_);
  if (!instruction_totals_.empty()) {
    std::lock_guard code_lock(ctx_.code->mutex);
    for (const auto& [host_pc, total] : instruction_totals_) {
      InstructionCount count{0, host_pc, total.first, total.second};
      if (const detail::CodeObject* object = ctx_.code->object_at(host_pc)) {
        count.pc = host_pc - object->host_base + object->vaddr_base;
        count.object = object->host_base;
      }
      result_.instruction_counts.push_back(count);
    }
    std::sort(result_.instruction_counts.begin(), result_.instruction_counts.end(),
              [](const InstructionCount& a, const InstructionCount& b) {
                return a.object != b.object ? a.object < b.object : a.pc < b.pc;
              });
  }
  return std::move(result_);
}

}  // namespace

DispatchResult dispatch(const DispatchParams& params, MemoryMap& memory, CodeCache& code) {
  Dispatcher dispatcher(params, memory, code);
  return dispatcher.run();
}

}  // namespace wavekit::emu
