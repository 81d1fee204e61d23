// A HIP program as clang-22 builds it (host object with the offload bundle in .hip_fatbin and a
// constructor that calls __hipRegisterFatBinary / __hipRegisterFunction), without ROCm headers:
// the test links it against a stand-in libamdhip64.so that records what is registered.
#include <cstdio>

#include "wavekit_corpus/hip_dialect.h"

// Divergent on purpose, so that bbcount has more than one block to count.
__global__ void classify(const int* values, int* classes, unsigned count) {
  unsigned index = wk_global_id_x();
  if (index >= count) return;
  int value = values[index];
  if (value < 0)
    classes[index] = -1;
  else if (value % 2 == 0)
    classes[index] = 2;
  else
    classes[index] = 1;
}

extern "C" int hipModuleLoadData(void** module, const void* image);
extern "C" int hipModuleLoadDataEx(void** module, const void* image, unsigned option_count,
                                   void* options, void** option_values);

// With an argument, also loads that file (a code object or a bundle) as a module, through
// hipModuleLoadDataEx if a second argument says "ex".
int main(int argc, char** argv) {
  std::printf("hip host program: registered its kernels\n");
  if (argc < 2) return 0;
  std::FILE* in = std::fopen(argv[1], "rb");
  if (!in) return 2;
  static unsigned char image[1 << 20];
  std::size_t size = std::fread(image, 1, sizeof image, in);
  std::fclose(in);
  void* module = nullptr;
  const bool extended = argc > 2 && argv[2][0] == 'e' && argv[2][1] == 'x';
  int status = extended ? hipModuleLoadDataEx(&module, image, 0, nullptr, nullptr)
                        : hipModuleLoadData(&module, image);
  std::printf("hip host program: loaded %zu bytes as a module: %d\n", size, status);
  return status;
}
