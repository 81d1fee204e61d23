/* dispatch_loop: the cost of a dispatch as an application sees it. Dispatches scale_add (one
 * wave of 64 lanes) N times, waiting for each before the next, as a program that synchronises
 * after every kernel does, and prints the wall time per dispatch of the loop alone (start-up,
 * loading and rewriting excluded). bench/preload/selection_cost.sh runs it plainly and under
 * `wavekit run` with and without dispatches selected. Checks its result on the CPU.
 * usage: dispatch_loop [N [CODE_OBJECT]] */
#include <time.h>

#include "hsa_example.h"

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const unsigned dispatches = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000;
  const char* object = example_code_object(argc, argv, 2, "scale.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "scale_add");

  const unsigned n = 64;
  int* data = example_allocate(&context, n * sizeof(int));
  for (unsigned i = 0; i < n; ++i) data[i] = 0;
  struct {
    int* data;
    int factor;
    int offset;
    unsigned n;
  } args = {data, 1, 1, n};
  void* kernarg = example_kernarg(&context, &kernel, &args, sizeof args, n, 64);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  const double start = now_seconds();
  for (unsigned d = 0; d < dispatches; ++d) {
    hsa_signal_store_relaxed(done, 1);
    example_dispatch(&context, &kernel, kernarg, n, 64, done);
    example_wait(done, 1);
  }
  const double seconds = now_seconds() - start;
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i) wrong += data[i] != (int)dispatches;
  printf("dispatch_loop: %u dispatches, %.3f us per dispatch, %u wrong\n", dispatches,
         1e6 * seconds / dispatches, wrong);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_memory_free(kernarg));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
