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

/* The command the reaper runs: its executable, argv and environment. */
typedef struct
{
  const char *exe;
  char *const *args;
  char *const *envp;
} ar_workload;

/* Start the workload as a child (clone as vfork, then exec) and reap
 * until it ends, then exit as it did; returns only when no child could be
 * made (-1 with *err). An exec that fails is told on stderr, as the
 * init's own would be, and the child ends with status 127. Only for PID 1 of a pid namespace: kill(-1) must not reach beyond
 * the container. The exit code cannot tell a command killed by signal N
 * from one that exited 128 + N, so the child's wait status also goes to
 * `report_fd` (AR_SYNC_EXIT, sync.h; -1: nowhere), which the child does
 * not keep; the reaper then waits for the parent's AR_SYNC_EXIT_SEEN, or
 * its end, before it exits. */
int
ar_reaper_run_workload (int report_fd, const ar_workload *w, ar_error_t **err);

#endif
