/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "signals.h"
#include "cleanup.h"

#include <signal.h>
#include <string.h>

bool
ar_signal_ends_program (int sig)
{
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

char *
ar_signal_name (int sig)
{
  const char *abbrev = sigabbrev_np (sig);
  if (abbrev)
    return xasprintf ("SIG%s", abbrev);
  if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    return sig == SIGRTMIN ? xstrdup ("SIGRTMIN")
                           : xasprintf ("SIGRTMIN+%d", sig - SIGRTMIN);
  return xasprintf ("signal %d", sig);
}
