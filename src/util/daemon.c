/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "daemon.h"
#include "fds.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

void
ar_daemon_enter (const int *keep, size_t n_keep)
{
  setsid ();
  int devnull = open ("/dev/null", O_RDWR);
  for (int fd = 0; devnull >= 0 && fd < 3; fd++)
    dup2 (devnull, fd);
  ar_close_fds_from (3, keep, n_keep);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    signal (sig, SIG_DFL);
  signal (SIGPIPE, SIG_IGN);
}
