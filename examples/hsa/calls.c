/* calls: a kernel that calls two non-inlined device functions, checked against the same
 * computation on the CPU. The demo for `wavekit run --tool callret`.
 * usage: calls [CODE_OBJECT] */
#include "calls_reference.h"
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "calls.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "calls");

  const unsigned n = 1000; /* not a multiple of 64: the last wave is partial */
  unsigned* input = example_allocate(&context, n * sizeof(unsigned));
  unsigned* output = example_allocate(&context, n * sizeof(unsigned));
  example_fill_pseudo_random(input, n);
  example_run_unary(&context, &kernel, input, output, n, 128);

  unsigned wrong = 0;
  unsigned long long checksum = 0;
  for (unsigned i = 0; i < n; ++i) {
    checksum += output[i];
    if (output[i] != calls_reference(input[i], i) && wrong++ < 5)
      fprintf(stderr, "output[%u] = %u, expected %u\n", i, output[i],
              calls_reference(input[i], i));
  }
  printf("calls on %s: %u elements, checksum %llu, %u wrong\n", context.gpu_name, n, checksum,
         wrong);

  CHECK(hsa_amd_memory_pool_free(input));
  CHECK(hsa_amd_memory_pool_free(output));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
