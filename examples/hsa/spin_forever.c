/* spin_forever: dispatches a kernel that waits on a flag nobody sets, then waits for it with no
 * time limit, as a program with a forward-progress bug would. On the emulated runtime the
 * dispatch ends with the emulator's no-progress report and the program exits non-zero; the
 * tests use it to check that the report reaches the user (also under `wavekit run`).
 * usage: spin_forever [CODE_OBJECT] */
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "spin_forever.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "spin_forever");

  const unsigned n = 128;
  unsigned* flag = example_allocate(&context, sizeof(unsigned));
  unsigned* out = example_allocate(&context, n * sizeof(unsigned));
  *flag = 0;
  struct {
    unsigned* flag;
    unsigned* out;
  } args = {flag, out};
  void* kernarg = example_kernarg(&context, &kernel, &args, sizeof args, n, 64);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  example_dispatch(&context, &kernel, kernarg, n, 64, done);
  example_wait(done, 1);
  printf("spin_forever finished, which it never should\n");
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_memory_free(kernarg));
  CHECK(hsa_amd_memory_pool_free(flag));
  CHECK(hsa_amd_memory_pool_free(out));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return 1;
}
