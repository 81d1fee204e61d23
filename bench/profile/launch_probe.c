// Which driver entry points a CUDA program's launches go through, for designing a launch hook
// without CUPTI. LD_PRELOAD it: it logs every cuGetProcAddress and dlsym request for a launch or
// graph-launch entry point, and wraps cuLaunchKernel, cuLaunchKernelEx and cuGraphLaunch when
// they are taken through cuGetProcAddress (per-thread-stream variants in their own slots), so
// that at exit the counts say how many launches such a hook would have seen.
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void* (*dlsym_fn)(void*, const char*);
typedef CUresult (*getproc_fn)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);

static dlsym_fn real_dlsym(void) {
  static dlsym_fn fn;
  if (!fn) fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!fn) fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  return fn;
}

static int interesting(const char* name) {
  return name && (strstr(name, "Launch") || strstr(name, "GetProcAddress"));
}

enum { kLaunch, kLaunchEx, kGraph, kSlots };
static const char* const slot_names[kSlots] = {"cuLaunchKernel", "cuLaunchKernelEx",
                                               "cuGraphLaunch"};
static void* real_fn[kSlots][2];
static atomic_ulong counts[kSlots][2];

#define FORWARD_LAUNCH(ptsz)                                                                    \
  static CUresult launch_##ptsz(CUfunction f, unsigned a, unsigned b, unsigned c, unsigned d,  \
                                unsigned e, unsigned g, unsigned s, CUstream st, void** p,      \
                                void** x) {                                                     \
    atomic_fetch_add(&counts[kLaunch][ptsz], 1);                                                \
    return ((CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                         unsigned, CUstream, void**, void**))real_fn[kLaunch][ptsz])(           \
        f, a, b, c, d, e, g, s, st, p, x);                                                      \
  }                                                                                             \
  static CUresult launch_ex_##ptsz(const CUlaunchConfig* config, CUfunction f, void** p,       \
                                   void** x) {                                                  \
    atomic_fetch_add(&counts[kLaunchEx][ptsz], 1);                                              \
    return ((CUresult(*)(const CUlaunchConfig*, CUfunction, void**, void**))                    \
                real_fn[kLaunchEx][ptsz])(config, f, p, x);                                     \
  }                                                                                             \
  static CUresult graph_##ptsz(CUgraphExec g, CUstream st) {                                    \
    atomic_fetch_add(&counts[kGraph][ptsz], 1);                                                 \
    return ((CUresult(*)(CUgraphExec, CUstream))real_fn[kGraph][ptsz])(g, st);                  \
  }
FORWARD_LAUNCH(0)
FORWARD_LAUNCH(1)

static void* const wrappers[kSlots][2] = {{(void*)launch_0, (void*)launch_1},
                                          {(void*)launch_ex_0, (void*)launch_ex_1},
                                          {(void*)graph_0, (void*)graph_1}};

static void report(void) {
  for (int i = 0; i < kSlots; ++i)
    fprintf(stderr, "launch_probe: %s via cuGetProcAddress: %lu default-stream, %lu ptsz\n",
            slot_names[i], atomic_load(&counts[i][0]), atomic_load(&counts[i][1]));
}

static CUresult getproc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                           CUdriverProcAddressQueryResult* status);
static getproc_fn real_getproc;

static CUresult hooked_getproc(getproc_fn real, const char* symbol, void** pfn, int version,
                               cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  CUresult r = real(symbol, pfn, version, flags, status);
  if (r != CUDA_SUCCESS || !interesting(symbol)) return r;
  const int ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  fprintf(stderr, "launch_probe: cuGetProcAddress(%s, version %d, flags %llu)\n", symbol,
          version, (unsigned long long)flags);
  // A runtime that asks the driver for cuGetProcAddress itself keeps going through the hook.
  if (strcmp(symbol, "cuGetProcAddress") == 0 && version >= 12000 && *pfn) {
    real_getproc = (getproc_fn)*pfn;
    *pfn = (void*)getproc_v2;
    return r;
  }
  for (int i = 0; i < kSlots; ++i)
    if (strcmp(symbol, slot_names[i]) == 0 && *pfn) {
      real_fn[i][ptsz] = *pfn;
      *pfn = wrappers[i][ptsz];
    }
  return r;
}

static CUresult getproc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                           CUdriverProcAddressQueryResult* status) {
  return hooked_getproc(real_getproc, symbol, pfn, version, flags, status);
}

void* dlsym(void* handle, const char* name) {
  void* p = real_dlsym()(handle, name);
  if (interesting(name)) {
    static int once;
    if (!once++) atexit(report);
    fprintf(stderr, "launch_probe: dlsym(%s)%s\n", name, p ? "" : " (absent)");
    if (p && strcmp(name, "cuGetProcAddress_v2") == 0) {
      real_getproc = (getproc_fn)p;
      return (void*)getproc_v2;
    }
  }
  return p;
}
