/* SPDX-License-Identifier: Apache-2.0 */
/* syscall_nr NR...: makes each raw syscall NR with zero arguments and
 * prints "NR ret=R" or "NR errno=NAME", for seccomp tests in a container
 * (built static: the test rootfs has no libc). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      long nr = strtol (argv[i], NULL, 10);
      errno = 0;
      long r = syscall (nr, 0, 0, 0, 0, 0, 0);
      if (r < 0)
        printf ("%ld errno=%s\n", nr, strerrorname_np (errno));
      else
        printf ("%ld ret=%ld\n", nr, r);
    }
  return 0;
}
