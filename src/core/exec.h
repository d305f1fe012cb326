/* SPDX-License-Identifier: Apache-2.0 */
/* `exec`: a new process inside a running container. */
#ifndef AR_CORE_EXEC_H
#define AR_CORE_EXEC_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

typedef struct
{
  const char *root;
  const char *id;
  const char *console_socket;
  const char *pid_file;
  bool detach;
  bool ignore_paused; /* runc's --ignore-paused: the process starts frozen */
  int preserve_fds;
  /* --cgroup "[<controller>:]<sub>": sub-cgroups of the container's cgroup
   * to run in instead of the cgroup itself. */
  char *const *cgroups;
  size_t n_cgroups;
} ar_exec_options;

/* The container's own process section (config.json as created), for the
 * caller to adjust before ar_container_exec. */
int ar_exec_base_process (const char *root, const char *id, oci_process **out,
                          ar_error_t **err);

/* Run `proc` in every namespace, the cgroup, the seccomp filter and the
 * capabilities of container `id` (under the agent policy, no more than the
 * container's own: `proc` is adjusted). Returns the exit status when in the
 * foreground, 0 when detached, -1 with *err on failure. */
int ar_container_exec (const ar_exec_options *opts, oci_process *proc,
                       ar_error_t **err);

#endif
