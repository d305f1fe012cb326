/* SPDX-License-Identifier: Apache-2.0 */
/* Closing what a child or a daemon must not hold: close_range where the
 * kernel has it, a walk of /proc/self/fd where it does not. */
#include "config.h"
#include "fds.h"
#include "cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int
sys_close_range (unsigned first, unsigned last, unsigned flags)
{
  return (int) syscall (SYS_close_range, first, last, flags);
}

static bool
is_kept (int fd, const int *keep, size_t n_keep)
{
  for (size_t i = 0; i < n_keep; i++)
    if (keep[i] == fd)
      return true;
  return false;
}

/* The smallest kept fd >= from, or -1 when none is left. */
static int
next_kept (int from, const int *keep, size_t n_keep)
{
  int best = -1;
  for (size_t i = 0; i < n_keep; i++)
    if (keep[i] >= from && (best < 0 || keep[i] < best))
      best = keep[i];
  return best;
}

/* Slow path for kernels before 5.9: walk /proc/self/fd. */
static void
close_fds_by_listing (int first, const int *keep, size_t n_keep)
{
  cleanup_dir DIR *dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    return;
  int dir_fd = dirfd (dir);
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      if (entry->d_name[0] == '.')
        continue;
      int fd = atoi (entry->d_name);
      if (fd >= first && fd != dir_fd && !is_kept (fd, keep, n_keep))
        close (fd);
    }
}

void
ar_close_fds_from (int first, const int *keep, size_t n_keep)
{
  if (first < 0)
    first = 0;
  /* Close the gaps between kept fds, one close_range per gap. */
  for (int from = first;;)
    {
      int kept = next_kept (from, keep, n_keep);
      unsigned last = kept < 0 ? ~0U : (unsigned) kept - 1;
      if ((kept < 0 || kept > from)
          && sys_close_range ((unsigned) from, last, 0) < 0)
        {
          close_fds_by_listing (from, keep, n_keep);
          return;
        }
      if (kept < 0)
        return;
      from = kept + 1;
    }
}

void
ar_cloexec_fds_from (int first)
{
  if (first < 0)
    first = 0;
  if (sys_close_range ((unsigned) first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return;

  /* Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC. */
  cleanup_dir DIR *dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    return;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      if (entry->d_name[0] == '.')
        continue;
      int fd = atoi (entry->d_name);
      if (fd < first)
        continue;
      int flags = fcntl (fd, F_GETFD);
      if (flags >= 0 && !(flags & FD_CLOEXEC))
        fcntl (fd, F_SETFD, flags | FD_CLOEXEC);
    }
}
