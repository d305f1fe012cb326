/* SPDX-License-Identifier: Apache-2.0 */
/* A container's processes when no cgroup holds them (rootless, none
 * delegated): the members of the init's own pid namespace. */
#ifndef AR_CORE_PIDNS_H
#define AR_CORE_PIDNS_H

#include "../util/error.h"
#include <stddef.h>
#include <sys/types.h>

/* Host pids of the processes in `init`'s pid namespace (init first), or
 * just `init` when it shares the caller's. Processes of nested pid
 * namespaces are not included. */
int ar_pidns_members (pid_t init, pid_t **pids, size_t *n, ar_error_t **err);

/* Send `sig` to every member; a process that went away meanwhile, or whose
 * pid now names another process, is skipped. */
int ar_pidns_kill_all (pid_t init, int sig, ar_error_t **err);

#endif
