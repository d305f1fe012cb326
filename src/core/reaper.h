/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's PID 1: the container init forks the workload instead of
 * becoming it, and stays behind as a reaper that passes signals on to
 * every process of the pid namespace and ends with the workload's status. */
#ifndef AR_CORE_REAPER_H
#define AR_CORE_REAPER_H

#include "../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

/* Seconds between the first termination signal passed on and SIGKILL to
 * every process of the namespace (a second signal does it at once). */
#define AR_REAPER_GRACE_SECONDS 10

/* How long the reaper waits, once the command ended, for the parent to
 * have read the container's cgroup before it exits. */
#define AR_REAPER_REPORT_WAIT_MS 2000

/* Fork the workload. Returns 0 in the child (which goes on to exec with
 * the signal mask it had), never returns in the parent, which reaps until
 * the child ends and then exits as it did. -1 with *err when the fork
 * fails. Only for PID 1 of a pid namespace: kill(-1) must not reach
 * beyond the container. The exit code cannot tell a command killed by
 * signal N from one that exited 128 + N, so the child's wait status also
 * goes to `report_fd` (AR_SYNC_EXIT, sync.h; -1: nowhere), which the
 * child does not keep; the reaper then waits for the parent's
 * AR_SYNC_EXIT_SEEN, or its end, before it exits. */
int ar_reaper_fork_workload (int report_fd, ar_error_t **err);

#endif
