// Shared by the HIP test programs: a HIP call that fails, or a result that differs, ends the
// program with a message and exit status 1.
#pragma once
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_HIP(call)                                                  \
  do {                                                                   \
    hipError_t check_error_ = (call);                                    \
    if (check_error_ != hipSuccess) {                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   hipGetErrorString(check_error_));                     \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

#define CHECK(condition)                                                                 \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
