/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "pidns.h"
#include "../util/cleanup.h"
#include "../util/pidfd.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
pidns_of (pid_t pid, struct stat *st)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) pid);
  return stat (path, st) == 0;
}

static bool
same_ns (const struct stat *a, const struct stat *b)
{
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

int
ar_pidns_members (pid_t init, pid_t **pids, size_t *n, ar_error_t **err)
{
  struct stat theirs, ours;
  *n = 0;
  *pids = xcalloc (1, sizeof **pids);
  if (!pidns_of (init, &theirs))
    return 0; /* gone: nothing left to list */
  (*pids)[(*n)++] = init;
  if (pidns_of (getpid (), &ours) && same_ns (&theirs, &ours))
    return 0;
  cleanup_dir DIR *proc = opendir ("/proc");
  if (proc == NULL)
    return ar_error_set (err, errno, "open /proc");
  for (struct dirent *e; (e = readdir (proc)) != NULL;)
    {
      char *end;
      long pid = strtol (e->d_name, &end, 10);
      struct stat st;
      if (*end || pid <= 0 || pid == init || !pidns_of ((pid_t) pid, &st)
          || !same_ns (&st, &theirs))
        continue;
      *pids = xrealloc (*pids, (*n + 1) * sizeof **pids);
      (*pids)[(*n)++] = (pid_t) pid;
    }
  return 0;
}

int
ar_pidns_kill_all (pid_t init, int sig, ar_error_t **err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n;
  struct stat ns, now;
  if (!pidns_of (init, &ns))
    return 0; /* gone: nothing to signal */
  if (ar_pidns_members (init, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      cleanup_close int pidfd = ar_pidfd_open (pids[i]);
      /* Checked after the pidfd pins the process: the pid is still it. */
      if (pidfd < 0 || !pidns_of (pids[i], &now) || !same_ns (&now, &ns))
        continue;
      if (ar_pidfd_send_signal (pidfd, sig) < 0 && errno != ESRCH)
        return ar_error_set (err, errno, "signal process %d", (int) pids[i]);
    }
  return 0;
}
