/* forks: runs vector_add, forks, and runs it again in the child and in the parent; each
 * checks its own result. The child uses the runtime its parent initialised (the emulated GPU
 * is in the process, so the child gets its own copy of it). Prints one line per process.
 * usage: forks   (vector_add.co from examples/hsa's build) */
#include <sys/wait.h>

#include "hsa_example.h"

static unsigned run_vector_add(example_context* context, example_kernel* kernel) {
  const unsigned n = 1000;
  float* a = example_allocate(context, n * sizeof(float));
  float* b = example_allocate(context, n * sizeof(float));
  float* c = example_allocate(context, n * sizeof(float));
  for (unsigned i = 0; i < n; ++i) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
    c[i] = -1.0f;
  }
  struct {
    const float* a;
    const float* b;
    float* c;
    unsigned n;
  } args = {a, b, c, n};
  void* kernarg = example_kernarg(context, kernel, &args, sizeof args, n, 256);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  example_dispatch(context, kernel, kernarg, n, 256, done);
  example_wait(done, 1);
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_memory_free(kernarg));
  CHECK(hsa_amd_memory_pool_free(a));
  CHECK(hsa_amd_memory_pool_free(b));
  CHECK(hsa_amd_memory_pool_free(c));
  return wrong;
}

int main(int argc, char** argv) {
  const char* object = example_code_object(argc, argv, 1, "vector_add.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "vector_add");
  unsigned wrong = run_vector_add(&context, &kernel);

  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    unsigned child_wrong = run_vector_add(&context, &kernel);
    printf("forks: child %u wrong\n", child_wrong);
    fflush(stdout);
    example_shut_down(&context);
    return child_wrong == 0 ? 0 : 1;
  }
  wrong += run_vector_add(&context, &kernel);
  int status = 0;
  waitpid(child, &status, 0);
  printf("forks: parent %u wrong, child %s\n", wrong,
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
