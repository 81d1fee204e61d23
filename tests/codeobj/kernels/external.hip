// A kernel that calls an undefined function and reads an undefined variable: linked with
// --unresolved-symbols=ignore-all, it gets UND dynamic symbols, GOT slots and R_AMDGPU_ABS64
// relocations (the shape the instrumenter emits).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define VISIBLE __attribute__((visibility("default")))

extern "C" __device__ VISIBLE void ext_probe(int);
extern "C" __device__ VISIBLE int mailbox;

extern "C" __global__ void calls_out(int* data) {
  int t = __builtin_amdgcn_workitem_id_x();
  ext_probe(data[t]);
  data[t] += mailbox;
}
