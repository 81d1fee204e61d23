// What the stand-in libcuda.so.1 (fake_cuda.cpp) takes a CUfunction to be: a kernel with a name
// and a fixed duration, so that a check program knows the name and GPU time of every launch.
#pragma once

struct FakeKernel {
  const char* mangled_name;
  unsigned duration_us;
  // As a CUkernel of a context-independent library: cuFuncGetName refuses it and
  // cuKernelGetName answers.
  bool library_kernel;
};
