// `wavekit bind`: map tasks, threads and GPUs of a node (this one, or one described by an hwloc
// XML file) and print the mapping, or bind this process as one task and exec a command.
// `wavekit bind-machine`: write hwloc XML for a node described compactly.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "wavekit/bind/apply.h"
#include "wavekit/bind/format.h"
#include "wavekit/bind/machine.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

using wavekit::cli::UsageError;

bool parse_switch(const char* option, const std::string& text) {
  if (text == "0") return false;
  if (text == "1") return true;
  throw UsageError(std::string(option) + ": '" + text + "' must be 0 or 1");
}

int parse_count(const char* option, const std::string& text, int minimum) {
  std::uint64_t value = wavekit::cli::parse_unsigned(option, text);
  if (value < static_cast<std::uint64_t>(minimum) || value > (1u << 20))
    throw UsageError(std::string(option) + ": " + text + " is out of range (" +
                     std::to_string(minimum) + " to 1048576)");
  return static_cast<int>(value);
}

int run_bind(wavekit::cli::Arguments args) {
  std::string topology_file, ntasks, nthreads, smt, greedy, gpu_optim, restrict_list, restrict_type,
      compat, format = "text", exec_task, gpus;
  bool membind = false, hip = false, cuda_uuids = false;
  std::vector<std::string> command;
  wavekit::cli::OptionParser parser(
      "wavekit bind",
      "Maps tasks, threads and GPUs to a node's hardware from its hwloc topology, as LLNL's\n"
      "mpibind does: NUMA domains first (weighted by their GPUs), then the shallowest cache or\n"
      "core level with enough objects; GPUs local to each task. The default mode fixes\n"
      "mpibind's defects (docs/bind.md lists the rules); --compat mpibind-0.23.1 reproduces\n"
      "mpibind v0.23.1 exactly.\n\n"
      "examples:\n"
      "  wavekit bind --ntasks 8\n"
      "  wavekit bind --topology node.xml --ntasks 4 --format mpibind\n"
      "  wavekit bind --ntasks 4 --exec 2 -- ./app      (bind as task 2, set its environment)");
  parser.option("--topology", &topology_file, "FILE.xml",
                "hwloc XML of the node (default: this machine)");
  parser.option("--ntasks", &ntasks, "N", "tasks on the node (required)");
  parser.option("--nthreads", &nthreads, "T", "threads per task (default: computed)");
  parser.option("--smt", &smt, "K", "PUs per core to use, 1..hardware SMT (default: automatic)");
  parser.option("--greedy", &greedy, "0|1",
                "with fewer tasks than NUMA domains, give tasks whole domains (default 1)");
  parser.option("--gpu-optim", &gpu_optim, "0|1",
                "distribute tasks by GPUs when there are GPUs (default 1)");
  parser.option("--restrict", &restrict_list, "LIST",
                "only these CPUs (or NUMA nodes with --restrict-type mem), e.g. 0-15,32, or a file "
                "holding such a list");
  parser.option("--restrict-type", &restrict_type, "cpu|mem",
                "what --restrict lists (default cpu)");
  parser.option("--gpus", &gpus, "LIST",
                "only these GPUs (SMI ids), e.g. the resource manager's allocation");
  parser.option("--compat", &compat, "mpibind-0.23.1", "reproduce mpibind v0.23.1 bit for bit");
  parser.option("--format", &format, "text|mpibind|json|env", "output format (default text)");
  parser.flag("--membind", &membind, "with --exec: also bind memory to the task's NUMA domain");
  parser.flag("--hip", &hip, "also export HIP_VISIBLE_DEVICES for AMD GPUs (default mode)");
  parser.flag("--cuda-uuids", &cuda_uuids, "CUDA_VISIBLE_DEVICES as GPU UUIDs (default mode)");
  parser.option("--exec", &exec_task, "TASK",
                "bind this process as task TASK, set its environment, exec CMD");
  parser.rest("CMD", &command, "the command for --exec", false);
  if (auto code = parser.parse(args)) return *code;

  if (ntasks.empty()) throw UsageError("--ntasks is required (see --help)");
  wavekit::bind::Params params;
  params.ntasks = parse_count("--ntasks", ntasks, 1);
  if (!nthreads.empty()) params.nthreads = parse_count("--nthreads", nthreads, 0);
  if (!smt.empty()) params.smt = parse_count("--smt", smt, 0);
  if (!greedy.empty()) params.greedy = parse_switch("--greedy", greedy);
  if (!gpu_optim.empty()) params.gpu_optim = parse_switch("--gpu-optim", gpu_optim);
  if (!compat.empty()) {
    if (compat != "mpibind-0.23.1")
      throw UsageError("--compat: '" + compat + "' is not a known reference (mpibind-0.23.1)");
    params.mode = wavekit::bind::Mode::compat;
  }
  if (!restrict_type.empty()) {
    if (restrict_type != "cpu" && restrict_type != "mem")
      throw UsageError("--restrict-type: '" + restrict_type + "' must be cpu or mem");
    if (restrict_list.empty()) throw UsageError("--restrict-type needs --restrict");
    params.restrict_type = restrict_type == "mem" ? wavekit::bind::RestrictType::mem
                                                  : wavekit::bind::RestrictType::cpu;
  }
  if (!restrict_list.empty())
    params.restrict_set = wavekit::bind::Bitmap::parse_list_or_file(restrict_list, "--restrict");
  if (!gpus.empty()) params.gpu_set = wavekit::bind::Bitmap::parse_list(gpus, "--gpus");
  if (format != "text" && format != "mpibind" && format != "json" && format != "env")
    throw UsageError("--format: '" + format + "' must be text, mpibind, json or env");
  if (exec_task.empty() && !command.empty())
    throw UsageError("a command after '--' needs --exec TASK");
  if (!exec_task.empty() && command.empty()) throw UsageError("--exec needs a command after '--'");
  if (membind && exec_task.empty()) throw UsageError("--membind only applies with --exec");

  auto topology = topology_file.empty() ? wavekit::bind::Topology::live()
                                        : wavekit::bind::Topology::from_xml_file(topology_file);
  auto mapping = wavekit::bind::map_topology(topology, params);
  wavekit::bind::EnvOptions env;
  env.hip_visible_devices = hip;
  env.cuda_uuids = cuda_uuids;

  if (!exec_task.empty()) {
    int task = parse_count("--exec", exec_task, 0);
    if (task >= params.ntasks)
      throw UsageError("--exec: task " + exec_task + " is not below --ntasks " + ntasks);
    wavekit::bind::ApplyOptions options;
    options.membind = membind;
    options.env = env;
    wavekit::bind::apply_task(mapping, task, options);
    std::vector<char*> argv;
    for (auto& word : command) argv.push_back(word.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    throw wavekit::Error("cannot run '" + command[0] + "': " + std::strerror(errno));
  }
  auto view_topology = params.mode == wavekit::bind::Mode::compat && params.restrict_set
                           ? topology.restricted(*params.restrict_set, params.restrict_type)
                           : std::move(topology);
  auto view = wavekit::bind::TopologyView::build(view_topology);
  if (params.restrict_set && params.mode == wavekit::bind::Mode::fixed)
    view = view.masked(*params.restrict_set, params.restrict_type);
  if (format == "mpibind")
    std::cout << wavekit::bind::format_mpibind(mapping);
  else if (format == "env")
    std::cout << wavekit::bind::format_env(mapping, env);
  else if (format == "json")
    std::cout << wavekit::bind::format_json(mapping, view, env);
  else
    std::cout << wavekit::bind::format_text(mapping, view);
  return 0;
}

int run_bind_machine(wavekit::cli::Arguments args) {
  std::string description, output;
  wavekit::cli::OptionParser parser(
      "wavekit bind-machine",
      "Writes hwloc XML for a node described compactly, to explore mappings of nodes you do\n"
      "not have (wavekit bind --topology FILE). DESCRIPTION is comma-separated key=value:\n"
      "  packages=N numa=N (per package) l3=N (per NUMA) cores=N (per L3) smt=N\n"
      "  gpus=N (per NUMA, or per L3 with gpus-on=l3) gpu-kind=rsmi|nvml|levelzero|cuda|opencl|drm "
      "partitions=N\n"
      "  hbm=N (HBM nodes sharing each NUMA's CPUs) cpuless=N (CPU-less NUMA nodes)\n"
      "  nics=N (Slingshot NICs per package) numbering=siblings-last|consecutive\n\n"
      "example (an MI250X node): wavekit bind-machine packages=1,numa=4,l3=2,cores=8,smt=2,gpus=2");
  parser.positional("DESCRIPTION", &description, "the node, e.g. packages=2,cores=8,smt=2");
  parser.option("--output", &output, "FILE", "write the XML here (default: standard output)");
  parser.short_name('o', "--output");
  if (auto code = parser.parse(args)) return *code;
  std::string xml =
      wavekit::bind::machine_xml(wavekit::bind::parse_machine_description(description));
  // Check the result with hwloc itself before handing it out.
  wavekit::bind::Topology::from_xml_buffer(xml, "the generated XML");
  if (output.empty())
    std::cout << xml;
  else
    wavekit::write_file(output, xml);
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("bind", "map tasks, threads and GPUs to a node's hardware (mpibind)", run_bind);
WAVEKIT_SUBCOMMAND("bind-machine", "write hwloc XML for a compactly described node",
                   run_bind_machine);
