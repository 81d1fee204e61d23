// The memory-instruction kinds the other sources leave out, in the kernel's own code: MUBUF
// through buffer resources built from kernel arguments (raw, unswizzled; OFFEN, and IDXEN with
// a stride), a scalar buffer load, a private array addressed as private memory (scratch_* on
// gfx942; on gfx908/gfx90a buffer_* through the private segment buffer), and LDS accesses with
// non-zero offsets (ds_read2_b32 offset0:1 offset1:3, ds_write_b32 / ds_read_b32 offset:8).
#include "wavekit_corpus/hip_dialect.h"

typedef int wk_int4 __attribute__((ext_vector_type(4)));
typedef __attribute__((address_space(5))) volatile int private_int;

// A raw buffer's DST_SEL / format bits (dword 3); no swizzle, no ADD_TID.
constexpr int kBufferFlags = 0x27000;

// out[i] = in[i] + in[1] + 3 * (in[i] & 15) + i + 2 * in[i] + 4 (workgroups of 64).
extern "C" __global__ void address_kinds(const int* in, int* out, unsigned n) {
  const unsigned i = wk_global_id_x();
  const unsigned long long in_address = reinterpret_cast<unsigned long long>(in);
  const wk_int4 resource = {static_cast<int>(in_address), static_cast<int>(in_address >> 32),
                            static_cast<int>(n * 4), kBufferFlags};
  // in[1] through the scalar cache: s_buffer_load_dword, which no builtin spells.
  int second;
  asm volatile("s_buffer_load_dword %0, %1, 0x4\n\ts_waitcnt lgkmcnt(0)"
               : "=s"(second)
               : "s"(resource));
  __amdgpu_buffer_rsrc_t source =
      __builtin_amdgcn_make_buffer_rsrc(const_cast<int*>(in), 0, n * 4, kBufferFlags);
  __amdgpu_buffer_rsrc_t destination =
      __builtin_amdgcn_make_buffer_rsrc(out, 0, n * 4, kBufferFlags);
  if (i >= n) return;
  volatile int table[16];
  private_int* private_table = (private_int*)(table);
  for (int k = 0; k < 16; ++k) private_table[k] = k * 3 + static_cast<int>(i);
  const int value = __builtin_amdgcn_raw_buffer_load_b32(source, i * 4, 0, 0);
  // in[i] again, as record i of 4-byte records (IDXEN: the stride comes from the V#).
  const wk_int4 records = {resource[0], resource[1] | (4 << 16), static_cast<int>(n), kBufferFlags};
  int same;
  asm volatile("buffer_load_dword %0, %1, %2, 0 idxen\n\ts_waitcnt vmcnt(0)"
               : "=v"(same)
               : "v"(i), "s"(records));
  // Each lane's own four LDS words: no other lane reads them, so no barrier is needed. The empty
  // asm statements keep the compiler from forwarding the stores to the loads.
  __shared__ int words[64 * 4];
  const unsigned t = WK_THREAD_X;
  for (int k = 0; k < 4; ++k) words[t * 4 + k] = value + k;
  asm volatile("" ::: "memory");
  words[t * 4 + 2] = words[t * 4 + 1] + words[t * 4 + 3];
  asm volatile("" ::: "memory");
  const int pair = words[t * 4 + 2];
  __builtin_amdgcn_raw_buffer_store_b32(
      value + (same - value) + second + private_table[value & 15] + pair, destination, i * 4, 0, 0);
}
