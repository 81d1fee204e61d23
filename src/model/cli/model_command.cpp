// `wavekit model`: counts, DRAM traffic and predicted time of a kernel launch on a machine;
// `wavekit model machines|predict|check|compare|agent`. Thin: the logic is in wavekit_model.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/model/agent.h"
#include "wavekit/model/binary.h"
#include "wavekit/model/compare.h"
#include "wavekit/model/machine.h"
#include "wavekit/model/predict.h"
#include "wavekit/model/program.h"
#include "wavekit/support/error.h"
#include "wavekit/support/install.h"

namespace {

using namespace wavekit;
using namespace wavekit::model;
namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) parts.push_back(item);
  return parts;
}

// "n=1024" -> {"n", 1024}
std::pair<std::string, std::string> key_value(const std::string& option, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw cli::UsageError(option + ": '" + text + "' is not NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Parameters parse_parameters(const std::vector<std::string>& items) {
  Parameters p;
  for (const auto& item : items) {
    auto [name, value] = key_value("--param", item);
    p[name] = cli::parse_double("--param " + name, value);
  }
  return p;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": " + e.what());
  }
}

std::string human(double v, const char* unit) {
  char b[64];
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) v /= 1000, ++i;
  std::snprintf(b, sizeof b, "%.4g %s%s", v, prefixes[i], unit);
  return b;
}

std::string seconds_text(double s) {
  char b[64];
  if (s < 1e-3)
    std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  else if (s < 1)
    std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else
    std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

void print_kernel(const KernelModel& k, const std::vector<Prediction>& predictions) {
  std::cout << "kernel " << k.name << "\n";
  std::cout << "  launch        " << k.blocks[0] << "x" << k.blocks[1] << "x" << k.blocks[2]
            << " blocks of " << k.threads_per_block[0] << "x" << k.threads_per_block[1] << "x"
            << k.threads_per_block[2] << " threads (" << k.threads() << " threads)\n";
  if (!k.parameters.empty()) {
    std::cout << "  parameters   ";
    for (const auto& [name, value] : k.parameters)
      std::cout << " " << name << "=" << format_number(value);
    std::cout << "\n";
  }
  auto row = [&](const char* label, double value, const char* unit) {
    std::cout << "  " << label
              << std::string(14 - std::min<std::size_t>(14, std::string(label).size()), ' ')
              << human(value, unit) << "\n";
  };
  row("FLOPs fp32", k.count("flops.fp32"), "FLOP");
  row("FLOPs fp64", k.count("flops.fp64"), "FLOP");
  if (k.count("flops.fp16")) row("FLOPs fp16", k.count("flops.fp16"), "FLOP");
  if (k.count("flops.matrix")) row("FLOPs matrix", k.count("flops.matrix"), "FLOP");
  std::cout << "  loads         " << human(k.count("memory.global.load.instructions"), "wave-instr")
            << " global, " << human(k.count("memory.global.load.bytes"), "B") << "; LDS "
            << human(k.count("memory.lds.load.bytes"), "B") << "; scalar "
            << human(k.count("memory.scalar.load.bytes"), "B") << "; private "
            << human(k.count("memory.private.load.bytes"), "B") << "\n";
  std::cout << "  stores        "
            << human(k.count("memory.global.store.instructions"), "wave-instr") << " global, "
            << human(k.count("memory.global.store.bytes"), "B") << "; LDS "
            << human(k.count("memory.lds.store.bytes"), "B") << "; private "
            << human(k.count("memory.private.store.bytes"), "B") << "\n";
  if (k.counts.count("dram.read.bytes"))
    std::cout << "  DRAM          " << human(k.count("dram.read.bytes"), "B") << " read, "
              << human(k.count("dram.write.bytes"), "B") << " written (footprint "
              << human(k.count("footprint.bytes"), "B") << ", L2 hit rate "
              << format_number(std::round(k.count("l2.hit_rate") * 1000) / 10) << " %)\n";
  for (const auto& note : k.notes) std::cout << "  note: " << note << "\n";
  for (const auto& p : predictions) {
    std::cout << "  on " << p.machine << ": " << seconds_text(p.seconds) << ", " << p.bound
              << "-bound\n";
    for (const auto& term : p.terms)
      std::cout << "    " << term.name
                << std::string(9 - std::min<std::size_t>(9, term.name.size()), ' ')
                << seconds_text(term.seconds) << "  (" << term.detail << ")\n";
  }
}

nlohmann::json kernel_output(const KernelModel& k, const std::vector<Prediction>& predictions,
                             const std::string& program) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : predictions) {
    nlohmann::json j = to_json(p);
    if (!program.empty()) j["program"] = program;
    list.push_back(j);
  }
  return {{"model", to_json(k)}, {"predictions", list}};
}

int run_machines(cli::Arguments args) {
  bool json = false;
  cli::OptionParser parser("wavekit model machines", "List the built-in machine models.");
  parser.flag("--json", &json, "print the machines' figures as JSON");
  if (auto code = parser.parse(args)) return *code;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& name : builtin_machines()) {
    Machine m = load_machine(name);
    if (json) {
      nlohmann::json figures = nlohmann::json::object();
      for (const auto& [path, f] : m.figures)
        figures[path] = {{"value", f.value}, {"unit", f.unit}, {"source", f.source}};
      out.push_back(
          {{"name", m.name}, {"title", m.title}, {"vendor", m.vendor}, {"figures", figures}});
      continue;
    }
    std::printf(
        "%-8s %-44s %4.0f units  FP32 %6.1f TFLOP/s  FP64 %6.2f TFLOP/s  DRAM %5.2f TB/s (achieved "
        "%5.2f)  L2 %5.1f MB\n",
        m.name.c_str(), m.title.c_str(), m.compute_units(), m.get("peak.fp32_flops") / 1e12,
        m.get("peak.fp64_flops") / 1e12, m.get("peak.dram_bandwidth") / 1e12,
        m.get("achieved.dram_bandwidth") / 1e12, m.get("memory.l2_bytes") / 1e6);
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

int run_predict(cli::Arguments args) {
  std::string file;
  std::vector<std::string> machines, params;
  bool json = false, peak = false;
  cli::OptionParser parser(
      "wavekit model predict",
      "Predict the time of every kernel of an application model (JSON, docs/model.md).");
  parser.positional("MODEL", &file, "application model JSON (schema wavekit.model.application/1)");
  parser.repeated("--machine", &machines, "NAME|FILE", "machine model (repeatable; default h200)");
  parser.repeated("--param", &params, "NAME=VALUE", "size parameter value (repeatable)");
  parser.flag("--peak", &peak, "use peak figures instead of achieved ones");
  parser.flag("--json", &json, "print JSON");
  if (auto code = parser.parse(args)) return *code;
  if (machines.empty()) machines.push_back("h200");
  ApplicationModel app = application_from_json(read_json(file), file);
  Parameters p = parse_parameters(params);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& kernel : app.kernels) {
    KernelModel k = kernel.at(p);
    std::vector<Prediction> predictions;
    for (const auto& name : machines)
      predictions.push_back(predict(k, load_machine(name), {peak, false}));
    if (json)
      out.push_back(kernel_output(k, predictions, app.program));
    else
      print_kernel(k, predictions);
  }
  if (json) std::cout << nlohmann::json{{"kernels", out}}.dump(2) << "\n";
  return 0;
}

int run_check(cli::Arguments args) {
  std::string file;
  std::vector<std::string> params;
  cli::OptionParser parser(
      "wavekit model check",
      "Check an application model: schema, units, consistency (the evaluator).");
  parser.positional("MODEL", &file, "application model JSON");
  parser.repeated("--param", &params, "NAME=VALUE", "size parameter value (repeatable)");
  if (auto code = parser.parse(args)) return *code;
  ApplicationModel app = application_from_json(read_json(file), file);
  Parameters p = parse_parameters(params);
  int problems = 0;
  for (const auto& kernel : app.kernels) {
    for (const auto& problem : check_kernel(kernel.at(p))) {
      std::cout << kernel.name << ": " << problem << "\n";
      ++problems;
    }
  }
  std::cout << app.kernels.size() << " kernel(s), " << problems << " problem(s)\n";
  return problems ? 1 : 0;
}

int run_compare(cli::Arguments args) {
  std::string predictions_file, measured, machine;
  bool json = false;
  cli::OptionParser parser(
      "wavekit model compare",
      "Compare predictions (wavekit model --json output) with measurements: an Nsight\n"
      "Compute CSV (--csv --page raw), gpuFLOPBench's profiling-data.csv, or\n"
      "kernel,seconds,fp32_flops,fp64_flops,dram_bytes.");
  parser.positional("PREDICTIONS", &predictions_file,
                    "JSON from wavekit model --json (or predict --json)");
  parser.positional("MEASURED", &measured, "CSV of measurements");
  parser.option("--machine", &machine, "NAME", "only the predictions for this machine");
  parser.flag("--json", &json, "print JSON");
  if (auto code = parser.parse(args)) return *code;
  nlohmann::json document = read_json(predictions_file);
  std::vector<nlohmann::json> predictions;
  auto collect = [&](const nlohmann::json& kernels) {
    for (const auto& k : kernels)
      if (k.contains("predictions"))
        for (const auto& p : k["predictions"])
          if (machine.empty() || p.value("machine", "") == machine) predictions.push_back(p);
  };
  if (document.is_object() && document.contains("kernels"))
    collect(document["kernels"]);
  else if (document.is_array())
    collect(document);
  if (predictions.empty())
    throw Error(predictions_file + ": no predictions in it (expected wavekit model --json output)");
  auto rows = compare(predictions, read_measurements(measured));
  auto summary = summarise(rows);
  if (json)
    std::cout << to_json(rows, summary).dump(2) << "\n";
  else
    std::cout << comparison_table(rows, summary);
  return 0;
}

int run_agent(cli::Arguments args) {
  std::string source, endpoint, model_name, kernel, launch, output, key_env = "OPENAI_API_KEY";
  std::vector<std::string> binary_args;
  cli::OptionParser parser(
      "wavekit model agent",
      "Ask a language model (OpenAI-compatible chat completions at --endpoint) for the\n"
      "application model of a kernel from its source, check the answer with the\n"
      "evaluator, and print it. Optional; no accuracy is claimed for it.");
  parser.positional("SOURCE", &source, "kernel source file (HIP/CUDA)");
  parser.option("--endpoint", &endpoint, "URL",
                "chat-completions endpoint, e.g. http://127.0.0.1:8000/v1");
  parser.option("--model", &model_name, "NAME", "model name the endpoint serves");
  parser.option("--kernel", &kernel, "NAME", "the kernel to model");
  parser.option("--launch", &launch, "TEXT", "launch configuration and arguments, in words");
  parser.option("--api-key-env", &key_env, "VAR",
                "environment variable holding the API key (default OPENAI_API_KEY)");
  parser.option("--output", &output, "FILE", "write the checked model there");
  if (auto code = parser.parse(args)) return *code;
  if (endpoint.empty()) throw cli::UsageError("--endpoint is required");
  if (kernel.empty()) throw cli::UsageError("--kernel is required");
  AgentRequest request;
  request.endpoint = endpoint;
  request.model = model_name;
  if (const char* key = std::getenv(key_env.c_str())) request.api_key = key;
  std::ifstream in(source);
  if (!in) throw Error("cannot open " + source);
  std::stringstream text;
  text << in.rdbuf();
  request.source = text.str();
  request.kernel = kernel;
  request.launch = launch;
  AgentResult result = ask_agent(request);
  for (const auto& problem : result.problems)
    std::cerr << "wavekit model agent: " << problem << "\n";
  std::string dump = to_json(result.model).dump(2);
  if (!output.empty()) {
    std::ofstream out(output);
    out << dump << "\n";
  }
  std::cout << dump << "\n";
  return result.problems.empty() ? 0 : 1;
}

// `wavekit model run -- PROGRAM`: the whole-program path (wavekit/model/program.h).
int run_program_model(cli::Arguments args) {
  std::vector<std::string> command, machines;
  std::string kernels, launches_text, timeout_text, target, save, program_name;
  bool json = false, peak = false, no_cache = false;
  cli::OptionParser parser(
      "wavekit model run",
      "Run an unmodified application (a HIP program built with hipcc, or an HSA program) on\n"
      "the emulator and model every kernel dispatch it makes, as `wavekit model` models one\n"
      "launch: FLOPs, loads, stores, DRAM bytes (the first --machine's L2 model) and the time\n"
      "predicted on each --machine, per kernel and for the program. The program's own host\n"
      "code chooses the sizes and the data.");
  parser.repeated("--machine", &machines, "NAME|FILE", "machine model (repeatable; default h200)");
  parser.option("--kernels", &kernels, "REGEX", "count only the kernels whose name this finds");
  parser.option("--launches", &launches_text, "N",
                "count the first N launches of each kernel (default all); the others run "
                "uncounted, their time estimated from the counted ones");
  parser.option("--target", &target, "PROCESSOR", "the emulated GPU (gfx908, gfx90a, gfx942)");
  parser.option("--timeout", &timeout_text, "SECONDS", "stop the program after this long");
  parser.option("--save-model", &save, "FILE", "write the application model (JSON) there");
  parser.option("--program", &program_name, "NAME",
                "the program's name in the predictions, which model compare matches with a "
                "measurement file's (default: the command)");
  parser.flag("--no-cache-model", &no_cache, "skip the address trace and L2 model (no DRAM bytes)");
  parser.flag("--peak", &peak, "predict with peak figures instead of achieved ones");
  parser.flag("--json", &json,
              "print JSON (the program's stdout goes to stderr): {program, exit_status, kernels: "
              "[{model, predictions}] per counted launch, summary}");
  parser.rest("PROGRAM [ARGS]", &command, "the application and its arguments");
  if (auto code = parser.parse(args)) return *code;
  if (machines.empty()) machines.push_back("h200");
  std::vector<Machine> machine_models;
  for (const auto& name : machines) machine_models.push_back(load_machine(name));

  ProgramSpec spec;
  spec.command = command;
  spec.emulator_runtime_dir = companion_path("emulator", WAVEKIT_EMULATOR_RUNTIME_DIR);
  spec.observer_module = companion_path("libwavekit-model-observer.so", WAVEKIT_MODEL_OBSERVER);
  spec.emulated_target = target;
  spec.cache_machine = no_cache ? "" : machine_models.front().file;
  spec.kernels = kernels;
  if (!launches_text.empty()) spec.launches = cli::parse_unsigned("--launches", launches_text);
  if (!timeout_text.empty()) {
    spec.timeout_seconds = cli::parse_double("--timeout", timeout_text);
    if (!(spec.timeout_seconds > 0))
      throw cli::UsageError("--timeout: '" + timeout_text +
                            "' is not a positive number of seconds");
  }
  if (json) spec.stdout_file = "/dev/stderr";
  ProgramOutcome outcome = model_program(spec);

  ApplicationModel app;
  app.program = program_name.empty() ? command.front() : program_name;
  app.source = "binary";
  const std::vector<KernelTotals> totals = total_program(outcome, machine_models, {peak, false});
  nlohmann::json launches = nlohmann::json::array(), summary = nlohmann::json::array();
  std::uint64_t dispatches = 0, counted = 0;
  for (const KernelTotals& total : totals) {
    const ProgramKernel& kernel = *total.kernel;
    dispatches += kernel.launches;
    counted += kernel.counted.size();
    for (std::size_t i = 0; i < kernel.counted.size(); ++i) {
      app.kernels.push_back(kernel.counted[i]);
      nlohmann::json predictions = nlohmann::json::array();
      for (const Prediction& p : total.predictions[i]) {
        nlohmann::json j = to_json(p);
        j["program"] = app.program;
        j["launch"] = kernel.counted_launch[i];
        predictions.push_back(j);
      }
      launches.push_back({{"model", to_json(kernel.counted[i])}, {"predictions", predictions}});
    }
    nlohmann::json times = nlohmann::json::object();
    for (std::size_t m = 0; m < machine_models.size(); ++m)
      times[machine_models[m].name] = total.seconds[m];
    summary.push_back({{"kernel", kernel.name},
                       {"launches", kernel.launches},
                       {"counted", kernel.counted.size()},
                       {"fp32_flops", total.fp32_flops},
                       {"fp64_flops", total.fp64_flops},
                       {"global_load_bytes", total.global_load_bytes},
                       {"global_store_bytes", total.global_store_bytes},
                       {"dram_bytes", total.dram_bytes},
                       {"seconds", times},
                       {"errors", kernel.errors}});
  }
  if (!save.empty()) {
    std::ofstream out(save);
    if (!out) throw Error("cannot write " + save);
    out << to_json(app).dump(2) << "\n";
  }
  if (json) {
    std::cout << nlohmann::json{{"program", app.program},
                                {"exit_status", outcome.exit.status},
                                {"kernels", launches},
                                {"summary", summary}}
                     .dump(2)
              << "\n";
    return outcome.exit.status;
  }

  std::string ended = "exited " + std::to_string(outcome.exit.status);
  if (outcome.exit.timed_out)
    ended = "was stopped at the --timeout (" + timeout_text + " s)";
  else if (outcome.exit.signal)
    ended = "was killed by " + describe_signal(outcome.exit.signal);
  std::cout << "\nwavekit model: " << app.program << " " << ended << "; " << outcome.kernels.size()
            << " kernel(s), " << dispatches << " launch(es), " << counted << " counted";
  if (!no_cache) std::cout << "; DRAM bytes from " << machine_models.front().name << "'s L2 model";
  std::cout << "\n\n";
  // Kernel names left-aligned, figures right-aligned in columns of their own width.
  std::size_t width = 6;
  for (const ProgramKernel& kernel : outcome.kernels)
    width = std::max(width, std::min<std::size_t>(48, kernel.name.size()));
  const std::vector<std::pair<std::string, std::size_t>> columns = {
      {"launches", 9}, {"FP32 FLOP", 10}, {"FP64 FLOP", 10},
      {"loads", 9},    {"stores", 9},     {"DRAM", 9}};
  auto left = [](std::string text, std::size_t w) {
    if (text.size() > w) text = text.substr(0, w - 3) + "...";
    return text + std::string(w - text.size(), ' ');
  };
  auto right = [](const std::string& text, std::size_t w) {
    return "  " + (text.size() >= w ? text : std::string(w - text.size(), ' ') + text);
  };
  std::cout << left("kernel", width);
  for (const auto& [title, w] : columns) std::cout << right(title, w);
  for (const Machine& m : machine_models) std::cout << right(m.name, 10);
  std::cout << "\n";
  std::vector<double> program_seconds(machine_models.size(), 0);
  for (const KernelTotals& total : totals) {
    const ProgramKernel& kernel = *total.kernel;
    const std::vector<std::string> cells = {
        std::to_string(kernel.counted.size()) + "/" + std::to_string(kernel.launches),
        human(total.fp32_flops, ""),
        human(total.fp64_flops, ""),
        human(total.global_load_bytes, "B"),
        human(total.global_store_bytes, "B"),
        no_cache ? "-" : human(total.dram_bytes, "B")};
    std::cout << left(kernel.name, width);
    for (std::size_t c = 0; c < cells.size(); ++c) std::cout << right(cells[c], columns[c].second);
    for (std::size_t m = 0; m < machine_models.size(); ++m) {
      program_seconds[m] += total.seconds[m];
      std::cout << right(kernel.counted.empty() ? "-" : seconds_text(total.seconds[m]), 10);
    }
    std::cout << "\n";
    for (const std::string& error : kernel.errors) std::cout << "  not counted, " << error << "\n";
  }
  std::size_t figures = width;
  for (const auto& column : columns) figures += 2 + column.second;
  std::cout << left("total", figures);
  for (double seconds : program_seconds) std::cout << right(seconds_text(seconds), 10);
  std::cout << "\n";
  if (counted < dispatches)
    std::cout << "(uncounted launches are estimated at their kernel's counted mean)\n";
  std::cout << "loads and stores: global memory requested by the kernels; per-launch models and "
               "each term of the time: --json\n";
  return outcome.exit.status;
}

int run_model(cli::Arguments args) {
  if (!args.empty()) {
    std::string_view verb = args[0];
    if (verb == "machines") return run_machines(args.subspan(1));
    if (verb == "predict") return run_predict(args.subspan(1));
    if (verb == "check") return run_check(args.subspan(1));
    if (verb == "compare") return run_compare(args.subspan(1));
    if (verb == "agent") return run_agent(args.subspan(1));
    if (verb == "run") return run_program_model(args.subspan(1));
  }
  std::string file, kernel, blocks, grid, block = "256", fit, check, at, save, program, build_dir;
  std::string lds, target = "gfx90a";
  std::vector<std::string> arguments, machines, params, flags;
  bool json = false, peak = false, no_cache = false;
  std::string threads_text;
  cli::OptionParser parser(
      "wavekit model",
      "Run a kernel of an AMDGPU code object (or a HIP source, built with clang-22 for --target)\n"
      "on the emulator and report its FLOPs (SP/DP, NVIDIA's convention), loads, stores, DRAM\n"
      "bytes (an L2 model of the machine), predicted time and bound on each --machine.\n"
      "Other forms: wavekit model run -- PROGRAM (every dispatch of an application) | machines |\n"
      "predict MODEL | check MODEL | compare PRED CSV | agent SRC.\n"
      "Values may be expressions of --param names in braces: --arg f32rand:{n} --blocks {n/256}.");
  parser.positional("FILE", &file, "code object (.co/.hsaco) or HIP source (.hip/.cpp/.cu)");
  parser.option("--kernel", &kernel, "NAME", "kernel (metadata name, or its C++ name)");
  parser.option("--blocks", &blocks, "X[,Y[,Z]]", "workgroups (blocks) per dimension");
  parser.option("--grid", &grid, "X[,Y[,Z]]", "work-items per dimension (instead of --blocks)");
  parser.option("--block", &block, "X[,Y[,Z]]", "work-items per workgroup (default 256)");
  parser.option("--lds", &lds, "BYTES", "dynamic LDS (shared memory) per workgroup, as launched");
  parser.repeated(
      "--arg", &arguments, "SPEC",
      "argument (wavekit launch's forms, or f32rand:N[:LO:HI] f64rand:N i32rand:N:LO:HI "
      "u32iota:N f32fill:N:V f64fill:N:V)");
  parser.repeated("--param", &params, "NAME=VALUE", "size parameter (repeatable)");
  parser.repeated("--machine", &machines, "NAME|FILE", "machine model (repeatable; default h200)");
  parser.option("--fit", &fit, "NAME=V1,V2,...",
                "run at these values of a parameter and fit the counts");
  parser.option("--check", &check, "NAME=V", "held-out run that checks the fit");
  parser.option("--at", &at, "NAME=V", "evaluate the fitted model (and predict) at this size");
  parser.option("--save-model", &save, "FILE", "write the application model (JSON) there");
  parser.option("--program", &program, "NAME", "program name recorded with the predictions");
  parser.repeated("--hip-flag", &flags, "FLAG", "extra clang flag for a HIP source (repeatable)");
  parser.option("--build-dir", &build_dir, "DIR",
                "where a HIP source's code object goes (default: a temporary dir)");
  parser.option("--target", &target, "PROCESSOR",
                "the processor a HIP source is built for and run on: gfx908, gfx90a (default) "
                "or gfx942");
  parser.option("--threads", &threads_text, "N", "emulator host threads (default: every core)");
  parser.flag("--no-cache-model", &no_cache, "skip the address trace and L2 model (no DRAM bytes)");
  parser.flag("--peak", &peak, "predict with peak figures instead of achieved ones");
  parser.flag("--json", &json, "print JSON: {kernels: [{model, predictions}]}");
  if (auto code = parser.parse(args)) return *code;
  if (kernel.empty()) throw cli::UsageError("--kernel is required");
  if (machines.empty()) machines.push_back("h200");
  std::vector<Machine> machine_models;
  for (const auto& name : machines) machine_models.push_back(load_machine(name));

  std::string ext = fs::path(file).extension().string();
  if (ext == ".hip" || ext == ".cpp" || ext == ".cu" || ext == ".cc") {
    if (build_dir.empty()) build_dir = (fs::temp_directory_path() / "wavekit-model-build").string();
    file = build_hip(file, build_dir, flags, target);
  }
  LaunchSpec spec;
  spec.code_object = file;
  spec.kernel = kernel;
  if (!blocks.empty()) spec.blocks = split(blocks, ',');
  if (!grid.empty()) spec.grid = split(grid, ',');
  spec.block = split(block, ',');
  spec.dynamic_lds = lds;
  spec.arguments = arguments;
  spec.parameters = parse_parameters(params);
  if (!threads_text.empty())
    spec.host_threads = unsigned(cli::parse_unsigned("--threads", threads_text));
  CountOptions options;
  options.cache = CacheModel::of(machine_models.front());
  options.simulate_cache = !no_cache;
  if (machine_models.size() > 1)
    std::cerr << "wavekit model: DRAM bytes from the L2 model of " << machine_models.front().name
              << " (the first --machine)\n";

  KernelModel model;
  if (!fit.empty()) {
    auto [name, list] = key_value("--fit", fit);
    std::vector<KernelModel> runs;
    for (const auto& value : split(list, ',')) {
      LaunchSpec run = spec;
      run.parameters[name] = cli::parse_double("--fit", value);
      runs.push_back(count_launch(run, options));
    }
    std::optional<KernelModel> held_out;
    if (!check.empty()) {
      auto [check_name, check_value] = key_value("--check", check);
      if (check_name != name)
        throw cli::UsageError("--check must name the --fit parameter '" + name + "'");
      LaunchSpec run = spec;
      run.parameters[name] = cli::parse_double("--check", check_value);
      held_out = count_launch(run, options);
    }
    FitOutcome outcome = fit_counts(name, runs, held_out);
    model = outcome.model;
    if (!at.empty()) {
      auto [at_name, at_value] = key_value("--at", at);
      model = model.at({{at_name, cli::parse_double("--at", at_value)}});
      model.source = "fit";
    }
  } else {
    if (!check.empty() || !at.empty()) throw cli::UsageError("--check and --at need --fit");
    model = count_launch(spec, options);
  }
  if (!save.empty()) {
    ApplicationModel app;
    app.program = program;
    app.source = model.source;
    app.kernels.push_back(model);
    std::ofstream out(save);
    if (!out) throw Error("cannot write " + save);
    out << to_json(app).dump(2) << "\n";
  }
  std::vector<Prediction> predictions;
  if (model.counts_expression.empty())
    for (const auto& m : machine_models) predictions.push_back(predict(model, m, {peak, false}));
  if (json) {
    std::cout << nlohmann::json{{"kernels", {kernel_output(model, predictions, program)}}}.dump(2)
              << "\n";
  } else {
    print_kernel(model, predictions);
    if (!model.counts_expression.empty()) {
      std::cout << "  fitted counts:\n";
      for (const auto& [key, expression] : model.counts_expression)
        std::cout << "    " << key << " = " << expression << "\n";
      std::cout << "  (give --at NAME=V to evaluate and predict)\n";
    }
  }
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("model",
                   "counts, DRAM bytes and predicted time of a kernel or a whole program on a GPU "
                   "model (run, machines, predict, check, compare, agent)",
                   run_model);
