/* divergent: a kernel whose lanes take data-dependent paths and loop counts, checked against
 * the same computation on the CPU. The main demo for `wavekit run --tool bbcount`.
 * usage: divergent [CODE_OBJECT] */
#include "divergent_reference.h"
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "divergent.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "divergent");

  const unsigned n = 4096;
  unsigned* input = example_allocate(&context, n * sizeof(unsigned));
  unsigned* output = example_allocate(&context, n * sizeof(unsigned));
  example_fill_pseudo_random(input, n);
  example_run_unary(&context, &kernel, input, output, n, 128);

  unsigned wrong = 0;
  unsigned long long checksum = 0;
  for (unsigned i = 0; i < n; ++i) {
    checksum += output[i];
    if (output[i] != divergent_reference(input[i]) && wrong++ < 5)
      fprintf(stderr, "output[%u] = %u, expected %u\n", i, output[i],
              divergent_reference(input[i]));
  }
  printf("divergent on %s: %u elements, checksum %llu, %u wrong\n", context.gpu_name, n, checksum,
         wrong);

  CHECK(hsa_amd_memory_pool_free(input));
  CHECK(hsa_amd_memory_pool_free(output));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
