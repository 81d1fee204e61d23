// Stream capture into a graph (hipStreamBeginCapture / hipStreamEndCapture /
// hipGraphInstantiate / hipGraphLaunch, launched twice), and the per-thread default stream.
#include "check.h"

__global__ void increment(int* counter) { atomicAdd(counter, 1); }

int main() {
  int* counter;
  CHECK_HIP(hipMalloc(&counter, sizeof(int)));
  CHECK_HIP(hipMemset(counter, 0, sizeof(int)));
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  hipGraph_t graph;
  hipGraphExec_t executable;
  CHECK_HIP(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(increment, dim3(2), dim3(64), 0, stream, counter);
  hipLaunchKernelGGL(increment, dim3(1), dim3(64), 0, stream, counter);
  CHECK_HIP(hipStreamEndCapture(stream, &graph));
  CHECK_HIP(hipGraphInstantiate(&executable, graph, nullptr, nullptr, 0));
  CHECK_HIP(hipGraphLaunch(executable, stream));
  CHECK_HIP(hipGraphLaunch(executable, stream));
  CHECK_HIP(hipStreamSynchronize(stream));
  int value = 0;
  CHECK_HIP(hipMemcpy(&value, counter, sizeof value, hipMemcpyDeviceToHost));
  CHECK(value == 2 * 192);
  hipLaunchKernelGGL(increment, dim3(1), dim3(64), 0, hipStreamPerThread, counter);
  CHECK_HIP(hipStreamSynchronize(hipStreamPerThread));
  CHECK_HIP(hipMemcpy(&value, counter, sizeof value, hipMemcpyDeviceToHost));
  CHECK(value == 2 * 192 + 64);
  CHECK_HIP(hipGraphExecDestroy(executable));
  CHECK_HIP(hipGraphDestroy(graph));
  CHECK_HIP(hipStreamDestroy(stream));
  CHECK_HIP(hipFree(counter));
  std::printf("graphs: ok\n");
  return 0;
}
