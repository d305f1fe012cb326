/* SPDX-License-Identifier: Apache-2.0 */
/* `start` of a created container, done as src/core/container.c's
 * ar_container_start does it (the same checks, the same fifo protocol),
 * for the containers whose start is nothing else: the runtime would
 * first pay for its own start, a dynamically linked program's, and then
 * parse the state it checks here by two small files. Every doubt returns
 * before the fifo is opened, and the runtime does the start. */
#include "start.h"
#include "call.h"
#include "sys.h"
#include "text.h"
#include "../src/core/launcher_wire.h"

#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/poll.h>

/* <root>/<id>, open; -1 when it is not there. */
static long
open_state_dir (const char *root, const char *id)
{
  char path[PATH_BYTES], *at = path;
  if (!append (&at, path + sizeof path, root ? root : AR_DEFAULT_ROOT)
      || !append (&at, path + sizeof path, "/")
      || !append (&at, path + sizeof path, id))
    return -1;
  return open_dir (AT_FDCWD, path);
}

/* Up to size - 1 bytes of a file, NUL-terminated; 0 when it is empty or
 * cannot be read. */
static int
read_small_file (long at, const char *name, char *buf, long size)
{
  long fd = sys (__NR_openat, at, (long) name, O_RDONLY | O_CLOEXEC, 0, 0);
  if (fd < 0)
    return 0;
  long n = sys (__NR_read, fd, (long) buf, size - 1, 0, 0);
  sys (__NR_close, fd, 0, 0, 0, 0);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  return 1;
}

/* Field 22 of /proc/PID/stat (util/fs.c's ar_pid_start_time); 0 when the
 * process is gone or a zombie. */
static unsigned long long
start_time (long pid)
{
  static char stat[1024];
  char path[64], *at = path;
  if (!append (&at, path + sizeof path, "/proc/")
      || !append_number (&at, path + sizeof path, pid)
      || !append (&at, path + sizeof path, "/stat")
      || !read_small_file (AT_FDCWD, path, stat, sizeof stat))
    return 0;
  /* comm may hold spaces and parentheses: fields start after the last ')' */
  const char *p = 0;
  for (const char *c = stat; *c; c++)
    if (*c == ')')
      p = c;
  if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
    return 0;
  for (int spaces = 0; *p && spaces < 20; p++)
    spaces += *p == ' ';
  unsigned long long t;
  return read_number (&p, &t) ? t : 0;
}

/* A pidfd of the container's init, as AR_PLAIN_START_FILE names it, and
 * still that process (its start time): -1 when not. Opened before the
 * check, so that the pid cannot have become another's since, and before
 * the fifo: a short program, once released, can exit and be reaped by an
 * engine's shim before a pidfd opened after it would find the pid. */
static long
init_pidfd (long dir)
{
  char record[64];
  const char *p = record;
  unsigned long long pid, recorded;
  if (!read_small_file (dir, AR_PLAIN_START_FILE, record, sizeof record)
      || !read_number (&p, &pid) || !read_number (&p, &recorded) || pid == 0
      || pid > 4194304)
    return -1;
  long pidfd = sys (__NR_pidfd_open, (long) pid, 0, 0, 0, 0);
  if (pidfd >= 0 && start_time ((long) pid) != recorded)
    {
      sys (__NR_close, pidfd, 0, 0, 0, 0);
      pidfd = -1;
    }
  return pidfd;
}

/* container.c's release_through_fifo: opening the fifo lets the init go
 * on; its byte says it got there, the end of file that its execve makes
 * (its end is close-on-exec) that the container's program runs. 1 then,
 * 0 when the init ended before it wrote. */
static int
release (long fifo, long pidfd)
{
  int released = 0;
  for (;;)
    {
      struct pollfd p[2]
          = { { (int) fifo, POLLIN, 0 }, { (int) pidfd, POLLIN, 0 } };
      long r = sys (__NR_ppoll, (long) p, 2, 0, 0, 8);
      if (r == -EINTR)
        continue;
      if (r < 0)
        return 0;
      if (p[0].revents & (POLLIN | POLLHUP))
        {
          char c;
          long n = sys (__NR_read, fifo, (long) &c, 1, 0, 0);
          if (n == 1)
            released = 1;
          else if (n == 0)
            return released;
          continue;
        }
      if (p[1].revents & POLLIN)
        return released;
    }
}

int
start_created (int argc, char **argv)
{
  const char *root;
  int c = call_command (argc, argv, &root);
  if (!c || c + 2 != argc || !same (argv[c], "start")
      || !plain_name (argv[c + 1]))
    return -1;
  long dir = open_state_dir (root, argv[c + 1]);
  if (dir < 0)
    return -1;
  long pidfd = -1, fifo = -1;
  int r = -1;
  /* As ar_container_start: created (the init alive, the fifo there), not
   * waiting in a pool. */
  if (sys (__NR_faccessat, dir, (long) AR_AWAIT_TAKE_FILE, 0, 0, 0) != 0
      && (pidfd = init_pidfd (dir)) >= 0
      && (fifo = sys (__NR_openat, dir, (long) AR_EXEC_FIFO,
                      O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0, 0))
             >= 0
      && release (fifo, pidfd))
    {
      r = 0;
      if (sys (__NR_unlinkat, dir, (long) AR_EXEC_FIFO, 0, 0, 0) != 0)
        {
          say ("agentrun: remove exec fifo: cannot remove it\n");
          r = 1;
        }
    }
  long fds[] = { fifo, pidfd, dir };
  for (unsigned i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (fds[i] >= 0)
      sys (__NR_close, fds[i], 0, 0, 0, 0);
  return r;
}
