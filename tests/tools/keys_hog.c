/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keys_hog: add keys to the session keyring until the kernel refuses one
 * (the key quota of the caller's uid) or MAX are added, and say how many
 * it got; with "hold", keep them until killed. "one" adds one and says
 * "ok" or the error: the host's check that its quota is its own.
 *
 *   keys_hog take MAX [hold]   -> "took N (errno E)"
 *   keys_hog one               -> "ok" | "failed: ERROR"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_SESSION_KEYRING -3

static long
add_one (int i)
{
  char name[32];
  snprintf (name, sizeof name, "keys_hog.%d.%d", (int) getpid (), i);
  return syscall (SYS_add_key, "user", name, "v", 1,
                  KEY_SPEC_SESSION_KEYRING);
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "one") == 0)
    {
      if (add_one (0) < 0)
        {
          printf ("failed: %s\n", strerror (errno));
          return 1;
        }
      puts ("ok");
      return 0;
    }
  if (argc < 3 || strcmp (argv[1], "take") != 0)
    {
      fprintf (stderr, "usage: keys_hog take MAX [hold] | one\n");
      return 2;
    }
  int max = atoi (argv[2]), n = 0;
  errno = 0;
  while (n < max && add_one (n) >= 0)
    n++;
  printf ("took %d (errno %d)\n", n, n < max ? errno : 0);
  fflush (stdout);
  if (argc >= 4 && strcmp (argv[3], "hold") == 0)
    for (;;)
      pause ();
  return 0;
}
