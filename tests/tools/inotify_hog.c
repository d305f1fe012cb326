/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inotify_hog: take inotify instances until the kernel refuses one and
 * say how many it got; with "hold", keep them until killed. "one" only
 * tries one and says "ok" or the error: the host's check that it can
 * still make one.
 *
 *   inotify_hog take [hold]    -> "took N (errno E)"
 *   inotify_hog one            -> "ok" | "failed: ERROR"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "one") == 0)
    {
      int fd = inotify_init1 (IN_CLOEXEC);
      if (fd < 0)
        {
          printf ("failed: %s\n", strerror (errno));
          return 1;
        }
      puts ("ok");
      return 0;
    }
  if (argc < 2 || strcmp (argv[1], "take") != 0)
    {
      fprintf (stderr, "usage: inotify_hog take [HOLD] | one\n");
      return 2;
    }
  int n = 0;
  while (inotify_init1 (IN_CLOEXEC) >= 0)
    n++;
  printf ("took %d (errno %d)\n", n, errno);
  fflush (stdout);
  if (argc >= 3 && strcmp (argv[2], "hold") == 0)
    for (;;)
      pause ();
  return 0;
}
