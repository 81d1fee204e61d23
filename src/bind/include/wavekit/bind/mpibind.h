/* A C API with mpibind's names and semantics (mpibind.h of v0.23.1), so integrations written
 * for mpibind (Slurm/Flux plugins, Python CFFI) can link against wavekit_bind instead. The
 * handle maps in wavekit's default mode unless wavekit_bind_set_compat(handle, 1) asks for
 * mpibind v0.23.1's exact behaviour. Calls return 0 on success; a failed mpibind() leaves the
 * reason in wavekit_bind_last_error(). */
#ifndef WAVEKIT_BIND_MPIBIND_H
#define WAVEKIT_BIND_MPIBIND_H

#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpibind_t mpibind_t;

enum { MPIBIND_RESTRICT_CPU = 0, MPIBIND_RESTRICT_MEM = 1 };
enum {
  MPIBIND_ID_UNIV = 0,
  MPIBIND_ID_VISDEVS = 1,
  MPIBIND_ID_SMI = 1,
  MPIBIND_ID_PCIBUS = 2,
  MPIBIND_ID_NAME = 3
};

int mpibind_init(mpibind_t** handle);
int mpibind_finalize(mpibind_t* handle);
int mpibind(mpibind_t* handle);

int mpibind_set_ntasks(mpibind_t* handle, int ntasks);
int mpibind_set_nthreads(mpibind_t* handle, int nthreads);
int mpibind_set_greedy(mpibind_t* handle, int greedy);
int mpibind_set_gpu_optim(mpibind_t* handle, int gpu_optim);
int mpibind_set_smt(mpibind_t* handle, int smt);
int mpibind_set_restrict_ids(mpibind_t* handle, char* restrict_ids);
int mpibind_set_restrict_type(mpibind_t* handle, int type);
int mpibind_set_topology(mpibind_t* handle, hwloc_topology_t topo);
int mpibind_set_gpu_ids(mpibind_t* handle, int id_type);

int mpibind_get_ntasks(mpibind_t* handle);
int mpibind_get_greedy(mpibind_t* handle);
int mpibind_get_gpu_optim(mpibind_t* handle);
int mpibind_get_smt(mpibind_t* handle);
char* mpibind_get_restrict_ids(mpibind_t* handle);
int mpibind_get_restrict_type(mpibind_t* handle);
hwloc_topology_t mpibind_get_topology(mpibind_t* handle);

int* mpibind_get_nthreads(mpibind_t* handle);
hwloc_bitmap_t* mpibind_get_cpus(mpibind_t* handle);
hwloc_bitmap_t* mpibind_get_gpus(mpibind_t* handle);
int* mpibind_get_cpus_ptask(mpibind_t* handle, int taskid, int* ncpus);
char** mpibind_get_gpus_ptask(mpibind_t* handle, int taskid, int* ngpus);
int mpibind_get_num_gpus(mpibind_t* handle);

int mpibind_set_env_vars(mpibind_t* handle);
char** mpibind_get_env_var_names(mpibind_t* handle, int* count);
char** mpibind_get_env_var_values(mpibind_t* handle, const char* name);

void mpibind_mapping_print(mpibind_t* handle);
int mpibind_mapping_snprint(char* buf, size_t size, mpibind_t* handle);
int mpibind_mapping_ptask_snprint(char* buf, size_t size, mpibind_t* handle, int taskid);
int mpibind_apply(mpibind_t* handle, int taskid);

/* Loads this machine's topology (or $HWLOC_XMLFILE) with mpibind's filters. */
int mpibind_load_topology(hwloc_topology_t topo);

/* wavekit extensions. */
int wavekit_bind_set_compat(mpibind_t* handle, int compat);
const char* wavekit_bind_last_error(mpibind_t* handle);

#ifdef __cplusplus
}
#endif

#endif
