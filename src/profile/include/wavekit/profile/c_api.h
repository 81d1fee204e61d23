/* The C interface of the running profiler, for code that does not link wavekit: the Python
 * extension and other languages find these symbols with dlsym(RTLD_DEFAULT, ...) in the
 * injected library. Every function is a cheap no-op when no session is running. */
#ifndef WAVEKIT_PROFILE_C_API_H
#define WAVEKIT_PROFILE_C_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WAVEKIT_PROFILE_PRECISIONS 7 /* fp8 fp16 tf32 fp32 fp64 fp64_tensor int8 */

int wavekit_profile_active(void);
uint32_t wavekit_profile_intern(const char* name);
void wavekit_profile_scope_enter(const char* name);
void wavekit_profile_scope_enter_id(uint32_t name_id);
void wavekit_profile_scope_exit(void);
void wavekit_profile_advance_phase(void);
uint32_t wavekit_profile_phase(void);
void wavekit_profile_set_enabled(int enabled);
/* FLOPs per precision (WAVEKIT_PROFILE_PRECISIONS entries, may be NULL) and bytes of the calling
 * thread's next kernel launch. */
void wavekit_profile_set_next_launch_work(const double* flops, double bytes);

#ifdef __cplusplus
}
#endif

#endif
