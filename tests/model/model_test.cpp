// model tests that need no emulator: expressions, machine files, the application-model schema
// and evaluator, the predictor, measurement CSVs, the agent protocol against a fake endpoint.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "wavekit/model/agent.h"
#include "wavekit/model/compare.h"
#include "wavekit/model/counts.h"
#include "wavekit/model/expression.h"
#include "wavekit/model/machine.h"
#include "wavekit/model/predict.h"
#include "wavekit/support/error.h"

namespace fs = std::filesystem;
using namespace wavekit::model;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const wavekit::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Expression, EvaluatesWithPrecedenceAndParameters) {
  EXPECT_DOUBLE_EQ(evaluate("2*n^2 + 3*n - 4", {{"n", 10}}), 226);
  EXPECT_DOUBLE_EQ(evaluate("(nx*ny)/32", {{"nx", 64}, {"ny", 8}}), 16);
  EXPECT_DOUBLE_EQ(evaluate("-2^2", {}), -4);
  EXPECT_DOUBLE_EQ(evaluate("1.5e3", {}), 1500);
  EXPECT_EQ(parameter_names("a*b + a"), (std::set<std::string>{"a", "b"}));
}

TEST(Expression, ErrorsNameTheProblem) {
  EXPECT_NE(error_of([] {
              evaluate("4*m", {{"n", 1}});
            }).find("parameter 'm' has no value"),
            std::string::npos);
  EXPECT_NE(error_of([] { evaluate("4*(n", {{"n", 1}}); }).find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of([] {
              evaluate("4 $ n", {{"n", 1}});
            }).find("unexpected '$'"),
            std::string::npos);
  EXPECT_EQ(format_number(1024), "1024");
  EXPECT_EQ(format_number(0.0390625), "0.0390625");
}

TEST(Machines, EveryBuiltinLoadsWithSourcesAndConsistentPeaks) {
  auto names = builtin_machines();
  for (const char* wanted : {"h200", "h100", "a100", "rtx3080", "mi100", "mi250x", "mi300x"})
    EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
  for (const auto& name : names) {
    Machine m = load_machine(name);
    EXPECT_EQ(m.name, name);
    for (const auto& [path, figure] : m.figures) {
      EXPECT_FALSE(figure.source.empty()) << name << " " << path;
      EXPECT_GE(figure.value, 0) << name << " " << path;
    }
    // Independent check of the datasheet peaks: units x lanes x 2 x clock (within 6 %).
    double fp32 =
        m.compute_units() * m.get("compute.fp32_lanes_per_unit_per_clock") * 2 * m.clock_hz();
    EXPECT_NEAR(fp32 / m.get("peak.fp32_flops"), 1.0, 0.06) << name;
    double fp64 =
        m.compute_units() * m.get("compute.fp64_lanes_per_unit_per_clock") * 2 * m.clock_hz();
    EXPECT_NEAR(fp64 / m.get("peak.fp64_flops"), 1.0, 0.06) << name;
    double matrix =
        m.compute_units() * m.get("compute.matrix_fp16_flops_per_unit_per_clock") * m.clock_hz();
    EXPECT_NEAR(matrix / m.get("peak.matrix_fp16_flops"), 1.0, 0.10) << name;
    EXPECT_LE(m.get("achieved.dram_bandwidth"), m.get("peak.dram_bandwidth")) << name;
    EXPECT_LE(m.get("achieved.fp32_flops"), m.get("peak.fp32_flops")) << name;
    EXPECT_EQ(m.wave_width(), m.vendor == "nvidia" ? 32 : 64) << name;
  }
}

TEST(Machines, MissingFieldAndUnknownNameAreNamed) {
  fs::path dir = fs::temp_directory_path() / "wavekit-model-machine-test";
  fs::create_directories(dir);
  std::ifstream in(builtin_machine_directory() + "/h200.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["peak"].erase("dram_bandwidth");
  std::ofstream(dir / "broken.json") << doc.dump();
  EXPECT_NE(error_of([&] {
              load_machine((dir / "broken.json").string());
            }).find("missing field 'peak.dram_bandwidth'"),
            std::string::npos);
  doc = nlohmann::json::parse(std::ifstream(builtin_machine_directory() + "/h200.json"));
  doc["peak"]["fp32_flops"].erase("source");
  std::ofstream(dir / "nosource.json") << doc.dump();
  EXPECT_NE(error_of([&] {
              load_machine((dir / "nosource.json").string());
            }).find("'peak.fp32_flops' has no source"),
            std::string::npos);
  std::ofstream(dir / "syntax.json") << "{ nope";
  EXPECT_NE(error_of([&] { load_machine((dir / "syntax.json").string()); }).find("syntax.json"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_machine("gtx9999"); }).find("unknown machine 'gtx9999'"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Machines, ACurveInterpolatesAndBadPointsAreNamed) {
  Machine h200 = load_machine("h200");
  const Figure& dram = h200.figure("memory.dram_phase_latency_ns");
  ASSERT_GE(dram.points.size(), 2u);
  EXPECT_DOUBLE_EQ(dram.value, dram.points.front().second);
  const auto [x0, y0] = dram.points[0];
  const auto [x1, y1] = dram.points[1];
  EXPECT_DOUBLE_EQ(h200.get("memory.dram_phase_latency_ns", x0 / 2), y0);  // below: the first
  EXPECT_DOUBLE_EQ(h200.get("memory.dram_phase_latency_ns", (x0 + x1) / 2), (y0 + y1) / 2);
  const auto [xn, yn] = dram.points.back();  // above: the last (bandwidth is another term's)
  EXPECT_DOUBLE_EQ(h200.get("memory.dram_phase_latency_ns", 2 * xn), yn);
  // Loaded latencies rise with the bytes in flight; the first points are the unloaded ones.
  for (std::size_t i = 1; i < dram.points.size(); ++i)
    EXPECT_GE(dram.points[i].second, dram.points[i - 1].second);
  EXPECT_NEAR(dram.value / h200.get("memory.dram_latency_unloaded_ns"), 1.0, 0.15);
  EXPECT_DOUBLE_EQ(h200.get("memory.l2_latency_ns", 1e9), h200.get("memory.l2_latency_ns"));
  fs::path dir = fs::temp_directory_path() / "wavekit-model-curve-test";
  fs::create_directories(dir);
  nlohmann::json doc =
      nlohmann::json::parse(std::ifstream(builtin_machine_directory() + "/h200.json"));
  doc["memory"]["dram_phase_latency_ns"]["points"] = {{1, 399.75}, {1, 405}};
  std::ofstream(dir / "descending.json") << doc.dump();
  EXPECT_NE(error_of([&] { load_machine((dir / "descending.json").string()); })
                .find("'memory.dram_phase_latency_ns': 'points' must be pairs with positive x in "
                      "ascending order"),
            std::string::npos);
  doc["memory"]["dram_phase_latency_ns"]["points"] = {{2, 500}, {4, 600}};
  std::ofstream(dir / "value.json") << doc.dump();
  EXPECT_NE(error_of([&] {
              load_machine((dir / "value.json").string());
            }).find("'value' must be the first point's y"),
            std::string::npos);
  fs::remove_all(dir);
}

namespace {

// n elements, `per_thread` of them per thread (wider loads and stores: float4 for 4).
KernelModel streaming_kernel(double n, double per_thread = 1) {
  KernelModel k;
  k.name = "triad";
  k.blocks = {std::uint64_t(std::max(1.0, n / 256 / per_thread)), 1, 1};
  k.threads_per_block = {256, 1, 1};
  k.counts["ops.fp32.fma"] = n;
  k.counts["flops.fp32"] = 2 * n;
  k.counts["ops.valu"] = 10 * n;
  k.counts["ops.int"] = 8 * n;
  k.counts["instructions.wave"] = 20 * n / 64 / per_thread;
  k.counts["memory.global.load.instructions"] = 2 * n / 64 / per_thread;
  k.counts["memory.global.load.bytes"] = 8 * n;
  k.counts["memory.global.store.instructions"] = n / 64;
  k.counts["memory.global.store.bytes"] = 4 * n;
  k.counts["dram.read.bytes"] = 8 * n;
  k.counts["dram.write.bytes"] = 4 * n;
  return k;
}

}  // namespace

TEST(Schema, RoundTripsAndRefusesBadFields) {
  KernelModel k = streaming_kernel(1 << 20);
  k.parameters["n"] = 1 << 20;
  k.counts_expression["flops.fp32"] = "2*n";
  nlohmann::json doc = to_json(k);
  KernelModel back = kernel_from_json(doc, "test");
  EXPECT_EQ(back.counts_expression.at("flops.fp32"), "2*n");
  EXPECT_DOUBLE_EQ(back.at({{"n", 1000}}).count("flops.fp32"), 2000);
  nlohmann::json bad = doc;
  bad["counts"]["flops.fp33"] = 1;
  EXPECT_NE(error_of([&] { kernel_from_json(bad, "answer"); }).find("unknown count 'flops.fp33'"),
            std::string::npos);
  bad = doc;
  bad["counts"]["flops.fp32"] = "2*m";
  EXPECT_NE(error_of([&] { kernel_from_json(bad, "answer"); }).find("parameter 'm'"),
            std::string::npos);
  bad = doc;
  bad["launch"].erase("threads_per_block");
  EXPECT_NE(error_of([&] { kernel_from_json(bad, "answer"); }).find("launch.threads_per_block"),
            std::string::npos);
  bad = doc;
  bad["launch"]["blocks"] = {0};
  EXPECT_NE(error_of([&] { kernel_from_json(bad, "answer"); }).find("positive integer"),
            std::string::npos);
}

TEST(Evaluator, FindsInconsistentCounts) {
  KernelModel k = streaming_kernel(1 << 16);
  EXPECT_TRUE(check_kernel(k).empty());
  k.counts["flops.fp32"] = 3 * (1 << 16);  // not add + mul + 2 fma
  auto problems = check_kernel(k);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("flops.fp32"), std::string::npos);
  k = streaming_kernel(1 << 16);
  k.counts["memory.global.load.bytes"] = 1e12;  // more than 16 B x 64 lanes per instruction
  EXPECT_FALSE(check_kernel(k).empty());
  k = streaming_kernel(1 << 16);
  k.counts["dram.read.bytes"] = -1;
  EXPECT_FALSE(check_kernel(k).empty());
}

TEST(Predictor, NamesTheBoundAndAttributesTerms) {
  Machine h200 = load_machine("h200");
  // Streaming: 12 B per 2 FLOP, far below the ridge: DRAM-bound at bytes / achieved bandwidth
  // with float4 accesses (96 KB in flight per SM, past the loaded-latency curve's 32 KB).
  double n = 1 << 28;
  Prediction p = predict(streaming_kernel(n, 4), h200);
  EXPECT_EQ(p.bound, "dram");
  double expected =
      12 * n / h200.get("achieved.dram_bandwidth") + h200.get("launch.kernel_floor_us") * 1e-6;
  EXPECT_NEAR(p.seconds / expected, 1.0, 1e-9);
  // The same bytes with 1000x the FLOPs: compute-bound.
  KernelModel heavy = streaming_kernel(n);
  heavy.counts["ops.fp32.fma"] = 1000 * n;
  heavy.counts["flops.fp32"] = 2000 * n;
  Prediction q = predict(heavy, h200);
  EXPECT_EQ(q.bound, "compute");
  EXPECT_NEAR(q.terms.front().seconds, 2000 * n / h200.get("achieved.fp32_flops"),
              1e-9 * q.seconds);
  // Writes that stay in the L2 at the end are no DRAM traffic during the kernel: 1 MB read and
  // 1 MB written fit in the H200's 60 MB L2, so only the reads are charged.
  KernelModel small = streaming_kernel(1 << 18);
  small.counts["dram.read.bytes"] = 1e6;
  small.counts["dram.write.bytes"] = 1e6;
  small.counts["footprint.read.bytes"] = 1e6;
  small.counts["footprint.write.bytes"] = 1e6;
  EXPECT_DOUBLE_EQ(predict(small, h200).dram_bytes, 1e6);
  // 1 GB each way: the L2 keeps 30 MB of the writes (its size x the written share).
  small.counts["dram.read.bytes"] = small.counts["dram.write.bytes"] = 1e9;
  small.counts["footprint.read.bytes"] = small.counts["footprint.write.bytes"] = 1e9;
  EXPECT_DOUBLE_EQ(predict(small, h200).dram_bytes, 2e9 - h200.get("memory.l2_bytes") / 2);
  // A tiny launch: the kernel floor.
  EXPECT_EQ(predict(streaming_kernel(256), h200).bound, "floor");
  // FP64 on the RTX 3080 (1/64 rate) is slower than on the H200 by the ratio of their rates.
  KernelModel dp = streaming_kernel(n);
  dp.counts.erase("flops.fp32");
  dp.counts["flops.fp64"] = 2000 * n;
  Machine rtx = load_machine("rtx3080");
  double ratio = predict(dp, rtx).terms.front().seconds / predict(dp, h200).terms.front().seconds;
  EXPECT_NEAR(ratio, h200.get("achieved.fp64_flops") / rtx.get("achieved.fp64_flops"),
              1e-6 * ratio);
  // The L2 term: the measured L2 bandwidth where the machine has one (the H200), else 80 % of
  // the peak figure (the RTX 3080's estimate); --peak takes the peak figure.
  KernelModel l2 = streaming_kernel(n);
  l2.counts["l2.request.bytes"] = 1e9;
  auto l2_seconds = [&](const Machine& m, bool peak) {
    for (const Term& t : predict(l2, m, PredictOptions{.peak = peak}).terms)
      if (t.name == "l2") return t.seconds;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(l2_seconds(h200, false), 1e9 / h200.get("achieved.l2_bandwidth"));
  EXPECT_DOUBLE_EQ(l2_seconds(h200, true), 1e9 / h200.get("peak.l2_bandwidth"));
  ASSERT_FALSE(rtx.has("achieved.l2_bandwidth"));
  EXPECT_DOUBLE_EQ(l2_seconds(rtx, false), 1e9 / (0.8 * rtx.get("peak.l2_bandwidth")));
  // Expressions must be evaluated first.
  KernelModel e = streaming_kernel(n);
  e.counts_expression["flops.fp32"] = "2*n";
  EXPECT_NE(error_of([&] { predict(e, h200); }).find("evaluate them"), std::string::npos);
}

TEST(Predictor, LatencyTermUsesPhasesLoadedLatenciesAndDispatch) {
  Machine h200 = load_machine("h200"), rtx = load_machine("rtx3080");
  auto term = [](const Prediction& p, const std::string& name) {
    for (const Term& t : p.terms)
      if (t.name == name) return t.seconds;
    return -1.0;
  };
  // One round (132 blocks of 256 threads, 4 waves each) of one dependent phase per wave, each
  // lane's load fetching 64 B from DRAM (m = 64 fetches per wave-phase: e^-m is nothing), no
  // instructions to speak of: the DRAM latency at 64 B x 256 threads = 16 KB in flight per SM.
  KernelModel k;
  k.name = "phase";
  k.blocks = {132, 1, 1};
  k.threads_per_block = {256, 1, 1};
  const double waves = 132 * 4, threads = 132 * 256;
  k.counts["instructions.wave"] = 0;
  k.counts["memory.global.load.instructions"] = waves;
  k.counts["memory.global.load.bytes"] = 4 * threads;
  k.counts["memory.global.store.bytes"] = 4 * threads;
  k.counts["l2.request.bytes"] = 8 * threads;
  k.counts["l2.hit_rate"] = 0.5;  // the stores' sectors: no part of a phase's wait
  k.counts["dram.read.bytes"] = 64 * threads;
  k.counts["dram.write.bytes"] = 0;
  k.counts["sync.vmem_waits"] = 3 * waves;  // three waits, one of them for a new load
  k.counts["sync.memory_phases"] = waves;
  const double kb = 64.0 * 256 / 1024;  // DRAM bytes in flight per SM
  EXPECT_NEAR(term(predict(k, h200), "latency"),
              h200.get("memory.dram_phase_latency_ns", kb) * 1e-9, 1e-12);
  // Without the measured curve (the RTX 3080): the machine's fixed loaded DRAM latency.
  EXPECT_NEAR(term(predict(k, rtx), "latency"), rtx.get("memory.dram_latency_ns") * 1e-9, 1e-12);
  // No DRAM reads: every phase an L2 hit.
  k.counts["dram.read.bytes"] = 0;
  EXPECT_NEAR(term(predict(k, rtx), "latency"), rtx.get("memory.l2_latency_ns") * 1e-9, 1e-12);
  // A model from before the phase count: every wait is a phase.
  k.counts.erase("sync.memory_phases");
  EXPECT_NEAR(term(predict(k, rtx), "latency"), rtx.get("memory.l2_latency_ns") * 1e-9, 1e-12);
  k.counts["memory.global.load.instructions"] = 3 * waves;
  EXPECT_NEAR(term(predict(k, rtx), "latency"), 3 * rtx.get("memory.l2_latency_ns") * 1e-9, 1e-12);
  // Many short blocks: the H200's measured block dispatch bounds the kernel.
  KernelModel tiny;
  tiny.name = "tiny";
  tiny.blocks = {1 << 20, 1, 1};
  tiny.threads_per_block = {64, 1, 1};
  tiny.counts["instructions.wave"] = double(1 << 20);
  Prediction d = predict(tiny, h200);
  EXPECT_EQ(d.bound, "dispatch");
  EXPECT_DOUBLE_EQ(term(d, "dispatch"), (1 << 20) * h200.get("launch.block_dispatch_ns") * 1e-9);
  EXPECT_LT(term(predict(tiny, rtx), "dispatch"), 0);  // no figure: no term
}

TEST(Compare, ReadsTheThreeFormatsAndSummarises) {
  auto ours = read_measurements(std::string(WAVEKIT_MODEL_TEST_DATA) + "/measured_simple.csv");
  ASSERT_EQ(ours.size(), 2u);
  auto ncu = read_measurements(std::string(WAVEKIT_MODEL_TEST_DATA) + "/ncu_raw_sample.csv");
  ASSERT_EQ(ncu.size(), 1u);
  // 1000 fadd + 2000 fmul + 3000 ffma x 2 = 9000 FP32 FLOP; 2 us; 1 MB + 0.5 MB.
  EXPECT_DOUBLE_EQ(*ncu[0].fp32_flops, 9000);
  EXPECT_DOUBLE_EQ(*ncu[0].fp64_flops, 10);
  EXPECT_NEAR(ncu[0].seconds, 2e-6, 1e-12);
  EXPECT_NEAR(*ncu[0].dram_bytes, 1.5e6, 1e-3);
  std::vector<nlohmann::json> predictions = {{{"kernel", "saxpy(float, float const*, float*, int)"},
                                              {"seconds", 2.2e-6},
                                              {"fp32_flops", 9100.0},
                                              {"fp64_flops", 10.0},
                                              {"dram_bytes", 2.5e6},
                                              {"bound", "dram"}}};
  auto rows = compare(predictions, ncu);
  ASSERT_EQ(rows.size(), 1u);
  auto s = summarise(rows);
  EXPECT_EQ(s.flops_within_5, 1u);   // 9110 vs 9010
  EXPECT_EQ(s.bytes_within_30, 0u);  // 2.5 MB vs 1.5 MB
  EXPECT_NEAR(s.time_median_abs_error, 0.1, 1e-9);
  EXPECT_EQ(s.time_within_2x, 1u);
  EXPECT_NE(error_of([] {
              read_measurements(std::string(WAVEKIT_MODEL_TEST_DATA) + "/not_measurements.csv");
            }).find("not a measurement CSV"),
            std::string::npos);
}

TEST(Compare, AProgramsPredictionMeetsTheMeasuredLaunchOfItsIndex) {
  // Three measured launches of one kernel at three sizes, as a program makes them.
  std::vector<Measurement> measured;
  for (double seconds : {1e-6, 2e-6, 4e-6}) {
    Measurement m;
    m.kernel = "step(float*)";
    m.seconds = seconds;
    measured.push_back(m);
  }
  std::vector<nlohmann::json> predictions = {
      {{"kernel", "step(float*)"}, {"seconds", 2e-6}, {"launch", 1}},
      {{"kernel", "step(float*)"}, {"seconds", 1e-6}},                  // no index: the first
      {{"kernel", "step(float*)"}, {"seconds", 8e-6}, {"launch", 3}}};  // never measured
  auto rows = compare(predictions, measured);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].measured_seconds, 2e-6);
  EXPECT_DOUBLE_EQ(rows[1].measured_seconds, 1e-6);
}

TEST(Compare, ReadsAWavekitProfileOutput) {
  fs::path dir = fs::temp_directory_path() / "wavekit-model-profile-out";
  fs::create_directories(dir);
  // The shape `wavekit profile` writes (docs/profile.md, Outputs): kernels as leaf frames.
  std::ofstream(dir / "profile.hatchet") << R"json([{"frame": {"name": "ROOT", "type": "function"},
    "metrics": {"count": 0, "time (ns)": 0}, "children": [
      {"frame": {"name": "step", "type": "function"}, "metrics": {"count": 0, "time (ns)": 0},
       "children": [{"frame": {"name": "saxpy", "type": "function"},
         "metrics": {"count": 4, "time (ns)": 40000, "flops32": 8e6, "bytes": 4.8e7}, "children": []}]}]},
    {"CUDA": {"0": {"arch": "90"}}}])json";
  auto rows = read_measurements(dir.string());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel, "saxpy");
  EXPECT_DOUBLE_EQ(rows[0].seconds, 10e-6);
  EXPECT_DOUBLE_EQ(*rows[0].fp32_flops, 2e6);
  EXPECT_DOUBLE_EQ(*rows[0].dram_bytes, 1.2e7);
  EXPECT_FALSE(rows[0].fp64_flops.has_value());
  fs::remove_all(dir);
}

TEST(Compare, ReadsGpuFlopBench) {
  std::string path = std::string(WAVEKIT_SHARED_DATA) + "/gpuflopbench/profiling-data.csv";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent (shared data not checked out)";
  auto rows = read_measurements(path);
  EXPECT_GT(rows.size(), 800u);
  // crc64_kernel's first row: traffic 85088253072.74 B/s over 635264 ns.
  ASSERT_EQ(rows[0].kernel, "crc64_kernel");
  EXPECT_NEAR(*rows[0].dram_bytes, 85088253072.74 * 635264e-9, 1);
  EXPECT_EQ(*rows[0].fp32_flops, 0);
  EXPECT_EQ(rows[0].program, "crc64-cuda");
}

TEST(Compare, OurH200TableAgreesWithTheSourceFormula) {
  // bench/model/h200/ncu.csv: Nsight Compute on the H200 (bench/model/run_h200.sh). cross_kernel
  // computes 3 components of a cross product per row, 2 multiplies and a subtract each (9 FLOP
  // as NVIDIA counts an FMUL + FFMA pair), over 10^7 rows: 9e7 FP32 FLOP per launch.
  auto rows = read_measurements(std::string(WAVEKIT_MODEL_TEST_DATA) +
                                "/../../../bench/model/h200/ncu.csv");
  EXPECT_GT(rows.size(), 500u);
  std::size_t found = 0;
  for (const auto& m : rows) {
    if (m.program != "cross-cuda" || kernel_base_name(m.kernel) != "cross_kernel") continue;
    ++found;
    EXPECT_DOUBLE_EQ(*m.fp32_flops, 9e7);
    EXPECT_DOUBLE_EQ(*m.fp64_flops, 0);
    // It streams 2 x 120 MB in and 120 MB out: DRAM bytes near 3.6e8.
    EXPECT_NEAR(*m.dram_bytes / 3.6e8, 1.0, 0.1);
    EXPECT_GT(m.seconds, 20e-6);
    EXPECT_LT(m.seconds, 1e-3);
  }
  EXPECT_GE(found, 1u);
}

// A one-connection-at-a-time HTTP server on 127.0.0.1 answering with canned bodies.
class FakeEndpoint {
 public:
  explicit FakeEndpoint(std::vector<std::string> answers) : answers_(std::move(answers)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(fd_, 4);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeEndpoint() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> requests;

 private:
  void serve() {
    for (const std::string& answer : answers_) {
      int client = accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string request;
      char buffer[65536];
      // Read the headers, then Content-Length bytes of body.
      std::size_t want = std::string::npos;
      while (want == std::string::npos || request.size() < want) {
        ssize_t n = recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, std::size_t(n));
        auto end = request.find("\r\n\r\n");
        if (end != std::string::npos && want == std::string::npos) {
          auto cl = request.find("Content-Length: ");
          want = end + 4 + std::stoul(request.substr(cl + 16));
        }
      }
      requests.push_back(request);
      std::string response =
          "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(answer.size()) + "\r\n\r\n" + answer;
      send(client, response.data(), response.size(), MSG_NOSIGNAL);
      close(client);
    }
  }
  std::vector<std::string> answers_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

namespace {

std::string chat_answer(const std::string& content) {
  return nlohmann::json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}}}}}
      .dump();
}

}  // namespace

TEST(Agent, AsksWithTheSchemaChecksAndRetriesOnce) {
  nlohmann::json good = {{"name", "saxpy"},
                         {"launch", {{"blocks", {"n/256"}}, {"threads_per_block", {256}}}},
                         {"parameters", {{"n", 1024}}},
                         {"counts",
                          {{"flops.fp32", "2*n"},
                           {"ops.fp32.fma", "n"},
                           {"memory.global.load.instructions", "2*n/64"},
                           {"memory.global.load.bytes", "8*n"}}}};
  FakeEndpoint endpoint(
      {chat_answer("this is no JSON"), chat_answer("```json\n" + good.dump() + "\n```")});
  AgentRequest request;
  request.endpoint = endpoint.url();
  request.model = "fake";
  request.api_key = "k";
  request.kernel = "saxpy";
  request.source = "__global__ void saxpy(...)";
  request.launch = "n = 1024, 256 threads per block";
  AgentResult result = ask_agent(request);
  ASSERT_EQ(endpoint.requests.size(), 2u);
  EXPECT_NE(endpoint.requests[0].find("POST /v1/chat/completions"), std::string::npos);
  EXPECT_NE(endpoint.requests[0].find("Authorization: Bearer k"), std::string::npos);
  EXPECT_NE(endpoint.requests[0].find("\"json_schema\""), std::string::npos);
  EXPECT_NE(endpoint.requests[1].find("previous answer was refused"), std::string::npos);
  EXPECT_EQ(result.model.source, "agent");
  EXPECT_TRUE(result.problems.empty());
  KernelModel at = result.model.at({{"n", 4096}});
  EXPECT_DOUBLE_EQ(at.count("flops.fp32"), 8192);
  EXPECT_EQ(at.blocks[0], 16u);
  // Against a binary-path model that counted 3 FLOP per element: the difference is reported.
  KernelModel binary = at;
  binary.counts["flops.fp32"] = 3 * 4096;
  auto differences = compare_models(result.model, binary);
  ASSERT_FALSE(differences.empty());
  EXPECT_NE(differences[0].find("flops.fp32"), std::string::npos);
}

TEST(Agent, AnAnswerThatBreaksTheSchemaIsRefusedByName) {
  nlohmann::json bad = {{"name", "k"},
                        {"launch", {{"blocks", {1}}, {"threads_per_block", {64}}}},
                        {"counts", {{"gflops", 3}}}};
  FakeEndpoint endpoint({chat_answer(bad.dump()), chat_answer(bad.dump())});
  AgentRequest request;
  request.endpoint = endpoint.url();
  request.kernel = "k";
  std::string message = error_of([&] { ask_agent(request); });
  EXPECT_NE(message.find("breaks the schema"), std::string::npos);
  EXPECT_NE(message.find("unknown count 'gflops'"), std::string::npos);
  EXPECT_NE(error_of([] {
              AgentRequest r;
              r.endpoint = "https://example.invalid/v1";
              ask_agent(r);
            }).find("only http://"),
            std::string::npos);
}
