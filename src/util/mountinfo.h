/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/self/mountinfo, one line at a time: what the runtime needs of it
 * (cgroup discovery, host mounts under a rootfs, pseudo-filesystems to
 * hide under --no-pivot). */
#ifndef AR_UTIL_MOUNTINFO_H
#define AR_UTIL_MOUNTINFO_H

#include <stdbool.h>
#include <stdint.h>

typedef struct
{
  uint64_t id;
  char *dev;         /* "major:minor" */
  char *root;        /* the mount's root within its filesystem, decoded */
  char *mount_point; /* decoded */
  char *fstype;
  char *super_opts; /* comma list */
} ar_mountinfo_entry;

/* "id parent dev root mountpoint opts [optional...] - fstype source super".
 * False for a line of another form. */
bool ar_mountinfo_parse (const char *line, ar_mountinfo_entry *e);
void ar_mountinfo_entry_clear (ar_mountinfo_entry *e);

/* mountinfo writes space, tab, newline and backslash as \ooo. */
char *ar_mountinfo_decode (const char *s);

#endif
