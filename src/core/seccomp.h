/* The container's seccomp filter, built with libseccomp from linux.seccomp. */
#ifndef AR_CORE_SECCOMP_H
#define AR_CORE_SECCOMP_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* Check names of actions, architectures, operators and flags without
 * loading anything, so a bad profile fails create before any resource
 * exists. Unknown syscall names are ignored, as runc does. */
int ar_seccomp_validate (const oci_seccomp *seccomp, ar_error_t **err);

/* Build and load the filter into the calling process (the container init,
 * just before exec). When the profile uses SCMP_ACT_NOTIFY the listener fd
 * is sent to listenerPath with the container state, as the spec says;
 * `state_json` is that state. */
int ar_seccomp_load (const oci_seccomp *seccomp, const char *state_json,
                     ar_error_t **err);

/* The same in two steps, so the costly part (libseccomp generating BPF,
 * ~10 ms for a Docker-size profile over three architectures) can run in
 * the runtime before the container init starts, and be skipped entirely
 * through a cache: when `cache_dir` is not NULL, programs are kept there
 * (created 0700; it must be a root-only directory such as
 * <state root>/seccomp-cache) and reused only for a byte-identical profile
 * under the same libseccomp and kernel API level. `*out` is NULL when
 * `seccomp` is NULL. */
typedef struct ar_seccomp_program ar_seccomp_program;
int ar_seccomp_compile (const oci_seccomp *seccomp, const char *cache_dir,
                        ar_seccomp_program **out, ar_error_t **err);

/* Load a compiled program into the calling process with seccomp(2) (a NULL
 * program is a no-op); sends the listener fd as ar_seccomp_load does. */
int ar_seccomp_load_program (const ar_seccomp_program *prog,
                             const char *state_json, ar_error_t **err);

void ar_seccomp_program_free (ar_seccomp_program *prog);

#endif
