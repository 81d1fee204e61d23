/* many_dispatches: the same kernel dispatched 300 times back to back on one queue (more
 * packets than the ring holds, so the ring wraps), all completing one shared signal; each
 * dispatch transforms the previous result, so order and completeness are both checked.
 * usage: many_dispatches [CODE_OBJECT] */
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "scale.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "scale_add");

  const unsigned n = 300, dispatches = 300;
  int* data = example_allocate(&context, n * sizeof(int));
  int* expected = malloc(n * sizeof(int));
  for (unsigned i = 0; i < n; ++i) data[i] = expected[i] = (int)i - 150;

  hsa_signal_t done;
  CHECK(hsa_signal_create(dispatches, 0, NULL, &done));
  void** kernargs = malloc(dispatches * sizeof(void*));
  for (unsigned d = 0; d < dispatches; ++d) {
    /* factor and offset vary per dispatch, so a dispatch run twice, skipped or reordered
       gives a different result */
    struct {
      int* data;
      int factor;
      int offset;
      unsigned n;
    } args = {data, (d % 3 == 0) ? -1 : 1, (int)d, n};
    kernargs[d] = example_kernarg(&context, &kernel, &args, sizeof args, n, 64);
    example_dispatch(&context, &kernel, kernargs[d], n, 64, done);
    for (unsigned i = 0; i < n; ++i) expected[i] = expected[i] * args.factor + args.offset;
  }
  example_wait(done, 1);

  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    if (data[i] != expected[i] && wrong++ < 5)
      fprintf(stderr, "data[%u] = %d, expected %d\n", i, data[i], expected[i]);
  printf("many_dispatches on %s: %u dispatches of %u elements, %u wrong\n", context.gpu_name,
         dispatches, n, wrong);

  for (unsigned d = 0; d < dispatches; ++d) CHECK(hsa_memory_free(kernargs[d]));
  free(kernargs);
  free(expected);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
