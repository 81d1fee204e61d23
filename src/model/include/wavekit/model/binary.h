// The binary front-end: an application model from an AMDGPU code object, by running the
// kernel on the emulator. The emulator reports, per instruction, how often it issued and how
// many lanes were active (emu::DispatchOptions::record_instruction_counts); each instruction's
// class, precision, memory space and width come from the isa decoder; so the counts are exact
// for the binary at the size it ran. A sector-granular L2 model over the emulator's address
// stream gives DRAM bytes. Counts at a few small sizes fitted as functions of a size parameter,
// and checked at a held-out size, extrapolate to sizes too large to emulate.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wavekit/emu/emu.h"
#include "wavekit/model/counts.h"
#include "wavekit/model/expression.h"

namespace wavekit::codeobj {
class CodeObject;
}

namespace wavekit::model {

struct Machine;

// How one AMDGPU instruction is counted (per active lane unless said otherwise).
struct InstructionClass {
  enum class Unit { valu, salu, smem, vmem, lds, branch, sync, matrix, other };
  Unit unit = Unit::other;
  // Count names this instruction adds to, with a weight per active lane (per issue for
  // wave-level counts). E.g. v_fma_f32: {"ops.fp32.fma", 1}, {"flops.fp32", 2}.
  std::vector<std::pair<std::string, double>> per_lane;
  std::vector<std::pair<std::string, double>> per_issue;
  // Memory: space ("global", "lds", "scalar", "private"), access and bytes per lane.
  std::string space;
  std::string access;  // "load", "store", "atomic"
  unsigned bytes_per_lane = 0;
};

// Classifies a mnemonic ("v_fma_f32", "v_pk_fma_f32", "global_load_dwordx4", "ds_read2_b32",
// "s_load_dwordx2"...; encoding suffixes such as _e32/_e64/_sdwa/_dpp are ignored).
// `memory_kind`/`memory_access` are the decoder's view ("global", "load"...; "" when none).
// `dst_registers` is the count of 32-bit registers the instruction writes (for MFMA shapes).
InstructionClass classify(const std::string& mnemonic, const std::string& memory_kind,
                          const std::string& memory_access, unsigned dst_registers);

// One size-parameterised launch of a kernel in a code object.
struct LaunchSpec {
  std::string code_object;  // path of an AMDGPU code object (.co / .hsaco)
  std::string kernel;       // the metadata name, or a demangled name / its prefix before '('
  // Geometry: blocks (workgroups) and threads per block, each component an expression of the
  // parameters (e.g. "n/256": rounded up). Exactly one of blocks / grid (work-items) is used.
  std::vector<std::string> blocks;
  std::vector<std::string> grid;
  std::vector<std::string> block{"256"};
  // Dynamic LDS per block (the launch's shared-memory bytes, HIP's `extern __shared__`), an
  // expression of the parameters (braces optional, as in the geometry); empty: none. Kernels that
  // size their LDS at launch read past a zero-sized segment without it, and occupancy depends on
  // it.
  std::string dynamic_lds;
  // Arguments, in the kernel's order. The forms of `wavekit launch --arg` (file:PATH,
  // zeros:BYTES, i32:V, u32:V, i64:V, u64:V, f32:V, f64:V) and generated buffers:
  // f32rand:COUNT[:LO:HI], f64rand:COUNT[:LO:HI], i32rand:COUNT:LO:HI, u32iota:COUNT,
  // f32fill:COUNT:V, f64fill:COUNT:V. Any "{EXPR}" is replaced by the expression's value.
  std::vector<std::string> arguments;
  Parameters parameters;
  unsigned host_threads = 0;  // 0: every core
  std::uint64_t seed = 1;     // for the *rand buffers
};

struct CacheModel {
  std::uint64_t l2_bytes = 5u << 20;
  unsigned line_bytes = 128;
  unsigned sector_bytes = 32;
  // What a read miss fetches from DRAM: the aligned group of sectors of this size (NVIDIA: 64 B,
  // two sectors; 0: the sector alone).
  unsigned dram_fetch_bytes = 0;
  unsigned associativity = 16;
  // Waves that run at once (their accesses are interleaved one by one, as on the GPU).
  unsigned concurrent_waves = 1024;
  // Per-unit L1 in front of the L2 (0: none): workgroups go to units round robin; loads
  // allocate, stores write through without allocating (NVIDIA's L1 policy), sector-granular.
  unsigned units = 0;
  std::uint64_t l1_bytes = 0;
  unsigned waves_per_workgroup = 1;  // set by count_launch from the launch
  static CacheModel of(const Machine& machine);
};

struct CountOptions {
  CacheModel cache;
  bool simulate_cache = true;
};

// "{4*n}" and friends in `text` replaced by their values at `parameters`.
std::string substitute(const std::string& text, const Parameters& parameters);

// Runs the launch on the emulator and counts. Throws wavekit::Error for what the user can fix
// (no such kernel, bad argument, emulator fault: the message is the emulator's report).
KernelModel count_launch(const LaunchSpec& spec, const CountOptions& options = {});

// What one dispatch left on the emulator that its counts are made of, however it was launched
// (count_launch's own launch, or an application's dispatch seen by the runtime's observer).
struct DispatchRecords {
  std::array<std::uint32_t, 3> grid{1, 1, 1};   // work-items
  std::array<std::uint32_t, 3> block{1, 1, 1};  // work-items per workgroup
  std::uint32_t dynamic_lds_bytes = 0;
  std::uint64_t object_base = 0;  // the `object` of the kernel's code object in the records
  std::vector<emu::InstructionCount> instruction_counts;
  std::vector<std::vector<emu::MemoryAccessRecord>> memory_records;  // per wave, with the cache
  std::uint64_t waves = 0, instructions = 0;
  std::uint32_t waves_per_workgroup = 0;
};

// The kernel model of a dispatch of `symbol` (a kernel of `object`) from its records; `origin`
// names the object in errors. The model's parameters are left empty.
KernelModel count_dispatch(const codeobj::CodeObject& object, const std::string& symbol,
                           const DispatchRecords& records, const CountOptions& options,
                           const std::string& origin);

// DRAM traffic of an address stream: per wave (linear id order) its memory records, with the
// instruction class of each record's pc. Global and flat (non-LDS) accesses only.
struct TrafficResult {
  double dram_read_bytes = 0, dram_write_bytes = 0;
  double footprint_read_bytes = 0, footprint_write_bytes = 0, footprint_bytes = 0;
  double sector_accesses = 0, sector_hits = 0;  // at the L2
  double l1_sector_accesses = 0, l1_sector_hits = 0;
};
struct AccessInfo {
  bool store = false;
  bool atomic = false;
  unsigned bytes_per_lane = 4;
};
TrafficResult simulate_traffic(
    const std::vector<std::vector<wavekit::emu::MemoryAccessRecord>>& waves,
    const std::function<std::optional<AccessInfo>(const wavekit::emu::MemoryAccessRecord&)>& info,
    const CacheModel& cache);

// Fitting: counts taken at several values of one parameter, each count fitted by the simplest
// polynomial (degree 0, 1, 2, 3 in turn) that reproduces every training point within
// `tolerance` (relative), and checked at a held-out run when given. The result carries the
// expressions (KernelModel::counts_expression), the geometry as expressions where it varies,
// and notes with the check's worst relative error per count.
struct FitOutcome {
  KernelModel model;
  double worst_check_error = 0;  // relative, over the counts above 1% of their kind's largest
  std::string worst_check_count;
};
FitOutcome fit_counts(const std::string& parameter, const std::vector<KernelModel>& runs,
                      const std::optional<KernelModel>& check, double tolerance = 1e-6);

// A polynomial through (x, y) points, as an expression of `parameter` (helper of fit_counts):
// the lowest degree up to max_degree (and the points' count - 1) within the tolerance.
std::optional<std::string> fit_polynomial(const std::string& parameter,
                                          const std::vector<double>& x,
                                          const std::vector<double>& y, double tolerance,
                                          std::size_t max_degree = 3);

// Builds a HIP source for gfx90a with clang-22 (device code only, -O2, wavekit's HIP shim
// headers), returning the code object's path under `output_directory`. Throws wavekit::Error
// quoting the compiler's diagnostics when it does not build.
std::string build_hip(const std::string& source, const std::string& output_directory,
                      const std::vector<std::string>& extra_flags = {},
                      const std::string& target = "gfx90a");

}  // namespace wavekit::model
