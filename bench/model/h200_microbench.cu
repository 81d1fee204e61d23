// Achieved ceilings of an NVIDIA GPU for wavekit's machine model (src/model/machines/*.json):
// DRAM bandwidth (copy and triad over 2 GiB arrays), L2 bandwidth (loads that bypass the L1
// over a buffer that stays in the L2), FP32 and FP64 FMA throughput (8 independent FMA chains
// per thread, all SMs full), the L2-hit and DRAM load latencies (one thread chasing pointers
// through a random cycle of 128-byte lines), the host-side launch overhead of an empty kernel
// (back-to-back launches, and one launch + synchronize), each the best of several runs timed
// with CUDA events. Prints CSV: what,value,unit,detail.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e = (x);                                                     \
    if (e != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));           \
      return 1;                                                              \
    }                                                                        \
  } while (0)

__global__ void copy(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) b[i] = a[i];
}
__global__ void triad(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, float s, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}
// Reads the buffer `passes` times with ld.global.cg (cached in the L2, not the L1), so that
// after the first pass every load is an L2 hit; the sum keeps the loads.
__global__ void l2_read(const float4* __restrict__ a, size_t n, int passes, float* out) {
  float s = 0;
  for (int p = 0; p < passes; ++p)
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
      float4 v = __ldcg(a + i);
      s += v.x + v.y + v.z + v.w;
    }
  if (s == -1.0f) out[0] = s;  // keeps the loads; never true
}
// One thread follows next[] `steps` times: each load waits for the one before, so the time per
// step is the load-to-use latency of wherever the lines live (L1 bypassed).
__global__ void chase(const unsigned* __restrict__ next, unsigned start, int steps, unsigned* out) {
  unsigned i = start;
  for (int s = 0; s < steps; ++s) i = __ldcg(next + i);
  out[0] = i;
}
template <typename T>
__global__ void fma_loop(T* out, int iterations, T a, T b) {
  T x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < iterations; ++i) {
    x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b;
    x4 = x4 * a + b; x5 = x5 * a + b; x6 = x6 * a + b; x7 = x7 * a + b;
  }
  T s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  if (s == T(-1)) out[threadIdx.x] = s;  // keeps the loop; never true
}
__global__ void empty() {}

template <typename F>
float best_ms(F launch, int runs) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = std::min(best, ms);
  }
  return best;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("what,value,unit,detail\n");
  std::printf("device,%s,,%d SMs; L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  const size_t bytes = size_t(2) << 30, n4 = bytes / 16;
  float4 *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  CHECK(cudaMemset(b, 0, bytes));
  int blocks = prop.multiProcessorCount * 8;
  float ms = best_ms([&] { copy<<<blocks, 256>>>(a, c, n4); }, 10);
  std::printf("dram_copy_bandwidth,%.4g,B/s,2 GiB read + 2 GiB written; best of 10\n", 2.0 * bytes / (ms * 1e-3));
  ms = best_ms([&] { triad<<<blocks, 256>>>(a, b, c, 3.0f, n4); }, 10);
  std::printf("dram_triad_bandwidth,%.4g,B/s,4 GiB read + 2 GiB written; best of 10\n", 3.0 * bytes / (ms * 1e-3));
  // L2 bandwidth: 16 MiB, a quarter of the L2 (the H200's is two partitions of 30 MiB), read 50
  // times per launch after a warm-up launch.
  {
    const size_t l2_bytes = size_t(16) << 20;
    const int passes = 50;
    float* sink;
    CHECK(cudaMalloc(&sink, 64));
    l2_read<<<blocks, 256>>>(a, l2_bytes / 16, 1, sink);
    ms = best_ms([&] { l2_read<<<blocks, 256>>>(a, l2_bytes / 16, passes, sink); }, 10);
    std::printf("l2_read_bandwidth,%.4g,B/s,16 MiB read %d times with ld.global.cg; best of 10\n",
                double(passes) * l2_bytes / (ms * 1e-3), passes);
  }
  // Latencies: a random cycle through the 128-byte lines of 4 MiB (L2-resident) and of 256 MiB
  // (beyond the L2), 200,000 dependent loads each.
  for (size_t span : {size_t(4) << 20, size_t(256) << 20}) {
    const size_t lines = span / 128, stride = 128 / sizeof(unsigned);
    std::vector<unsigned> order(lines), next(span / sizeof(unsigned), 0);
    for (size_t l = 0; l < lines; ++l) order[l] = unsigned(l);
    unsigned long long x = 88172645463325252ull;  // xorshift: a fixed random cycle
    for (size_t l = lines - 1; l > 0; --l) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::swap(order[l], order[x % (l + 1)]);
    }
    for (size_t l = 0; l < lines; ++l) next[order[l] * stride] = unsigned(order[(l + 1) % lines] * stride);
    unsigned *d_next, *d_out;
    CHECK(cudaMalloc(&d_next, span));
    CHECK(cudaMalloc(&d_out, 64));
    CHECK(cudaMemcpy(d_next, next.data(), span, cudaMemcpyHostToDevice));
    const int steps = 200000;
    const bool l2 = span < (size_t(32) << 20);
    // The L2-resident cycle is warmed by one full pass and each run walks it from the start.
    // Before each run over the large cycle the L2 is filled with other data (the copy kernel
    // over 2 x 2 GiB; the host copy leaves the cycle's last lines in the L2), and each run
    // starts where the last one stopped: 200,000 lines (25 MiB) fit in the L2.
    if (l2) chase<<<1, 1>>>(d_next, 0, int(lines), d_out);
    // (The fill runs before the timed launch, outside its events.)
    ms = 1e30f;
    for (int run = 0; run < 3; ++run) {
      if (!l2) copy<<<blocks, 256>>>(a, c, n4);
      const unsigned start = l2 ? 0 : order[size_t(run) * steps] * unsigned(stride);
      ms = std::min(ms, best_ms([&] { chase<<<1, 1>>>(d_next, start, steps, d_out); }, 1));
    }
    std::printf("%s,%.4g,s,one thread; %d dependent ld.global.cg over a random cycle of %zu lines (%zu MiB); best of 3\n",
                l2 ? "l2_latency" : "dram_latency", ms * 1e-3 / steps, steps, lines, span >> 20);
    CHECK(cudaFree(d_next));
    CHECK(cudaFree(d_out));
  }
  const int iterations = 4096, fblocks = prop.multiProcessorCount * 16, threads = 256;
  float* fo;
  double* dout;
  CHECK(cudaMalloc(&fo, 4096));
  CHECK(cudaMalloc(&dout, 8192));
  ms = best_ms([&] { fma_loop<float><<<fblocks, threads>>>(fo, iterations, 0.999f, 0.001f); }, 5);
  std::printf("fp32_fma_flops,%.4g,FLOP/s,8 FMA chains x %d iterations x %d threads\n",
              2.0 * 8 * iterations * double(fblocks) * threads / (ms * 1e-3), iterations, fblocks * threads);
  ms = best_ms([&] { fma_loop<double><<<fblocks, threads>>>(dout, iterations / 4, 0.999, 0.001); }, 5);
  std::printf("fp64_fma_flops,%.4g,FLOP/s,8 FMA chains x %d iterations x %d threads\n",
              2.0 * 8 * (iterations / 4) * double(fblocks) * threads / (ms * 1e-3), iterations / 4, fblocks * threads);
  // Launch overhead: back-to-back empty launches (host throughput), and launch + synchronize.
  for (int i = 0; i < 1000; ++i) empty<<<1, 32>>>();
  CHECK(cudaDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  const int launches = 20000;
  for (int i = 0; i < launches; ++i) empty<<<1, 32>>>();
  CHECK(cudaDeviceSynchronize());
  auto t1 = std::chrono::steady_clock::now();
  std::printf("launch_overhead_back_to_back,%.4g,s,%d empty launches then one synchronize\n",
              std::chrono::duration<double>(t1 - t0).count() / launches, launches);
  double best = 1e9;
  for (int i = 0; i < 2000; ++i) {
    auto s0 = std::chrono::steady_clock::now();
    empty<<<1, 32>>>();
    cudaDeviceSynchronize();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
  }
  std::printf("launch_and_sync_latency,%.4g,s,best of 2000 launch + cudaDeviceSynchronize\n", best);
  ms = best_ms([&] { empty<<<1, 32>>>(); }, 200);
  std::printf("empty_kernel_event_time,%.4g,s,best of 200 event pairs around one empty launch\n", ms * 1e-3);
  return 0;
}
