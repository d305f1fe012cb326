/* SPDX-License-Identifier: Apache-2.0 */
/* For checkpoint.bats: a process that holds both ends of a pty. Every
 * 200 ms it writes a counter into the master, reads the line back from
 * the slave and appends it to the file argv[1] as "pty N". A pty that
 * CRIU restored keeps working: the counter goes on. Built static, so it
 * runs in the tests' busybox rootfs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: pty_echo FILE\n");
      return 2;
    }
  int master = posix_openpt (O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0)
    {
      perror ("pty_echo: posix_openpt");
      return 1;
    }
  int slave = open (ptsname (master), O_RDWR | O_NOCTTY);
  struct termios t;
  if (slave < 0 || tcgetattr (slave, &t) < 0)
    {
      perror ("pty_echo: slave");
      return 1;
    }
  t.c_lflag &= ~(tcflag_t) ECHO; /* nothing comes back on the master */
  if (tcsetattr (slave, TCSANOW, &t) < 0)
    {
      perror ("pty_echo: tcsetattr");
      return 1;
    }
  for (unsigned long n = 1;; n++)
    {
      char line[64];
      int len = snprintf (line, sizeof line, "%lu\n", n);
      if (write (master, line, (size_t) len) != len)
        return 1;
      ssize_t got = read (slave, line, sizeof line - 1);
      if (got <= 0)
        return 1;
      line[got] = '\0';
      FILE *out = fopen (argv[1], "a");
      if (out == NULL)
        return 1;
      fprintf (out, "pty %s", line);
      fclose (out);
      usleep (200 * 1000);
    }
}
