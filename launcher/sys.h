/* SPDX-License-Identifier: Apache-2.0 */
/* What the launcher's files share: system calls by number, and the few
 * string operations and calls they all make. */
#ifndef AR_LAUNCHER_SYS_H
#define AR_LAUNCHER_SYS_H

#include "arch.h"

#include <linux/fcntl.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

/* A path the launcher builds or reads: PATH_MAX. */
#define PATH_BYTES 4096

static inline long
sys (long nr, long a, long b, long c, long d, long e)
{
  return raw_syscall (nr, a, b, c, d, e);
}

static inline unsigned long
length (const char *s)
{
  unsigned long n = 0;
  while (s[n])
    n++;
  return n;
}

static inline int
same (const char *a, const char *b)
{
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

/* What follows `prefix` in s; 0 when s does not start with it. */
static inline const char *
after (const char *s, const char *prefix)
{
  while (*prefix && *s == *prefix)
    s++, prefix++;
  return *prefix ? 0 : s;
}

static inline long
open_dir (long at, const char *path)
{
  return sys (__NR_openat, at, (long) path, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
              0, 0);
}

static inline void
say (const char *text)
{
  sys (__NR_write, 2, (long) text, (long) length (text), 0, 0);
}

#endif
