// The HSA C API over the emulator, called as an application calls it. Kernel execution itself
// is covered by the examples and the corpus tests; these check the runtime's own behaviour
// against hsa.h's contracts and ROCr's loader rules.
#include <gtest/gtest.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "wavekit/hsa/emulator_extensions.h"
#include "wavekit/hsa/loader.h"
#include "wavekit/support/file.h"

namespace {

std::string device(const std::string& name) {
  return std::string(WAVEKIT_HSA_DEVICE_DIR) + "/" + name;
}

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_iterate_agents(
                  [](hsa_agent_t agent, void* data) {
                    hsa_device_type_t type;
                    hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
                    auto* self = static_cast<Runtime*>(data);
                    (type == HSA_DEVICE_TYPE_GPU ? self->gpu : self->cpu) = agent;
                    return HSA_STATUS_SUCCESS;
                  },
                  this),
              HSA_STATUS_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS); }

  hsa_executable_t load(const std::vector<std::string>& objects,
                        hsa_status_t* freeze_status = nullptr) {
    hsa_executable_t executable;
    EXPECT_EQ(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                        nullptr, &executable),
              HSA_STATUS_SUCCESS);
    for (const auto& object : objects) {
      auto bytes = wavekit::read_file(device(object));
      hsa_code_object_reader_t reader;
      EXPECT_EQ(hsa_code_object_reader_create_from_memory(bytes.data(), bytes.size(), &reader),
                HSA_STATUS_SUCCESS);
      EXPECT_EQ(hsa_executable_load_agent_code_object(executable, gpu, reader, nullptr, nullptr),
                HSA_STATUS_SUCCESS);
      EXPECT_EQ(hsa_code_object_reader_destroy(reader), HSA_STATUS_SUCCESS);
    }
    hsa_status_t status = hsa_executable_freeze(executable, nullptr);
    if (freeze_status)
      *freeze_status = status;
    else
      EXPECT_EQ(status, HSA_STATUS_SUCCESS);
    return executable;
  }

  hsa_agent_t gpu{}, cpu{};
};

TEST(RuntimeLifecycle, CallsBeforeInitAreNotInitialized) {
  hsa_agent_t agent{};
  EXPECT_EQ(hsa_iterate_agents([](hsa_agent_t, void*) { return HSA_STATUS_SUCCESS; }, nullptr),
            HSA_STATUS_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, nullptr),
            HSA_STATUS_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

TEST_F(Runtime, AgentsAreACpuAndTheEmulatedGpu) {
  ASSERT_NE(gpu.handle, 0u);
  ASSERT_NE(cpu.handle, 0u);
  char name[64];
  ASSERT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name), HSA_STATUS_SUCCESS);
  EXPECT_STREQ(name, "gfx90a");  // WAVEKIT_EMU_TARGET unset: the default
  hsa_agent_feature_t feature;
  ASSERT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_FEATURE, &feature), HSA_STATUS_SUCCESS);
  EXPECT_EQ(feature, HSA_AGENT_FEATURE_KERNEL_DISPATCH);
  std::uint32_t wavefront = 0;
  ASSERT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wavefront), HSA_STATUS_SUCCESS);
  EXPECT_EQ(wavefront, 64u);
  std::vector<std::string> isas;
  ASSERT_EQ(hsa_agent_iterate_isas(
                gpu,
                [](hsa_isa_t isa, void* data) {
                  std::uint32_t length = 0;
                  hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length);
                  std::string text(length, '\0');
                  hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, text.data());
                  static_cast<std::vector<std::string>*>(data)->push_back(text.c_str());
                  return HSA_STATUS_SUCCESS;
                },
                &isas),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(isas, std::vector<std::string>{"amdgcn-amd-amdhsa--gfx90a"});
  hsa_isa_t isa;
  EXPECT_EQ(hsa_isa_from_name("amdgcn-amd-amdhsa--gfx90a:xnack-", &isa), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_isa_from_name("amdgcn-amd-amdhsa--gfx1100", &isa),
            HSA_STATUS_ERROR_INVALID_ISA_NAME);
  EXPECT_EQ(hsa_agent_get_info(hsa_agent_t{12345}, HSA_AGENT_INFO_NAME, name),
            HSA_STATUS_ERROR_INVALID_AGENT);
}

TEST_F(Runtime, GpuRegionsIncludeKernargAndPoolsAllocateReachableMemory) {
  struct Found {
    hsa_region_t kernarg{};
    hsa_amd_memory_pool_t pool{};
  } found;
  EXPECT_EQ(hsa_agent_iterate_regions(
                gpu,
                [](hsa_region_t region, void* data) {
                  std::uint32_t flags = 0;
                  hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
                  if (!(flags & HSA_REGION_GLOBAL_FLAG_KERNARG)) return HSA_STATUS_SUCCESS;
                  static_cast<Found*>(data)->kernarg = region;
                  return HSA_STATUS_INFO_BREAK;
                },
                &found),
            HSA_STATUS_INFO_BREAK);
  EXPECT_EQ(hsa_amd_agent_iterate_memory_pools(
                gpu,
                [](hsa_amd_memory_pool_t pool, void* data) {
                  static_cast<Found*>(data)->pool = pool;
                  return HSA_STATUS_INFO_BREAK;
                },
                &found),
            HSA_STATUS_INFO_BREAK);
  void* kernarg = nullptr;
  ASSERT_EQ(hsa_memory_allocate(found.kernarg, 100, &kernarg), HSA_STATUS_SUCCESS);
  void* buffer = nullptr;
  ASSERT_EQ(hsa_amd_memory_pool_allocate(found.pool, 4096, 0, &buffer), HSA_STATUS_SUCCESS);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 4096, 0u);
  EXPECT_EQ(hsa_amd_agents_allow_access(1, &cpu, nullptr, buffer), HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_amd_memory_fill(buffer, 0xdeadbeef, 1024), HSA_STATUS_SUCCESS);
  EXPECT_EQ(static_cast<std::uint32_t*>(buffer)[1023], 0xdeadbeefu);
  ASSERT_EQ(hsa_memory_copy(kernarg, buffer, 100), HSA_STATUS_SUCCESS);
  EXPECT_EQ(static_cast<std::uint32_t*>(kernarg)[24], 0xdeadbeefu);
  hsa_amd_memory_pool_access_t access;
  ASSERT_EQ(hsa_amd_agent_memory_pool_get_info(cpu, found.pool,
                                               HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(access,
            HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);  // device memory, as on a dGPU
  EXPECT_EQ(hsa_memory_free(kernarg), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_pool_free(buffer), HSA_STATUS_SUCCESS);
  int not_allocated;
  EXPECT_EQ(hsa_memory_free(&not_allocated), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST_F(Runtime, SignalOperationsFollowHsaSemantics) {
  hsa_signal_t signal;
  ASSERT_EQ(hsa_signal_create(10, 0, nullptr, &signal), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_signal_load_scacquire(signal), 10);
  hsa_signal_add_relaxed(signal, 5);
  hsa_signal_subtract_screlease(signal, 3);
  EXPECT_EQ(hsa_signal_load_relaxed(signal), 12);
  EXPECT_EQ(hsa_signal_exchange_scacq_screl(signal, 7), 12);
  EXPECT_EQ(hsa_signal_cas_scacq_screl(signal, 7, 9), 7);  // matches: swaps
  EXPECT_EQ(hsa_signal_cas_scacq_screl(signal, 7, 1), 9);  // does not match: unchanged
  hsa_signal_and_relaxed(signal, 0xc);
  hsa_signal_or_relaxed(signal, 0x3);
  hsa_signal_xor_relaxed(signal, 0x1);
  EXPECT_EQ(hsa_signal_load_relaxed(signal), (9 & 0xc | 0x3) ^ 0x1);
  // A bounded wait whose condition never holds returns the current value after the timeout.
  EXPECT_EQ(hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_EQ, 100, 1'000'000,
                                      HSA_WAIT_STATE_BLOCKED),
            hsa_signal_load_relaxed(signal));
  // An unbounded wait is released by a store from another thread.
  std::thread setter([&] { hsa_signal_store_screlease(signal, -5); });
  EXPECT_EQ(hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED),
            -5);
  setter.join();
  volatile hsa_signal_value_t* value = nullptr;
  ASSERT_EQ(hsa_amd_signal_value_pointer(signal, &value), HSA_STATUS_SUCCESS);
  *value = 3;  // what device code does: a plain store to the amd_signal_t value
  EXPECT_EQ(hsa_signal_wait_relaxed(signal, HSA_SIGNAL_CONDITION_EQ, 3, UINT64_MAX,
                                    HSA_WAIT_STATE_ACTIVE),
            3);
  EXPECT_EQ(hsa_signal_destroy(signal), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_signal_destroy(signal), HSA_STATUS_ERROR_INVALID_SIGNAL);
}

// Puts a barrier packet into `queue` and rings the doorbell.
void submit_barrier(hsa_queue_t* queue, std::uint16_t type, std::vector<hsa_signal_t> dependencies,
                    hsa_signal_t completion) {
  std::uint64_t index = hsa_queue_add_write_index_screlease(queue, 1);
  auto* packet = static_cast<hsa_barrier_and_packet_t*>(queue->base_address) + index % queue->size;
  std::memset(reinterpret_cast<std::uint8_t*>(packet) + 2, 0, sizeof *packet - 2);
  for (std::size_t i = 0; i < dependencies.size(); ++i) packet->dep_signal[i] = dependencies[i];
  packet->completion_signal = completion;
  __atomic_store_n(&packet->header, static_cast<std::uint16_t>(type << HSA_PACKET_HEADER_TYPE),
                   __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, static_cast<hsa_signal_value_t>(index));
}

TEST_F(Runtime, BarrierPacketsWaitForTheirDependencies) {
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX,
                             UINT32_MAX, &queue),
            HSA_STATUS_SUCCESS);
  hsa_signal_t first, second, and_done, or_done;
  hsa_signal_create(1, 0, nullptr, &first);
  hsa_signal_create(1, 0, nullptr, &second);
  hsa_signal_create(1, 0, nullptr, &and_done);
  hsa_signal_create(1, 0, nullptr, &or_done);
  submit_barrier(queue, HSA_PACKET_TYPE_BARRIER_AND, {first, second}, and_done);
  submit_barrier(queue, HSA_PACKET_TYPE_BARRIER_OR, {first, second}, or_done);
  hsa_signal_store_screlease(first, 0);
  // One dependency of two: the AND barrier (and the OR behind it, in order) must not complete.
  EXPECT_EQ(hsa_signal_wait_scacquire(and_done, HSA_SIGNAL_CONDITION_EQ, 0, 20'000'000,
                                      HSA_WAIT_STATE_BLOCKED),
            1);
  EXPECT_EQ(hsa_signal_load_scacquire(or_done), 1);
  hsa_signal_store_screlease(second, 0);
  EXPECT_EQ(hsa_signal_wait_scacquire(and_done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED),
            0);
  EXPECT_EQ(hsa_signal_wait_scacquire(or_done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED),
            0);
  EXPECT_EQ(hsa_queue_load_read_index_scacquire(queue), 2u);
  EXPECT_EQ(hsa_queue_load_write_index_scacquire(queue), 2u);
  for (auto signal : {first, second, and_done, or_done}) hsa_signal_destroy(signal);
  EXPECT_EQ(hsa_queue_destroy(queue), HSA_STATUS_SUCCESS);
}

TEST_F(Runtime, UnsupportedPacketTypeReachesTheQueueCallback) {
  struct Seen {
    std::atomic<int> status{0};
  } seen;
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(hsa_queue_create(
                gpu, 64, HSA_QUEUE_TYPE_MULTI,
                [](hsa_status_t status, hsa_queue_t*, void* data) {
                  static_cast<Seen*>(data)->status = status;
                },
                &seen, UINT32_MAX, UINT32_MAX, &queue),
            HSA_STATUS_SUCCESS);
  hsa_signal_t done;
  hsa_signal_create(1, 0, nullptr, &done);
  submit_barrier(queue, HSA_PACKET_TYPE_AGENT_DISPATCH, {}, done);
  // The failed packet's completion signal still drops, so that waiters do not hang.
  EXPECT_EQ(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED),
            0);
  EXPECT_EQ(seen.status.load(), HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  hsa_signal_destroy(done);
  EXPECT_EQ(hsa_queue_destroy(queue), HSA_STATUS_SUCCESS);
}

TEST_F(Runtime, QueueCreationChecksItsArguments) {
  hsa_queue_t* queue = nullptr;
  EXPECT_EQ(hsa_queue_create(gpu, 100, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &queue),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);  // not a power of two
  EXPECT_EQ(hsa_queue_create(cpu, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &queue),
            HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  hsa_queue_t bogus{};
  EXPECT_EQ(hsa_queue_destroy(&bogus), HSA_STATUS_ERROR_INVALID_QUEUE);
}

TEST_F(Runtime, ExecutableResolvesCrossObjectCallsAndReportsSymbols) {
  hsa_executable_t executable = load({"probe_consumer.co", "probe_provider.co"});
  hsa_executable_symbol_t by_kd, by_name;
  ASSERT_EQ(hsa_executable_get_symbol_by_name(executable, "provider_kernel.kd", &gpu, &by_kd),
            HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_executable_get_symbol_by_name(executable, "provider_kernel", &gpu, &by_name),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(by_kd.handle, by_name.handle);
  hsa_symbol_kind_t kind;
  ASSERT_EQ(hsa_executable_symbol_get_info(by_kd, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(kind, HSA_SYMBOL_KIND_KERNEL);
  std::uint64_t object = 0;
  std::uint32_t kernarg_size = 0, kernarg_align = 0;
  ASSERT_EQ(
      hsa_executable_symbol_get_info(by_kd, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object),
      HSA_STATUS_SUCCESS);
  hsa_executable_symbol_get_info(by_kd, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                 &kernarg_size);
  hsa_executable_symbol_get_info(by_kd, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
                                 &kernarg_align);
  // The same object loaded by the loader alone gives the same sizes (the note) and a
  // descriptor at the same offset from its load base.
  wavekit::hsa::Executable reference;
  const auto& loaded = reference.load(wavekit::read_file(device("probe_provider.co")), "provider");
  const auto* kernel = reference.find_kernel("provider_kernel");
  EXPECT_EQ(kernarg_size, kernel->kernarg_segment_size);
  EXPECT_EQ(kernarg_align, kernel->kernarg_segment_align);
  EXPECT_EQ(object % 64, 0u);
  EXPECT_EQ(object % 4096, (kernel->descriptor_address - loaded.load_base) % 4096);

  hsa_executable_symbol_t variable;
  ASSERT_EQ(hsa_executable_get_symbol_by_name(executable, "provider_table", &gpu, &variable),
            HSA_STATUS_SUCCESS);
  std::uint64_t address = 0;
  ASSERT_EQ(hsa_executable_symbol_get_info(variable, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                           &address),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(reinterpret_cast<const int*>(address)[2], 30);  // {10, 20, 30, 40}
  hsa_executable_symbol_t missing;
  EXPECT_EQ(hsa_executable_get_symbol_by_name(executable, "probe_add_impl", &gpu, &missing),
            HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  int symbols = 0;
  ASSERT_EQ(hsa_executable_iterate_symbols(
                executable,
                [](hsa_executable_t, hsa_executable_symbol_t, void* data) {
                  ++*static_cast<int*>(data);
                  return HSA_STATUS_SUCCESS;
                },
                &symbols),
            HSA_STATUS_SUCCESS);
  // Two kernels, the alias, two provider variables and the two __hip_cuid_* markers.
  EXPECT_EQ(symbols, 7);
  EXPECT_EQ(hsa_executable_destroy(executable), HSA_STATUS_SUCCESS);
}

// Dispatches `kernel` (a symbol name) of `executable` over `items` work-items in one
// workgroup with `arguments` as its kernarg segment, and waits for completion.
void run_kernel(hsa_agent_t gpu, hsa_queue_t* queue, hsa_executable_t executable,
                const char* kernel, const std::vector<std::uint8_t>& arguments,
                std::uint32_t items) {
  hsa_executable_symbol_t symbol;
  ASSERT_EQ(hsa_executable_get_symbol_by_name(executable, kernel, &gpu, &symbol),
            HSA_STATUS_SUCCESS);
  std::uint64_t object = 0;
  std::uint32_t kernarg_size = 0, private_size = 0, group_size = 0;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                 &kernarg_size);
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                 &private_size);
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                 &group_size);
  hsa_region_t kernarg_region{};
  hsa_agent_iterate_regions(
      gpu,
      [](hsa_region_t region, void* data) {
        std::uint32_t flags = 0;
        hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
        if (!(flags & HSA_REGION_GLOBAL_FLAG_KERNARG)) return HSA_STATUS_SUCCESS;
        *static_cast<hsa_region_t*>(data) = region;
        return HSA_STATUS_INFO_BREAK;
      },
      &kernarg_region);
  void* kernarg = nullptr;
  ASSERT_EQ(hsa_memory_allocate(kernarg_region, kernarg_size, &kernarg), HSA_STATUS_SUCCESS);
  std::memset(kernarg, 0, kernarg_size);
  std::memcpy(kernarg, arguments.data(), std::min<std::size_t>(arguments.size(), kernarg_size));
  hsa_signal_t done;
  hsa_signal_create(1, 0, nullptr, &done);
  std::uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
  auto* packet =
      static_cast<hsa_kernel_dispatch_packet_t*>(queue->base_address) + index % queue->size;
  std::memset(reinterpret_cast<std::uint8_t*>(packet) + 4, 0, sizeof *packet - 4);
  packet->workgroup_size_x = static_cast<std::uint16_t>(items);
  packet->workgroup_size_y = packet->workgroup_size_z = 1;
  packet->grid_size_x = items;
  packet->grid_size_y = packet->grid_size_z = 1;
  packet->private_segment_size = private_size;
  packet->group_segment_size = group_size;
  packet->kernel_object = object;
  packet->kernarg_address = kernarg;
  packet->completion_signal = done;
  std::uint32_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                         (1u << (16 + HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS));
  __atomic_store_n(reinterpret_cast<std::uint32_t*>(packet), header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, static_cast<hsa_signal_value_t>(index));
  EXPECT_EQ(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED),
            0);
  hsa_signal_destroy(done);
  hsa_memory_free(kernarg);
}

template <typename... Values>
std::vector<std::uint8_t> pack(Values... values) {
  std::vector<std::uint8_t> bytes;
  (
      [&] {
        const auto* raw = reinterpret_cast<const std::uint8_t*>(&values);
        bytes.insert(bytes.end(), raw, raw + sizeof values);
      }(),
      ...);
  return bytes;
}

TEST_F(Runtime, CrossObjectCallRunsTheProvidersFunction) {
  // The probe-library case end to end: the consumer's kernel calls probe_add through its GOT
  // slot, which the loader filled with the provider's probe_add_impl (via the OBJECT alias).
  hsa_executable_t executable = load({"probe_consumer.co", "probe_provider.co"});
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX,
                             UINT32_MAX, &queue),
            HSA_STATUS_SUCCESS);
  std::vector<int> out(64, -1);
  ASSERT_EQ(hsa_memory_register(out.data(), out.size() * sizeof(int)), HSA_STATUS_SUCCESS);
  void* device_out = nullptr;
  ASSERT_EQ(hsa_amd_memory_lock(out.data(), out.size() * sizeof(int), &gpu, 1, &device_out),
            HSA_STATUS_SUCCESS);
  run_kernel(gpu, queue, executable, "call_probe.kd", pack(device_out), 64);
  for (int lane = 0; lane < 64; ++lane) EXPECT_EQ(out[lane], lane + 1000) << lane;
  hsa_amd_memory_unlock(out.data());
  hsa_queue_destroy(queue);
  hsa_executable_destroy(executable);
}

// hsa_amd_memory_lock makes whole pages reachable, so the runtime's own GPU-visible memory
// (queues, AQL rings, signals) must own its pages: small host buffers allocated next to a queue
// shared a page with its amd_queue_t and were never registered (a heap-layout-dependent fault
// that only a clean clone's different heap showed).
TEST_F(Runtime, LockedHostBuffersNextToAQueueAreReachable) {
  hsa_executable_t executable = load({"probe_provider.co"});
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX,
                             UINT32_MAX, &queue),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(queue) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(queue->base_address) % 4096, 0u);
  // Buffers of several sizes, so that some come from the heap run around the queue's memory.
  std::vector<std::vector<int>> buffers;
  for (int i = 0; i < 96; ++i) buffers.emplace_back(64 + 16 * (i % 8), -1);
  for (auto& buffer : buffers) {
    void* device_out = nullptr;
    ASSERT_EQ(hsa_amd_memory_lock(buffer.data(), buffer.size() * sizeof(int), &gpu, 1, &device_out),
              HSA_STATUS_SUCCESS);
    run_kernel(gpu, queue, executable, "provider_kernel", pack(device_out, 2), 64);
    for (int lane = 0; lane < 64; ++lane) ASSERT_EQ(buffer[lane], (lane + 1000) * 2 + 20) << lane;
    hsa_amd_memory_unlock(buffer.data());
  }
  hsa_queue_destroy(queue);
  hsa_executable_destroy(executable);
}

TEST_F(Runtime, DispatchFaultReachesTheQueueCallbackAndTheQueueStopsRunningPackets) {
  hsa_executable_t executable = load({"probe_provider.co"});
  std::atomic<int> status{0};
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(hsa_queue_create(
                gpu, 64, HSA_QUEUE_TYPE_MULTI,
                [](hsa_status_t error, hsa_queue_t*, void* data) {
                  *static_cast<std::atomic<int>*>(data) = error;
                },
                &status, UINT32_MAX, UINT32_MAX, &queue),
            HSA_STATUS_SUCCESS);
  // out = a null pointer: every lane's store lies outside the memory the GPU may touch.
  run_kernel(gpu, queue, executable, "provider_kernel", pack(std::uint64_t{0}, 1), 64);
  EXPECT_EQ(status.load(), HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
  // A later dispatch on the now inactive queue is discarded, but still completes its signal.
  std::vector<int> out(64, -1);
  void* device_out = nullptr;
  ASSERT_EQ(hsa_amd_memory_lock(out.data(), out.size() * sizeof(int), &gpu, 1, &device_out),
            HSA_STATUS_SUCCESS);
  run_kernel(gpu, queue, executable, "provider_kernel", pack(device_out, 1), 64);
  EXPECT_EQ(out[0], -1);
  hsa_amd_memory_unlock(out.data());
  hsa_queue_destroy(queue);
  hsa_executable_destroy(executable);
}

// spin_on_flag's waves wait for a flag only the host sets. The queue reports the dispatch's
// status to `status`; flag and out are host memory the GPU may reach.
class StuckDispatch : public Runtime {
 protected:
  void SetUp() override {
    Runtime::SetUp();
    executable = load({"spin_on_flag.co"});
    ASSERT_EQ(hsa_queue_create(
                  gpu, 64, HSA_QUEUE_TYPE_MULTI,
                  [](hsa_status_t error, hsa_queue_t*, void* data) {
                    *static_cast<std::atomic<int>*>(data) = error;
                  },
                  &status, UINT32_MAX, UINT32_MAX, &queue),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_amd_memory_lock(&flag, sizeof flag, &gpu, 1, &device_flag), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_amd_memory_lock(out, sizeof out, &gpu, 1, &device_out), HSA_STATUS_SUCCESS);
  }
  void TearDown() override {
    wavekit_emu_set_outside_progress(nullptr, nullptr);
    hsa_amd_memory_unlock(&flag);
    hsa_amd_memory_unlock(out);
    hsa_queue_destroy(queue);
    hsa_executable_destroy(executable);
    Runtime::TearDown();
  }
  void run() {
    run_kernel(gpu, queue, executable, "spin_on_flag", pack(device_flag, device_out), 64);
  }

  hsa_executable_t executable{};
  hsa_queue_t* queue = nullptr;
  std::atomic<int> status{HSA_STATUS_SUCCESS};
  std::atomic<unsigned> flag{0};
  unsigned out[64] = {};
  void* device_flag = nullptr;
  void* device_out = nullptr;
};

TEST_F(StuckDispatch, WithoutOutsideProgressAWaveWaitingOnNobodyIsReported) {
  run();
  EXPECT_EQ(status.load(), HSA_STATUS_ERROR_FATAL);  // no_progress
  EXPECT_EQ(out[0], 0u);
}

// The hook the preload shim registers for its hostcall service: asked before the dispatch is
// declared stuck, the "host" releases the waves and says it made progress, so the dispatch runs on.
TEST_F(StuckDispatch, OutsideProgressKeepsAWaveWaitingOnTheHostRunning) {
  struct Host {
    std::atomic<unsigned>* flag;
    std::atomic<int> calls{0};
  } host{&flag};
  ASSERT_EQ(wavekit_emu_set_outside_progress(
                [](void* data) {
                  auto* self = static_cast<Host*>(data);
                  ++self->calls;
                  self->flag->store(7);
                  return 1;
                },
                &host),
            HSA_STATUS_SUCCESS);
  run();
  EXPECT_EQ(status.load(), HSA_STATUS_SUCCESS);
  EXPECT_GE(host.calls.load(), 1);
  for (unsigned lane = 0; lane < 64; ++lane) EXPECT_EQ(out[lane], 7u) << lane;
}

TEST_F(Runtime, ToolMemoryIsMarkedByTheStartOfItsAllocation) {
  hsa_region_t region{};
  hsa_agent_iterate_regions(
      gpu,
      [](hsa_region_t candidate, void* data) {
        *static_cast<hsa_region_t*>(data) = candidate;
        return HSA_STATUS_INFO_BREAK;
      },
      &region);
  void* memory = nullptr;
  ASSERT_EQ(hsa_memory_allocate(region, 4096, &memory), HSA_STATUS_SUCCESS);
  EXPECT_EQ(wavekit_emu_mark_tool_memory(memory), HSA_STATUS_SUCCESS);
  EXPECT_EQ(wavekit_emu_mark_tool_memory(static_cast<char*>(memory) + 4),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wavekit_emu_mark_tool_memory(nullptr), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hsa_memory_free(memory), HSA_STATUS_SUCCESS);
}

TEST_F(Runtime, FreezeFailsWithVariableUndefinedUnlessDefined) {
  hsa_status_t status = HSA_STATUS_SUCCESS;
  hsa_executable_t alone = load({"probe_consumer.co"}, &status);
  EXPECT_EQ(status, HSA_STATUS_ERROR_VARIABLE_UNDEFINED);
  hsa_executable_destroy(alone);

  hsa_executable_t executable;
  hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                            &executable);
  auto bytes = wavekit::read_file(device("probe_consumer.co"));
  hsa_code_object_reader_t reader;
  hsa_code_object_reader_create_from_memory(bytes.data(), bytes.size(), &reader);
  ASSERT_EQ(hsa_executable_load_agent_code_object(executable, gpu, reader, nullptr, nullptr),
            HSA_STATUS_SUCCESS);
  static int stand_in;
  EXPECT_EQ(hsa_executable_agent_global_variable_define(executable, gpu, "probe_add", &stand_in),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_executable_agent_global_variable_define(executable, gpu, "probe_add", &stand_in),
            HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  EXPECT_EQ(hsa_executable_freeze(executable, nullptr), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_executable_load_agent_code_object(executable, gpu, reader, nullptr, nullptr),
            HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  hsa_code_object_reader_destroy(reader);
  hsa_executable_destroy(executable);
}

TEST_F(Runtime, ObjectForAnotherProcessorIsIncompatible) {
  hsa_executable_t executable;
  hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
                            &executable);
  auto bytes = wavekit::read_file(device("probe_provider_gfx908.co"));
  hsa_code_object_reader_t reader;
  hsa_code_object_reader_create_from_memory(bytes.data(), bytes.size(), &reader);
  EXPECT_EQ(hsa_executable_load_agent_code_object(executable, gpu, reader, nullptr, nullptr),
            HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
  std::vector<std::uint8_t> garbage(100, 0x41);
  hsa_code_object_reader_t bad_reader;
  hsa_code_object_reader_create_from_memory(garbage.data(), garbage.size(), &bad_reader);
  EXPECT_EQ(hsa_executable_load_agent_code_object(executable, gpu, bad_reader, nullptr, nullptr),
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  hsa_code_object_reader_destroy(reader);
  hsa_code_object_reader_destroy(bad_reader);
  hsa_executable_destroy(executable);
}

TEST_F(Runtime, StatusStringsAndUnsupportedFunctions) {
  const char* text = nullptr;
  ASSERT_EQ(hsa_status_string(HSA_STATUS_ERROR_VARIABLE_UNDEFINED, &text), HSA_STATUS_SUCCESS);
  EXPECT_EQ(std::string(text).rfind("HSA_STATUS_ERROR_VARIABLE_UNDEFINED", 0), 0u);
  // An unknown status inside the enumeration's range (0x7777 lies outside it: loading such an
  // enum is undefined, UBSan says so).
  EXPECT_EQ(hsa_status_string(static_cast<hsa_status_t>(0x1fff), &text),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_ext_image_t image;
  EXPECT_EQ(hsa_ext_image_create(gpu, nullptr, nullptr, HSA_ACCESS_PERMISSION_RO, &image),
            HSA_STATUS_ERROR);
}

}  // namespace
