/* two_objects: loads two code objects into ONE executable (as the preload shim does with a
 * probe library) and runs a kernel from each, the second on the first one's output, ordered by
 * a barrier-AND packet on the first dispatch's completion signal.
 * usage: two_objects [VECTOR_ADD_OBJECT DIVERGENT_OBJECT] */
#include "divergent_reference.h"
#include "hsa_example.h"

int main(int argc, char** argv) {
  const char* objects[2] = {example_code_object(argc, argv, 1, "vector_add.co"),
                            example_code_object(argc, argv, 2, "divergent.co")};
  example_context context;
  example_init(&context);
  hsa_executable_t executable = example_load(&context, objects, 2);
  example_kernel add = example_find_kernel(&context, executable, "vector_add");
  example_kernel divergent = example_find_kernel(&context, executable, "divergent");

  const unsigned n = 512;
  float* a = example_allocate(&context, n * sizeof(float));
  float* b = example_allocate(&context, n * sizeof(float));
  float* sum = example_allocate(&context, n * sizeof(float));
  unsigned* output = example_allocate(&context, n * sizeof(unsigned));
  for (unsigned i = 0; i < n; ++i) {
    a[i] = (float)i;
    b[i] = (float)(3 * i);
  }
  struct {
    const float* a;
    const float* b;
    float* c;
    unsigned n;
  } add_args = {a, b, sum, n};
  /* The second kernel reads the first's result reinterpreted as integers. */
  struct {
    const unsigned* input;
    unsigned* output;
    unsigned n;
  } divergent_args = {(const unsigned*)sum, output, n};
  void* add_kernarg = example_kernarg(&context, &add, &add_args, sizeof add_args, n, 64);
  void* divergent_kernarg =
      example_kernarg(&context, &divergent, &divergent_args, sizeof divergent_args, n, 64);

  hsa_signal_t first_done, barrier_done, second_done;
  CHECK(hsa_signal_create(1, 0, NULL, &first_done));
  CHECK(hsa_signal_create(1, 0, NULL, &barrier_done));
  CHECK(hsa_signal_create(1, 0, NULL, &second_done));
  example_dispatch(&context, &add, add_kernarg, n, 64, first_done);

  hsa_queue_t* queue = context.queue;
  uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
  hsa_barrier_and_packet_t* barrier =
      (hsa_barrier_and_packet_t*)queue->base_address + (index % queue->size);
  memset((uint8_t*)barrier + 4, 0, sizeof *barrier - 4);
  barrier->dep_signal[0] = first_done;
  barrier->completion_signal = barrier_done;
  uint16_t header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                    (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n(&barrier->header, header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);

  example_dispatch(&context, &divergent, divergent_kernarg, n, 64, second_done);
  example_wait(second_done, 1);
  if (hsa_signal_load_scacquire(first_done) != 0 || hsa_signal_load_scacquire(barrier_done) != 0) {
    fprintf(stderr, "the second kernel completed before the first kernel or the barrier\n");
    return 1;
  }

  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i) {
    float expected_sum = (float)i + (float)(3 * i);
    unsigned bits;
    memcpy(&bits, &expected_sum, sizeof bits);
    unsigned expected_output = divergent_reference(bits);
    if ((sum[i] != expected_sum || output[i] != expected_output) && wrong++ < 5)
      fprintf(stderr, "element %u: sum %g (expected %g), output %u (expected %u)\n", i, sum[i],
              expected_sum, output[i], expected_output);
  }
  printf("two_objects on %s: vector_add then divergent over %u elements, %u wrong\n",
         context.gpu_name, n, wrong);

  CHECK(hsa_memory_free(add_kernarg));
  CHECK(hsa_memory_free(divergent_kernarg));
  CHECK(hsa_amd_memory_pool_free(a));
  CHECK(hsa_amd_memory_pool_free(b));
  CHECK(hsa_amd_memory_pool_free(sum));
  CHECK(hsa_amd_memory_pool_free(output));
  CHECK(hsa_signal_destroy(first_done));
  CHECK(hsa_signal_destroy(barrier_done));
  CHECK(hsa_signal_destroy(second_done));
  CHECK(hsa_executable_destroy(executable));
  example_shut_down(&context);
  return wrong == 0 ? 0 : 1;
}
