/* SPDX-License-Identifier: Apache-2.0 */
/* compat_syscall i386|x32: getpid through a 32-bit syscall ABI of an
 * x86-64 kernel (the i386 entry, int $0x80; or x32's numbering) and prints
 * "ABI ret=R". For the agent filter's refusal of every non-native call. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int
main (int argc, char **argv)
{
#if defined(__x86_64__)
  long r = -1;
  if (argc == 2 && strcmp (argv[1], "i386") == 0)
    __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) /* getpid */ : "memory");
  else if (argc == 2 && strcmp (argv[1], "x32") == 0)
    r = syscall (0x40000000L | SYS_getpid);
  else
    {
      fprintf (stderr, "usage: compat_syscall i386|x32\n");
      return 2;
    }
  printf ("%s ret=%ld\n", argv[1], r);
  return 0;
#else
  (void) argc;
  (void) argv;
  fprintf (stderr, "compat_syscall: x86-64 only\n");
  return 2;
#endif
}
