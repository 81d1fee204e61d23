/* controlled: dispatches scale_add 12 times, one after another, and switches wavekit's
 * instrumentation between them the way a user would, through one of its three hands:
 *   controlled api             wavekit/instrumentation.h (the C API)
 *   controlled file PATH       writes PATH, the control file `wavekit run --control-file` watches
 *   controlled signal          raises SIGUSR1 (`wavekit run --control-signal USR1`)
 * (a code object other than examples/hsa's scale.co may follow the control file's path).
 * Dispatches 0-3 run under the selection it started with; then instrumentation is switched off
 * for 4-7; then on again, for 8-11, with the selection every=2 (api and file; the signal only
 * toggles). Each dispatch's result is checked on the CPU. Without wavekit the API calls answer
 * -1 and the program still checks its results. Prints one line per phase. */
#include <signal.h>
#include <time.h>

#include "hsa_example.h"
#include "wavekit/instrumentation.h"

/* Longer than the control file's poll period (50 ms), so that a change is seen before the next
 * dispatch. */
static void wait_for_the_watcher(void) {
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
}

static void write_control_file(const char* path, const char* text) {
  FILE* file = fopen(path, "w");
  if (!file || fputs(text, file) < 0 || fclose(file) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  wait_for_the_watcher();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "api";
  const char* control_file = argc > 2 ? argv[2] : NULL;
  if (strcmp(mode, "file") == 0 && !control_file) {
    fprintf(stderr, "usage: controlled api | file PATH | signal\n");
    return 2;
  }
  const char* object = example_code_object(argc, argv, 3, "scale.co");
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, &object, 1);
  example_kernel kernel = example_find_kernel(&context, executable, "scale_add");

  const unsigned n = 256;
  int* data = example_allocate(&context, n * sizeof(int));
  int expected[256];
  for (unsigned i = 0; i < n; ++i) data[i] = expected[i] = (int)i;
  unsigned wrong = 0;
  for (unsigned d = 0; d < 12; ++d) {
    if (d == 4) {
      if (strcmp(mode, "api") == 0) {
        printf("switch off: previous state %d\n", wavekit_set_instrumentation(0));
        if (wavekit_select_dispatches("every=0") == 0) printf("a bad selection was accepted\n");
        printf("bad selection refused: %s\n", wavekit_instrumentation_last_error());
      } else if (strcmp(mode, "file") == 0) {
        write_control_file(control_file, "off\n");
      } else if (wavekit_instrumentation_is_enabled() >= 0) {
        raise(SIGUSR1); /* only under wavekit, which handles it */
      }
    } else if (d == 8) {
      if (strcmp(mode, "api") == 0) {
        printf("select: %d\n", wavekit_select_dispatches("every=2"));
        printf("switch on: previous state %d\n", wavekit_set_instrumentation(1));
      } else if (strcmp(mode, "file") == 0) {
        write_control_file(control_file, "# from here on, every other dispatch\nevery=2\non\n");
      } else if (wavekit_instrumentation_is_enabled() >= 0) {
        raise(SIGUSR1);
      }
    }
    struct {
      int* data;
      int factor;
      int offset;
      unsigned n;
    } args = {data, (d % 2) ? -1 : 2, (int)d, n};
    void* kernarg = example_kernarg(&context, &kernel, &args, sizeof args, n, 64);
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    example_dispatch(&context, &kernel, kernarg, n, 64, done);
    example_wait(done, 1);
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_memory_free(kernarg));
    for (unsigned i = 0; i < n; ++i) {
      expected[i] = expected[i] * args.factor + args.offset;
      wrong += data[i] != expected[i];
    }
    if (d % 4 == 3) printf("dispatches %u-%u: %u wrong so far\n", d - 3, d, wrong);
  }
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
