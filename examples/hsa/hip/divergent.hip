// divergent as an ordinary HIP program: the kernel of ../kernels/divergent.hip (each lane takes
// one of four paths chosen by its input, then loops a data-dependent number of times), built
// with Debian's hipcc and run unmodified through Debian's libamdhip64, its output checked
// against the same computation on the CPU (../divergent_reference.h). The README's main job:
// `wavekit run --tool bbcount -- build/examples/hsa/hip/divergent`.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#include "divergent_reference.h"

#define CHECK_HIP(call)                                                                            \
  do {                                                                                             \
    hipError_t status = (call);                                                                    \
    if (status != hipSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(status)); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

extern "C" __global__ void divergent(const unsigned* input, unsigned* output, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned value = input[i];
  unsigned result;
  switch (value & 3) {
    case 0:
      result = value * 3;
      break;
    case 1:
      result = value ^ 0x5a5a5a5au;
      break;
    case 2:
      result = value >> 2;
      break;
    default:
      result = value + 12345;
      break;
  }
  unsigned steps = 0;
  for (unsigned x = (value % 97) + 1; x != 1 && steps < 1000; ++steps)
    x = (x & 1) ? 3 * x + 1 : x / 2;
  output[i] = result + steps;
}

int main() {
  const unsigned n = 4096, block = 128;
  std::vector<unsigned> input(n), output(n);
  unsigned state = 12345;  // the HSA example's inputs (hsa_example.h)
  for (unsigned& value : input) value = (state = state * 1103515245u + 12345u) >> 8;

  unsigned *device_input, *device_output;
  CHECK_HIP(hipMalloc(&device_input, n * sizeof(unsigned)));
  CHECK_HIP(hipMalloc(&device_output, n * sizeof(unsigned)));
  CHECK_HIP(hipMemcpy(device_input, input.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(divergent, dim3(n / block), dim3(block), 0, 0, device_input, device_output, n);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy(output.data(), device_output, n * sizeof(unsigned), hipMemcpyDeviceToHost));

  unsigned wrong = 0;
  unsigned long long checksum = 0;
  for (unsigned i = 0; i < n; ++i) {
    checksum += output[i];
    if (output[i] != divergent_reference(input[i]) && wrong++ < 5)
      std::fprintf(stderr, "output[%u] = %u, expected %u\n", i, output[i],
                   divergent_reference(input[i]));
  }
  hipDeviceProp_t properties;
  CHECK_HIP(hipGetDeviceProperties(&properties, 0));
  std::printf("divergent (HIP) on %s: %u elements, checksum %llu, %u wrong\n",
              properties.gcnArchName, n, checksum, wrong);
  CHECK_HIP(hipFree(device_input));
  CHECK_HIP(hipFree(device_output));
  return wrong == 0 ? 0 : 1;
}
