// How an NVIDIA GPU runs many short blocks and few long ones, for the latency term of wavekit's
// predictor (src/model/src/predict.cpp, docs/benchmarks/model.md):
//
// 1. Block dispatch: kernels that do (almost) nothing, launched with 1,056 to 270,336 blocks of
//    64 to 1,024 threads. Above a few rounds of resident blocks the time grows with the number
//    of blocks at a rate that is the GPU's block dispatch (launch + retire) rate.
// 2. Dependent memory phases at a given occupancy: every thread reads `phases` times, each
//    address depending on the value read before (the data are zeros), warps reading whole
//    128-byte lines and all warps together streaming through a buffer (as a grid-stride loop
//    does), one round of 1 to 8 blocks of 256 threads per SM. The time per phase is the loaded
//    latency at that many warps in flight; DRAM (a 1 GiB buffer, read once) and the L2 (16 MiB,
//    warmed), loads alone and a load with a store of the same line per phase.
// 3. The same at 2, 4 and 8 blocks per SM with 1 to 16 independent loads per phase (more bytes
//    in flight per SM).
// 4. Many rounds of short blocks (1 or 4 phases each): the time per round of resident blocks
//    when blocks end and new ones are dispatched.
//
// Each figure is the best of 5 runs of 10 launches, timed with CUDA events. Prints CSV:
// what,kernel,threads_per_block,blocks,value,unit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#define CHECK(x)                                                   \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

__global__ void empty() {}
__global__ void store_one(float* out) { out[blockIdx.x * size_t(blockDim.x) + threadIdx.x] = 1.0f; }

// phases dependent loads per thread; mask + 1 floats in the buffer (a power of two).
// Loads bypass the L1 (ld.global.cg): what a streaming kernel's loads see.
__global__ void chain(const float* __restrict__ a, int phases, unsigned mask, unsigned base,
                      float* out) {
  unsigned stride = gridDim.x * blockDim.x;
  unsigned i = base + blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int p = 0; p < phases; ++p) {
    float v = __ldcg(a + (i & mask));
    s += v;
    i += stride + unsigned(v);  // v is 0: the next address waits for this load
  }
  if (s == -1.0f) out[0] = s;  // keeps the loads; never true
}
// The same with a store of the line it read (gamma_correction's pattern).
__global__ void chain_store(float* __restrict__ a, int phases, unsigned mask, unsigned base) {
  unsigned stride = gridDim.x * blockDim.x;
  unsigned i = base + blockIdx.x * blockDim.x + threadIdx.x;
  for (int p = 0; p < phases; ++p) {
    float v = __ldcg(a + (i & mask));
    a[i & mask] = v * 2.0f;  // stays 0
    i += stride + unsigned(v);
  }
}

// N independent loads per phase (lines N apart in the stream), the next phase's addresses
// waiting for all of them: N times the bytes in flight of `chain` at the same occupancy.
template <int N, bool Store>
__global__ void chain_n(float* __restrict__ a, int phases, unsigned mask, unsigned base,
                        float* out) {
  unsigned stride = gridDim.x * blockDim.x;
  unsigned i = base + blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int p = 0; p < phases; ++p) {
    float v[N];
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = __ldcg(a + ((i + n * stride) & mask));
    float t = 0;
#pragma unroll
    for (int n = 0; n < N; ++n) t += v[n];
    if (Store) a[i & mask] = t * 2.0f;  // stays 0
    s += t;
    i += N * stride + unsigned(t);
  }
  if (s == -1.0f) out[0] = s;
}

template <typename F>
float best_ms(F launch, int runs, int launches) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(start);
    for (int l = 0; l < launches; ++l) launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = std::min(best, ms / launches);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("what,kernel,threads_per_block,blocks,value,unit\n");
  std::printf("device,%s,0,%d,%d,SMs\n", prop.name, sms, sms);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, size_t(270336) * 1024 * sizeof(float)));
  // 1. Block dispatch.
  for (int threads : {64, 128, 256, 512, 1024})
    for (int blocks : {1056, 4224, 16896, 67584, 270336}) {
      float e = best_ms([&] { empty<<<blocks, threads>>>(); }, 5, 10);
      float s = best_ms([&] { store_one<<<blocks, threads>>>(out); }, 5, 10);
      std::printf("dispatch,empty,%d,%d,%.3f,us\n", threads, blocks, e * 1e3);
      std::printf("dispatch,store_one,%d,%d,%.3f,us\n", threads, blocks, s * 1e3);
    }
  CHECK(cudaGetLastError());
  // 2. Dependent phases at 1..8 blocks of 256 threads per SM (one round).
  const unsigned dram_floats = 1u << 28, l2_floats = 1u << 22;  // 1 GiB, 16 MiB
  float* a = nullptr;
  CHECK(cudaMalloc(&a, size_t(dram_floats) * sizeof(float)));
  CHECK(cudaMemset(a, 0, size_t(dram_floats) * sizeof(float)));
  for (int per_sm = 1; per_sm <= 8; ++per_sm) {
    const int blocks = per_sm * sms, threads = 256;
    const unsigned footprint = unsigned(blocks) * threads;  // floats per phase
    // DRAM: each launch starts where the last one ended, so that no launch finds its lines in
    // the L2 (the buffer is 17 times the L2).
    const int dram_phases = 128;
    unsigned base = 0;
    auto next = [&] { return base += footprint * dram_phases; };
    float t = best_ms([&] { chain<<<blocks, threads>>>(a, dram_phases, dram_floats - 1, next(), out); }, 5, 4);
    std::printf("phase_dram,chain,%d,%d,%.2f,ns\n", threads, blocks, t * 1e6 / dram_phases);
    t = best_ms([&] { chain_store<<<blocks, threads>>>(a, dram_phases, dram_floats - 1, next()); }, 5, 4);
    std::printf("phase_dram,chain_store,%d,%d,%.2f,ns\n", threads, blocks, t * 1e6 / dram_phases);
    // L2: 16 MiB read over and over (warmed by a launch before).
    const int l2_phases = 256;
    chain<<<blocks, threads>>>(a, l2_phases, l2_floats - 1, 0, out);
    t = best_ms([&] { chain<<<blocks, threads>>>(a, l2_phases, l2_floats - 1, 0, out); }, 5, 4);
    std::printf("phase_l2,chain,%d,%d,%.2f,ns\n", threads, blocks, t * 1e6 / l2_phases);
    t = best_ms([&] { chain_store<<<blocks, threads>>>(a, l2_phases, l2_floats - 1, 0); }, 5, 4);
    std::printf("phase_l2,chain_store,%d,%d,%.2f,ns\n", threads, blocks, t * 1e6 / l2_phases);
  }
  CHECK(cudaGetLastError());
  // 3. More bytes in flight per SM: N loads per phase at 2, 4 and 8 blocks of 256 per SM.
  auto phase_n = [&](auto kernel, const char* name, int n, int per_sm) {
    const int blocks = per_sm * sms, threads = 256;
    const unsigned footprint = unsigned(blocks) * threads * n;
    const int dram_phases = int(std::min<size_t>(128, (dram_floats / 8) / footprint));
    unsigned base = 0;
    float t = best_ms([&] { kernel<<<blocks, threads>>>(a, dram_phases, dram_floats - 1, base += footprint * dram_phases, out); }, 5, 4);
    std::printf("phase_dram_n%d,%s,%d,%d,%.2f,ns\n", n, name, threads, blocks, t * 1e6 / dram_phases);
    kernel<<<blocks, threads>>>(a, 64, l2_floats - 1, 0, out);
    t = best_ms([&] { kernel<<<blocks, threads>>>(a, 256, l2_floats - 1, 0, out); }, 5, 4);
    std::printf("phase_l2_n%d,%s,%d,%d,%.2f,ns\n", n, name, threads, blocks, t * 1e6 / 256);
  };
  for (int per_sm : {2, 4, 8}) {
    phase_n(chain_n<1, false>, "chain", 1, per_sm);
    phase_n(chain_n<2, false>, "chain", 2, per_sm);
    phase_n(chain_n<4, false>, "chain", 4, per_sm);
    phase_n(chain_n<8, false>, "chain", 8, per_sm);
    phase_n(chain_n<16, false>, "chain", 16, per_sm);
    phase_n(chain_n<1, true>, "chain_store", 1, per_sm);
    phase_n(chain_n<2, true>, "chain_store", 2, per_sm);
    phase_n(chain_n<4, true>, "chain_store", 4, per_sm);
    phase_n(chain_n<8, true>, "chain_store", 8, per_sm);
  }
  CHECK(cudaGetLastError());
  // 4. Many rounds of short blocks: 1 or 4 phases per block, 1 to 128 rounds of 8 blocks of 256
  //    (or 32 of 64) per SM: the time per round against one round's.
  for (int threads : {256, 64})
    for (int phases : {1, 4})
      for (int rounds : {1, 8, 32, 128}) {
        const int blocks = rounds * sms * (2048 / threads);
        const unsigned footprint = unsigned(blocks) * threads * phases;
        unsigned base = 0;
        float t = best_ms([&] { chain_n<1, false><<<blocks, threads>>>(a, phases, dram_floats - 1, base += footprint, out); }, 5, 4);
        std::printf("rounds_dram_p%d_r%d,chain,%d,%d,%.3f,us\n", phases, rounds, threads, blocks, t * 1e3);
        t = best_ms([&] { chain_n<1, true><<<blocks, threads>>>(a, phases, dram_floats - 1, base += footprint, out); }, 5, 4);
        std::printf("rounds_dram_p%d_r%d,chain_store,%d,%d,%.3f,us\n", phases, rounds, threads, blocks, t * 1e3);
      }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return 0;
}
