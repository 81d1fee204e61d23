#include "wavekit/model/predict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wavekit/support/error.h"

namespace wavekit::model {
namespace {

std::string ratio(double amount, const char* unit, double rate, const char* rate_unit) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "%.4g %s / %.4g %s", amount, unit, rate, rate_unit);
  return buffer;
}

}  // namespace

Prediction predict(const KernelModel& model, const Machine& machine,
                   const PredictOptions& options) {
  if (!model.counts_expression.empty())
    throw Error("kernel " + model.name + ": counts are expressions; evaluate them at sizes first");
  const KernelModel& k = model;
  Prediction p;
  p.kernel = k.name;
  p.machine = machine.name;
  auto achieved = [&](const std::string& what) {
    return options.peak ? machine.get("peak." + what) : machine.get("achieved." + what);
  };
  // The efficiency achieved FP32 has against its peak, applied to the rates with no achieved
  // figure.
  const double efficiency =
      options.peak ? 1.0 : machine.get("achieved.fp32_flops") / machine.get("peak.fp32_flops");
  p.fp32_flops = k.count("flops.fp32");
  p.fp64_flops = k.count("flops.fp64");
  p.fp16_flops = k.count("flops.fp16");
  p.matrix_flops = k.count("flops.matrix");
  // dram.write.bytes counts every dirty sector, also those still in the L2 when the kernel
  // ends; a profiler sees only the write-backs during the kernel. The L2 then holds the most
  // recent lines, dirty in the proportion of the written footprint: that much is not written yet.
  const double reads = k.count("dram.read.bytes"), writes = k.count("dram.write.bytes");
  const double written = k.count("footprint.write.bytes"), read = k.count("footprint.read.bytes");
  const double resident_dirty =
      writes > 0 && written + read > 0
          ? std::min(writes, machine.get("memory.l2_bytes") * written / (written + read))
          : 0.0;
  p.dram_bytes = reads + writes - resident_dirty;
  p.load_bytes = k.count("memory.global.load.bytes");
  p.store_bytes = k.count("memory.global.store.bytes");
  p.load_instructions = k.count("memory.global.load.instructions");
  p.store_instructions = k.count("memory.global.store.instructions");

  const double units = machine.compute_units();
  const double clock = machine.clock_hz();

  double compute = p.fp32_flops / achieved("fp32_flops") + p.fp64_flops / achieved("fp64_flops") +
                   p.fp16_flops / (machine.get("peak.fp16_flops") * efficiency) +
                   p.matrix_flops / (machine.get("peak.matrix_fp16_flops") * efficiency);
  char detail[320];
  std::snprintf(detail, sizeof detail, "%.4g fp32 + %.4g fp64 + %.4g fp16 + %.4g matrix FLOP",
                p.fp32_flops, p.fp64_flops, p.fp16_flops, p.matrix_flops);
  p.terms.push_back({"compute", compute, detail});

  // Issue: lane-operations at each class's rate.
  const double fp32_lanes = machine.get("compute.fp32_lanes_per_unit_per_clock");
  const double int_lanes = machine.get("compute.int32_lanes_per_unit_per_clock");
  const double fp64_lanes = machine.get("compute.fp64_lanes_per_unit_per_clock");
  const double sfu_lanes = machine.get("compute.transcendental_lanes_per_unit_per_clock");
  const double fp64_ops = k.count("ops.fp64.add") + k.count("ops.fp64.mul") +
                          k.count("ops.fp64.fma") + k.count("ops.fp64.other");
  const double sfu_ops = k.count("ops.transcendental");
  const double int_ops = k.count("ops.int");
  const double other_ops = std::max(0.0, k.count("ops.valu") - fp64_ops - sfu_ops - int_ops);
  double lane_cycles =
      other_ops / fp32_lanes + int_ops / int_lanes + fp64_ops / fp64_lanes + sfu_ops / sfu_lanes;
  double issue = lane_cycles / (units * clock * efficiency);
  std::snprintf(detail, sizeof detail,
                "%.4g fp32-class + %.4g int + %.4g fp64 + %.4g transcendental lane-ops", other_ops,
                int_ops, fp64_ops, sfu_ops);
  p.terms.push_back({"issue", issue, detail});

  p.terms.push_back({"dram", p.dram_bytes / achieved("dram_bandwidth"),
                     ratio(p.dram_bytes, "B", achieved("dram_bandwidth"), "B/s")});
  // What reaches the L2: the L1 model's misses and the stores where the binary path ran it,
  // else every global byte requested.
  double global_bytes = k.counts.count("l2.request.bytes")
                            ? k.count("l2.request.bytes")
                            : p.load_bytes + p.store_bytes + k.count("memory.global.atomic.bytes");
  // The measured L2 bandwidth where the machine file has one; else 80 % of the peak figure.
  double l2_bandwidth = options.peak || !machine.has("achieved.l2_bandwidth")
                            ? machine.get("peak.l2_bandwidth") * (options.peak ? 1.0 : 0.8)
                            : machine.get("achieved.l2_bandwidth");
  p.terms.push_back(
      {"l2", global_bytes / l2_bandwidth, ratio(global_bytes, "B", l2_bandwidth, "B/s")});
  double lds_bytes = k.count("memory.lds.load.bytes") + k.count("memory.lds.store.bytes") +
                     k.count("memory.lds.atomic.bytes");
  double lds_bandwidth = units * 128 * clock;
  p.terms.push_back(
      {"lds", lds_bytes / lds_bandwidth, ratio(lds_bytes, "B", lds_bandwidth, "B/s")});

  // Latency: rounds of resident blocks, each as long as one wave's serial path.
  const double threads_per_block =
      double(k.threads_per_block[0] * k.threads_per_block[1] * k.threads_per_block[2]);
  double per_unit = machine.get("occupancy.max_blocks_per_unit");
  per_unit = std::min(
      per_unit, std::floor(machine.get("occupancy.max_threads_per_unit") / threads_per_block));
  double lds = k.count("resources.lds_bytes_per_block");
  if (lds > 0)
    per_unit = std::min(per_unit, std::floor(machine.get("memory.lds_bytes_per_unit") / lds));
  per_unit = std::max(1.0, per_unit);
  p.resident_blocks_per_unit = per_unit;
  const double blocks = double(k.total_blocks());
  const double rounds = std::ceil(blocks / (per_unit * units));
  const double waves_per_block = std::ceil(threads_per_block / 64);  // emulated 64-lane waves
  const double waves = std::max(1.0, blocks * waves_per_block);
  const double wave_instructions = k.count("instructions.wave") / waves;
  const double wave_loads =
      (k.count("memory.global.load.instructions") + k.count("memory.global.atomic.instructions")) /
      waves;
  // Dependent memory phases of a wave: the binary path's count of them (the waits for loads
  // issued since the last such wait), or, in models from before that count, its waits on vector
  // memory; else its loads four at a time (independent loads overlap).
  const double counted_phases =
      k.counts.count("sync.memory_phases") ? k.count("sync.memory_phases") / waves
      : k.counts.count("sync.vmem_waits")  ? k.count("sync.vmem_waits") / waves
                                           : std::ceil(wave_loads / 4);
  const double phases = std::min(counted_phases, wave_loads);
  const double wave_phases = waves * phases;
  // A phase waits for its slowest load: for DRAM when any of its loads missed the L2. Where the
  // L2 model ran, a wave's phase has m DRAM fetches (its read misses over the machine's DRAM
  // granule); spread at random over the phases, a phase waits for DRAM with probability
  // 1 - e^-m. (The sectors' hit rate made a phase whose second load hits the line the first
  // one's miss is bringing in half a hit: gamma_correction.) Else the hit rates: an L1 hit is
  // charged the L2's latency, a bound, not a figure of its own.
  double dram_share;
  if (k.counts.count("dram.read.bytes") && k.counts.count("l2.hit_rate") && wave_phases > 0) {
    const double fetch = machine.has("memory.dram_fetch_bytes")
                             ? machine.get("memory.dram_fetch_bytes")
                             : machine.get("memory.l2_sector_bytes");
    dram_share = 1 - std::exp(-k.count("dram.read.bytes") / fetch / wave_phases);
  } else {
    const double l1_hit = k.count("l1.hit_rate");
    dram_share = 1 - (l1_hit + (1 - l1_hit) * k.count("l2.hit_rate"));
  }
  // The latencies: where the machine has them measured under load (memory.l2_phase_latency_ns,
  // memory.dram_phase_latency_ns: a dependent phase's time by the KB in flight per unit,
  // bench/model/h200_occupancy.cu), at the bytes a phase has in flight on a unit: a wave's
  // phase's L2 requests (its DRAM traffic) times the waves resident on a unit, at most the
  // blocks spread over the units; else the machine's fixed estimates of loaded latencies.
  double l2_ns = machine.get("memory.l2_latency_ns"),
         dram_ns = machine.get("memory.dram_latency_ns");
  char in_flight[96] = "";
  if (wave_phases > 0 && machine.has("memory.l2_phase_latency_ns") &&
      machine.has("memory.dram_phase_latency_ns")) {
    const double resident_waves = std::min(per_unit, blocks / units) * waves_per_block;
    const double l2_kb = global_bytes / wave_phases * resident_waves / 1024;
    const double dram_kb = p.dram_bytes / wave_phases * resident_waves / 1024;
    l2_ns = machine.get("memory.l2_phase_latency_ns", l2_kb);
    dram_ns = machine.get("memory.dram_phase_latency_ns", dram_kb);
    std::snprintf(in_flight, sizeof in_flight, " at %.3g / %.3g KB in flight per unit", l2_kb,
                  dram_kb);
  }
  const double latency_s = ((1 - dram_share) * l2_ns + dram_share * dram_ns) * 1e-9;
  double wave_time = wave_instructions * 4 / clock + phases * latency_s;
  double latency = rounds * wave_time;
  std::snprintf(detail, sizeof detail,
                "%.0f rounds of %.0f blocks x (%.4g instructions x 4 cycles + %.3g memory phases x "
                "%.0f ns: %.0f %% DRAM %.0f ns, L2 %.0f ns%s)",
                rounds, per_unit * units, wave_instructions, phases, latency_s * 1e9,
                dram_share * 100, dram_ns, l2_ns, in_flight);
  p.terms.push_back({"latency", latency, detail});
  // Block dispatch: the GPU starts blocks at a measured rate (launch.block_dispatch_ns per
  // block, bench/model/h200_occupancy.cu), which bounds kernels of many short blocks.
  if (machine.has("launch.block_dispatch_ns")) {
    const double per_block = machine.get("launch.block_dispatch_ns");
    std::snprintf(detail, sizeof detail, "%.0f blocks x %.3g ns", blocks, per_block);
    p.terms.push_back({"dispatch", blocks * per_block * 1e-9, detail});
  }

  const Term* top = &p.terms.front();
  for (const Term& term : p.terms)
    if (term.seconds > top->seconds) top = &term;
  p.bound = top->seconds > 0 ? top->name : "floor";
  double floor_s = machine.get("launch.kernel_floor_us") * 1e-6;
  p.terms.push_back({"floor", floor_s, "the machine's kernel floor (smallest kernel duration)"});
  p.seconds = top->seconds + floor_s;
  if (top->seconds < floor_s) p.bound = "floor";
  if (options.launch_overhead) {
    double overhead = machine.get("launch.overhead_us") * 1e-6;
    p.terms.push_back({"launch", overhead, "host-side launch overhead"});
    p.seconds += overhead;
  }
  return p;
}

nlohmann::json to_json(const Prediction& p) {
  nlohmann::json terms = nlohmann::json::object();
  for (const Term& term : p.terms)
    terms[term.name] = {{"seconds", term.seconds}, {"detail", term.detail}};
  return {{"kernel", p.kernel},
          {"machine", p.machine},
          {"seconds", p.seconds},
          {"bound", p.bound},
          {"fp32_flops", p.fp32_flops},
          {"fp64_flops", p.fp64_flops},
          {"fp16_flops", p.fp16_flops},
          {"matrix_flops", p.matrix_flops},
          {"dram_bytes", p.dram_bytes},
          {"global_load_bytes", p.load_bytes},
          {"global_store_bytes", p.store_bytes},
          {"global_load_instructions", p.load_instructions},
          {"global_store_instructions", p.store_instructions},
          {"resident_blocks_per_unit", p.resident_blocks_per_unit},
          {"terms", terms}};
}

}  // namespace wavekit::model
