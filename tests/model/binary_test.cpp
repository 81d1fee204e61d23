// The binary front-end against counts from the kernels' source formulas (a CPU count per
// element): FLOPs by precision with NVIDIA's convention, lanes under divergence, memory bytes
// by space, DRAM bytes of the L2 model, fits checked at a held-out size, the CLI.
#include "wavekit/model/binary.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "wavekit/model/machine.h"
#include "wavekit/model/predict.h"
#include "wavekit/support/error.h"

namespace fs = std::filesystem;
using namespace wavekit::model;

namespace {

LaunchSpec spec(const std::string& kernel, std::vector<std::string> args, const std::string& n,
                std::string block = "256") {
  LaunchSpec s;
  s.code_object = WAVEKIT_MODEL_KERNELS;
  s.kernel = kernel;
  s.blocks = {"{n/" + block + "}"};  // rounded up
  s.block = {block};
  s.arguments = std::move(args);
  s.parameters["n"] = std::stod(n);
  s.host_threads = 2;
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const wavekit::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Binary, SaxpyCountsAtAPartialLastWave) {
  const double n = 1000;  // 4 blocks, 16 waves, the last one 40 lanes
  KernelModel k =
      count_launch(spec("saxpy", {"f32:2", "f32rand:{n}", "f32rand:{n}", "i32:{n}"}, "1000"));
  EXPECT_EQ(k.threads(), 1024u);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 2 * n);
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.fma"), n);
  EXPECT_DOUBLE_EQ(k.count("flops.fp64"), 0);
  EXPECT_DOUBLE_EQ(k.count("memory.global.load.bytes"), 8 * n);
  EXPECT_DOUBLE_EQ(k.count("memory.global.store.bytes"), 4 * n);
  EXPECT_DOUBLE_EQ(k.count("memory.global.load.instructions"), 2 * 16);
  EXPECT_DOUBLE_EQ(k.count("memory.global.store.instructions"), 16);
  // Both arrays read once from DRAM, y written back: sector-exact for 256-byte-aligned buffers.
  EXPECT_DOUBLE_EQ(k.count("dram.read.bytes"), 8 * n);
  EXPECT_DOUBLE_EQ(k.count("dram.write.bytes"), 4 * n);
  EXPECT_DOUBLE_EQ(k.count("footprint.bytes"), 8 * n);
  EXPECT_TRUE(check_kernel(k).empty());
}

TEST(Binary, DependentMemoryPhasesAreCountedNotEveryWait) {
  const double n = 4096, waves = n / 64;
  // Three loads issued together, waited for one at a time: one phase per wave.
  KernelModel three = count_launch(
      spec("three_loads", {"f32rand:{n}", "f32rand:{n}", "f32rand:{n}", "zeros:{4*n}", "i32:{n}"},
           "4096"));
  EXPECT_DOUBLE_EQ(three.count("sync.vmem_waits"), 3 * waves);
  EXPECT_DOUBLE_EQ(three.count("sync.memory_phases"), waves);
  // The second load's address is the first one's value: two phases per wave.
  KernelModel indexed = count_launch(
      spec("indexed", {"i32rand:{n}:0:4095", "f32rand:{n}", "zeros:{4*n}", "i32:{n}"}, "4096"));
  EXPECT_DOUBLE_EQ(indexed.count("sync.vmem_waits"), 2 * waves);
  EXPECT_DOUBLE_EQ(indexed.count("sync.memory_phases"), 2 * waves);
  // saxpy waits once for both of its loads.
  KernelModel saxpy =
      count_launch(spec("saxpy", {"f32:2", "f32rand:{n}", "f32rand:{n}", "i32:{n}"}, "4096"));
  EXPECT_DOUBLE_EQ(saxpy.count("sync.memory_phases"), waves);
  EXPECT_TRUE(check_kernel(three).empty());
}

TEST(Binary, DivergentTripCountsCountActiveLanesOnly) {
  const int n = 3000;
  KernelModel k = count_launch(spec("ragged", {"f32rand:{n}", "zeros:{4*n}", "i32:{n}"}, "3000"));
  double flops = 0;
  for (int i = 0; i < n; ++i) flops += 2 * (i % 7);  // one FMA per iteration, i % 7 iterations
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), flops);
  // The wave-level view would be much larger: every wave runs 6 iterations for its slowest lane.
  EXPECT_LT(k.count("ops.fp32.fma"), 6.0 * 64 * std::ceil(n / 64.0));
}

TEST(Binary, DivisionIsCountedAsNvidiasExpansion) {
  const double n = 512;
  KernelModel k = count_launch(
      spec("divide", {"f32rand:{n}:1:2", "f32rand:{n}:1:2", "zeros:{4*n}", "i32:{n}"}, "512"));
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.div"), n);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 10 * n);
  EXPECT_GT(k.count("ops.transcendental"), 0);  // v_rcp_f32: MUFU class, no FLOPs
}

TEST(Binary, InterleavedDivisionsAreCountedEachAsNvidias) {
  // The three expansions' instructions interleave with each other and with x * x; each
  // division is NVIDIA's 15 DP + 2 SP FLOP, the source's own arithmetic 5 DP FLOP.
  const double n = 1024;
  KernelModel k = count_launch(
      spec("three_divisions", {"f64rand:{n}", "zeros:{8*n}", "f64:3", "f64:5", "f64:7", "i32:{n}"},
           "1024"));
  EXPECT_DOUBLE_EQ(k.count("ops.fp64.div"), 3 * n);
  EXPECT_DOUBLE_EQ(k.count("flops.fp64"), (5 + 3 * 15) * n);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 3 * 2 * n);
}

TEST(Binary, IntegerDivisionIsNoFlop) {
  const double n = 640;
  KernelModel k = count_launch(
      spec("int_divide", {"i32rand:{n}:0:100000", "zeros:{4*n}", "i32:7", "i32:{n}"}, "640"));
  EXPECT_GT(k.count("ops.transcendental"), 0);  // the v_rcp_iflag_f32 is there
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), n);   // only the add
}

TEST(Binary, ExpfIsCountedAsNvidiasExpansion) {
  KernelModel k =
      count_launch(spec("exponential", {"f32rand:{n}:-4:4", "zeros:{4*n}", "i32:{n}"}, "1000"));
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.exp"), 1000);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 10 * 1000);
  EXPECT_TRUE(check_kernel(k).empty());
  KernelModel fast = count_launch(
      spec("fast_exponential", {"f32rand:{n}:-4:4", "zeros:{4*n}", "i32:{n}"}, "1000"));
  EXPECT_DOUBLE_EQ(fast.count("ops.fp32.exp"), 0);
  EXPECT_DOUBLE_EQ(fast.count("flops.fp32"), 1000);
}

// NVIDIA's FLOPs per call from our Nsight Compute run on the H200 (bench/model/h200_mathfuncs.cu:
// one kernel per function over 2^20 inputs in [0.1, 2)): FADD + FMUL + 2 FFMA over the calls.
double nvidia_flops_per_call(const std::string& kernel) {
  std::ifstream in(std::string(WAVEKIT_MODEL_TEST_DATA) +
                   "/../../../bench/model/h200/mathfuncs.csv");
  std::string line;
  std::vector<std::string> header;
  auto fields = [](const std::string& row) {
    std::vector<std::string> out;
    std::string cell;
    bool quoted = false;
    for (char c : row) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        out.push_back(cell), cell.clear();
      else
        cell += c;
    }
    out.push_back(cell);
    return out;
  };
  auto number = [](std::string v) {
    std::erase(v, ',');
    return std::stod(v);
  };
  while (std::getline(in, line)) {
    auto row = fields(line);
    if (header.empty()) {
      header = row;
      continue;
    }
    if (row.size() != header.size() || row[0] != "nvcc -O3" || row[1].rfind(kernel + "(", 0) != 0)
      continue;
    double flops = 0;
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      if (h.find("_op_fadd_pred_on.sum") != std::string::npos ||
          h.find("_op_fmul_pred_on.sum") != std::string::npos)
        flops += number(row[i]);
      if (h.find("_op_ffma_pred_on.sum") != std::string::npos) flops += 2 * number(row[i]);
    }
    return flops / (1 << 20);
  }
  return -1;
}

TEST(Binary, LibraryCallsAreCountedAsNvidiasMeasuredOnes) {
  for (const char* kernel :
       {"f_div", "f_rsqrtf", "f_sigmoid", "f_sqrtf", "f_logf", "f_exp2f", "f_powf"}) {
    double nvidia = nvidia_flops_per_call(kernel);
    ASSERT_GE(nvidia, 0) << kernel << " is not in bench/model/h200/mathfuncs.csv";
    KernelModel k =
        count_launch(spec(kernel, {"f32rand:{n}:0.1:2", "zeros:{4*n}", "i32:{n}"}, "1000"));
    EXPECT_DOUBLE_EQ(k.count("flops.fp32") / 1000, nvidia) << kernel;
    EXPECT_TRUE(check_kernel(k).empty()) << kernel;
  }
  // The numbers themselves (Nsight Compute 2025.3.1, nvcc 13.0, sm_90).
  EXPECT_DOUBLE_EQ(nvidia_flops_per_call("f_div"), 5);
  EXPECT_DOUBLE_EQ(nvidia_flops_per_call("f_rsqrtf"), 0);
  EXPECT_DOUBLE_EQ(nvidia_flops_per_call("f_powf"), 62);  // 61 and the exponent's add
  EXPECT_DOUBLE_EQ(nvidia_flops_per_call("f_exp2f"), 0);
  // LLVM's denormal-range wrappers around the hardware log2 and exp2 are no FLOPs: the fast
  // powf is its multiply (and the exponent's add), -use_fast_math's 2 on the H200.
  KernelModel fast =
      count_launch(spec("f_fast_powf", {"f32rand:{n}:0.1:2", "zeros:{4*n}", "i32:{n}"}, "1000"));
  EXPECT_DOUBLE_EQ(fast.count("flops.fp32"), 2 * 1000);
  // powf of a loop-invariant base: the log part once per thread, the exp part per iteration.
  const double n = 500, steps = 7;
  KernelModel k = count_launch(
      spec("pow_loop", {"f32rand:{n}", "zeros:{4*n}", "f32:0.9", "i32:7", "i32:{n}"}, "500"));
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), n * (37 + steps * (24 + 1)));
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.library"), n * (1 + steps));
}

TEST(Binary, ClangCudaMathIsCountedAsItsLibdevices) {
  // The shim's WAVEKIT_MATH_CLANG_CUDA, against the SASS of clang-22 -x cuda for sm_86 with CUDA
  // 12.6's libdevice and ptxas 12.6 (gpuFLOPBench's build): sqrtf is sqrt.approx.f32 (MUFU.SQRT:
  // no FLOPs), tanhf below |x| = 0.6 an FMUL and 5 FFMA (11 FLOP), from there an FMUL, an FADD
  // and an FFMA around MUFU.EX2 and MUFU.RCP (4).
  LaunchSpec s = spec("f_sqrtf", {"f32rand:{n}:0.1:2", "zeros:{4*n}", "i32:{n}"}, "1000");
  s.code_object = build_hip(WAVEKIT_MODEL_TEST_SOURCE,
                            (fs::temp_directory_path() / "wkm-clang-cuda-math").string(),
                            {"-DWAVEKIT_MATH_CLANG_CUDA"});
  EXPECT_DOUBLE_EQ(count_launch(s).count("flops.fp32"), 0);
  s.kernel = "f_tanhf";
  for (auto [x, flops] : {std::pair{"0.3", 11}, {"-0.5", 11}, {"0.6", 4}, {"-1.5", 4}, {"20", 4}}) {
    s.arguments[0] = std::string("f32fill:{n}:") + x;
    EXPECT_DOUBLE_EQ(count_launch(s).count("flops.fp32"), flops * 1000) << "tanhf(" << x << ")";
  }
}

TEST(Binary, PointwiseCountsEachNvidiaBuildsMath) {
  // HeCBench's pointwise LSTM cell, read in place (third-party: never copied): per thread 12
  // additions of the gates, three sigmoids 1 / (1 + expf(-g)) at 16 FLOP, two tanhf, 4 FLOP of
  // the cell. With every gate 1.0 and the cell's input 0.5 both tanhf arguments are above 0.6:
  // nvcc 13 has tanhf 13 there (90 a thread, the H200's count), clang -x cuda with CUDA 12.6's
  // libdevice 4 (72, gpuFLOPBench's RTX 3080 count). clang interleaves the sigmoids' expf
  // expansions with the tanhf's exp2 in the second build: each is found by its registers. In
  // that build 2 FLOP more remain: the unused half of the cell's v_pk_fma_f32 is written again on
  // both sides of tanhf's branch, which the liveness (a masked write ends nothing) cannot see.
  std::string root = std::string(WAVEKIT_SHARED_DATA) + "/hecbench/src";
  std::string source = root + "/pointwise-hip/main.cu";
  if (!fs::exists(source)) GTEST_SKIP() << source << " is absent (shared data not checked out)";
  const double threads = 256;
  LaunchSpec s;
  s.kernel = "elementWise_fp";
  s.blocks = {"1"};
  s.block = {"256"};
  s.arguments = {"i32:64",           "i32:4",      "f32fill:1024:0.25", "f32fill:1024:0.25",
                 "f32fill:512:0.25", "zeros:4096", "zeros:1024",        "zeros:1024",
                 "f32fill:256:0.5",  "zeros:1024"};
  s.host_threads = 2;
  s.code_object = build_hip(source, (fs::temp_directory_path() / "wkm-pointwise").string(), {});
  KernelModel nvcc = count_launch(s);
  EXPECT_DOUBLE_EQ(nvcc.count("flops.fp32"), 90 * threads);
  EXPECT_DOUBLE_EQ(nvcc.count("ops.fp32.exp"), 3 * threads);
  s.code_object = build_hip(source, (fs::temp_directory_path() / "wkm-pointwise-clang").string(),
                            {"-DWAVEKIT_MATH_CLANG_CUDA"});
  KernelModel clang = count_launch(s);
  EXPECT_DOUBLE_EQ(clang.count("flops.fp32"), (72 + 2) * threads);
  EXPECT_DOUBLE_EQ(clang.count("ops.fp32.exp"), 3 * threads);
}

TEST(Binary, QrgIcndCountsNvidiasPathsPerElement) {
  // HeCBench's qrg icnd, read in place (third-party: never copied): per element either the
  // rational approximation (29 FLOP in nvcc's SASS: the FFMA and FADD of the input's scaling, the
  // square, 7 FFMA, the multiply, the division's 10) or the tail (the same 3, two logf at 24, 8
  // FFMA; nvcc's negation is an FADD clang folds into a sign flip: 67). clang pairs the two
  // polynomials into v_pk_fma_f32, two of them with an unused half, which count nothing; the
  // logf calls are the shim's marked ones. The branch per element from a CPU evaluation.
  std::string root = std::string(WAVEKIT_SHARED_DATA) + "/hecbench/src";
  std::string source = root + "/qrg-hip/main.cu";
  if (!fs::exists(source)) GTEST_SKIP() << source << " is absent (shared data not checked out)";
  const unsigned path_n = 4096, distance = 0xffffffffu / (path_n + 1);
  LaunchSpec s;
  s.code_object = build_hip(source, (fs::temp_directory_path() / "wkm-qrg").string(),
                            {"-I" + root + "/qrg-cuda"});
  s.kernel = "icnd";
  s.blocks = {"4"};
  s.block = {"128"};
  s.arguments = {"zeros:16384", "u32:4096", "u32:" + std::to_string(distance)};
  s.host_threads = 2;
  KernelModel k = count_launch(s);
  const float x1 = 1.0f / float(0xffffffffu), x2 = x1 / 2.0f;
  double expected = 0;
  for (unsigned pos = 0; pos < path_n; ++pos) {
    unsigned x = (pos + 1) * distance;
    if (x >= 0x80000000u) x = 0xffffffffu - x;
    float p2 = std::fmaf(float(x), x1, x2) - 0.5f;
    expected += p2 > -0.42f ? 29 : 67;
  }
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), expected);
  EXPECT_TRUE(check_kernel(k).empty());
}

TEST(Binary, APackedHalfWrittenAgainAcrossTheLoopCountsNothing) {
  const double n = 256, voxels = 16;
  KernelModel k = count_launch(spec("phase_sums",
                                    {"f32rand:16", "f32rand:16", "f32rand:{n}", "zeros:{4*n}",
                                     "zeros:{4*n}", "i32:16", "i32:{n}"},
                                    "256"));
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 10 * voxels * n);
}

TEST(Binary, ChainsOfUnusedPackedHalvesCountNothing) {
  // HeCBench's dct8x8 IDCT8x8, read in place (third-party: never copied): each thread runs the
  // 8-point IDCT twice (a column, then a row). Counted from the source's expressions, one IDCT
  // has 14 additions (D0 +- D4, the four sums of those with the even terms, the eight outputs'
  // sums), 14 multiplies (the outputs' scaling, the first product of each of the six sums of
  // products) and 14 multiply-adds (the other products of those sums): 56 FLOP, 112 a thread,
  // as both NVIDIA builds count (14 per pixel). clang computes the first IDCT in v_pk_fma_f32
  // pairs whose unused halves carry chains of sums nobody reads, some of them selected away by
  // op_sel.
  std::string root = std::string(WAVEKIT_SHARED_DATA) + "/hecbench/src";
  std::string source = root + "/dct8x8-hip/kernels.cu";
  if (!fs::exists(source)) GTEST_SKIP() << source << " is absent (shared data not checked out)";
  const double width = 256, height = 16, threads = width * height / 8;
  LaunchSpec s;
  s.code_object = build_hip(source, (fs::temp_directory_path() / "wkm-dct8x8").string(),
                            {"-I" + root + "/dct8x8-cuda"});
  s.kernel = "IDCT8x8_kernel";
  s.blocks = {"8", "1"};
  s.block = {"32", "2"};
  s.arguments = {"zeros:16384", "f32rand:4096:-100:100", "u32:256", "u32:16", "u32:256"};
  s.host_threads = 2;
  KernelModel k = count_launch(s);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 112 * threads);
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.fma"), 28 * threads);
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.mul"), 28 * threads);
  EXPECT_DOUBLE_EQ(k.count("ops.fp32.add"), 28 * threads);
  EXPECT_TRUE(check_kernel(k).empty());
}

TEST(Binary, DoubleLoopFlops) {
  const double n = 700, reps = 9;
  KernelModel k = count_launch(
      spec("dloop", {"f64:1.0001", "f64rand:{n}", "zeros:{8*n}", "i32:{n}", "i32:9"}, "700"));
  EXPECT_DOUBLE_EQ(k.count("flops.fp64"), (2 * reps + 1) * n);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 0);
  EXPECT_DOUBLE_EQ(k.count("memory.global.load.bytes"), 8 * n);
}

TEST(Binary, L2ModelSeesReuseAndCapacity) {
  const double n = 16384;
  LaunchSpec s = spec("gather", {"f32rand:256", "zeros:{4*n}", "i32:{n}"}, "16384");
  KernelModel big = count_launch(s);
  EXPECT_DOUBLE_EQ(big.count("dram.read.bytes"), 1024);  // the table, once
  EXPECT_DOUBLE_EQ(big.count("dram.write.bytes"), 4 * n);
  EXPECT_DOUBLE_EQ(big.count("memory.global.load.bytes"), 4 * n);
  EXPECT_GT(big.count("l2.hit_rate"), 0.9 * 0.5);
  // An L2 of 512 bytes cannot hold the table while the stores stream through it.
  CountOptions tiny;
  tiny.cache.l2_bytes = 512;
  tiny.cache.associativity = 2;
  KernelModel small = count_launch(s, tiny);
  EXPECT_GT(small.count("dram.read.bytes"), 4 * 1024);
  EXPECT_DOUBLE_EQ(small.count("dram.write.bytes"), 4 * n);
}

TEST(Binary, ADramAccessFetchesTheMachinesGranule) {
  // A column read: one 4-byte load per 16 KiB row, each its own L2 sector. The H200 reads 64 B
  // of DRAM per row (Nsight Compute: bench/model/h200/sectors.csv, h200_sectors.cu), as its
  // machine file's memory.dram_fetch_bytes says; without it the model fetches the 32-B sector.
  const double n = 2048;
  LaunchSpec s = spec("column", {"zeros:{4*n*4096}", "zeros:{4*n}", "i32:4096", "i32:{n}"}, "2048");
  CountOptions h200;
  h200.cache = CacheModel::of(load_machine("h200"));
  EXPECT_EQ(h200.cache.dram_fetch_bytes, 64u);
  EXPECT_DOUBLE_EQ(count_launch(s, h200).count("dram.read.bytes"), 64 * n);
  EXPECT_DOUBLE_EQ(count_launch(s).count("dram.read.bytes"), 32 * n);
  // A contiguous copy reads each sector once either way.
  LaunchSpec c = spec("copy", {"f32rand:{n}", "zeros:{4*n}", "i32:{n}"}, "2048");
  EXPECT_DOUBLE_EQ(count_launch(c, h200).count("dram.read.bytes"), 4 * n);
}

TEST(Binary, L1ModelCatchesReuseWithinAUnit) {
  // gather: every wave reads the same 1 KiB table. With one unit's L1 in front, the table's
  // sectors reach the L2 once (32 sectors); the stores all pass (4n / 32 sectors).
  const double n = 4096;
  LaunchSpec s = spec("gather", {"f32rand:256", "zeros:{4*n}", "i32:{n}"}, "4096");
  CountOptions one_unit;
  one_unit.cache.units = 1;
  one_unit.cache.l1_bytes = 64 * 1024;
  KernelModel k = count_launch(s, one_unit);
  EXPECT_DOUBLE_EQ(k.count("l2.request.bytes"), 1024 + 4 * n);
  EXPECT_GT(k.count("l1.hit_rate"), 0.9);
  EXPECT_DOUBLE_EQ(k.count("dram.read.bytes"), 1024);
  // Without the L1 every wave's table read reaches the L2.
  KernelModel none = count_launch(s);
  EXPECT_DOUBLE_EQ(none.count("l2.request.bytes"), (n / 64) * 8 * 32 + 4 * n);
}

TEST(Binary, LdsBytesOfABlockSum) {
  KernelModel k = count_launch(spec("block_sum", {"f32rand:{n}", "zeros:{4*n/256}"}, "1024"));
  const double blocks = 4;
  // Per block: 256 stores of the inputs + sum over s of s stores (1020): 2044 stores of 4 bytes.
  EXPECT_DOUBLE_EQ(k.count("memory.lds.store.bytes"), blocks * 4 * (256 + 255));
  // Reads: two per active lane per level (8 * 255 bytes), and part[0] once.
  EXPECT_GE(k.count("memory.lds.load.bytes"), blocks * 8 * 255);
  EXPECT_LE(k.count("memory.lds.load.bytes"), blocks * (8 * 255 + 8));
  EXPECT_DOUBLE_EQ(k.count("memory.global.load.bytes"), 4 * 1024);
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), blocks * 255);
  EXPECT_EQ(k.count("resources.lds_bytes_per_block"), 1024);
}

TEST(Binary, DynamicLdsIsGivenAtLaunch) {
  LaunchSpec s = spec("dynamic_block_sum", {"f32rand:{n}", "zeros:{4*n/256}"}, "1024");
  s.dynamic_lds = "{4*256}";
  KernelModel k = count_launch(s);
  KernelModel fixed = count_launch(spec("block_sum", {"f32rand:{n}", "zeros:{4*n/256}"}, "1024"));
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), fixed.count("flops.fp32"));
  EXPECT_DOUBLE_EQ(k.count("memory.lds.store.bytes"), fixed.count("memory.lds.store.bytes"));
  // The occupancy limit sees the launch's LDS, not only the kernel's fixed segment.
  EXPECT_EQ(k.count("resources.lds_bytes_per_block"), 1024);
  s.dynamic_lds = "-4";
  EXPECT_NE(error_of([&] { count_launch(s); }).find("--lds"), std::string::npos);
}

TEST(Binary, ShimComesBeforeTheSourcesHeaders) {
  // As hipcc's runtime wrapper: a header included before hip_runtime.h (clang's
  // cuda_wrappers/<algorithm>) needs __host__ __device__ and ::malloc; __ldg and exp(float) are
  // HIP's.
  fs::path source = fs::temp_directory_path() / "wavekit-model-order.hip";
  std::ofstream(source) << "#include <algorithm>\n#include <hip/hip_runtime.h>\n"
                           "__global__ void k(const float* x, float* y) {\n"
                           "  y[threadIdx.x] = exp(__ldg(x + threadIdx.x));\n}\n";
  std::string object;
  EXPECT_EQ(error_of([&] {
              object = build_hip(source.string(), (fs::temp_directory_path() / "wkm").string());
            }),
            "");
  EXPECT_TRUE(fs::exists(object));
}

TEST(Binary, FindsACppKernelByItsName) {
  KernelModel k = count_launch(spec("scale", {"f32rand:{n}", "f32:3", "i32:{n}"}, "256"));
  EXPECT_EQ(k.name.substr(0, 12), "void scale<f");
  EXPECT_EQ(k.symbol.substr(0, 2), "_Z");
  EXPECT_DOUBLE_EQ(k.count("flops.fp32"), 256);
}

TEST(Binary, BadInputIsNamed) {
  EXPECT_NE(
      error_of([] { count_launch(spec("nosuch", {}, "64")); }).find("no kernel named 'nosuch'"),
      std::string::npos);
  EXPECT_NE(error_of([] { count_launch(spec("saxpy", {"f32:2"}, "64")); }).find("argument"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              count_launch(spec("saxpy", {"f32:2", "f32rand:x", "zeros:4", "i32:1"}, "64"));
            }).find("f32rand:x"),
            std::string::npos);
  fs::path bad = fs::temp_directory_path() / "wavekit-model-bad.hip";
  std::ofstream(bad)
      << "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = undeclared; }\n";
  std::string message =
      error_of([&] { build_hip(bad.string(), (fs::temp_directory_path() / "wkm").string()); });
  EXPECT_NE(message.find("does not build"), std::string::npos);
  EXPECT_NE(message.find("undeclared"), std::string::npos);
}

TEST(Binary, FitExtrapolatesAndIsCheckedAtAHeldOutSize) {
  std::vector<KernelModel> runs;
  for (const char* n : {"1024", "2048", "4096"})
    runs.push_back(
        count_launch(spec("saxpy", {"f32:2", "f32rand:{n}", "f32rand:{n}", "i32:{n}"}, n)));
  KernelModel check =
      count_launch(spec("saxpy", {"f32:2", "f32rand:{n}", "f32rand:{n}", "i32:{n}"}, "8192"));
  FitOutcome fit = fit_counts("n", runs, check);
  EXPECT_EQ(fit.model.counts_expression.at("flops.fp32"), "2*n");
  EXPECT_EQ(fit.model.counts_expression.at("memory.global.load.bytes"), "8*n");
  EXPECT_LT(fit.worst_check_error, 1e-9) << fit.worst_check_count;
  KernelModel large = fit.model.at({{"n", double(1 << 26)}});
  EXPECT_DOUBLE_EQ(large.count("flops.fp32"), double(1 << 27));
  EXPECT_EQ(large.blocks[0], std::uint64_t(1 << 18));
  EXPECT_DOUBLE_EQ(large.count("dram.read.bytes"), 8.0 * (1 << 26));
  // DRAM-bound on the RTX 3080; on the H200 a load pair and a store per thread are 24 KB in
  // flight per SM at full occupancy, where the measured phase latency (648-1127 ns at 16-32 KB)
  // holds the kernel below the achieved bandwidth (as HeCBench's atan2 and swish measured
  // there): latency-bound, within 1.5x of the DRAM term.
  EXPECT_EQ(predict(large, load_machine("rtx3080")).bound, "dram");
  Prediction p = predict(large, load_machine("h200"));
  EXPECT_EQ(p.bound, "latency");
  double dram_term = 0;
  for (const Term& t : p.terms)
    if (t.name == "dram") dram_term = t.seconds;
  EXPECT_GT(p.seconds, dram_term);
  EXPECT_LT(p.seconds, 1.5 * dram_term);
  // A fit that misses the held-out point says so.
  std::vector<KernelModel> two(runs.begin(), runs.begin() + 2);
  KernelModel skewed = check;
  skewed.counts["flops.fp32"] *= 1.5;
  EXPECT_NEAR(fit_counts("n", two, skewed).worst_check_error, 0.5 / 1.5, 1e-9);
}

TEST(Binary, TrafficFitsGrowNoFasterThanTheBytesMoved) {
  // Global bytes linear in n, the L2 model's DRAM bytes curving up at the small sizes (its
  // warm-up): the DRAM fit is held to degree 1, linear through the last two runs.
  std::vector<KernelModel> runs(3);
  for (int i = 0; i < 3; ++i) {
    double n = i + 1;
    runs[i].name = "k";
    runs[i].parameters["n"] = n;
    runs[i].counts["memory.global.load.bytes"] = 100 * n;
    runs[i].counts["dram.read.bytes"] = std::vector<double>{100, 190, 310}[i];
  }
  KernelModel at = fit_counts("n", runs, std::nullopt).model.at({{"n", 100}});
  EXPECT_DOUBLE_EQ(at.count("memory.global.load.bytes"), 10000);
  EXPECT_DOUBLE_EQ(at.count("dram.read.bytes"), 120 * 100 - 50);
}

TEST(Binary, FitPolynomialPicksTheLowestDegree) {
  EXPECT_EQ(*fit_polynomial("n", {1, 2, 3}, {5, 5, 5}, 1e-9), "5");
  EXPECT_EQ(*fit_polynomial("n", {1, 2, 3, 4}, {3, 8, 15, 24}, 1e-9), "1*n^2 + 2*n");
  EXPECT_FALSE(fit_polynomial("n", {1, 2, 3, 4, 5, 6}, {1, 0, 1, 0, 1, 0}, 1e-9).has_value());
  EXPECT_FALSE(fit_polynomial("n", {1, 2, 3, 4}, {3, 8, 15, 24}, 1e-9, 1).has_value());
}

TEST(Cli, ModelOfAHipSourceAsJson) {
  std::string out = (fs::temp_directory_path() / "wavekit-model-cli.json").string();
  std::string command =
      std::string(WAVEKIT_CLI) + " model " + WAVEKIT_MODEL_TEST_SOURCE +
      " --kernel saxpy --blocks '{n/256}' --param n=2048 --arg f32:2 --arg 'f32rand:{n}'"
      " --arg 'f32rand:{n}' --arg 'i32:{n}' --machine h200 --machine mi250x --threads 2"
      " --build-dir " +
      (fs::temp_directory_path() / "wavekit-model-cli").string() + " --json > " + out +
      " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(out));
  const auto& kernel = doc["kernels"][0];
  EXPECT_EQ(kernel["model"]["counts"]["flops.fp32"], 4096);
  ASSERT_EQ(kernel["predictions"].size(), 2u);
  EXPECT_EQ(kernel["predictions"][1]["machine"], "mi250x");
  EXPECT_GT(kernel["predictions"][0]["seconds"].get<double>(), 0);
  // A machine file with a missing field: exit status 1 and the field named.
  std::string bad = std::string(WAVEKIT_CLI) + " model " + WAVEKIT_MODEL_KERNELS +
                    " --kernel saxpy --blocks 1 --machine /nonexistent/m.json 2>&1";
  FILE* pipe = popen(bad.c_str(), "r");
  char buffer[512] = {};
  std::string text;
  while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
  int status = pclose(pipe);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("/nonexistent/m.json does not exist"), std::string::npos) << text;
}

namespace {

// Runs a command; returns its exit status and output (stdout and stderr).
std::pair<int, std::string> shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string text;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace

TEST(Cli, FitSaveCheckPredictAndCompare) {
  fs::path dir = fs::temp_directory_path() / "wavekit-model-cli-fit";
  fs::create_directories(dir);
  std::string cli = WAVEKIT_CLI;
  // Fit over three sizes, check at a fourth, keep the expressions (no --at).
  auto [status, text] =
      shell(cli + " model " + WAVEKIT_MODEL_KERNELS +
            " --kernel saxpy --blocks '{n/256}' --arg f32:2 --arg 'f32rand:{n}' --arg 'f32rand:{n}'"
            " --arg 'i32:{n}' --fit n=512,1024,2048 --check n=4096 --threads 2 --save-model " +
            (dir / "saxpy.json").string());
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("flops.fp32 = 2*n"), std::string::npos) << text;
  EXPECT_NE(text.find("held-out check at n = 4096: worst relative error 0 %"), std::string::npos)
      << text;
  // The saved model passes the evaluator and predicts at any size.
  std::tie(status, text) =
      shell(cli + " model check " + (dir / "saxpy.json").string() + " --param n=1000000");
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("0 problem(s)"), std::string::npos) << text;
  std::tie(status, text) =
      shell(cli + " model predict " + (dir / "saxpy.json").string() +
            " --param n=268435456 --machine rtx3080 --json > " + (dir / "pred.json").string());
  ASSERT_EQ(status, 0) << text;
  nlohmann::json prediction = nlohmann::json::parse(std::ifstream(dir / "pred.json"));
  const auto& p = prediction["kernels"][0]["predictions"][0];
  EXPECT_EQ(p["bound"], "dram");
  EXPECT_DOUBLE_EQ(p["fp32_flops"].get<double>(), 2.0 * 268435456);
  // 12 bytes per element at the RTX 3080's achieved bandwidth (plus its kernel floor).
  Machine rtx = load_machine("rtx3080");
  EXPECT_NEAR(p["seconds"].get<double>(),
              12.0 * 268435456 / rtx.get("achieved.dram_bandwidth") +
                  rtx.get("launch.kernel_floor_us") * 1e-6,
              1e-3 * p["seconds"].get<double>());
  // Compare with a measurement file of ours naming the kernel.
  std::ofstream(dir / "measured.csv")
      << "kernel,seconds,fp32_flops,dram_bytes\nsaxpy,0.0050,536870912,3221225472\n";
  std::tie(status, text) = shell(cli + " model compare " + (dir / "pred.json").string() + " " +
                                 (dir / "measured.csv").string());
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("FLOPs within 5 % for 1 of 1"), std::string::npos) << text;
  // An application model that breaks the schema is refused by name.
  std::ofstream(dir / "bad.json")
      << R"({"schema": "wavekit.model.application/1", "kernels": [{"name": "k",
      "launch": {"blocks": [1], "threads_per_block": [64]}, "counts": {"flops.fp32": "3*m"}}]})";
  std::tie(status, text) = shell(cli + " model check " + (dir / "bad.json").string());
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("uses parameter 'm'"), std::string::npos) << text;
  std::tie(status, text) = shell(cli + " model machines");
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("mi300x"), std::string::npos);
  fs::remove_all(dir);
}
