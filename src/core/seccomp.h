/* SPDX-License-Identifier: Apache-2.0 */
/* The container's seccomp filter, built with libseccomp from linux.seccomp. */
#ifndef AR_CORE_SECCOMP_H
#define AR_CORE_SECCOMP_H

#include "../../oci/oci.h"
#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stddef.h>

/* Check names of actions, architectures, operators and flags without
 * loading anything, so a bad profile fails create before any resource
 * exists. Unknown syscall names are ignored, as runc does. */
int ar_seccomp_validate (const oci_seccomp *seccomp, ar_error_t **err);

/* Unknown syscall names are skipped, as runc does (profiles list newer
 * kernels' calls); with this annotation (crun's) on the container, the
 * first one is an error instead. */
#define AR_SECCOMP_FAIL_UNKNOWN "run.oci.seccomp_fail_unknown_syscall"
int ar_seccomp_check_names_known (const oci_seccomp *seccomp, ar_error_t **err);

/* Compiled ahead, so the costly part (libseccomp generating BPF,
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
 * program is a no-op). When the profile has SCMP_ACT_NOTIFY rules,
 * *notify_fd is the new listener fd, for the runtime to pass on; else -1. */
int ar_seccomp_load_program (const ar_seccomp_program *prog, int *notify_fd,
                             ar_error_t **err);

/* Hand a listener fd to the agent at the profile's listenerPath with the
 * container process state, as runc does (from the runtime, so the path is
 * the host's). */
int ar_seccomp_send_to_listener (const oci_seccomp *seccomp, int notify_fd,
                                 pid_t pid, const oci_state *state,
                                 ar_error_t **err);

void ar_seccomp_program_free (ar_seccomp_program *prog);

/* What this build accepts in linux.seccomp, for `features`: stores up to
 * `max` names in `out` and returns how many there are. */
typedef enum
{
  AR_SECCOMP_ACTIONS,
  AR_SECCOMP_OPERATORS,
  AR_SECCOMP_ARCHS,
  AR_SECCOMP_FLAGS,
} ar_seccomp_vocabulary;
size_t
ar_seccomp_names (ar_seccomp_vocabulary which, const char **out, size_t max);

/* Whether the running kernel accepts a filter flag named in `flags`. */
bool ar_seccomp_flag_supported (const char *name);

/* libseccomp's version at run time, "2.5.4". */
const char *ar_seccomp_library_version (void);

#endif
