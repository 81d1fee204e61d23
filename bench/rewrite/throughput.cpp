// The rewriter's throughput: relocated instructions per second of wavekit::rewrite::rewrite
// (decode, analysis, placement, emission and the writing of the object), over
//
//   corpus     every tool on every corpus code object, all kernels at once (as `wavekit
//              rewrite` and a load-time rewrite do), each rewrite repeated --reps times;
//   generated  one object of many kernels generated at bench time (a .s of --kernels kernels
//              of --instructions instructions in all, assembled with clang-22 and linked with
//              ld.lld-22), rewritten by each tool that has points in it.
//
// It prints the median, min and max over the repetitions; the machine is shared, so compare
// builds in one session. With --out DIR every rewritten object (or the refusal's message) is
// written there, for comparing the bytes of two builds with cmp.
//
//   rewrite_throughput [--out DIR] [--reps N] [--kernels N] [--instructions N]
//                      [--source FILE.s] [--no-corpus] [--no-generated] [--tools a,b,...]
//
// (--source: the kernels of FILE.s, e.g. an earlier run's generated.s, instead of new ones.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

struct Options {
  std::filesystem::path out;
  std::filesystem::path work =
      std::filesystem::temp_directory_path() / "wavekit_rewrite_throughput";
  int reps = 5;
  unsigned kernels = 2000;
  std::uint64_t instructions = 2'000'000;
  bool corpus = true;
  bool generated = true;
  std::filesystem::path source;  // assemble this .s instead of generating one
  std::vector<std::string> tools;
};

// A deterministic generator (the same object on every run and machine).
struct Lcg {
  std::uint64_t state = 0x2545f4914f6cdd1dull;
  unsigned next(unsigned bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned>((state >> 33) % bound);
  }
};

// One kernel's body: blocks of VALU, SALU, global, LDS and PC-relative code, closed by forward
// branches, loops and EXEC-masked regions, as compiled kernels are; about `count` instructions.
// Registers, offsets and constants vary, so that instructions repeat about as often as in
// compiled code rather than in a handful of words.
std::string kernel_body(unsigned kernel, std::uint64_t count, Lcg& random) {
  std::ostringstream s;
  const std::string label = ".Lk" + std::to_string(kernel) + "_";
  auto v = [&]() { return "v" + std::to_string(2 + random.next(6)); };     // v2..v7
  auto sgpr = [&]() { return "s" + std::to_string(6 + random.next(8)); };  // s6..s13
  auto number = [&](unsigned bound) { return std::to_string(random.next(bound)); };
  s << "\ts_load_dwordx2 s[2:3], s[0:1], 0x0\n\ts_mov_b32 s14, 0\n\ts_mov_b32 s15, 0\n"
       "\tv_lshlrev_b32 v1, 2, v0\n\tv_mov_b32 v2, 0\n\ts_waitcnt lgkmcnt(0)\n";
  std::uint64_t emitted = 6;
  unsigned block = 0;
  unsigned open_forward = 0;  // forward branches whose label is still to come
  while (emitted + 4 < count) {
    s << label << block << ":\n";
    const unsigned here = block++;
    switch (random.next(6)) {
      case 0:
        s << "\tv_add_u32_e32 " << v() << ", " << v() << ", " << v() << "\n\tv_mul_lo_u32 " << v()
          << ", " << v() << ", v1\n\ts_add_u32 " << sgpr() << ", " << sgpr() << ", " << number(64)
          << "\n";
        emitted += 3;
        break;
      case 1:
        s << "\tglobal_load_dword " << v() << ", v1, s[2:3] offset:" << 4 * random.next(1024)
          << "\n\ts_waitcnt vmcnt(0)\n\tv_add_f32_e32 " << v() << ", " << v() << ", " << v()
          << "\n";
        emitted += 3;
        break;
      case 2:
        s << "\tv_mov_b32_e32 " << v() << ", 0x" << std::hex << (0x3f800000 + random.next(1 << 20))
          << std::dec << "\n\tv_fma_f32 " << v() << ", " << v() << ", " << v()
          << ", 1.0\n\tv_cvt_f32_u32_e32 " << v() << ", " << v() << "\n";
        emitted += 3;
        break;
      case 3:
        s << "\tds_write_b32 v1, " << v() << " offset:" << 4 * random.next(256)
          << "\n\ts_waitcnt lgkmcnt(0)\n\tds_read_b32 " << v()
          << ", v1 offset:" << 4 * random.next(256) << "\n\ts_waitcnt lgkmcnt(0)\n";
        emitted += 4;
        break;
      case 4:
        s << "\ts_getpc_b64 s[8:9]\n\ts_add_u32 s8, s8, 0x" << std::hex << 4 * random.next(4096)
          << std::dec << "\n\ts_addc_u32 s9, s9, 0\n\ts_load_dword " << sgpr()
          << ", s[8:9], 0x0\n\ts_waitcnt lgkmcnt(0)\n";
        emitted += 5;
        break;
      default:
        s << "\tv_cmp_gt_u32_e32 vcc, " << number(64)
          << ", v0\n\ts_and_saveexec_b64 s[12:13], vcc\n"
          << "\tv_add_u32_e32 " << v() << ", " << number(64) << ", " << v()
          << "\n\ts_or_b64 exec, exec, s[12:13]\n";
        emitted += 4;
        break;
    }
    // Close the block: fall through, branch forward over the next block, or loop back.
    switch (random.next(4)) {
      case 0:
        s << "\ts_cmp_lt_u32 s14, " << number(16) << "\n\ts_cbranch_scc1 " << label << "f"
          << open_forward << "\n";
        s << "\tv_add_u32_e32 " << v() << ", 1, " << v() << "\n"
          << label << "f" << open_forward << ":\n";
        ++open_forward;
        emitted += 3;
        break;
      case 1:
        s << "\ts_add_u32 s15, s15, 1\n\ts_cmp_lt_u32 s15, " << number(8) << "\n\ts_cbranch_scc1 "
          << label << here << "\n";
        emitted += 3;
        break;
      case 2:
        s << "\ts_cbranch_execz " << label << "e" << here << "\n\tv_add_u32_e32 " << v() << ", "
          << v() << ", " << v() << "\n"
          << label << "e" << here << ":\n";
        emitted += 2;
        break;
      default:
        break;
    }
  }
  s << "\tglobal_store_dword v1, v2, s[2:3]\n\ts_endpgm\n";
  return s.str();
}

// A gfx90a COV5 object of `kernels` kernels with about `instructions` instructions in all.
std::string generated_source(unsigned kernels, std::uint64_t instructions) {
  Lcg random;
  std::ostringstream s;
  s << "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n\t.amdhsa_code_object_version 5\n";
  std::ostringstream metadata;
  metadata << "---\namdhsa.kernels:\n";
  for (unsigned k = 0; k < kernels; ++k) {
    const std::string name = "generated_" + std::to_string(k);
    s << "\t.text\n\t.globl " << name << "\n\t.p2align 8\n\t.type " << name << ",@function\n"
      << name << ":\n"
      << kernel_body(k, instructions / kernels, random) << ".Lend" << k << ":\n\t.size " << name
      << ", .Lend" << k << "-" << name << "\n\t.rodata\n\t.p2align 6\n\t.amdhsa_kernel " << name
      << "\n\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1\n\t\t.amdhsa_next_free_vgpr 8\n"
      << "\t\t.amdhsa_next_free_sgpr 16\n\t\t.amdhsa_accum_offset 8\n"
      << "\t\t.amdhsa_group_segment_fixed_size 1024\n\t.end_amdhsa_kernel\n";
    metadata << "  - .args:\n      - .address_space: global\n        .offset: 0\n"
             << "        .size: 8\n        .value_kind: global_buffer\n"
             << "    .group_segment_fixed_size: 1024\n    .kernarg_segment_align: 8\n"
             << "    .kernarg_segment_size: 8\n    .max_flat_workgroup_size: 256\n"
             << "    .name: " << name << "\n    .private_segment_fixed_size: 0\n"
             << "    .sgpr_count: 16\n    .symbol: " << name << ".kd\n"
             << "    .vgpr_count: 8\n    .wavefront_size: 64\n";
  }
  metadata << "amdhsa.target: amdgcn-amd-amdhsa--gfx90a\namdhsa.version:\n  - 1\n  - 2\n...\n";
  s << "\t.amdgpu_metadata\n" << metadata.str() << "\t.end_amdgpu_metadata\n";
  return s.str();
}

void run_or_fail(const std::string& command) {
  if (std::system(command.c_str()) != 0) wavekit::fail("rewrite_throughput", "failed: " + command);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Job {
  std::string label;  // <object>.<tool>
  const wavekit::codeobj::CodeObject* object;
  wavekit::rewrite::Plan plan;
};

// Rewrites every job `reps` times; prints the median, min and max throughput over the
// repetitions, and the rewritten bytes (or the refusal) under `out` when given.
void measure(const char* what, const std::vector<Job>& jobs, int reps,
             const std::filesystem::path& out) {
  std::vector<double> rates, times;
  std::uint64_t relocated = 0;
  std::size_t refused = 0;
  for (int rep = 0; rep < reps; ++rep) {
    relocated = 0;
    refused = 0;
    double total = 0;
    for (const Job& job : jobs) {
      const auto start = std::chrono::steady_clock::now();
      std::string refusal;
      wavekit::rewrite::RewriteResult result;
      try {
        result = wavekit::rewrite::rewrite(*job.object, job.plan);
      } catch (const wavekit::Error& error) {
        refusal = error.what();
      }
      total += seconds_since(start);
      relocated += result.instructions_relocated;
      refused += refusal.empty() ? 0 : 1;
      if (rep == 0 && !out.empty()) {
        if (refusal.empty())
          wavekit::write_file((out / (job.label + ".co")).string(), result.bytes);
        else
          std::ofstream(out / (job.label + ".refused")) << refusal << "\n";
      }
    }
    times.push_back(total);
    rates.push_back(double(relocated) / total);
  }
  std::sort(rates.begin(), rates.end());
  std::sort(times.begin(), times.end());
  std::printf(
      "%s: %zu rewrites (%zu refused), %llu relocated instructions each pass; %d passes: "
      "median %.0f relocated instructions/s (min %.0f, max %.0f), median %.3f s per pass\n",
      what, jobs.size(), refused, static_cast<unsigned long long>(relocated), reps,
      rates[rates.size() / 2], rates.front(), rates.back(), times[times.size() / 2]);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

}  // namespace

int main(int argc, char** argv) try {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) wavekit::fail("rewrite_throughput", arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--out")
      options.out = value();
    else if (arg == "--reps")
      options.reps = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--kernels")
      options.kernels = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--instructions")
      options.instructions = std::strtoull(value().c_str(), nullptr, 0);
    else if (arg == "--no-corpus")
      options.corpus = false;
    else if (arg == "--no-generated")
      options.generated = false;
    else if (arg == "--source")
      options.source = value();
    else if (arg == "--tools")
      options.tools = split(value());
    else
      wavekit::fail("rewrite_throughput", "unknown option " + arg);
  }
  if (options.tools.empty()) options.tools = wavekit::rewrite::tool_names();
  if (!options.out.empty()) std::filesystem::create_directories(options.out);
  std::filesystem::create_directories(options.work);

  auto plan_for = [](const std::string& tool, const wavekit::codeobj::CodeObject& object) {
    wavekit::rewrite::Plan plan = wavekit::rewrite::tool_plan(tool);
    if (plan.has_calls())
      plan.probe_library = wavekit::rewrite::tool_probe_library(tool, object.target().processor);
    return plan;
  };

  if (options.corpus) {
    std::vector<wavekit::codeobj::CodeObject> inputs;
    std::vector<std::string> names;
    for (const wavekit::corpus::CorpusObject& object : wavekit::corpus::objects()) {
      if (object.fat_binary) continue;
      inputs.push_back(
          wavekit::codeobj::CodeObject::parse(wavekit::read_file(object.path), object.path));
      names.push_back(object.name);
    }
    std::vector<Job> jobs;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (const std::string& tool : options.tools)
        jobs.push_back({names[i] + "." + tool, &inputs[i], plan_for(tool, inputs[i])});
    measure("corpus", jobs, options.reps, options.out);
  }

  if (options.generated) {
    const std::filesystem::path source =
        options.source.empty() ? options.work / "generated.s" : options.source;
    const std::filesystem::path object = options.work / "generated.o";
    const std::filesystem::path linked = options.work / "generated.co";
    auto start = std::chrono::steady_clock::now();
    if (options.source.empty())
      std::ofstream(source) << generated_source(options.kernels, options.instructions);
    run_or_fail(std::string(WAVEKIT_CLANG) + " -target amdgcn-amd-amdhsa -mcpu=gfx90a -c " +
                source.string() + " -o " + object.string());
    run_or_fail(std::string(WAVEKIT_LLD) + " -shared " + object.string() + " -o " +
                linked.string());
    const double build_seconds = seconds_since(start);
    const std::vector<std::uint8_t> bytes = wavekit::read_file(linked.string());
    start = std::chrono::steady_clock::now();
    const auto input = wavekit::codeobj::CodeObject::parse(bytes, linked.string());
    const double parse_seconds = seconds_since(start);
    std::printf(
        "generated: %zu kernels, %zu bytes, assembled and linked in %.1f s, parsed in "
        "%.3f s\n",
        input.kernels().size(), bytes.size(), build_seconds, parse_seconds);
    for (const std::string& tool : options.tools) {
      std::vector<Job> jobs{{"generated." + tool, &input, plan_for(tool, input)}};
      measure(("generated " + tool).c_str(), jobs, options.reps, options.out);
    }
  }
  return 0;
} catch (const wavekit::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
