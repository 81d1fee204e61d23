/* vector_add: c = a + b on the GPU agent through the HSA API, checked on the CPU.
 * usage: vector_add [CODE_OBJECT]   (default: vector_add.co next to this program's build) */
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "vector_add.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "vector_add");

  const unsigned n = 1000; /* not a multiple of the block: the last workgroup is partial */
  float* a = example_allocate(&context, n * sizeof(float));
  float* b = example_allocate(&context, n * sizeof(float));
  float* c = example_allocate(&context, n * sizeof(float));
  for (unsigned i = 0; i < n; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = 1000.0f - (float)i;
    c[i] = -1.0f;
  }
  struct {
    const float* a;
    const float* b;
    float* c;
    unsigned n;
  } args = {a, b, c, n};
  void* kernarg = example_kernarg(&context, &kernel, &args, sizeof args, n, 256);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  example_dispatch(&context, &kernel, kernarg, n, 256, done);
  example_wait(done, 1);

  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i]) {
      if (wrong++ < 5) fprintf(stderr, "c[%u] = %g, expected %g\n", i, c[i], a[i] + b[i]);
    }
  printf("vector_add on %s: %u elements, %u wrong\n", context.gpu_name, n, wrong);

  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_memory_free(kernarg));
  CHECK(hsa_amd_memory_pool_free(a));
  CHECK(hsa_amd_memory_pool_free(b));
  CHECK(hsa_amd_memory_pool_free(c));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
