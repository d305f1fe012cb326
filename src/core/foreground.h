/* SPDX-License-Identifier: Apache-2.0 */
/* run and exec in the foreground: forward signals to the container
 * process, wait for it, and turn its end into an exit status. */
#ifndef AR_CORE_FOREGROUND_H
#define AR_CORE_FOREGROUND_H

#include "../util/error.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Forward the signals a shell or supervisor sends us to `pid`. */
void ar_foreground_forward_signals (pid_t pid);

/* How the waited-for process ended, besides its exit status. */
typedef struct
{
  bool timed_out;  /* the deadline passed and it was killed */
  int wait_status; /* as waitpid gave it */
  /* The first signal meant to end a program (SIGTERM, SIGINT, SIGHUP,
   * SIGQUIT) that we got and passed on; 0: none. */
  int passed_on;
} ar_foreground_end;

/* Proxy the pty (when pty >= 0) until it hangs up, then wait for `pid`:
 * its exit code, or 128 + the signal that killed it. -1 with *err on a
 * failure to wait. With timeout_seconds > 0 (and no pty) `pid` is killed
 * when the time is up, and end->timed_out says so; `pidfd` is pid's. */
int ar_foreground_wait (pid_t pid, int pty, int pidfd, int64_t timeout_seconds,
                        ar_foreground_end *end, ar_error_t **err);

/* The same for a process that is not our child (a pooled sandbox's init,
 * take.h): its end is seen on `pidfd`; end->wait_status stays -1, for
 * the caller to learn from the process's own report. */
void ar_foreground_wait_adopted (int pidfd, int64_t timeout_seconds,
                                 ar_foreground_end *end);

#endif
