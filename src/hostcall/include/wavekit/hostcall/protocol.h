// The hostcall protocol: a ring of request slots in host-coherent memory, filled by GPU waves
// (or host threads) and serviced by host threads (wavekit/hostcall/runtime.h).
//
// This one header compiles for three producers:
//   - AMDGPU device code (clang -x hip, no HIP headers: probes and the probe SDK),
//   - CUDA device code (nvcc, sm_70 or later: the H200 stress test and benchmark),
//   - host C++ (threads as producers, for tests under ThreadSanitizer).
// It therefore uses no standard library beyond <stdint.h> and only compiler builtins.
//
// Protocol (../shared/design/hostcall.md):
//   claim    the wave's leader lane takes ticket = fetch_add(*ring.ticket, 1): the only shared
//            atomic, wait-free. slot = ticket % slot_count, turn = ticket / slot_count.
//   wait     until slot.seq == turn * 4 + kFree: a wave that wrapped around the ring waits for
//            ITS turn on that slot, which depends only on the host finishing the previous turn.
//   fill     every active lane writes its own payload words; the leader writes the header and
//            the lanes copy the wave-uniform bytes together.
//   publish  seq = turn * 4 + kReady with release semantics at system scope.
//   host     a service thread claims seq kReady -> kClaimed by compare-and-swap (so exactly one
//            thread services it), runs the handler, then stores turn*4 + kReplied (blocking
//            call) or (turn+1)*4 + kFree (fire-and-forget), with release.
//   reply    the wave waits for kReplied, reads its lanes' reply words and frees the slot for
//            the next turn: seq = (turn + 1) * 4 + kFree.
// The sequence word only grows, so the host can never mistake a stale slot for a new request.
//
// A single mailbox served first-come-first-served is the same protocol with slot_count == 1:
// every call waits for the complete call of the ticket before it. It is kept as the baseline
// the ring is measured against; it is the design the reference prototype saw deadlock at
// 16,384 waves.
#pragma once

#include <stdint.h>

// WAVEKIT_HOSTCALL_FN: functions every producer uses (layout, encodings).
// WAVEKIT_HOSTCALL_GPU_FN: the whole-wave device producer. nvcc and clang parse device function
// bodies in their host passes too, so the device producer is declared in both passes and the
// host producer (an overload with other parameters) in host passes.
#if defined(__HIP__)
#define WAVEKIT_HOSTCALL_AMDGPU 1
#define WAVEKIT_HOSTCALL_GPU_FN __attribute__((device)) __attribute__((always_inline)) inline
#define WAVEKIT_HOSTCALL_FN __attribute__((host, device)) inline
#if !defined(__HIP_DEVICE_COMPILE__)
#define WAVEKIT_HOSTCALL_HOST 1
#endif
#elif defined(__CUDACC__)
#define WAVEKIT_HOSTCALL_CUDA 1
#define WAVEKIT_HOSTCALL_HOST 1
#define WAVEKIT_HOSTCALL_GPU_FN __device__ __forceinline__
#define WAVEKIT_HOSTCALL_FN __host__ __device__ inline
#else
#define WAVEKIT_HOSTCALL_HOST 1
#define WAVEKIT_HOSTCALL_FN inline
#endif
#if defined(WAVEKIT_HOSTCALL_HOST)
#include <sched.h>
#endif

namespace wavekit::hostcall::protocol {

inline constexpr uint32_t kMagic = 0x4348574bu;  // "KWHC" read as little-endian bytes
inline constexpr uint32_t kVersion = 1;

// The low two bits of a slot's sequence word; the bits above are the turn.
enum Phase : uint64_t { kFree = 0, kReady = 1, kClaimed = 2, kReplied = 3 };
inline constexpr uint64_t kPhaseBits = 2;
inline constexpr uint64_t kPhaseMask = 3;

// Request flags (SlotHeader::flags).
inline constexpr uint32_t kFlagBlocking = 1u << 0;  // the caller waits for a reply

// Reply status (SlotHeader::status), written by the host before kReplied.
enum Status : uint32_t {
  kOk = 0,
  kUnknownService = 1,  // no handler is registered for the service id
  kHandlerFailed = 2,   // the handler threw; the runtime's statistics count it
  kBadRequest = 3,      // the handler refused malformed request data
};

// Service ids below kFirstUserService belong to wavekit (services.h).
enum Service : uint32_t {
  kServiceReserved = 0,
  kServicePrint = 1,
  kServiceFileOpen = 2,
  kServiceFileWrite = 3,
  kServiceFileClose = 4,
  kFirstUserService = 64,
};

// Every lane receives this many reply words (they overwrite its first payload words).
inline constexpr uint32_t kReplyWords = 2;
inline constexpr uint32_t kMaxLanes = 64;

// One slot: this header, then `uniform_bytes` of wave-uniform data (a format string, a path,
// a file chunk), then `lanes * words_per_lane` 64-bit words, lane-major (lane l's words start
// at l * words_per_lane).
struct alignas(64) SlotHeader {
  uint64_t seq;           // turn * 4 + Phase; only ever accessed atomically
  uint32_t service;       // Service or a user id
  uint32_t flags;         // kFlag*
  uint64_t active_mask;   // lanes whose payload words are meaningful
  uint64_t wave_id;       // the caller's identity, e.g. to give each wave its own file
  uint32_t uniform_used;  // bytes of the uniform area the request uses
  uint32_t status;        // Status, written by the host with the reply
};
static_assert(sizeof(SlotHeader) == 64, "the slot header is one cache line");

// The ring descriptor. It lives where producers can read it; the addresses are the
// producers' view (a GPU's addresses on a GPU). The ticket counter may live elsewhere than the
// slots (in device memory on a GPU, where its atomics are cheap): the host never reads it.
struct Ring {
  uint32_t magic;
  uint32_t version;
  uint32_t slot_count;      // power of two
  uint32_t lanes;           // payload lanes per slot: 64 for AMDGPU waves, 32 for CUDA warps
  uint32_t words_per_lane;  // >= kReplyWords
  uint32_t uniform_bytes;   // multiple of 8
  uint64_t slot_stride;     // bytes from one slot to the next, multiple of 64
  uint64_t* ticket;         // the claim counter
  uint8_t* slots;           // slot_count * slot_stride bytes, host-coherent
};

WAVEKIT_HOSTCALL_FN uint64_t slot_stride_for(uint32_t lanes, uint32_t words_per_lane,
                                             uint32_t uniform_bytes) {
  const uint64_t bytes = sizeof(SlotHeader) + uniform_bytes + uint64_t{lanes} * words_per_lane * 8;
  return (bytes + 63) / 64 * 64;
}

WAVEKIT_HOSTCALL_FN SlotHeader* slot_header(const Ring& ring, uint64_t index) {
  return reinterpret_cast<SlotHeader*>(ring.slots + index * ring.slot_stride);
}
WAVEKIT_HOSTCALL_FN uint8_t* slot_uniform(const Ring& ring, SlotHeader* slot) {
  (void)ring;
  return reinterpret_cast<uint8_t*>(slot) + sizeof(SlotHeader);
}
WAVEKIT_HOSTCALL_FN uint64_t* slot_lane_words(const Ring& ring, SlotHeader* slot, uint32_t lane) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(slot) + sizeof(SlotHeader) +
                                     ring.uniform_bytes) +
         uint64_t{lane} * ring.words_per_lane;
}
WAVEKIT_HOSTCALL_FN uint64_t make_seq(uint64_t turn, Phase phase) {
  return (turn << kPhaseBits) | phase;
}

// ---------------------------------------------------------------------------------------------
// Atomics and waiting, per producer kind. Every access to SlotHeader::seq and to the ticket goes
// through these, at system scope: the other side is the host CPU.
#if defined(WAVEKIT_HOSTCALL_AMDGPU) || defined(WAVEKIT_HOSTCALL_CUDA)
namespace device_ops {

#if defined(WAVEKIT_HOSTCALL_AMDGPU)

WAVEKIT_HOSTCALL_GPU_FN uint64_t fetch_add_relaxed(uint64_t* p, uint64_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
WAVEKIT_HOSTCALL_GPU_FN uint64_t load_acquire(uint64_t* p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
WAVEKIT_HOSTCALL_GPU_FN void store_release(uint64_t* p, uint64_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
// Uniform values may have been stored with s_store_*, which sit in the scalar data cache until
// written back; the release that follows does not cover that cache.
WAVEKIT_HOSTCALL_GPU_FN void before_publish() {
  __builtin_amdgcn_s_dcache_wb();
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "");
}
// The reply was written by the host: scalar loads must not hit stale scalar-cache lines.
WAVEKIT_HOSTCALL_GPU_FN void after_reply() {
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "");
  __builtin_amdgcn_s_dcache_inv();
}
// s_sleep takes a constant: a fixed short sleep (2 x 64 clocks) between polls.
WAVEKIT_HOSTCALL_GPU_FN void pause(uint32_t& backoff) {
  (void)backoff;
  __builtin_amdgcn_s_sleep(2);
}

// Lane id from EXEC-relative counting: an inserted call receives no thread ids.
WAVEKIT_HOSTCALL_GPU_FN uint32_t lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
WAVEKIT_HOSTCALL_GPU_FN uint64_t active_mask() { return __builtin_amdgcn_read_exec(); }
// The leader is the lowest active lane, the one readfirstlane reads.
WAVEKIT_HOSTCALL_GPU_FN uint64_t broadcast_from_leader(uint64_t v, uint64_t mask) {
  (void)mask;
  const uint32_t lo = __builtin_amdgcn_readfirstlane(static_cast<uint32_t>(v));
  const uint32_t hi = __builtin_amdgcn_readfirstlane(static_cast<uint32_t>(v >> 32));
  return (uint64_t{hi} << 32) | lo;
}
WAVEKIT_HOSTCALL_GPU_FN void wave_sync(uint64_t mask) {
  (void)mask;
  __builtin_amdgcn_wave_barrier();
}
WAVEKIT_HOSTCALL_GPU_FN uint32_t lowest_lane(uint64_t mask) {
  return static_cast<uint32_t>(__builtin_ctzll(mask));
}
WAVEKIT_HOSTCALL_GPU_FN uint32_t count_lanes(uint64_t mask) {
  return static_cast<uint32_t>(__builtin_popcountll(mask));
}

#elif defined(WAVEKIT_HOSTCALL_CUDA)

WAVEKIT_HOSTCALL_GPU_FN uint64_t fetch_add_relaxed(uint64_t* p, uint64_t v) {
  uint64_t old;
  asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;"
               : "=l"(old)
               : "l"(p), "l"(v)
               : "memory");
  return old;
}
WAVEKIT_HOSTCALL_GPU_FN uint64_t load_acquire(uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
WAVEKIT_HOSTCALL_GPU_FN void store_release(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
WAVEKIT_HOSTCALL_GPU_FN void before_publish() { __threadfence_system(); }
// Every lane polled the sequence word with ld.acquire.sys, which already orders its later loads
// (and drops stale L1 lines); a system fence here only added a second fence to every call.
WAVEKIT_HOSTCALL_GPU_FN void after_reply() {}
// Every poll of host memory is a PCIe read; with thousands of warps waiting, short sleeps flood
// the link and slow the very replies they wait for. The sleep doubles from 128 ns up to
// WAVEKIT_HOSTCALL_CUDA_MAX_SLEEP_NS (docs/benchmarks/hostcall.md measures the choice).
#if !defined(WAVEKIT_HOSTCALL_CUDA_MAX_SLEEP_NS)
#define WAVEKIT_HOSTCALL_CUDA_MAX_SLEEP_NS 8192
#endif
WAVEKIT_HOSTCALL_GPU_FN void pause(uint32_t& backoff) {
  __nanosleep(backoff);
  backoff = backoff < WAVEKIT_HOSTCALL_CUDA_MAX_SLEEP_NS ? backoff * 2 : backoff;
}
WAVEKIT_HOSTCALL_GPU_FN uint32_t lane_id() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
WAVEKIT_HOSTCALL_GPU_FN uint64_t active_mask() { return __activemask(); }
WAVEKIT_HOSTCALL_GPU_FN uint32_t lowest_lane(uint64_t mask) {
  return static_cast<uint32_t>(__ffsll(static_cast<long long>(mask)) - 1);
}
WAVEKIT_HOSTCALL_GPU_FN uint64_t broadcast_from_leader(uint64_t v, uint64_t mask) {
  return __shfl_sync(static_cast<unsigned>(mask), v, lowest_lane(mask));
}
// __syncwarp orders memory among the participating lanes, so the leader's release publishes
// the other lanes' payload stores too.
WAVEKIT_HOSTCALL_GPU_FN void wave_sync(uint64_t mask) { __syncwarp(static_cast<unsigned>(mask)); }
WAVEKIT_HOSTCALL_GPU_FN uint32_t count_lanes(uint64_t mask) {
  return static_cast<uint32_t>(__popcll(mask));
}
#endif

}  // namespace device_ops
#endif

#if defined(WAVEKIT_HOSTCALL_HOST)
namespace host_ops {

inline uint64_t fetch_add_relaxed(uint64_t* p, uint64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline uint64_t load_acquire(uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void store_release(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline uint32_t count_lanes(uint64_t mask) {
  return static_cast<uint32_t>(__builtin_popcountll(mask));
}

}  // namespace host_ops
#endif

// ---------------------------------------------------------------------------------------------
// The call, whole-wave on the GPUs: every active lane of the wave (warp) calls it together with
// its own `lane_words` (count <= words_per_lane); `uniform` (the same for all lanes) is copied
// once into the slot. With kFlagBlocking, each lane gets kReplyWords words back in `reply`
// (may be null) and the host's Status is returned; without, the call returns kOk as soon as the
// request is published.
//
// call_with_ticket is the same call with a ticket the caller chose instead of one claimed from
// the ring's counter. Tickets fixed in advance (say, in dispatch order) make a mailbox that
// serves calls in that order: it deadlocks as soon as a resident wave's turn comes after a
// ticket of a wave that is not resident yet. It exists for that baseline
// (tests/hostcall/device/hostcall_kernels.hip); probes use call().
#if defined(WAVEKIT_HOSTCALL_AMDGPU) || defined(WAVEKIT_HOSTCALL_CUDA)

WAVEKIT_HOSTCALL_GPU_FN uint32_t call_with_ticket(const Ring& ring, uint64_t ticket,
                                                  uint32_t service, uint32_t flags,
                                                  uint64_t wave_id, const uint64_t* lane_words,
                                                  uint32_t word_count, const void* uniform,
                                                  uint32_t uniform_bytes, uint64_t* reply) {
  const uint64_t mask = device_ops::active_mask();
  const uint32_t lane = device_ops::lane_id();
  const uint32_t leader = device_ops::lowest_lane(mask);
  const uint64_t turn = ticket / ring.slot_count;
  SlotHeader* slot = slot_header(ring, ticket & (ring.slot_count - 1));

  // Every lane waits (atomic loads are never scalar loads, so no stale scalar cache here).
  uint32_t backoff = 128;
  while (device_ops::load_acquire(&slot->seq) != make_seq(turn, kFree)) device_ops::pause(backoff);

  if (word_count > ring.words_per_lane) word_count = ring.words_per_lane;
  uint64_t* mine = slot_lane_words(ring, slot, lane);
  for (uint32_t w = 0; w < word_count; ++w) mine[w] = lane_words[w];

  // The active lanes copy the uniform bytes together, 8 bytes per lane per step; the rank is
  // the lane's position among the active lanes.
  if (uniform_bytes > ring.uniform_bytes) uniform_bytes = ring.uniform_bytes;
  const uint32_t rank = device_ops::count_lanes(mask & ((uint64_t{1} << lane) - 1));
  const uint32_t lanes_active = device_ops::count_lanes(mask);
  const uint32_t uniform_words = (uniform_bytes + 7) / 8;
  uint64_t* uniform_out = reinterpret_cast<uint64_t*>(slot_uniform(ring, slot));
  const uint8_t* uniform_in = static_cast<const uint8_t*>(uniform);
  for (uint32_t w = rank; w < uniform_words; w += lanes_active) {
    uint64_t word = 0;
    for (uint32_t b = 0; b < 8 && w * 8 + b < uniform_bytes; ++b)
      word |= uint64_t{uniform_in[w * 8 + b]} << (8 * b);
    uniform_out[w] = word;
  }
  if (lane == leader) {
    slot->service = service;
    slot->flags = flags;
    slot->active_mask = mask;
    slot->wave_id = wave_id;
    slot->uniform_used = uniform_bytes;
    slot->status = kOk;
  }
  device_ops::before_publish();
  device_ops::wave_sync(mask);
  if (lane == leader) device_ops::store_release(&slot->seq, make_seq(turn, kReady));
  if (!(flags & kFlagBlocking)) return kOk;

  backoff = 128;
  while (device_ops::load_acquire(&slot->seq) != make_seq(turn, kReplied))
    device_ops::pause(backoff);
  device_ops::after_reply();
  if (reply)
    for (uint32_t w = 0; w < kReplyWords; ++w) reply[w] = mine[w];
  const uint32_t status = slot->status;
  device_ops::wave_sync(mask);
  if (lane == leader) device_ops::store_release(&slot->seq, make_seq(turn + 1, kFree));
  return status;
}

WAVEKIT_HOSTCALL_GPU_FN uint32_t call(const Ring& ring, uint32_t service, uint32_t flags,
                                      uint64_t wave_id, const uint64_t* lane_words,
                                      uint32_t word_count, const void* uniform,
                                      uint32_t uniform_bytes, uint64_t* reply) {
  const uint64_t mask = device_ops::active_mask();
  uint64_t ticket = 0;
  if (device_ops::lane_id() == device_ops::lowest_lane(mask))
    ticket = device_ops::fetch_add_relaxed(ring.ticket, 1);
  ticket = device_ops::broadcast_from_leader(ticket, mask);
  return call_with_ticket(ring, ticket, service, flags, wave_id, lane_words, word_count, uniform,
                          uniform_bytes, reply);
}

#endif

#if defined(WAVEKIT_HOSTCALL_HOST)

// What a host producer waits with: it spins a little, then yields its core, since the service
// thread may need that very core.
struct HostBackoff {
  uint32_t spins = 0;
};

inline void host_pause(HostBackoff& backoff) {
  if (++backoff.spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

// A host thread is a whole "wave": it supplies the payload of every lane in `active_mask`
// (`lane_words` holds words_per_lane words per lane, lane-major, for all ring.lanes lanes) and
// receives kReplyWords per lane in `replies` (lane-major, may be null).

inline uint32_t call(const Ring& ring, uint32_t service, uint32_t flags, uint64_t wave_id,
                     uint64_t active_mask, const uint64_t* lane_words, const void* uniform,
                     uint32_t uniform_bytes, uint64_t* replies) {
  const uint64_t ticket = host_ops::fetch_add_relaxed(ring.ticket, 1);
  const uint64_t turn = ticket / ring.slot_count;
  SlotHeader* slot = slot_header(ring, ticket & (ring.slot_count - 1));
  HostBackoff backoff;
  while (host_ops::load_acquire(&slot->seq) != make_seq(turn, kFree)) host_pause(backoff);

  for (uint32_t lane = 0; lane < ring.lanes; ++lane) {
    if (!(active_mask >> lane & 1)) continue;
    uint64_t* out = slot_lane_words(ring, slot, lane);
    const uint64_t* in = lane_words + uint64_t{lane} * ring.words_per_lane;
    for (uint32_t w = 0; w < ring.words_per_lane; ++w) out[w] = in[w];
  }
  if (uniform_bytes > ring.uniform_bytes) uniform_bytes = ring.uniform_bytes;
  const uint8_t* uniform_in = static_cast<const uint8_t*>(uniform);
  uint8_t* uniform_out = slot_uniform(ring, slot);
  for (uint32_t b = 0; b < uniform_bytes; ++b) uniform_out[b] = uniform_in[b];
  slot->service = service;
  slot->flags = flags;
  slot->active_mask = active_mask;
  slot->wave_id = wave_id;
  slot->uniform_used = uniform_bytes;
  slot->status = kOk;
  host_ops::store_release(&slot->seq, make_seq(turn, kReady));
  if (!(flags & kFlagBlocking)) return kOk;

  backoff = {};
  while (host_ops::load_acquire(&slot->seq) != make_seq(turn, kReplied)) host_pause(backoff);
  if (replies) {
    for (uint32_t lane = 0; lane < ring.lanes; ++lane) {
      if (!(active_mask >> lane & 1)) continue;
      const uint64_t* in = slot_lane_words(ring, slot, lane);
      for (uint32_t w = 0; w < kReplyWords; ++w) replies[lane * kReplyWords + w] = in[w];
    }
  }
  const uint32_t status = slot->status;
  host_ops::store_release(&slot->seq, make_seq(turn + 1, kFree));
  return status;
}

#endif

// ---------------------------------------------------------------------------------------------
// Services' encodings (the host side is services.h).
//
// print (kServicePrint): uniform = the format string (NUL-terminated unless truncated); each
//   lane's word 0 = print_signature (argument count in bits 0-3, then 4 bits of PrintKind per
//   argument), words 1.. = the arguments, one word each. Reply word 0 = characters printed.
// file open (kServiceFileOpen): uniform = path relative to the egress directory, where
//   "{wave}" stands for the request's wave id; lane word 0 = FileMode. Reply word 0 = handle
//   (0 on failure), word 1 = errno.
// file write (kServiceFileWrite): lane word 0 = handle, word 1 = this lane's byte count, words
//   2.. = this lane's bytes. The uniform bytes are written first, then each active lane's bytes
//   in lane order. Reply word 0 = bytes written, word 1 = errno. Writes are blocking calls so
//   that one wave's chunks reach its file in program order even with several service threads.
// file close (kServiceFileClose): lane word 0 = handle. Reply word 0 = errno (0: closed).
enum PrintKind : uint32_t {
  kPrintNone = 0,
  kPrintSigned = 1,
  kPrintUnsigned = 2,
  kPrintDouble = 3,
  kPrintPointer = 4,
  kPrintChar = 5
};
inline constexpr uint32_t kMaxPrintArguments = 15;
enum FileMode : uint64_t { kFileTruncate = 0, kFileAppend = 1 };

// One print argument as a word and its kind; the constructors are the accepted argument types.
struct PrintArg {
  uint64_t word;
  uint32_t kind;
  WAVEKIT_HOSTCALL_FN PrintArg(char v) : word(static_cast<uint64_t>(v)), kind(kPrintChar) {}
  WAVEKIT_HOSTCALL_FN PrintArg(signed char v)
      : word(static_cast<uint64_t>(int64_t{v})), kind(kPrintSigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(short v)
      : word(static_cast<uint64_t>(int64_t{v})), kind(kPrintSigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(int v)
      : word(static_cast<uint64_t>(int64_t{v})), kind(kPrintSigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(long v) : word(static_cast<uint64_t>(v)), kind(kPrintSigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(long long v) : word(static_cast<uint64_t>(v)), kind(kPrintSigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(bool v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(unsigned char v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(unsigned short v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(unsigned v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(unsigned long v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(unsigned long long v) : word(v), kind(kPrintUnsigned) {}
  WAVEKIT_HOSTCALL_FN PrintArg(float v) : PrintArg(static_cast<double>(v)) {}
  WAVEKIT_HOSTCALL_FN PrintArg(double v)
      : word(__builtin_bit_cast(uint64_t, v)), kind(kPrintDouble) {}
  WAVEKIT_HOSTCALL_FN PrintArg(const void* v)
      : word(reinterpret_cast<uint64_t>(v)), kind(kPrintPointer) {}
};

// Fills words[0] (the signature) and words[1..count]; returns the number of words used.
WAVEKIT_HOSTCALL_FN uint32_t encode_print(uint64_t* words, const PrintArg* args, uint32_t count) {
  if (count > kMaxPrintArguments) count = kMaxPrintArguments;
  uint64_t signature = count;
  for (uint32_t i = 0; i < count; ++i) {
    signature |= uint64_t{args[i].kind} << (4 + 4 * i);
    words[1 + i] = args[i].word;
  }
  words[0] = signature;
  return count + 1;
}

WAVEKIT_HOSTCALL_FN uint32_t string_length(const char* text) {
  uint32_t n = 0;
  while (text[n] != 0) ++n;
  return n;
}

#if defined(WAVEKIT_HOSTCALL_AMDGPU) || defined(WAVEKIT_HOSTCALL_CUDA)

// printf from every active lane: one request for the whole wave. Arguments beyond
// words_per_lane - 1 are dropped. Returns this lane's character count when blocking, else 0.
template <typename... Args>
WAVEKIT_HOSTCALL_GPU_FN int64_t print(const Ring& ring, uint64_t wave_id, bool blocking,
                                      const char* format, Args... args) {
  uint64_t words[kMaxPrintArguments + 1];
  const PrintArg list[] = {PrintArg(args)..., PrintArg(0)};  // the extra one keeps it non-empty
  uint32_t count = static_cast<uint32_t>(sizeof...(Args));
  if (count + 1 > ring.words_per_lane) count = ring.words_per_lane - 1;
  const uint32_t used = encode_print(words, list, count);
  uint64_t reply[kReplyWords] = {0, 0};
  call(ring, kServicePrint, blocking ? kFlagBlocking : 0, wave_id, words, used, format,
       string_length(format) + 1, reply);
  return static_cast<int64_t>(reply[0]);
}

// Opens `path` (relative to the host's egress directory; "{wave}" becomes wave_id) and
// returns its handle, 0 when the host could not open it.
WAVEKIT_HOSTCALL_GPU_FN uint64_t file_open(const Ring& ring, uint64_t wave_id, const char* path,
                                           FileMode mode) {
  uint64_t words[1] = {mode};
  uint64_t reply[kReplyWords] = {0, 0};
  call(ring, kServiceFileOpen, kFlagBlocking, wave_id, words, 1, path, string_length(path) + 1,
       reply);
  return reply[0];
}

// Appends `bytes` wave-uniform bytes, then each active lane's `lane_bytes` bytes (at most
// (words_per_lane - 2) * 8) in lane order. Returns the bytes written.
// Fills a file write's lane words (words: words_per_lane of them); returns how many it used.
WAVEKIT_HOSTCALL_GPU_FN uint32_t encode_file_write(const Ring& ring, uint64_t* words,
                                                   uint64_t handle, const void* lane_data,
                                                   uint32_t lane_bytes) {
  const uint32_t capacity = (ring.words_per_lane - 2) * 8;
  if (lane_bytes > capacity) lane_bytes = capacity;
  words[0] = handle;
  words[1] = lane_bytes;
  const uint8_t* in = static_cast<const uint8_t*>(lane_data);
  for (uint32_t w = 0; w < (lane_bytes + 7) / 8; ++w) {
    uint64_t word = 0;
    for (uint32_t b = 0; b < 8 && w * 8 + b < lane_bytes; ++b)
      word |= uint64_t{in[w * 8 + b]} << (8 * b);
    words[2 + w] = word;
  }
  return 2 + (lane_bytes + 7) / 8;
}

WAVEKIT_HOSTCALL_GPU_FN uint64_t file_write(const Ring& ring, uint64_t wave_id, uint64_t handle,
                                            const void* data, uint32_t bytes, const void* lane_data,
                                            uint32_t lane_bytes) {
  uint64_t words[64];
  const uint32_t used = encode_file_write(ring, words, handle, lane_data, lane_bytes);
  uint64_t reply[kReplyWords] = {0, 0};
  call(ring, kServiceFileWrite, kFlagBlocking, wave_id, words, used, data, bytes, reply);
  return reply[0];
}

WAVEKIT_HOSTCALL_GPU_FN uint64_t file_close(const Ring& ring, uint64_t wave_id, uint64_t handle) {
  uint64_t words[1] = {handle};
  uint64_t reply[kReplyWords] = {0, 0};
  call(ring, kServiceFileClose, kFlagBlocking, wave_id, words, 1, nullptr, 0, reply);
  return reply[0];
}

#endif

#if defined(WAVEKIT_HOSTCALL_AMDGPU)
// The ring of a rewritten kernel's probes: an undefined symbol of the code object that the
// loader binds. Kept a pure declaration: with a definition in view the compiler could fold the
// handshake away.
extern "C" __attribute__((device, visibility("default"))) Ring* wavekit_hostcall_ring;
#endif

}  // namespace wavekit::hostcall::protocol
