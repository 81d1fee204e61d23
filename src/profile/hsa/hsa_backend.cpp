#include "hsa_backend.h"

#include <cstring>

#include "wavekit/support/error.h"

namespace wavekit::profile {

namespace {
constexpr std::size_t kRecordsPerBuffer = 4096;
constexpr std::size_t kMaxBuffers = 64;  // beyond this, completions are counted as dropped

std::uint16_t packet_type(const void* packet) {
  std::uint16_t header;
  std::memcpy(&header, packet, sizeof header);
  return (header >> HSA_PACKET_HEADER_TYPE) & ((1 << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}
}  // namespace

HsaBackend& hsa_backend() {
  static HsaBackend backend;
  return backend;
}

void HsaBackend::install(HsaApiTable* table, Session* session) {
  if (!table || !table->core_ || !table->amd_ext_)
    fail("HSA tools table", "missing core or AMD table");
  CoreApiTable& core = *table->core_;
  AmdExtTable& amd = *table->amd_ext_;
  struct Need {
    const void* fn;
    const char* name;
  } needs[] = {
      {reinterpret_cast<const void*>(core.hsa_queue_create_fn), "hsa_queue_create"},
      {reinterpret_cast<const void*>(core.hsa_signal_create_fn), "hsa_signal_create"},
      {reinterpret_cast<const void*>(core.hsa_signal_store_relaxed_fn), "hsa_signal_store_relaxed"},
      {reinterpret_cast<const void*>(core.hsa_signal_subtract_screlease_fn),
       "hsa_signal_subtract_screlease"},
      {reinterpret_cast<const void*>(core.hsa_executable_freeze_fn), "hsa_executable_freeze"},
      {reinterpret_cast<const void*>(core.hsa_executable_iterate_symbols_fn),
       "hsa_executable_iterate_symbols"},
      {reinterpret_cast<const void*>(core.hsa_executable_symbol_get_info_fn),
       "hsa_executable_symbol_get_info"},
      {reinterpret_cast<const void*>(core.hsa_system_get_info_fn), "hsa_system_get_info"},
      {reinterpret_cast<const void*>(amd.hsa_amd_queue_intercept_create_fn),
       "hsa_amd_queue_intercept_create"},
      {reinterpret_cast<const void*>(amd.hsa_amd_queue_intercept_register_fn),
       "hsa_amd_queue_intercept_register"},
      {reinterpret_cast<const void*>(amd.hsa_amd_profiling_set_profiler_enabled_fn),
       "hsa_amd_profiling_set_profiler_enabled"},
      {reinterpret_cast<const void*>(amd.hsa_amd_profiling_get_dispatch_time_fn),
       "hsa_amd_profiling_get_dispatch_time"},
      {reinterpret_cast<const void*>(amd.hsa_amd_signal_async_handler_fn),
       "hsa_amd_signal_async_handler"}};
  for (const Need& need : needs)
    if (!need.fn) fail("HSA tools table", std::string("the runtime does not provide ") + need.name);
  original_core_ = core;
  original_amd_ = amd;
  session_ = session;
  std::uint64_t frequency = 0;
  if (core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency) ==
          HSA_STATUS_SUCCESS &&
      frequency)
    ns_per_tick_ = 1e9 / static_cast<double>(frequency);
  core.hsa_queue_create_fn = &HsaBackend::queue_create;
  core.hsa_executable_freeze_fn = &HsaBackend::executable_freeze;
}

hsa_status_t HsaBackend::queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                      void (*callback)(hsa_status_t, hsa_queue_t*, void*),
                                      void* data, uint32_t private_segment_size,
                                      uint32_t group_segment_size, hsa_queue_t** queue) {
  HsaBackend& self = hsa_backend();
  hsa_status_t status = self.original_amd_.hsa_amd_queue_intercept_create_fn(
      agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
  if (status != HSA_STATUS_SUCCESS) return status;
  self.original_amd_.hsa_amd_profiling_set_profiler_enabled_fn(*queue, 1);
  hsa_agent_t* queue_agent;
  std::uint32_t device;
  bool new_device;
  {
    std::lock_guard lock(self.mutex_);
    auto [it, inserted] = self.device_by_agent_.emplace(
        agent.handle, static_cast<std::uint32_t>(self.device_by_agent_.size()));
    device = it->second;
    new_device = inserted;
    queue_agent = &self.queue_agents_.emplace_back(agent);
  }
  if (new_device) self.describe_device(agent, device);
  return self.original_amd_.hsa_amd_queue_intercept_register_fn(*queue, &HsaBackend::on_submit,
                                                                queue_agent);
}

void HsaBackend::describe_device(hsa_agent_t agent, std::uint32_t device) {
  // Optional: a runtime without hsa_agent_get_info still profiles, without a device_info entry.
  auto info = original_core_.hsa_agent_get_info_fn;
  if (!info) return;
  char name[64] = {};
  if (info(agent, HSA_AGENT_INFO_NAME, name) != HSA_STATUS_SUCCESS) return;
  DeviceInfo d;
  d.arch = name;  // "gfx90a"
  char product[64] = {};
  if (info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_PRODUCT_NAME), product) ==
      HSA_STATUS_SUCCESS)
    d.model = product;
  std::uint32_t value = 0;
  if (info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT), &value) ==
      HSA_STATUS_SUCCESS)
    d.num_sms = value;
  if (info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY), &value) ==
      HSA_STATUS_SUCCESS)
    d.clock_khz = value * 1000;  // MHz
  if (info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY), &value) ==
      HSA_STATUS_SUCCESS)
    d.memory_clock_khz = value * 1000;
  if (info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_MEMORY_WIDTH), &value) ==
      HSA_STATUS_SUCCESS)
    d.bus_width_bits = value;
  std::lock_guard lock(mutex_);
  undelivered_devices_.emplace_back(device, std::move(d));
}

hsa_status_t HsaBackend::executable_freeze(hsa_executable_t executable, const char* options) {
  HsaBackend& self = hsa_backend();
  hsa_status_t status = self.original_core_.hsa_executable_freeze_fn(executable, options);
  if (status != HSA_STATUS_SUCCESS) return status;
  // Learn kernel object -> name once per executable, so a dispatch only looks up an integer.
  self.original_core_.hsa_executable_iterate_symbols_fn(
      executable,
      [](hsa_executable_t, hsa_executable_symbol_t symbol, void*) -> hsa_status_t {
        HsaBackend& b = hsa_backend();
        auto info = b.original_core_.hsa_executable_symbol_get_info_fn;
        hsa_symbol_kind_t kind;
        if (info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) != HSA_STATUS_SUCCESS ||
            kind != HSA_SYMBOL_KIND_KERNEL)
          return HSA_STATUS_SUCCESS;
        std::uint32_t length = 0;
        std::uint64_t object = 0;
        info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
        std::string name(length, '\0');
        info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data());
        info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
        if (name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0)
          name.resize(name.size() - 3);
        std::lock_guard lock(b.mutex_);
        b.kernel_by_object_[object] = static_cast<std::uint32_t>(b.names_.size());
        b.names_.push_back(std::move(name));
        return HSA_STATUS_SUCCESS;
      },
      nullptr);
  return status;
}

HsaBackend::Slot* HsaBackend::take_slot(std::uint64_t kernel_object, hsa_agent_t agent) {
  std::lock_guard lock(mutex_);
  Slot* slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    auto created = std::make_unique<Slot>();
    if (original_core_.hsa_signal_create_fn(1, 0, nullptr, &created->ours) != HSA_STATUS_SUCCESS)
      return nullptr;
    slots_.push_back(std::move(created));
    slot = slots_.back().get();
  }
  auto kernel = kernel_by_object_.find(kernel_object);
  slot->kernel = kernel == kernel_by_object_.end() ? 0 : kernel->second;
  slot->device = device_by_agent_[agent.handle];
  slot->agent = agent;
  return slot;
}

void HsaBackend::give_slot(Slot* slot) {
  std::lock_guard lock(mutex_);
  free_slots_.push_back(slot);
}

std::size_t HsaBackend::signals_created() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

void HsaBackend::on_submit(const void* packets, uint64_t count, uint64_t, void* data,
                           hsa_amd_queue_intercept_packet_writer writer) {
  HsaBackend& self = hsa_backend();
  const auto* bytes = static_cast<const std::uint8_t*>(packets);
  const hsa_agent_t agent = *static_cast<const hsa_agent_t*>(data);
  for (uint64_t i = 0; i < count; ++i) {
    const void* packet = bytes + i * 64;
    hsa_kernel_dispatch_packet_t dispatch;
    std::memcpy(&dispatch, packet, sizeof dispatch);
    Slot* slot = nullptr;
    if (packet_type(packet) == HSA_PACKET_TYPE_KERNEL_DISPATCH && self.session_ &&
        self.session_->collecting())
      slot = self.take_slot(dispatch.kernel_object, agent);
    if (!slot) {  // not a dispatch, not collecting, or no signal: pass it through unchanged
      writer(packet, 1);
      continue;
    }
    slot->original = dispatch.completion_signal;
    slot->correlation = self.next_correlation_.fetch_add(1, std::memory_order_relaxed);
    self.session_->on_kernel_launch(slot->correlation);
    self.dispatches_.fetch_add(1, std::memory_order_relaxed);
    self.original_core_.hsa_signal_store_relaxed_fn(slot->ours, 1);
    dispatch.completion_signal = slot->ours;
    self.original_amd_.hsa_amd_signal_async_handler_fn(slot->ours, HSA_SIGNAL_CONDITION_LT, 1,
                                                       &HsaBackend::on_complete, slot);
    writer(&dispatch, 1);
  }
}

bool HsaBackend::on_complete(hsa_signal_value_t, void* arg) {
  HsaBackend& self = hsa_backend();
  auto* slot = static_cast<Slot*>(arg);
  hsa_amd_profiling_dispatch_time_t time{};
  bool timed = self.original_amd_.hsa_amd_profiling_get_dispatch_time_fn(
                   slot->agent, slot->ours, &time) == HSA_STATUS_SUCCESS;
  // The record is in before the application's signal completes (always), so a program that
  // waits for its last dispatch and then shuts down or exits does not outrun its profile.
  if (timed)
    self.append({slot->correlation, static_cast<std::uint64_t>(time.start * self.ns_per_tick_),
                 static_cast<std::uint64_t>(time.end * self.ns_per_tick_), slot->kernel,
                 slot->device});
  const hsa_signal_t original = slot->original;  // the slot may be reused once given back
  self.give_slot(slot);
  if (original.handle) self.original_core_.hsa_signal_subtract_screlease_fn(original, 1);
  return false;  // one-shot: the slot's next dispatch registers again
}

void HsaBackend::append(const Record& record) {
  std::lock_guard lock(mutex_);
  if (!open_.data) {
    if (!free_buffers_.empty()) {
      open_.data = free_buffers_.back();
      free_buffers_.pop_back();
    } else if (buffers_.size() < kMaxBuffers) {
      buffers_.push_back(std::make_unique<std::uint8_t[]>(kRecordsPerBuffer * sizeof(Record)));
      open_.data = buffers_.back().get();
    } else {
      return;  // the consumer is far behind: memory stays bounded, the record is lost
    }
    open_.valid_bytes = 0;
    open_.capacity = kRecordsPerBuffer * sizeof(Record);
  }
  std::memcpy(open_.data + open_.valid_bytes, &record, sizeof record);
  open_.valid_bytes += sizeof record;
  if (open_.valid_bytes + sizeof record > open_.capacity) submit_open_buffer();
}

void HsaBackend::submit_open_buffer() {
  if (!open_.data || open_.valid_bytes == 0 || !session_) return;
  session_->submit(open_);
  open_ = {};
}

void HsaBackend::flush(bool) {
  std::lock_guard lock(mutex_);
  submit_open_buffer();
}

void HsaBackend::poll(RecordSink& sink, bool) { deliver_devices(sink); }

// Before the records that follow: a device is described before its first queue exists, hence
// before any record of it, so a phase is never exported without its devices.
void HsaBackend::deliver_devices(RecordSink& sink) {
  std::vector<std::pair<std::uint32_t, DeviceInfo>> devices;
  {
    std::lock_guard lock(mutex_);
    devices.swap(undelivered_devices_);
  }
  for (const auto& [id, info] : devices) sink.device(id, info);
}

void HsaBackend::decode(const RawBuffer& buffer, RecordSink& sink) {
  deliver_devices(sink);
  for (std::size_t off = 0; off + sizeof(Record) <= buffer.valid_bytes; off += sizeof(Record)) {
    Record r;
    std::memcpy(&r, buffer.data + off, sizeof r);
    KernelActivity a;
    a.correlation = r.correlation;
    a.start_ns = r.start_ns;
    a.end_ns = r.end_ns;
    a.device = r.device;
    {
      std::lock_guard lock(mutex_);  // names_ may be growing; its elements do not move
      a.kernel_name = r.kernel < names_.size() ? names_[r.kernel] : names_[0];
    }
    sink.kernel(a);
  }
}

void HsaBackend::release(const RawBuffer& buffer) {
  std::lock_guard lock(mutex_);
  free_buffers_.push_back(buffer.data);
}

}  // namespace wavekit::profile
