// HSA_TOOLS_LIB: tools libraries and the API table they receive, as in ROCr. At the first
// hsa_init each library named in HSA_TOOLS_LIB (separated by spaces) is opened and its
// OnLoad(HsaApiTable*, runtime_version, failed_tool_count, failed_tool_names) is called with the
// runtime's table; a tool keeps the entries it finds and may replace them. A tool whose library
// does not open, or whose OnLoad returns false, is reported on stderr and its table changes are
// undone. At the last hsa_shut_down each loaded tool's OnUnload is called. Libraries stay
// mapped until the process ends (their atexit handlers may still run).
//
// Unlike ROCr, where every exported function calls through the table, only hsa_queue_create and
// hsa_executable_freeze do here (what queue-interception tools such as profilers replace); a
// tool that replaces any other entry is told so on stderr, and that replacement has no effect.
// The table also holds the tools-only functions hsa_amd_queue_intercept_create/register, which
// are not exported (ROCr does not export them either).
#define AMD_INTERNAL_BUILD  // hsa_api_trace.h then includes its siblings by their own names
#include <dlfcn.h>
#include <hsa/hsa_api_trace.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

// The container's constructor sets only the versions and the root's pointers: every function
// slot is indeterminate until cleared, and a tool must see null for what we do not implement.
template <class Table>
void clear_functions(Table& table) {
  const auto version = table.version;
  std::memset(&table, 0, sizeof table);
  table.version = version;
}

HsaApiTableContainer make_table() {
  HsaApiTableContainer table;
  clear_functions(table.core);
  clear_functions(table.amd_ext);
  clear_functions(table.finalizer_ext);
  clear_functions(table.image_ext);
#define WAVEKIT_CORE(name) table.core.name##_fn = name;
#define WAVEKIT_AMD(name) table.amd_ext.name##_fn = name;
#include "tools_table.inc"
#undef WAVEKIT_CORE
#undef WAVEKIT_AMD
  table.core.hsa_queue_create_fn = create_queue;
  table.core.hsa_executable_freeze_fn = freeze_executable;
  table.amd_ext.hsa_amd_queue_intercept_create_fn = intercept_queue_create;
  table.amd_ext.hsa_amd_queue_intercept_register_fn = intercept_queue_register;
  return table;
}

HsaApiTableContainer& table() {
  // Never destroyed: tools and the exported trampolines may use it during exit.
  static HsaApiTableContainer* instance = [] {
    auto* container = new HsaApiTableContainer(make_table());
    // The copy's root must point at the copy's own tables.
    container->root.core_ = &container->core;
    container->root.amd_ext_ = &container->amd_ext;
    container->root.finalizer_ext_ = &container->finalizer_ext;
    container->root.image_ext_ = &container->image_ext;
    return container;
  }();
  return *instance;
}

struct Tools {
  std::mutex mutex;
  bool loaded = false;
  std::vector<void*> handles;
};

Tools& tools() {
  static Tools* instance = new Tools();
  return *instance;
}

// Names the entries a tool replaced that no exported function calls through.
void warn_unrouted(const HsaApiTableContainer& defaults, const HsaApiTableContainer& now) {
  auto check = [](bool replaced, const char* name) {
    if (replaced)
      std::fprintf(stderr,
                   "wavekit emulator: HSA_TOOLS_LIB: a tool replaced %s, which this runtime does "
                   "not route through the tools table; the replacement is not called\n",
                   name);
  };
#define WAVEKIT_CORE(name) check(now.core.name##_fn != defaults.core.name##_fn, #name);
#define WAVEKIT_AMD(name) check(now.amd_ext.name##_fn != defaults.amd_ext.name##_fn, #name);
#include "tools_table.inc"
#undef WAVEKIT_CORE
#undef WAVEKIT_AMD
}

}  // namespace

namespace wavekit::hsa::runtime {

void load_tools() {
  const char* list = std::getenv("HSA_TOOLS_LIB");
  Tools& state = tools();
  std::lock_guard lock(state.mutex);
  if (state.loaded || !list || !*list) return;
  state.loaded = true;
  using OnLoad = bool (*)(HsaApiTable*, uint64_t, uint64_t, const char* const*);
  std::vector<std::string> failed;
  std::vector<const char*> failed_names;
  std::istringstream paths(list);
  std::string path;
  const HsaApiTableContainer defaults = make_table();
  while (paths >> path) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW);
    if (!handle) {
      std::fprintf(stderr, "wavekit emulator: HSA_TOOLS_LIB: cannot load %s: %s\n", path.c_str(),
                   ::dlerror());
      failed.push_back(path);
      continue;
    }
    auto on_load = reinterpret_cast<OnLoad>(::dlsym(handle, "OnLoad"));
    const CoreApiTable core_before = table().core;
    const AmdExtTable amd_before = table().amd_ext;
    failed_names.clear();
    for (const std::string& name : failed) failed_names.push_back(name.c_str());
    if (on_load && !on_load(&table().root, HSA_API_TABLE_MAJOR_VERSION, failed_names.size(),
                            failed_names.data())) {
      std::fprintf(stderr, "wavekit emulator: HSA_TOOLS_LIB: %s: OnLoad failed\n", path.c_str());
      table().core = core_before;
      table().amd_ext = amd_before;
      failed.push_back(path);
      continue;
    }
    state.handles.push_back(handle);
  }
  warn_unrouted(defaults, table());
}

void unload_tools() {
  Tools& state = tools();
  std::lock_guard lock(state.mutex);
  for (void* handle : state.handles)
    if (auto on_unload = reinterpret_cast<void (*)()>(::dlsym(handle, "OnUnload"))) on_unload();
  state.handles.clear();
}

}  // namespace wavekit::hsa::runtime

extern "C" {

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t* source,
                                               void* data),
                              void* data, uint32_t private_segment_size,
                              uint32_t group_segment_size, hsa_queue_t** queue) {
  return table().core.hsa_queue_create_fn(agent, size, type, callback, data, private_segment_size,
                                          group_segment_size, queue);
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options) {
  return table().core.hsa_executable_freeze_fn(executable, options);
}

}  // extern "C"
