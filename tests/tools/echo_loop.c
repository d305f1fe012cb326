/* SPDX-License-Identifier: Apache-2.0 */
/* For checkpoint.bats: a process that holds both ends of a channel and
 * sends a counter through it. `echo_loop pty FILE`: a pty, its master
 * and its slave; `echo_loop tcp FILE`: an established TCP connection on
 * 127.0.0.1 (listener, client and the accepted end). Every 200 ms the
 * next number is written into one end, read back from the other and
 * appended to FILE as "pty N" or "tcp N". A channel that CRIU restored
 * keeps working: the counter goes on. Built static, so it runs in the
 * tests' busybox rootfs. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

static int
open_pty (int *in, int *out)
{
  int master = posix_openpt (O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0)
    return -1;
  int slave = open (ptsname (master), O_RDWR | O_NOCTTY);
  struct termios t;
  if (slave < 0 || tcgetattr (slave, &t) < 0)
    return -1;
  t.c_lflag &= ~(tcflag_t) ECHO; /* nothing comes back on the master */
  if (tcsetattr (slave, TCSANOW, &t) < 0)
    return -1;
  *in = master;
  *out = slave;
  return 0;
}

static int
open_tcp (int *in, int *out)
{
  struct sockaddr_in addr = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;
  int listener = socket (AF_INET, SOCK_STREAM, 0);
  int client = socket (AF_INET, SOCK_STREAM, 0);
  if (listener < 0 || client < 0
      || bind (listener, (struct sockaddr *) &addr, sizeof addr) < 0
      || listen (listener, 1) < 0
      || getsockname (listener, (struct sockaddr *) &addr, &len) < 0
      || connect (client, (struct sockaddr *) &addr, sizeof addr) < 0)
    return -1;
  int server = accept (listener, NULL, NULL);
  if (server < 0)
    return -1;
  *in = client;
  *out = server;
  return 0;
}

int
main (int argc, char **argv)
{
  int in, out;
  if (argc != 3 || (strcmp (argv[1], "pty") != 0 && strcmp (argv[1], "tcp") != 0))
    {
      fprintf (stderr, "usage: echo_loop pty|tcp FILE\n");
      return 2;
    }
  if ((strcmp (argv[1], "pty") == 0 ? open_pty (&in, &out)
                                    : open_tcp (&in, &out))
      < 0)
    {
      perror ("echo_loop");
      return 1;
    }
  for (unsigned long n = 1;; n++)
    {
      char line[64];
      int len = snprintf (line, sizeof line, "%lu\n", n);
      if (write (in, line, (size_t) len) != len)
        return 1;
      ssize_t got = read (out, line, sizeof line - 1);
      if (got <= 0)
        return 1;
      line[got] = '\0';
      FILE *file = fopen (argv[2], "a");
      if (file == NULL)
        return 1;
      fprintf (file, "%s %s", argv[1], line);
      fclose (file);
      usleep (200 * 1000);
    }
}
