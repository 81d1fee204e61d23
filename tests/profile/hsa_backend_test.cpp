// The HSA backend against a fake runtime table: what the interception does to the packet
// stream and to the application's signals, and what reaches the profile.
#include "hsa_backend.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>

#include "wavekit/support/error.h"

namespace wavekit::profile {
namespace {

namespace fake {
hsa_amd_queue_intercept_handler handler = nullptr;
void* handler_data = nullptr;
hsa_queue_t queue{};
std::vector<std::array<std::uint8_t, 64>> written;
std::map<std::uint64_t, std::pair<hsa_amd_signal_handler, void*>> async;
std::uint64_t next_signal = 100;
std::vector<std::uint64_t> subtracted;
int profiling_enabled = 0;

hsa_status_t intercept_create(hsa_agent_t, uint32_t, hsa_queue_type32_t,
                              void (*)(hsa_status_t, hsa_queue_t*, void*), void*, uint32_t,
                              uint32_t, hsa_queue_t** q) {
  *q = &queue;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t intercept_register(hsa_queue_t*, hsa_amd_queue_intercept_handler h, void* data) {
  handler = h;
  handler_data = data;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t set_profiler_enabled(hsa_queue_t*, int on) {
  profiling_enabled = on;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t dispatch_time(hsa_agent_t, hsa_signal_t s, hsa_amd_profiling_dispatch_time_t* t) {
  t->start = 1000 * s.handle;
  t->end = t->start + 500;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t async_handler(hsa_signal_t s, hsa_signal_condition_t, hsa_signal_value_t,
                           hsa_amd_signal_handler h, void* arg) {
  async[s.handle] = {h, arg};
  return HSA_STATUS_SUCCESS;
}
hsa_status_t signal_create(hsa_signal_value_t, uint32_t, const hsa_agent_t*, hsa_signal_t* s) {
  s->handle = next_signal++;
  return HSA_STATUS_SUCCESS;
}
void store_relaxed(hsa_signal_t, hsa_signal_value_t) {}
void subtract(hsa_signal_t s, hsa_signal_value_t) { subtracted.push_back(s.handle); }
hsa_status_t freeze(hsa_executable_t, const char*) { return HSA_STATUS_SUCCESS; }
hsa_status_t iterate(hsa_executable_t e,
                     hsa_status_t (*cb)(hsa_executable_t, hsa_executable_symbol_t, void*),
                     void* data) {
  cb(e, {1}, data);  // a kernel
  cb(e, {2}, data);  // a variable
  return HSA_STATUS_SUCCESS;
}
hsa_status_t symbol_info(hsa_executable_symbol_t symbol, hsa_executable_symbol_info_t attr,
                         void* value) {
  const char* name = symbol.handle == 1 ? "gemm_bf16.kd" : "table";
  switch (attr) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *static_cast<hsa_symbol_kind_t*>(value) =
          symbol.handle == 1 ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = static_cast<uint32_t>(std::strlen(name));
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      std::memcpy(value, name, std::strlen(name));
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      *static_cast<uint64_t*>(value) = 0xABC;
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}
hsa_status_t system_info(hsa_system_info_t attr, void* value) {
  if (attr != HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *static_cast<uint64_t*>(value) = 500000000;  // 500 MHz: 2 ns per tick
  return HSA_STATUS_SUCCESS;
}
hsa_status_t agent_info(hsa_agent_t, hsa_agent_info_t attribute, void* value) {
  switch (static_cast<int>(attribute)) {
    case HSA_AGENT_INFO_NAME:
      std::strcpy(static_cast<char*>(value), "gfx90a");
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      std::strcpy(static_cast<char*>(value), "AMD Instinct MI250X");
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      *static_cast<uint32_t*>(value) = 110;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
      *static_cast<uint32_t*>(value) = 1700;  // MHz
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}
void writer(const void* packets, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    std::array<std::uint8_t, 64> p;
    std::memcpy(p.data(), static_cast<const std::uint8_t*>(packets) + 64 * i, 64);
    written.push_back(p);
  }
}
}  // namespace fake

// The container's constructor sets only the versions: every function slot is indeterminate
// until cleared (a backend that reads one the fake never set would call garbage).
template <class Table>
void clear_functions(Table& table) {
  const auto version = table.version;
  std::memset(&table, 0, sizeof table);
  table.version = version;
}

void fill(HsaApiTableContainer& t) {
  clear_functions(t.core);
  clear_functions(t.amd_ext);
  clear_functions(t.finalizer_ext);
  clear_functions(t.image_ext);
  t.core.hsa_queue_create_fn = nullptr;  // set below; a stub that must be replaced
  t.core.hsa_signal_create_fn = fake::signal_create;
  t.core.hsa_signal_store_relaxed_fn = fake::store_relaxed;
  t.core.hsa_signal_subtract_screlease_fn = fake::subtract;
  t.core.hsa_executable_freeze_fn = fake::freeze;
  t.core.hsa_executable_iterate_symbols_fn = fake::iterate;
  t.core.hsa_executable_symbol_get_info_fn = fake::symbol_info;
  t.core.hsa_system_get_info_fn = fake::system_info;
  t.amd_ext.hsa_amd_queue_intercept_create_fn = fake::intercept_create;
  t.amd_ext.hsa_amd_queue_intercept_register_fn = fake::intercept_register;
  t.amd_ext.hsa_amd_profiling_set_profiler_enabled_fn = fake::set_profiler_enabled;
  t.amd_ext.hsa_amd_profiling_get_dispatch_time_fn = fake::dispatch_time;
  t.amd_ext.hsa_amd_signal_async_handler_fn = fake::async_handler;
}

hsa_status_t original_queue_create(hsa_agent_t, uint32_t, hsa_queue_type32_t,
                                   void (*)(hsa_status_t, hsa_queue_t*, void*), void*, uint32_t,
                                   uint32_t, hsa_queue_t**) {
  return HSA_STATUS_ERROR;  // never called: queues become intercept queues
}

std::array<std::uint8_t, 64> dispatch_packet(std::uint64_t completion_signal) {
  hsa_kernel_dispatch_packet_t p{};
  p.header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
  p.kernel_object = 0xABC;
  p.completion_signal.handle = completion_signal;
  std::array<std::uint8_t, 64> bytes;
  std::memcpy(bytes.data(), &p, 64);
  return bytes;
}

TEST(HsaBackend, DispatchesAreTimedAttributedAndStillComplete) {
  HsaApiTableContainer table;
  fill(table);
  table.core.hsa_queue_create_fn = original_queue_create;
  SessionConfig config;
  config.launch_slots = 1024;
  Session session(config, &hsa_backend());
  hsa_backend().install(&table.root, &session);
  session.start();

  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(
      table.core.hsa_queue_create_fn({7}, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &queue),
      HSA_STATUS_SUCCESS);
  EXPECT_EQ(queue, &fake::queue);
  EXPECT_EQ(fake::profiling_enabled, 1);
  ASSERT_EQ(table.core.hsa_executable_freeze_fn({1}, ""), HSA_STATUS_SUCCESS);

  // The application submits a dispatch and a barrier, inside a scope.
  std::array<std::array<std::uint8_t, 64>, 2> packets{dispatch_packet(55), {}};
  hsa_barrier_and_packet_t barrier{};
  barrier.header = HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE;
  barrier.completion_signal.handle = 66;
  std::memcpy(packets[1].data(), &barrier, 64);
  session.tree().enter("decode");
  fake::handler(packets.data(), 2, 0, fake::handler_data, fake::writer);
  session.tree().exit();

  ASSERT_EQ(fake::written.size(), 2u);
  hsa_kernel_dispatch_packet_t sent;
  std::memcpy(&sent, fake::written[0].data(), 64);
  EXPECT_NE(sent.completion_signal.handle, 55u) << "the dispatch must signal our handler";
  EXPECT_EQ(sent.kernel_object, 0xABCu);
  EXPECT_EQ(fake::written[1], packets[1]) << "non-dispatch packets pass through unchanged";
  EXPECT_TRUE(fake::subtracted.empty()) << "the application's signal waits for the kernel";

  // The GPU completes the dispatch: the handler forwards completion exactly once.
  auto [on_complete, arg] = fake::async.at(sent.completion_signal.handle);
  EXPECT_FALSE(on_complete(0, arg));
  EXPECT_EQ(fake::subtracted, std::vector<std::uint64_t>{55});

  // A second dispatch reuses the pooled signal.
  fake::written.clear();
  auto second = dispatch_packet(77);
  fake::handler(second.data(), 1, 1, fake::handler_data, fake::writer);
  std::memcpy(&sent, fake::written[0].data(), 64);
  auto [again, arg2] = fake::async.at(sent.completion_signal.handle);
  again(0, arg2);
  EXPECT_EQ(hsa_backend().signals_created(), 1u);
  EXPECT_EQ(hsa_backend().dispatches_seen(), 2u);

  session.stop();
  Profile profile = session.merged_profile();
  const ProfileNode* decode = profile.root.find("decode");
  ASSERT_TRUE(decode);
  const ProfileNode* gemm = decode->find("gemm_bf16");
  ASSERT_TRUE(gemm) << "the kernel name comes from the executable's symbols, without '.kd'";
  EXPECT_EQ(gemm->metrics.count, 1u);
  EXPECT_EQ(gemm->metrics.time_ns, 1000u);      // 500 ticks at 500 MHz
  ASSERT_TRUE(profile.root.find("gemm_bf16"));  // the second dispatch had no scope
  EXPECT_EQ(session.totals().unattributed, 0u);
}

// The device a queue is created on is described once, and reaches the profile through the
// session's sink before the phase holding its dispatches is exported.
TEST(HsaBackend, DescribesTheDevicesOfItsQueuesInTheProfile) {
  HsaApiTableContainer table;
  fill(table);
  table.core.hsa_queue_create_fn = original_queue_create;
  table.core.hsa_agent_get_info_fn = fake::agent_info;
  SessionConfig config;
  config.launch_slots = 1024;
  Session session(config, &hsa_backend());
  hsa_backend().install(&table.root, &session);
  session.start();
  hsa_queue_t* queue = nullptr;
  ASSERT_EQ(
      table.core.hsa_queue_create_fn({9}, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &queue),
      HSA_STATUS_SUCCESS);
  auto packet = dispatch_packet(88);
  fake::written.clear();
  fake::handler(packet.data(), 1, 0, fake::handler_data, fake::writer);
  hsa_kernel_dispatch_packet_t sent;
  std::memcpy(&sent, fake::written.at(0).data(), 64);
  auto [on_complete, arg] = fake::async.at(sent.completion_signal.handle);
  on_complete(0, arg);
  session.stop();

  const Profile profile = session.merged_profile();
  ASSERT_EQ(profile.devices.size(), 1u);
  const DeviceInfo& device = profile.devices.begin()->second;
  EXPECT_EQ(device.arch, "gfx90a");
  EXPECT_EQ(device.model, "AMD Instinct MI250X");
  EXPECT_EQ(device.num_sms, 110u);
  EXPECT_EQ(device.clock_khz, 1700000u);
  EXPECT_EQ(session.totals().records, 1u);
}

TEST(HsaBackend, RefusesARuntimeWithoutDispatchTiming) {
  HsaApiTableContainer table;
  fill(table);
  table.core.hsa_queue_create_fn = original_queue_create;
  table.amd_ext.hsa_amd_profiling_get_dispatch_time_fn = nullptr;
  Session session(SessionConfig{}, &hsa_backend());
  try {
    hsa_backend().install(&table.root, &session);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hsa_amd_profiling_get_dispatch_time"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(table.core.hsa_queue_create_fn, &original_queue_create) << "nothing was replaced";
}

}  // namespace
}  // namespace wavekit::profile
