// hipMemcpy in every direction (pageable and pinned host memory, device to device, host to
// host, hipMemcpyDefault), sizes below and above CLR's staging buffer, unaligned offsets,
// hipMemcpyAsync on a stream, hipMemset / hipMemsetD32 / hipMemsetAsync, hipHostMalloc.
#include <cstdint>
#include <vector>

#include "check.h"

__global__ void add_one(std::uint8_t* data, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = static_cast<std::uint8_t>(data[i] + 1);
}

static std::uint8_t pattern(size_t i) { return static_cast<std::uint8_t>(i * 7 + 3); }

static void round_trip(size_t n, size_t offset) {
  std::vector<std::uint8_t> host(n + offset), back(n + offset, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = pattern(i);
  std::uint8_t *d1, *d2;
  CHECK_HIP(hipMalloc(&d1, n + offset));
  CHECK_HIP(hipMalloc(&d2, n + offset));
  CHECK_HIP(hipMemcpy(d1 + offset, host.data() + offset, n, hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(d2, d1 + offset, n, hipMemcpyDeviceToDevice));
  CHECK_HIP(hipMemcpy(back.data(), d2, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i)
    if (back[i] != host[offset + i]) {
      std::fprintf(stderr, "size %zu offset %zu: byte %zu is %d, not %d\n", n, offset, i, back[i],
                   host[offset + i]);
      std::exit(1);
    }
  CHECK_HIP(hipFree(d1));
  CHECK_HIP(hipFree(d2));
}

int main() {
  for (size_t n : {size_t{1}, size_t{3}, size_t{4096}, size_t{100000}, size_t{5} << 20})
    for (size_t offset : {size_t{0}, size_t{1}, size_t{13}}) round_trip(n, offset);

  // Host to host and hipMemcpyDefault.
  std::vector<int> a(1000), b(1000, 0);
  for (int i = 0; i < 1000; ++i) a[i] = i * i;
  CHECK_HIP(hipMemcpy(b.data(), a.data(), 1000 * sizeof(int), hipMemcpyHostToHost));
  CHECK(b == a);
  int* d;
  CHECK_HIP(hipMalloc(&d, 1000 * sizeof(int)));
  CHECK_HIP(hipMemcpy(d, a.data(), 1000 * sizeof(int), hipMemcpyDefault));
  std::vector<int> c(1000, 0);
  CHECK_HIP(hipMemcpy(c.data(), d, 1000 * sizeof(int), hipMemcpyDefault));
  CHECK(c == a);

  // Memsets: bytes, 32-bit words, a part of a buffer, asynchronously.
  const size_t n = 1 << 20;
  std::vector<std::uint8_t> bytes(n);
  std::uint8_t* dm;
  CHECK_HIP(hipMalloc(&dm, n));
  CHECK_HIP(hipMemset(dm, 0xab, n));
  CHECK_HIP(hipMemset(dm + 5, 0x11, 1000));
  CHECK_HIP(hipMemcpy(bytes.data(), dm, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) CHECK(bytes[i] == ((i >= 5 && i < 1005) ? 0x11 : 0xab));
  CHECK_HIP(hipMemsetD32(reinterpret_cast<hipDeviceptr_t>(d), 0x12345678, 1000));
  CHECK_HIP(hipMemcpy(c.data(), d, 1000 * sizeof(int), hipMemcpyDeviceToHost));
  for (int v : c) CHECK(v == 0x12345678);

  // Pinned host memory (hipHostMalloc), used by a kernel directly and by async copies.
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  std::uint8_t *pinned, *pinned_back;
  CHECK_HIP(hipHostMalloc(&pinned, n));
  CHECK_HIP(hipHostMalloc(&pinned_back, n));
  for (size_t i = 0; i < n; ++i) pinned[i] = pattern(i);
  CHECK_HIP(hipMemsetAsync(dm, 0, n, stream));
  CHECK_HIP(hipMemcpyAsync(dm, pinned, n, hipMemcpyHostToDevice, stream));
  hipLaunchKernelGGL(add_one, dim3((n + 255) / 256), dim3(256), 0, stream, dm, n);
  CHECK_HIP(hipMemcpyAsync(pinned_back, dm, n, hipMemcpyDeviceToHost, stream));
  CHECK_HIP(hipStreamSynchronize(stream));
  for (size_t i = 0; i < n; ++i) CHECK(pinned_back[i] == static_cast<std::uint8_t>(pattern(i) + 1));
  // A kernel on pinned host memory itself.
  hipLaunchKernelGGL(add_one, dim3((n + 255) / 256), dim3(256), 0, stream, pinned, n);
  CHECK_HIP(hipStreamSynchronize(stream));
  for (size_t i = 0; i < n; ++i) CHECK(pinned[i] == static_cast<std::uint8_t>(pattern(i) + 1));
  // Pageable memory asynchronously.
  std::vector<std::uint8_t> pageable(n, 0);
  CHECK_HIP(hipMemcpyAsync(pageable.data(), dm, n, hipMemcpyDeviceToHost, stream));
  CHECK_HIP(hipStreamSynchronize(stream));
  for (size_t i = 0; i < n; ++i) CHECK(pageable[i] == static_cast<std::uint8_t>(pattern(i) + 1));

  CHECK_HIP(hipHostFree(pinned));
  CHECK_HIP(hipHostFree(pinned_back));
  CHECK_HIP(hipStreamDestroy(stream));
  CHECK_HIP(hipFree(dm));
  CHECK_HIP(hipFree(d));
  std::printf("memcpy: ok\n");
  return 0;
}
