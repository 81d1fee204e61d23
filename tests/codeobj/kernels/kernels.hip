// Test inputs for the code-object model: several kernels with different resource needs, a
// non-inlined device function, LDS, and a kernel with dynamic stack (recursion).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

__attribute__((noinline)) __device__ float square_plus_one(float x) { return x * x + 1.0f; }

__attribute__((noinline)) __device__ int depth(int n) { return n <= 0 ? 0 : 1 + depth(n - 1); }

extern "C" __global__ void scale(float* data, float factor, int count) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < count) data[i] = square_plus_one(data[i]) * factor;
}

extern "C" __global__ void add_3d(int* out, const int* in) {
  int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workitem_id_y() * 8 +
          __builtin_amdgcn_workitem_id_z() * 64 + __builtin_amdgcn_workgroup_id_z() * 512;
  out[i] += in[i];
}

extern "C" __global__ void reverse_in_lds(int* data) {
  __shared__ int tile[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  tile[t] = data[t];
  __builtin_amdgcn_s_barrier();
  data[t] = tile[255 - t];
}

extern "C" __global__ void recursive(int* data) {
  data[__builtin_amdgcn_workitem_id_x()] = depth(data[0]);
}
