// The driver API: hipModuleLoad (a code object built by hipcc --genco) and hipModuleLoadData,
// hipModuleGetFunction, hipModuleLaunchKernel (arguments by kernelParams and by HIP_LAUNCH_PARAM
// extra), hipModuleGetGlobal, hipModuleUnload; a missing kernel is hipErrorNotFound.
#include <fstream>
#include <iterator>
#include <vector>

#include "check.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  hipModule_t module;
  CHECK_HIP(hipModuleLoad(&module, argv[1]));
  hipFunction_t scale, read_global, missing;
  CHECK_HIP(hipModuleGetFunction(&scale, module, "scale"));
  CHECK_HIP(hipModuleGetFunction(&read_global, module, "read_global"));
  CHECK(hipModuleGetFunction(&missing, module, "no_such_kernel") != hipSuccess);

  const int n = 3000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  float* data;
  CHECK_HIP(hipMalloc(&data, n * sizeof(float)));
  CHECK_HIP(hipMemcpy(data, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
  float factor = 3.0f;
  int count = n;
  void* params[] = {&data, &factor, &count};
  CHECK_HIP(
      hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  // The same kernel with its arguments packed into `extra`.
  struct {
    float* data;
    float factor;
    int n;
  } packed{data, 0.5f, n};
  size_t packed_size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, HIP_LAUNCH_PARAM_END};
  CHECK_HIP(
      hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
  CHECK_HIP(hipDeviceSynchronize());
  std::vector<float> back(n);
  CHECK_HIP(hipMemcpy(back.data(), data, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(back[i] == 1.5f * static_cast<float>(i));

  hipDeviceptr_t global;
  size_t global_size = 0;
  CHECK_HIP(hipModuleGetGlobal(&global, &global_size, module, "module_global"));
  CHECK(global_size == sizeof(int));
  int value = 7;
  CHECK_HIP(hipMemcpyHtoD(global, &value, sizeof value));
  int* out;
  CHECK_HIP(hipMalloc(&out, sizeof(int)));
  void* read_params[] = {&out};
  CHECK_HIP(hipModuleLaunchKernel(read_global, 1, 1, 1, 1, 1, 1, 0, nullptr, read_params, nullptr));
  int result = 0;
  CHECK_HIP(hipMemcpy(&result, out, sizeof result, hipMemcpyDeviceToHost));
  CHECK(result == 7);
  CHECK_HIP(hipModuleUnload(module));

  // The same object from memory.
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_HIP(hipModuleLoadData(&module, image.data()));
  CHECK_HIP(hipModuleGetFunction(&read_global, module, "read_global"));
  CHECK_HIP(hipModuleLaunchKernel(read_global, 1, 1, 1, 1, 1, 1, 0, nullptr, read_params, nullptr));
  CHECK_HIP(hipMemcpy(&result, out, sizeof result, hipMemcpyDeviceToHost));
  CHECK(result == 42);  // a fresh load has the initial value
  CHECK_HIP(hipModuleUnload(module));
  CHECK_HIP(hipFree(out));
  CHECK_HIP(hipFree(data));
  std::printf("module: ok\n");
  return 0;
}
