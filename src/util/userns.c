/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "userns.h"
#include "fs.h"
#include "cleanup.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

bool
ar_userns_is_initial (void)
{
  cleanup_free char *map = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/self/uid_map", 4096, &map, NULL, NULL)
      < 0)
    return true; /* no procfs: nothing says otherwise */
  unsigned inside, outside, count;
  char extra;
  /* One line, and no second one after it. */
  return sscanf (map, " %u %u %u %c", &inside, &outside, &count, &extra) == 3
         && inside == 0 && outside == 0 && count == 4294967295U;
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
