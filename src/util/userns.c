/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "userns.h"
#include "fs.h"
#include "cleanup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

/* The initial user namespace's inode number, which the kernel fixes
 * (PROC_USER_INIT_INO, since Linux 3.8): one stat, where reading the map
 * costs an open and the formatting of a seq file, many times a create. */
#define INITIAL_USERNS_INO 0xEFFFFFFDU

bool
ar_userns_is_initial (void)
{
  struct stat st;
  if (stat ("/proc/self/ns/user", &st) < 0)
    return true; /* no procfs: nothing says otherwise */
  return st.st_ino == INITIAL_USERNS_INO;
}

bool
ar_userns_unprivileged (void)
{
  return geteuid () != 0 || !ar_userns_is_initial ();
}

bool
ar_userns_uid_mapped (uid_t uid)
{
  cleanup_free char *map = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/self/uid_map", 4096, &map, NULL, NULL)
      < 0)
    return true;
  const char *p = map;
  unsigned inside, outside, count;
  int used;
  while (sscanf (p, " %u %u %u%n", &inside, &outside, &count, &used) == 3)
    {
      if (uid >= inside && uid - inside < count)
        return true;
      p += used;
    }
  return false;
}
