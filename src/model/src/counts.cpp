#include "wavekit/model/counts.h"

#include <cmath>
#include <set>

#include "wavekit/support/error.h"

namespace wavekit::model {

const std::vector<CountInfo>& count_vocabulary() {
  static const std::vector<CountInfo> table = {
      {"flops.fp16", "FLOP", "half-precision FLOPs, NVIDIA's convention (add/mul 1, FMA 2)"},
      {"flops.fp32", "FLOP", "single-precision FLOPs, NVIDIA's convention"},
      {"flops.fp64", "FLOP", "double-precision FLOPs, NVIDIA's convention"},
      {"flops.matrix", "FLOP", "matrix-core (MFMA / tensor) FLOPs, 2 per multiply-add"},
      {"ops.fp16.add", "lane-op", "fp16 adds and subtracts, per lane (packed: per element)"},
      {"ops.fp16.mul", "lane-op", "fp16 multiplies"},
      {"ops.fp16.fma", "lane-op", "fp16 fused multiply-adds"},
      {"ops.fp32.add", "lane-op", "fp32 adds and subtracts"},
      {"ops.fp32.mul", "lane-op", "fp32 multiplies"},
      {"ops.fp32.fma", "lane-op", "fp32 fused multiply-adds (mad, mac, fmac, fmaak...)"},
      {"ops.fp64.add", "lane-op", "fp64 adds"},
      {"ops.fp64.mul", "lane-op", "fp64 multiplies"},
      {"ops.fp64.fma", "lane-op", "fp64 fused multiply-adds"},
      {"ops.fp32.other", "lane-op", "other fp32 VALU: min/max, compares, conversions, class"},
      {"ops.fp64.other", "lane-op", "other fp64 VALU"},
      {"ops.fp16.other", "lane-op", "other fp16 VALU"},
      {"ops.fp32.div", "lane-op", "fp32 divisions (expansions recognised, v_div_fixup_f32)"},
      {"ops.fp64.div", "lane-op", "fp64 divisions (v_div_fixup_f64)"},
      {"ops.fp32.exp", "lane-op", "fp32 expf expansions (recognised, v_exp_f32 after log2(e))"},
      {"ops.fp32.library", "lane-op",
       "fp32 library calls counted as NVIDIA's (logf; powf's log and exp parts)"},
      {"ops.transcendental", "lane-op", "exp, log, rcp, rsq, sqrt, sin, cos (MUFU class)"},
      {"ops.int", "lane-op", "integer and bitwise VALU (incl. v_mov, v_cndmask, lane ops)"},
      {"ops.valu", "lane-op", "every VALU lane-operation (the sum of the classes above)"},
      {"ops.salu", "wave-instruction", "scalar ALU instructions"},
      {"ops.branch", "wave-instruction", "branches and other program-flow instructions"},
      {"ops.sync", "wave-instruction", "barriers and waits"},
      {"sync.vmem_waits", "wave-instruction", "waits for vector memory (s_waitcnt vmcnt)"},
      {"sync.memory_phases", "wave-instruction",
       "dependent memory phases: the waits for vector memory that wait for a load issued since "
       "the last such wait"},
      {"instructions.wave", "wave-instruction", "every wave-instruction issued"},
      {"instructions.valu", "wave-instruction", "vector ALU wave-instructions issued"},
      {"memory.global.load.instructions", "wave-instruction", "global/flat loads"},
      {"memory.global.load.bytes", "B", "bytes loaded by the active lanes"},
      {"memory.global.store.instructions", "wave-instruction", "global/flat stores"},
      {"memory.global.store.bytes", "B", "bytes stored by the active lanes"},
      {"memory.global.atomic.instructions", "wave-instruction", "global atomics"},
      {"memory.global.atomic.bytes", "B", "bytes the active lanes' atomics address"},
      {"memory.lds.load.instructions", "wave-instruction", "LDS reads"},
      {"memory.lds.load.bytes", "B", "bytes read from LDS"},
      {"memory.lds.store.instructions", "wave-instruction", "LDS writes"},
      {"memory.lds.store.bytes", "B", "bytes written to LDS"},
      {"memory.lds.atomic.instructions", "wave-instruction", "LDS atomics"},
      {"memory.lds.atomic.bytes", "B", "bytes the LDS atomics address"},
      {"memory.scalar.load.instructions", "wave-instruction", "scalar (SMEM) loads"},
      {"memory.scalar.load.bytes", "B", "bytes loaded by scalar loads (once per wave)"},
      {"memory.scalar.store.instructions", "wave-instruction", "scalar stores"},
      {"memory.scalar.store.bytes", "B", "bytes stored by scalar stores"},
      {"memory.scalar.atomic.instructions", "wave-instruction", "scalar atomics"},
      {"memory.scalar.atomic.bytes", "B", "bytes scalar atomics address"},
      {"memory.private.load.instructions", "wave-instruction", "private (scratch) loads"},
      {"memory.private.load.bytes", "B", "bytes loaded from private memory"},
      {"memory.private.store.instructions", "wave-instruction", "private (scratch) stores"},
      {"memory.private.store.bytes", "B", "bytes stored to private memory"},
      {"memory.private.atomic.instructions", "wave-instruction", "private atomics"},
      {"memory.private.atomic.bytes", "B", "bytes private atomics address"},
      {"dram.read.bytes", "B", "DRAM bytes read (the L2 model's misses, sector-granular)"},
      {"dram.write.bytes", "B", "DRAM bytes written (write-backs of dirty sectors)"},
      {"footprint.read.bytes", "B", "distinct global bytes read, sector-granular"},
      {"footprint.write.bytes", "B", "distinct global bytes written, sector-granular"},
      {"footprint.bytes", "B", "distinct global bytes touched, sector-granular"},
      {"l2.hit_rate", "1", "fraction of sector accesses that hit in the L2 model"},
      {"l2.request.bytes", "B", "sector bytes the L1 model passes to the L2 (misses and stores)"},
      {"l1.hit_rate", "1", "fraction of load sector accesses that hit in the per-unit L1 model"},
      {"resources.lds_bytes_per_block", "B", "static LDS per workgroup (the kernel's)"},
      {"resources.vgprs", "register", "VGPRs per lane the AMD binary uses"},
  };
  return table;
}

std::uint64_t KernelModel::threads() const {
  return total_blocks() * threads_per_block[0] * threads_per_block[1] * threads_per_block[2];
}

std::uint64_t KernelModel::total_blocks() const { return blocks[0] * blocks[1] * blocks[2]; }

double KernelModel::count(const std::string& key) const {
  auto found = counts.find(key);
  return found == counts.end() ? 0.0 : found->second;
}

KernelModel KernelModel::at(const Parameters& values) const {
  KernelModel result = *this;
  Parameters merged = parameters;
  for (const auto& [k, v] : values) merged[k] = v;
  result.parameters = merged;
  for (const auto& [key, expression] : counts_expression)
    result.counts[key] = std::max(0.0, evaluate(expression, merged));
  result.counts_expression.clear();
  for (int axis = 0; axis < 3; ++axis)
    if (!blocks_expression[axis].empty())
      result.blocks[axis] =
          std::uint64_t(std::max(1.0, std::ceil(evaluate(blocks_expression[axis], merged) - 1e-9)));
  result.blocks_expression = {};
  return result;
}

namespace {

nlohmann::json dims(const std::array<std::uint64_t, 3>& d) { return {d[0], d[1], d[2]}; }

std::array<std::uint64_t, 3> read_dims(const nlohmann::json& node, const std::string& what,
                                       std::array<std::string, 3>* expressions) {
  if (!node.is_array() || node.empty() || node.size() > 3)
    throw Error(what + " must be an array of 1 to 3 dimensions");
  std::array<std::uint64_t, 3> d{1, 1, 1};
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (node[i].is_string() && expressions) {
      (*expressions)[i] = node[i].get<std::string>();
      parameter_names((*expressions)[i]);  // syntax check
      continue;
    }
    if (!node[i].is_number_unsigned() || node[i].get<std::uint64_t>() == 0)
      throw Error(what + "[" + std::to_string(i) + "] must be a positive integer");
    d[i] = node[i].get<std::uint64_t>();
  }
  return d;
}

}  // namespace

nlohmann::json to_json(const KernelModel& kernel) {
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [key, value] : kernel.counts) counts[key] = value;
  for (const auto& [key, expression] : kernel.counts_expression) counts[key] = expression;
  nlohmann::json blocks = dims(kernel.blocks);
  for (int axis = 0; axis < 3; ++axis)
    if (!kernel.blocks_expression[axis].empty()) blocks[axis] = kernel.blocks_expression[axis];
  nlohmann::json document = {
      {"name", kernel.name},
      {"launch", {{"blocks", blocks}, {"threads_per_block", dims(kernel.threads_per_block)}}},
      {"parameters", kernel.parameters},
      {"source", kernel.source},
      {"counts", counts}};
  if (!kernel.symbol.empty()) document["symbol"] = kernel.symbol;
  if (!kernel.notes.empty()) document["notes"] = kernel.notes;
  if (kernel.counts_expression.empty() && kernel.threads()) {
    nlohmann::json per_thread = nlohmann::json::object();
    double threads = double(kernel.threads());
    for (const char* key : {"flops.fp32", "flops.fp64", "memory.global.load.bytes",
                            "memory.global.store.bytes", "ops.valu"})
      if (kernel.counts.count(key)) per_thread[key] = kernel.counts.at(key) / threads;
    document["per_thread"] = per_thread;
  }
  return document;
}

nlohmann::json to_json(const ApplicationModel& application) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : application.kernels) kernels.push_back(to_json(kernel));
  return {{"schema", "wavekit.model.application/1"},
          {"program", application.program},
          {"source", application.source},
          {"parameters", application.parameters},
          {"kernels", kernels}};
}

KernelModel kernel_from_json(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": a kernel is a JSON object");
  KernelModel kernel;
  if (!document.contains("name") || !document["name"].is_string())
    throw Error(origin + ": kernel without a 'name' (a string)");
  kernel.name = document["name"];
  std::string where = origin + ": kernel '" + kernel.name + "'";
  if (document.contains("symbol") && document["symbol"].is_string())
    kernel.symbol = document["symbol"];
  if (!document.contains("launch") || !document["launch"].is_object())
    throw Error(where + ": missing field 'launch' ({\"blocks\", \"threads_per_block\"})");
  const auto& launch = document["launch"];
  if (!launch.contains("blocks")) throw Error(where + ": missing field 'launch.blocks'");
  if (!launch.contains("threads_per_block"))
    throw Error(where + ": missing field 'launch.threads_per_block'");
  try {
    kernel.blocks = read_dims(launch["blocks"], "launch.blocks", &kernel.blocks_expression);
    kernel.threads_per_block =
        read_dims(launch["threads_per_block"], "launch.threads_per_block", nullptr);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  if (document.contains("parameters")) {
    if (!document["parameters"].is_object())
      throw Error(where + ": 'parameters' must be an object of numbers");
    for (auto it = document["parameters"].begin(); it != document["parameters"].end(); ++it) {
      if (!it.value().is_number())
        throw Error(where + ": parameter '" + it.key() + "' must be a number");
      kernel.parameters[it.key()] = it.value().get<double>();
    }
  }
  if (document.contains("source") && document["source"].is_string())
    kernel.source = document["source"];
  if (!document.contains("counts") || !document["counts"].is_object())
    throw Error(where + ": missing field 'counts' (an object)");
  std::set<std::string> known;
  for (const auto& info : count_vocabulary()) known.insert(info.name);
  for (auto it = document["counts"].begin(); it != document["counts"].end(); ++it) {
    if (!known.count(it.key()))
      throw Error(where + ": unknown count '" + it.key() + "' (docs/model.md lists the names)");
    if (it.value().is_number()) {
      kernel.counts[it.key()] = it.value().get<double>();
    } else if (it.value().is_string()) {
      std::string expression = it.value();
      std::set<std::string> names;
      try {
        names = parameter_names(expression);
      } catch (const Error& e) {
        throw Error(where + ": count '" + it.key() + "': " + e.what());
      }
      for (const auto& name : names)
        if (!kernel.parameters.count(name))
          throw Error(where + ": count '" + it.key() + "' uses parameter '" + name +
                      "', which 'parameters' does not define");
      kernel.counts_expression[it.key()] = expression;
    } else {
      throw Error(where + ": count '" + it.key() + "' must be a number or an expression string");
    }
  }
  if (document.contains("notes") && document["notes"].is_array())
    for (const auto& note : document["notes"])
      if (note.is_string()) kernel.notes.push_back(note);
  return kernel;
}

ApplicationModel application_from_json(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": an application model is a JSON object");
  if (!document.contains("schema") || document["schema"] != "wavekit.model.application/1")
    throw Error(origin + ": 'schema' must be \"wavekit.model.application/1\"");
  ApplicationModel application;
  if (document.contains("program") && document["program"].is_string())
    application.program = document["program"];
  if (document.contains("source") && document["source"].is_string())
    application.source = document["source"];
  if (!document.contains("kernels") || !document["kernels"].is_array())
    throw Error(origin + ": missing field 'kernels' (an array)");
  for (const auto& kernel : document["kernels"])
    application.kernels.push_back(kernel_from_json(kernel, origin));
  return application;
}

std::vector<std::string> check_kernel(const KernelModel& model) {
  std::vector<std::string> problems;
  KernelModel kernel = model.counts_expression.empty() ? model : model.at({});
  auto c = [&](const std::string& key) { return kernel.count(key); };
  for (const auto& [key, value] : kernel.counts)
    if (!std::isfinite(value) || value < 0)
      problems.push_back("count '" + key + "' is " + std::to_string(value) +
                         ": counts are finite and non-negative");
  auto close = [](double a, double b) {
    return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::max(a, b));
  };
  for (const char* p : {"fp16", "fp32", "fp64"}) {
    std::string base = std::string("ops.") + p;
    if (!kernel.counts.count(base + ".add") && !kernel.counts.count(base + ".fma")) continue;
    if (!kernel.counts.count(std::string("flops.") + p)) continue;
    double from_ops = c(base + ".add") + c(base + ".mul") + 2 * c(base + ".fma");
    double flops = c(std::string("flops.") + p);
    // A division's, an expf's or a marked library call's expansion is counted as NVIDIA's
    // (docs/model.md): allow for it.
    double expansions = c(base + ".div") + c(base + ".exp") + c(base + ".library");
    if (expansions == 0 && !close(from_ops, flops))
      problems.push_back(std::string("flops.") + p + " = " + format_number(flops) +
                         " but its ops (add + mul + 2 fma) give " + format_number(from_ops));
  }
  double lanes = double(std::max<std::uint64_t>(kernel.threads(), 1));
  for (const char* space : {"global", "lds", "private"}) {
    for (const char* access : {"load", "store", "atomic"}) {
      std::string prefix = std::string("memory.") + space + "." + access;
      double instructions = c(prefix + ".instructions"), bytes = c(prefix + ".bytes");
      if (bytes > 0 && instructions == 0)
        problems.push_back(prefix + ".bytes = " + format_number(bytes) + " without any " + prefix +
                           ".instructions");
      double wave = 64;  // the widest wave: at most 64 lanes x 16 bytes per instruction
      if (bytes > instructions * wave * 16 * 1.000001)
        problems.push_back(prefix + ".bytes = " + format_number(bytes) +
                           " exceeds 16 bytes x 64 lanes x " + format_number(instructions) +
                           " instructions");
    }
  }
  double requested = c("memory.global.load.bytes") + c("memory.global.atomic.bytes");
  if (kernel.counts.count("dram.read.bytes") && kernel.counts.count("memory.global.load.bytes") &&
      c("dram.read.bytes") > 4 * requested + 4096 * lanes / lanes + 1e6)
    problems.push_back("dram.read.bytes = " + format_number(c("dram.read.bytes")) +
                       " is far above the global bytes the kernel loads (" +
                       format_number(requested) + ")");
  if (kernel.counts.count("dram.write.bytes") && kernel.counts.count("memory.global.store.bytes") &&
      c("dram.write.bytes") >
          4 * (c("memory.global.store.bytes") + c("memory.global.atomic.bytes")) + 1e6)
    problems.push_back("dram.write.bytes = " + format_number(c("dram.write.bytes")) +
                       " is far above the global bytes the kernel stores");
  for (const char* rate : {"l2.hit_rate", "l1.hit_rate"})
    if (kernel.counts.count(rate) && (c(rate) < 0 || c(rate) > 1))
      problems.push_back(std::string(rate) + " must lie in [0, 1]");
  return problems;
}

}  // namespace wavekit::model
