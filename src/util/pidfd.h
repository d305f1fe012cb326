/* SPDX-License-Identifier: Apache-2.0 */
/* A pidfd pins a process: its pid cannot be reused while the fd is open,
 * and it polls readable when the process exits. The runtime needs one for
 * every process it waits on or signals (Linux 5.3 and later). */
#ifndef AR_UTIL_PIDFD_H
#define AR_UTIL_PIDFD_H

#include <sys/types.h>

/* pidfd_open(2), O_CLOEXEC as every pidfd is: the fd, or -1 with errno. */
int ar_pidfd_open (pid_t pid);

/* pidfd_send_signal(2): 0, or -1 with errno (ESRCH: it has exited). */
int ar_pidfd_send_signal (int pidfd, int sig);

#endif
