// Compiled in HIP mode for the host: the device code lands in an offload bundle inside the host
// object's .hip_fatbin section. No HIP headers exist here, so declare what clang's host side
// needs to emit a kernel stub.
#define __global__ __attribute__((global))
#define __host__ __attribute__((host))

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  __host__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef struct ihipStream_t* hipStream_t;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, hipStream_t);

extern "C" __global__ void fat_kernel(int* data) { data[__builtin_amdgcn_workitem_id_x()] += 1; }
