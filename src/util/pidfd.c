/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "pidfd.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* Our own copy: glibc has no clone3 wrapper and <linux/sched.h> clashes
 * with <sched.h>. Layout of the kernel's struct clone_args (v2). */
struct ar_clone_args
{
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size,
      tls, set_tid, set_tid_size, cgroup;
};

int
ar_pidfd_open (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

pid_t
ar_pidfd_pid (int pidfd)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  const char *at = strstr (buf, "\nPid:");
  long pid = at ? strtol (at + strlen ("\nPid:"), NULL, 10) : -1;
  return pid > 0 ? (pid_t) pid : -1;
}

int
ar_pidfd_send_signal (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

pid_t
ar_clone_pidfd (uint64_t flags, int *pidfd, int cgroup_fd, bool *in_cgroup)
{
  struct ar_clone_args args
      = { .flags = flags | CLONE_PIDFD,
          .pidfd = (uint64_t) (uintptr_t) pidfd,
          /* a CLONE_PARENT child signals as
                                   its caller would */
          .exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD };
  pid_t pid = -1;
  if (cgroup_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t) cgroup_fd;
      pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
      args.flags &= ~CLONE_INTO_CGROUP;
      args.cgroup = 0;
    }
  *in_cgroup = pid >= 0;
  if (pid < 0)
    pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
  return pid;
}
