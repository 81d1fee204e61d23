// Intercept queues (hsa_amd_queue_intercept_create / _register, reached through the tools API
// table, as in ROCr). The application writes AQL packets into the intercept queue's own ring and
// rings its doorbell; the store to the doorbell (api_signal.cpp) comes here, in the
// application's thread, and hands each new packet, in order, to the interceptors. Each
// interceptor gets the packets, their index in the application's queue and a writer; what it
// writes goes to the interceptor registered before it, and what the first-registered one writes
// is copied into the wrapped queue, an ordinary emulator queue whose packet processor runs it
// (the last-registered interceptor sees the packets first). An interceptor may drop, rewrite or
// add packets. Once handed on, a packet's slot is released (header INVALID) and the intercept
// queue's read index moves past it, so the application's ring never waits for the GPU.
#include <hsa/hsa.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime.h"

using namespace wavekit::hsa::runtime;

namespace {

using Writer = void (*)(const void* packets, uint64_t count);
using Handler = void (*)(const void* packets, uint64_t count, uint64_t user_index, void* data,
                         Writer writer);

struct InterceptQueue {
  hsa_queue_t* wrapped = nullptr;
  amd_queue_t* amd = nullptr;  // the application's view: hsa_queue_t first
  void* ring = nullptr;
  std::mutex mutex;        // one doorbell at a time, so packets reach the wrapped queue in order
  std::uint64_t next = 0;  // the next packet to hand to the interceptors
  std::vector<std::pair<Handler, void*>> interceptors;  // in registration order
};

struct Registry {
  std::mutex mutex;
  std::map<const hsa_queue_t*, std::unique_ptr<InterceptQueue>> queues;
  std::map<const amd_signal_t*, InterceptQueue*> by_doorbell;
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed, like the Runtime
  return *instance;
}

InterceptQueue* find(const hsa_queue_t* queue) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.queues.find(queue);
  return it == r.queues.end() ? nullptr : it->second.get();
}

// The writer has no user data in ROCr's signature, so the chain's position is per thread.
struct Chain {
  InterceptQueue* queue;
  std::size_t level;  // interceptors[level - 1] is next; 0: the wrapped queue
  std::uint64_t user_index;
};
thread_local Chain* current_chain = nullptr;

void copy_to_wrapped(hsa_queue_t* wrapped, const void* packets, uint64_t count) {
  const auto* bytes = static_cast<const std::uint8_t*>(packets);
  for (uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* packet = bytes + i * 64;
    uint64_t index = hsa_queue_add_write_index_relaxed(wrapped, 1);
    while (index - hsa_queue_load_read_index_scacquire(wrapped) >= wrapped->size)
      std::this_thread::yield();  // the wrapped ring is full: its packet processor drains it
    auto* slot = static_cast<std::uint8_t*>(wrapped->base_address) + (index % wrapped->size) * 64;
    std::memcpy(slot + 4, packet + 4, 60);
    std::uint32_t header_and_setup;
    std::memcpy(&header_and_setup, packet, sizeof header_and_setup);
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(slot), header_and_setup, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(wrapped->doorbell_signal, static_cast<hsa_signal_value_t>(index));
  }
}

void write_packets(const void* packets, uint64_t count) {
  Chain* chain = current_chain;
  if (chain->level == 0) {
    copy_to_wrapped(chain->queue->wrapped, packets, count);
    return;
  }
  auto [handler, data] = chain->queue->interceptors[--chain->level];
  handler(packets, count, chain->user_index, data, &write_packets);
  ++chain->level;
}

std::uint16_t header_type(std::uint16_t header) {
  return (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}

void release_intercept_queue(std::unique_ptr<InterceptQueue> queue) {
  destroy_queue(queue->wrapped);
  amd_signal_t* doorbell = signal_of(queue->amd->hsa_queue.doorbell_signal);
  {  // directly, not hsa_signal_destroy: hsa_shut_down comes here after the last init is gone
    Runtime& rt = runtime();
    std::lock_guard lock(rt.mutex);
    rt.signals.erase(doorbell);
  }
  release(doorbell);
  release(queue->ring);
  release(queue->amd);
}

}  // namespace

namespace wavekit::hsa::runtime {

hsa_status_t intercept_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                    void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                    uint32_t private_segment_size, uint32_t group_segment_size,
                                    hsa_queue_t** queue_out) {
  hsa_queue_t* wrapped = nullptr;
  hsa_status_t status = create_queue(agent, size, type, callback, data, private_segment_size,
                                     group_segment_size, &wrapped);
  if (status != HSA_STATUS_SUCCESS) return status;
  auto queue = std::make_unique<InterceptQueue>();
  queue->wrapped = wrapped;
  queue->amd = static_cast<amd_queue_t*>(allocate(sizeof(amd_queue_t), 64, "amd_queue_t"));
  queue->ring = allocate(std::size_t(size) * 64, 64, "intercept AQL ring");
  hsa_signal_t doorbell{};
  if (!queue->amd || !queue->ring ||
      hsa_signal_create(0, 0, nullptr, &doorbell) != HSA_STATUS_SUCCESS) {
    release(queue->amd);
    release(queue->ring);
    destroy_queue(wrapped);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  signal_of(doorbell)->kind = AMD_SIGNAL_KIND_DOORBELL;  // routes its stores here
  auto* packets = static_cast<hsa_kernel_dispatch_packet_t*>(queue->ring);
  for (std::uint32_t i = 0; i < size; ++i)
    packets[i].header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  // The wrapped queue's description (id, apertures, properties), with this queue's ring,
  // doorbell and indices.
  std::memcpy(queue->amd, wrapped, sizeof(amd_queue_t));
  queue->amd->hsa_queue.base_address = queue->ring;
  queue->amd->hsa_queue.doorbell_signal = doorbell;
  queue->amd->write_dispatch_id = 0;
  queue->amd->read_dispatch_id = 0;
  *queue_out = &queue->amd->hsa_queue;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.by_doorbell[signal_of(doorbell)] = queue.get();
  r.queues[*queue_out] = std::move(queue);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t intercept_queue_register(hsa_queue_t* hsa_queue, Handler handler, void* data) {
  if (!initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!handler) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  InterceptQueue* queue = find(hsa_queue);
  if (!queue) return HSA_STATUS_ERROR_INVALID_QUEUE;
  std::lock_guard lock(queue->mutex);
  queue->interceptors.emplace_back(handler, data);
  return HSA_STATUS_SUCCESS;
}

const hsa_queue_t* running_queue(const hsa_queue_t* queue) {
  InterceptQueue* intercept = find(queue);
  return intercept ? intercept->wrapped : queue;
}

void intercept_doorbell_rung(hsa_signal_t doorbell) {
  InterceptQueue* queue;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.by_doorbell.find(signal_of(doorbell));
    if (it == r.by_doorbell.end()) return;
    queue = it->second;
  }
  std::lock_guard lock(queue->mutex);
  auto* ring = static_cast<std::uint8_t*>(queue->ring);
  const std::uint32_t size = queue->amd->hsa_queue.size;
  // Every packet written so far whose header is valid, in order: a slot reserved by another
  // thread but not yet written stops the walk, and that thread's own doorbell resumes it.
  const std::uint64_t written = __atomic_load_n(&queue->amd->write_dispatch_id, __ATOMIC_ACQUIRE);
  while (queue->next < written) {
    std::uint8_t* slot = ring + (queue->next % size) * 64;
    auto* header = reinterpret_cast<std::uint16_t*>(slot);
    if (header_type(__atomic_load_n(header, __ATOMIC_ACQUIRE)) == HSA_PACKET_TYPE_INVALID) break;
    alignas(64) std::uint8_t packet[64];
    std::memcpy(packet, slot, sizeof packet);
    Chain chain{queue, queue->interceptors.size(), queue->next};
    Chain* outer = current_chain;  // an interceptor may itself submit to another queue
    current_chain = &chain;
    write_packets(packet, 1);
    current_chain = outer;
    __atomic_store_n(header,
                     static_cast<std::uint16_t>(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE),
                     __ATOMIC_RELEASE);
    __atomic_store_n(&queue->amd->read_dispatch_id, ++queue->next, __ATOMIC_RELEASE);
  }
}

hsa_status_t destroy_intercept_queue(hsa_queue_t* hsa_queue) {
  std::unique_ptr<InterceptQueue> queue;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.queues.find(hsa_queue);
    if (it == r.queues.end()) return HSA_STATUS_ERROR_INVALID_QUEUE;
    queue = std::move(it->second);
    r.queues.erase(it);
    r.by_doorbell.erase(signal_of(queue->amd->hsa_queue.doorbell_signal));
  }
  release_intercept_queue(std::move(queue));
  return HSA_STATUS_SUCCESS;
}

void destroy_intercept_queues() {
  std::map<const hsa_queue_t*, std::unique_ptr<InterceptQueue>> queues;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    queues.swap(r.queues);
    r.by_doorbell.clear();
  }
  for (auto& [key, queue] : queues) release_intercept_queue(std::move(queue));
}

}  // namespace wavekit::hsa::runtime
