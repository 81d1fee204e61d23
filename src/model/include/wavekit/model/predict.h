// The predictor: time from counts and a machine.
//
//   compute  = fp32 FLOP / F32 + fp64 FLOP / F64 + fp16 FLOP / F16 + matrix FLOP / Fmatrix
//   issue    = the VALU lane-operations at each class's lane rate (fp32 lanes for FP32 and
//              moves, int32 lanes for integer, fp64 lanes, transcendental lanes), per unit
//   dram     = DRAM bytes / achieved DRAM bandwidth
//   l2       = global bytes requested / L2 bandwidth
//   lds      = LDS bytes / (units x 128 B/clock)
//   latency  = rounds of resident blocks x one wave's serial time (its instructions at 4
//              cycles each, each global load a DRAM latency): the term for kernels far below
//              both roofs (few blocks, long dependent chains)
//   time     = max(terms) + the machine's kernel floor (what the smallest kernel takes)
//
// The bound is the term that sets the maximum. Every term is reported (attribution).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wavekit/model/counts.h"
#include "wavekit/model/machine.h"

namespace wavekit::model {

struct Term {
  std::string name;  // "compute", "issue", "dram", "l2", "lds", "latency", "dispatch", "floor"
  double seconds = 0;
  std::string detail;  // the arithmetic, e.g. "1.07e9 B / 4.3e12 B/s"
};

struct PredictOptions {
  bool peak = false;             // peak figures instead of achieved ones
  bool launch_overhead = false;  // add the host-side launch overhead (end-to-end time)
};

struct Prediction {
  std::string kernel;
  std::string machine;
  double seconds = 0;
  std::string bound;  // the term that dominates
  std::vector<Term> terms;
  double fp32_flops = 0, fp64_flops = 0, fp16_flops = 0, matrix_flops = 0;
  double dram_bytes = 0, load_bytes = 0, store_bytes = 0;
  double load_instructions = 0, store_instructions = 0;
  double resident_blocks_per_unit = 0;
};

Prediction predict(const KernelModel& kernel, const Machine& machine,
                   const PredictOptions& options = {});

nlohmann::json to_json(const Prediction& prediction);

}  // namespace wavekit::model
