// HSA API: code-object readers and executables, over wavekit::hsa::Executable (the loader).
// Loaded images become visible to the emulated GPU (MemoryMap) and its decoder (CodeCache) as
// soon as they are loaded; relocation happens at freeze, with ROCr's rules.
#include <hsa/hsa_ven_amd_loader.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

#define WAVEKIT_REQUIRE_INIT() \
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED

ExecutableState* executable_of(hsa_executable_t executable) {
  Runtime& rt = runtime();
  auto it = rt.executables.find(reinterpret_cast<const ExecutableState*>(executable.handle));
  return it == rt.executables.end() ? nullptr : it->second.get();
}

CodeObjectReader* reader_of(hsa_code_object_reader_t reader) {
  Runtime& rt = runtime();
  auto it = rt.readers.find(reinterpret_cast<const CodeObjectReader*>(reader.handle));
  return it == rt.readers.end() ? nullptr : it->second.get();
}

hsa_status_t add_reader(std::vector<std::uint8_t> bytes, std::string name,
                        hsa_code_object_reader_t* reader) {
  auto state = std::make_unique<CodeObjectReader>();
  state->bytes = std::move(bytes);
  state->name = std::move(name);
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  reader->handle = reinterpret_cast<std::uint64_t>(state.get());
  rt.readers[state.get()] = std::move(state);
  return HSA_STATUS_SUCCESS;
}

// Symbols in a stable order: kernels, then variables, in load order.
void build_symbols(ExecutableState& executable) {
  executable.symbols.clear();
  for (const auto& kernel : executable.loader.kernels()) {
    auto symbol = std::make_unique<ExecutableSymbol>();
    symbol->executable = &executable;
    symbol->kernel = &kernel;
    executable.symbols.push_back(std::move(symbol));
  }
  for (const auto& variable : executable.loader.variables()) {
    auto symbol = std::make_unique<ExecutableSymbol>();
    symbol->executable = &executable;
    symbol->variable = &variable;
    executable.symbols.push_back(std::move(symbol));
  }
}

ExecutableSymbol* symbol_of(hsa_executable_symbol_t symbol) {
  Runtime& rt = runtime();
  auto* wanted = reinterpret_cast<ExecutableSymbol*>(symbol.handle);
  for (auto& [key, executable] : rt.executables)
    for (auto& candidate : executable->symbols)
      if (candidate.get() == wanted) return wanted;
  return nullptr;
}

template <typename T>
hsa_status_t put(void* value, const T& result) {
  std::memcpy(value, &result, sizeof(T));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t report_loader_error(const wavekit::hsa::LoaderError& error) {
  // The status alone rarely tells a user what is wrong with their code object.
  std::fprintf(stderr, "wavekit emulator: %s\n", error.what());
  return status_of(error);
}

}  // namespace

extern "C" {

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* reader) {
  WAVEKIT_REQUIRE_INIT();
  if (!code_object || size == 0 || !reader) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const auto* bytes = static_cast<const std::uint8_t*>(code_object);
  return add_reader(std::vector<std::uint8_t>(bytes, bytes + size), "code object in memory",
                    reader);
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file,
                                                     hsa_code_object_reader_t* reader) {
  WAVEKIT_REQUIRE_INIT();
  if (!reader) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct stat info {};
  if (fstat(file, &info) != 0 || !S_ISREG(info.st_mode)) return HSA_STATUS_ERROR_INVALID_FILE;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pread(file, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) return HSA_STATUS_ERROR_INVALID_FILE;
    done += static_cast<std::size_t>(n);
  }
  return add_reader(std::move(bytes), "code object file (fd " + std::to_string(file) + ")", reader);
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t reader) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  auto it = rt.readers.find(reinterpret_cast<const CodeObjectReader*>(reader.handle));
  if (it == rt.readers.end()) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  rt.readers.erase(it);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create_alt(hsa_profile_t profile,
                                       hsa_default_float_rounding_mode_t rounding_mode, const char*,
                                       hsa_executable_t* executable) {
  WAVEKIT_REQUIRE_INIT();
  if (!executable || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) ||
      rounding_mode > HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto state = std::make_unique<ExecutableState>();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  executable->handle = reinterpret_cast<std::uint64_t>(state.get());
  rt.executables[state.get()] = std::move(state);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t state,
                                   const char* options, hsa_executable_t* executable) {
  if (state != HSA_EXECUTABLE_STATE_UNFROZEN) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR, options,
                                   executable);
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::unique_ptr<ExecutableState> state;
  {
    std::lock_guard lock(rt.mutex);
    auto it = rt.executables.find(reinterpret_cast<const ExecutableState*>(executable.handle));
    if (it == rt.executables.end()) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    state = std::move(it->second);
    rt.executables.erase(it);
  }
  for (std::uint64_t base : state->registered_code)
    rt.code.remove_object(reinterpret_cast<const void*>(base));
  for (std::uint64_t base : state->registered_memory)
    rt.memory.remove(reinterpret_cast<const void*>(base));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable_handle,
                                                   hsa_agent_t agent,
                                                   hsa_code_object_reader_t reader_handle,
                                                   const char*,
                                                   hsa_loaded_code_object_t* loaded_code_object) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableState* executable = executable_of(executable_handle);
  if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (agent.handle != reinterpret_cast<std::uint64_t>(&rt.gpu))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  CodeObjectReader* reader = reader_of(reader_handle);
  if (!reader) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  if (executable->state == HSA_EXECUTABLE_STATE_FROZEN) return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  // ROCr checks the object's ISA against the agent's before loading.
  try {
    wavekit::hsa::Executable probe;
    const auto& object = probe.load(reader->bytes, reader->name);
    if (object.target != rt.gpu.name) {
      std::fprintf(stderr,
                   "wavekit emulator: %s: code object is for %s, but the emulated GPU is %s (set "
                   "WAVEKIT_EMU_TARGET=%s)\n",
                   reader->name.c_str(), object.target.c_str(), rt.gpu.name.c_str(),
                   object.target.c_str());
      return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
    }
    const auto& loaded = executable->loader.load(reader->bytes, reader->name);
    rt.memory.add(reinterpret_cast<const void*>(loaded.load_base), loaded.load_size,
                  wavekit::emu::MemoryMap::kReadWrite, "code object " + reader->name);
    executable->registered_memory.push_back(loaded.load_base);
    rt.code.add_object(rt.gpu.processor, reinterpret_cast<const void*>(loaded.load_base),
                       loaded.load_size, 0);
    executable->registered_code.push_back(loaded.load_base);
    if (!rt.observer_module.empty())
      executable->images[loaded.load_base] =
          std::make_shared<const std::vector<std::uint8_t>>(reader->bytes);
    if (loaded_code_object) loaded_code_object->handle = loaded.load_base;
  } catch (const wavekit::hsa::LoaderError& error) {
    return report_loader_error(error);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "wavekit emulator: %s: %s\n", reader->name.c_str(), error.what());
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_agent_global_variable_define(hsa_executable_t executable_handle,
                                                         hsa_agent_t agent,
                                                         const char* variable_name, void* address) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableState* executable = executable_of(executable_handle);
  if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (agent.handle != reinterpret_cast<std::uint64_t>(&rt.gpu))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!variable_name) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  try {
    executable->loader.define_global_variable(variable_name,
                                              reinterpret_cast<std::uint64_t>(address));
  } catch (const wavekit::hsa::LoaderError& error) {
    return report_loader_error(error);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_global_variable_define(hsa_executable_t executable,
                                                   const char* variable_name, void* address) {
  return hsa_executable_agent_global_variable_define(
      executable, hsa_agent_t{reinterpret_cast<std::uint64_t>(&runtime().gpu)}, variable_name,
      address);
}

}  // extern "C"

// hsa_executable_freeze calls this through the tools API table (api_tools.cpp).
namespace wavekit::hsa::runtime {

hsa_status_t freeze_executable(hsa_executable_t executable_handle, const char*) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableState* executable = executable_of(executable_handle);
  if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  try {
    executable->loader.freeze();
  } catch (const wavekit::hsa::LoaderError& error) {
    return report_loader_error(error);
  }
  executable->state = HSA_EXECUTABLE_STATE_FROZEN;
  build_symbols(*executable);
  return HSA_STATUS_SUCCESS;
}

}  // namespace wavekit::hsa::runtime

extern "C" {

hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t* result) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  if (!executable_of(executable)) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = 0;  // every object was checked when it was loaded
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char*,
                                         uint32_t* result) {
  return hsa_executable_validate(executable, result);
}

hsa_status_t hsa_executable_get_info(hsa_executable_t executable_handle,
                                     hsa_executable_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableState* executable = executable_of(executable_handle);
  if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
    case HSA_EXECUTABLE_INFO_PROFILE:
      return put(value, HSA_PROFILE_BASE);
    case HSA_EXECUTABLE_INFO_STATE:
      return put(value, executable->state);
    case HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
      return put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable_handle,
                                               const char* symbol_name, const hsa_agent_t* agent,
                                               hsa_executable_symbol_t* symbol) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableState* executable = executable_of(executable_handle);
  if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!symbol_name || !symbol) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (agent && agent->handle != reinterpret_cast<std::uint64_t>(&rt.gpu))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  std::string_view name = symbol_name;
  for (auto& candidate : executable->symbols) {
    bool match = candidate->kernel
                     ? (candidate->kernel->symbol == name || candidate->kernel->name == name)
                     : candidate->variable->name == name;
    if (match) {
      symbol->handle = reinterpret_cast<std::uint64_t>(candidate.get());
      return HSA_STATUS_SUCCESS;
    }
  }
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t hsa_executable_get_symbol(hsa_executable_t executable, const char*,
                                       const char* symbol_name, hsa_agent_t agent, int32_t,
                                       hsa_executable_symbol_t* symbol) {
  return hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol);
}

hsa_status_t hsa_executable_iterate_agent_symbols(
    hsa_executable_t executable_handle, hsa_agent_t agent,
    hsa_status_t (*callback)(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, void*),
    void* data) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::vector<hsa_executable_symbol_t> symbols;
  {
    std::lock_guard lock(rt.mutex);
    ExecutableState* executable = executable_of(executable_handle);
    if (!executable) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (agent.handle != reinterpret_cast<std::uint64_t>(&rt.gpu))
      return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (auto& symbol : executable->symbols)
      symbols.push_back({reinterpret_cast<std::uint64_t>(symbol.get())});
  }
  for (auto symbol : symbols) {
    hsa_status_t status = callback(executable_handle, agent, symbol, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_iterate_symbols(
    hsa_executable_t executable,
    hsa_status_t (*callback)(hsa_executable_t, hsa_executable_symbol_t, void*), void* data) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::vector<hsa_executable_symbol_t> symbols;
  {
    std::lock_guard lock(rt.mutex);
    ExecutableState* state = executable_of(executable);
    if (!state) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (auto& symbol : state->symbols)
      symbols.push_back({reinterpret_cast<std::uint64_t>(symbol.get())});
  }
  for (auto symbol : symbols) {
    hsa_status_t status = callback(executable, symbol, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_iterate_program_symbols(
    hsa_executable_t executable, hsa_status_t (*)(hsa_executable_t, hsa_executable_symbol_t, void*),
    void*) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  // Program-allocation symbols are an HSAIL notion; code objects only have agent symbols.
  return executable_of(executable) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_EXECUTABLE;
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t symbol_handle,
                                            hsa_executable_symbol_info_t attribute, void* value) {
  WAVEKIT_REQUIRE_INIT();
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  ExecutableSymbol* symbol = symbol_of(symbol_handle);
  if (!symbol) return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const auto* kernel = symbol->kernel;
  const auto* variable = symbol->variable;
  const std::string name = symbol->name();
  switch (enum_value(attribute)) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      return put(value, kernel ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE);
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      return put<std::uint32_t>(value, name.size());
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      std::memcpy(value, name.data(), name.size());
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH:
      return put<std::uint32_t>(value, 0);
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME:
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      return put(value, hsa_agent_t{reinterpret_cast<std::uint64_t>(&rt.gpu)});
    case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE:
      return put(value, HSA_SYMBOL_LINKAGE_PROGRAM);
    case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION:
      return put<bool>(value, true);
  }
  if (variable) {
    switch (enum_value(attribute)) {
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
        return put<std::uint64_t>(value, variable->address);
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION:
        return put(value, HSA_VARIABLE_ALLOCATION_AGENT);
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT:
        return put(value, HSA_VARIABLE_SEGMENT_GLOBAL);
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT:
        return put<std::uint32_t>(value, 8);
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
        return put<std::uint32_t>(value, variable->size);
      case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST:
        return put<bool>(value, false);
    }
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  switch (enum_value(attribute)) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      return put<std::uint64_t>(value, kernel->descriptor_address);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      return put<std::uint32_t>(value, kernel->kernarg_segment_size);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      return put<std::uint32_t>(value, kernel->kernarg_segment_align);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      return put<std::uint32_t>(value, kernel->group_segment_fixed_size);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      return put<std::uint32_t>(value, kernel->private_segment_fixed_size);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK:
      return put<bool>(value, kernel->uses_dynamic_stack);
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION:
      return put<std::uint32_t>(value, 0);
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

}  // extern "C"

// The AMD loader extension (hsa_ven_amd_loader.h), version 1.01: what CLR asks of it is the host
// address of a kernel descriptor (device and host addresses are the same here) and which
// executable holds an address.
namespace {

hsa_status_t loader_query_host_address(const void* device_address, const void** host_address) {
  if (!device_address || !host_address) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!runtime().memory.find(reinterpret_cast<std::uint64_t>(device_address)))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;  // as ROCr: not an address the loader knows
  *host_address = device_address;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t loader_query_segment_descriptors(hsa_ven_amd_loader_segment_descriptor_t*,
                                              size_t* count) {
  if (!count) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_ERROR;  // not supported
}

ExecutableState* executable_holding(std::uint64_t address) {
  Runtime& rt = runtime();
  std::lock_guard lock(rt.mutex);
  for (auto& [key, state] : rt.executables)
    for (const auto& loaded : state->loader.objects())
      if (address >= loaded.load_base && address < loaded.load_base + loaded.load_size)
        return state.get();
  return nullptr;
}

hsa_status_t loader_query_executable(const void* device_address, hsa_executable_t* executable) {
  if (!device_address || !executable) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  ExecutableState* state = executable_holding(reinterpret_cast<std::uint64_t>(device_address));
  if (!state) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  executable->handle = reinterpret_cast<std::uint64_t>(state);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t loader_iterate_loaded_code_objects(
    hsa_executable_t, hsa_status_t (*)(hsa_executable_t, hsa_loaded_code_object_t, void*), void*) {
  return HSA_STATUS_ERROR;  // not supported
}

hsa_status_t loader_loaded_code_object_get_info(hsa_loaded_code_object_t,
                                                hsa_ven_amd_loader_loaded_code_object_info_t,
                                                void*) {
  return HSA_STATUS_ERROR;  // not supported
}

}  // namespace

extern "C" {

hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t version_major,
                                                  size_t table_length, void* table) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!table || table_length == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (extension != HSA_EXTENSION_AMD_LOADER || version_major != 1) return HSA_STATUS_ERROR;
  const hsa_ven_amd_loader_1_01_pfn_t functions{
      loader_query_host_address, loader_query_segment_descriptors, loader_query_executable,
      loader_iterate_loaded_code_objects, loader_loaded_code_object_get_info};
  std::memcpy(table, &functions, std::min(table_length, sizeof functions));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_extension_table(uint16_t extension, uint16_t version_major, uint16_t,
                                            void* table) {
  return hsa_system_get_major_extension_table(extension, version_major,
                                              sizeof(hsa_ven_amd_loader_1_00_pfn_t), table);
}

}  // extern "C"
