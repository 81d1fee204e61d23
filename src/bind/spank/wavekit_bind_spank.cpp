// Slurm SPANK plugin: `srun --wavekit-bind[=OPTIONS] ...` maps the tasks of each node with
// wavekit's bind library and applies the mapping in every task before it execs: CPU binding,
// optional memory binding, OMP_* and the GPU visible-devices variables.
//
// plugstack.conf:  optional /path/to/wavekit_bind.so [default_on]
// The mapping is computed once per node in slurmstepd (user_init) and applied per task
// (task_init, which runs in the task's own process).
// spank.h declares the hooks without C linkage for C++ readers.
extern "C" {
#include <slurm/spank.h>
}

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "wavekit/bind/apply.h"
#include "wavekit/bind/format.h"
#include "wavekit/bind/mapping.h"
#include "wavekit/bind/plugin_options.h"
#include "wavekit/support/error.h"

extern "C" {
// What SPANK_PLUGIN(wavekit_bind, 1) declares, spelled out: in C++ a namespace-scope const
// would otherwise have internal linkage and Slurm's loader would not find it.
extern const char plugin_name[] = "wavekit_bind";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace {

bool option_given = false;
bool enabled_by_default = false;
std::string option_text;
std::optional<wavekit::bind::PluginOptions> options;
std::unique_ptr<wavekit::bind::Mapping> mapping;

int on_option(int, const char* optarg, int remote) {
  option_given = true;
  option_text = optarg ? optarg : "";
  try {
    // Checked here too so that srun itself rejects a bad option string before the job runs.
    auto parsed = wavekit::bind::parse_plugin_options(option_text);
    if (parsed.help && !remote) {  // in srun only: exiting in slurmstepd would kill the step
      slurm_info("%s", wavekit::bind::plugin_options_help().c_str());
      std::exit(0);
    }
  } catch (const std::exception& error) {
    slurm_error("--wavekit-bind: %s", error.what());
    return -1;
  }
  return 0;
}

char option_name[] = "wavekit-bind";
char option_arginfo[] = "options";
char option_usage[] =
    "Bind tasks to CPUs, threads and GPUs from the node topology (wavekit bind); "
    "--wavekit-bind=help lists the options";

std::string job_env(spank_t spank, const char* name) {
  char value[4096];
  if (spank_getenv(spank, name, value, sizeof value) != ESPANK_SUCCESS) return "";
  return value;
}

std::string first_of(spank_t spank, const char* name, const char* fallback) {
  std::string value = job_env(spank, name);
  return value.empty() ? job_env(spank, fallback) : value;
}

// A step that does not own the whole node is restricted to the cores Slurm gave it, when hwloc
// sees more cores than that (as mpibind v0.23.1 does). A CPU restriction from the environment
// is intersected with them.
void restrict_to_step_cores(spank_t spank, const wavekit::bind::Topology& topology,
                            wavekit::bind::Params& params) {
  char* cores = nullptr;
  if (spank_get_item(spank, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || cores == nullptr ||
      *cores == '\0')
    return;
  auto view = wavekit::bind::TopologyView::build(topology);
  auto allocated = wavekit::bind::Bitmap::parse_list(cores, "S_STEP_ALLOC_CORES");
  auto seen = view.levels[static_cast<std::size_t>(view.core_depth)].size();
  if (static_cast<std::size_t>(allocated.weight()) >= seen) return;
  auto pus = view.pus_of_cores(allocated);
  if (params.restrict_set && params.restrict_type == wavekit::bind::RestrictType::cpu)
    pus &= *params.restrict_set;
  else if (params.restrict_set)
    throw wavekit::Error("a memory restriction cannot be combined with a partial-node step");
  params.restrict_set = pus;
  params.restrict_type = wavekit::bind::RestrictType::cpu;
}

}  // namespace

extern "C" {

struct spank_option spank_options[] = {
    {option_name, option_arginfo, option_usage, 2, 0, on_option},
    SPANK_OPTIONS_TABLE_END,
};

int slurm_spank_init(spank_t, int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (std::string(argv[i]) == "default_on") enabled_by_default = true;
  return ESPANK_SUCCESS;
}

int slurm_spank_user_init(spank_t spank, int, char**) {
  if (!spank_remote(spank) || (!option_given && !enabled_by_default)) return ESPANK_SUCCESS;
  try {
    options = wavekit::bind::parse_plugin_options(option_text);
    if (!options->enabled) return ESPANK_SUCCESS;
    uint32_t local_tasks = 0;
    if (spank_get_item(spank, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS)
      throw wavekit::Error("cannot read the number of tasks on this node");
    wavekit::bind::Params params;
    params.ntasks = static_cast<int>(local_tasks);
    params.mode = options->compat ? wavekit::bind::Mode::compat : wavekit::bind::Mode::fixed;
    if (options->gpu_optim) params.gpu_optim = *options->gpu_optim;
    if (options->greedy) params.greedy = *options->greedy;
    if (options->smt) params.smt = *options->smt;
    std::string omp_threads = job_env(spank, "OMP_NUM_THREADS");
    if (options->nthreads)
      params.nthreads = *options->nthreads;
    else if (!omp_threads.empty())
      params.nthreads = std::atoi(omp_threads.c_str());
    std::string restrict_list = first_of(spank, "WAVEKIT_BIND_RESTRICT", "MPIBIND_RESTRICT");
    std::string restrict_type =
        first_of(spank, "WAVEKIT_BIND_RESTRICT_TYPE", "MPIBIND_RESTRICT_TYPE");
    if (!restrict_list.empty())
      params.restrict_set =
          wavekit::bind::Bitmap::parse_list_or_file(restrict_list, "WAVEKIT_BIND_RESTRICT");
    if (restrict_type == "mem")
      params.restrict_type = wavekit::bind::RestrictType::mem;
    else if (!restrict_type.empty() && restrict_type != "cpu")
      throw wavekit::Error("WAVEKIT_BIND_RESTRICT_TYPE='" + restrict_type + "' must be cpu or mem");
    std::string topology_file = first_of(spank, "WAVEKIT_BIND_TOPOFILE", "MPIBIND_TOPOFILE");
    auto topology = topology_file.empty() ? wavekit::bind::Topology::live()
                                          : wavekit::bind::Topology::from_xml_file(topology_file);
    restrict_to_step_cores(spank, topology, params);
    mapping = std::make_unique<wavekit::bind::Mapping>(map_topology(topology, params));
  } catch (const std::exception& error) {
    slurm_error("wavekit-bind: %s", error.what());
    return ESPANK_ERROR;
  }
  return ESPANK_SUCCESS;
}

int slurm_spank_task_init(spank_t spank, int, char**) {
  if (!spank_remote(spank) || !mapping) return ESPANK_SUCCESS;
  try {
    int task = 0;
    if (spank_get_item(spank, S_TASK_ID, &task) != ESPANK_SUCCESS)
      throw wavekit::Error("cannot read the local task id");
    wavekit::bind::ApplyOptions apply;
    apply.membind = options->membind;
    apply.set_environment = false;  // the task's environment is the job's: spank_setenv
    wavekit::bind::apply_task(*mapping, task, apply);
    wavekit::bind::EnvOptions env;
    env.hip_visible_devices = options->hip_visible_devices;
    for (const auto& [name, value] : wavekit::bind::task_environment(*mapping, task, env)) {
      bool gpu_variable = name.rfind("OMP_", 0) != 0;
      if (gpu_variable && !options->visible_devices) continue;
      spank_setenv(spank, name.c_str(), value.c_str(), 1);
    }
    if (options->verbose > 0) {
      std::string lines = wavekit::bind::format_mpibind(*mapping);
      std::size_t start = 0;
      for (int t = 0; t < task; ++t) start = lines.find('\n', start) + 1;
      slurm_info("wavekit-bind: %s", lines.substr(start, lines.find('\n', start) - start).c_str());
    }
  } catch (const std::exception& error) {
    slurm_error("wavekit-bind: %s", error.what());
    return ESPANK_ERROR;
  }
  return ESPANK_SUCCESS;
}

}  // extern "C"
