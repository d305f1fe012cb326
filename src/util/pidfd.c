/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "pidfd.h"

#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

int
ar_pidfd_open (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

int
ar_pidfd_send_signal (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}
