/* Run-time control of `wavekit run` from inside the application: switch instrumentation on and
 * off, or choose which dispatches run instrumented (the selection syntax of `wavekit run
 * --select`, wavekit/preload/selection.h). A change takes effect at the next dispatch; a kernel
 * already running finishes as it started.
 *
 * The functions live in the preload shim that `wavekit run` puts into the process; a program
 * does not link wavekit. The inline wrappers below find them with dlsym(RTLD_DEFAULT, ...) and
 * do nothing (returning -1) when the program runs without wavekit, so calls can stay in the
 * code:
 *
 *     #include <wavekit/instrumentation.h>
 *     wavekit_select_dispatches("kernel=^solve every=10");
 *     ...
 *     wavekit_set_instrumentation(0);  // the rest runs the original kernels
 */
#ifndef WAVEKIT_INSTRUMENTATION_H
#define WAVEKIT_INSTRUMENTATION_H

#include <dlfcn.h>

/* glibc defines RTLD_DEFAULT only for _GNU_SOURCE; its value is part of the ABI. */
#ifndef RTLD_DEFAULT
#define RTLD_DEFAULT ((void*)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Exported by libwavekit-preload.so. */
int wavekit_instrumentation_set_enabled(int enabled); /* the previous state, 0 or 1 */
int wavekit_instrumentation_enabled(void);
/* 0, or -1 when `selection` is malformed (the selection in force stays); the reason is then
 * what wavekit_instrumentation_error() returns, in the calling thread. */
int wavekit_instrumentation_select(const char* selection);
const char* wavekit_instrumentation_error(void);

/* The wrappers: the same results, and -1 (or "not running under wavekit run") without the
 * shim. */
static inline void* wavekit_instrumentation_symbol_(const char* name) {
  return dlsym(RTLD_DEFAULT, name);
}

static inline int wavekit_set_instrumentation(int enabled) {
  int (*set)(int) =
      (int (*)(int))wavekit_instrumentation_symbol_("wavekit_instrumentation_set_enabled");
  return set ? set(enabled) : -1;
}

static inline int wavekit_instrumentation_is_enabled(void) {
  int (*get)(void) =
      (int (*)(void))wavekit_instrumentation_symbol_("wavekit_instrumentation_enabled");
  return get ? get() : -1;
}

static inline int wavekit_select_dispatches(const char* selection) {
  int (*select)(const char*) =
      (int (*)(const char*))wavekit_instrumentation_symbol_("wavekit_instrumentation_select");
  return select ? select(selection) : -1;
}

static inline const char* wavekit_instrumentation_last_error(void) {
  const char* (*error)(void) =
      (const char* (*)(void))wavekit_instrumentation_symbol_("wavekit_instrumentation_error");
  return error ? error() : "not running under wavekit run";
}

#ifdef __cplusplus
}
#endif

#endif
