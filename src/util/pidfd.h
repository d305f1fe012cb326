/* SPDX-License-Identifier: Apache-2.0 */
/* A pidfd pins a process: its pid cannot be reused while the fd is open,
 * and it polls readable when the process exits. The runtime needs one for
 * every process it waits on or signals (Linux 5.3 and later). */
#ifndef AR_UTIL_PIDFD_H
#define AR_UTIL_PIDFD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* pidfd_open(2), O_CLOEXEC as every pidfd is: the fd, or -1 with errno. */
int ar_pidfd_open (pid_t pid);

/* The pid `pidfd` refers to (its fdinfo's "Pid:"), or -1: not a pidfd,
 * or its process has been reaped. */
pid_t ar_pidfd_pid (int pidfd);

/* pidfd_send_signal(2): 0, or -1 with errno (ESRCH: it has exited). */
int ar_pidfd_send_signal (int pidfd, int sig);

/* clone3(2) as fork: the child returns 0, the parent gets its pid and
 * *pidfd. `flags` are CLONE_NEW* bits. With cgroup_fd >= 0 the child is
 * born in that cgroup v2 directory (CLONE_INTO_CGROUP, Linux 5.7): no
 * move afterwards, which on v2 takes the threadgroup lock every fork in
 * the system shares and waits for an RCU grace period. Where the kernel
 * refuses that (older kernels, a leaf that takes no process) the child is
 * cloned without it, so that a move by pid reports what is wrong;
 * *in_cgroup says which. -1 with errno. */
pid_t
ar_clone_pidfd (uint64_t flags, int *pidfd, int cgroup_fd, bool *in_cgroup);

#endif
