/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "foreground.h"
#include "launcher_wire.h"
#include "terminal.h"
#include "../util/clock.h"
#include "../util/signals.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

static volatile pid_t forward_pid;
static volatile sig_atomic_t first_ending_signal;

static void
forward_signal (int sig)
{
  if (forward_pid <= 0)
    return;
  int saved = errno;
  kill (forward_pid, sig);
  errno = saved;
  if (ar_signal_ends_program (sig) && first_ending_signal == 0)
    first_ending_signal = sig;
}

void
ar_foreground_forward_signals (pid_t pid)
{
  /* launcher/take.c blocks them before it starts a pooled command: one
   * sent to this process since is pending, and delivered to the handler
   * here. */
  static const int sigs[] = { AR_FORWARDED_SIGNALS };
  forward_pid = pid;
  struct sigaction sa
      = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  sigset_t forwarded;
  sigemptyset (&forwarded);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    {
      sigaction (sigs[i], &sa, NULL);
      sigaddset (&forwarded, sigs[i]);
    }
  sigprocmask (SIG_UNBLOCK, &forwarded, NULL);
}

/* Wait for pidfd to become readable (the process ended) for at most
 * `seconds`; on the deadline kill it. Signals we forward interrupt poll:
 * the remaining time is recomputed. */
static void
enforce_deadline (int pidfd, int64_t seconds, bool *timed_out)
{
  int64_t deadline_ms = ar_now_ms () + seconds * 1000;
  for (;;)
    {
      int64_t left = deadline_ms - ar_now_ms ();
      if (left <= 0)
        break;
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int r = poll (&p, 1, left > INT32_MAX ? INT32_MAX : (int) left);
      if (r > 0 || (r < 0 && errno != EINTR))
        return;
    }
  *timed_out = true;
  ar_pidfd_send_signal (pidfd, SIGKILL);
}

/* With a terminal the relay holds the main thread: the deadline is kept
 * beside it, with every signal left to the relay and the forwarding. */
typedef struct
{
  int pidfd;
  int64_t seconds;
  bool timed_out;
} deadline;

static void *
deadline_main (void *arg)
{
  deadline *d = arg;
  sigset_t all;
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, NULL);
  enforce_deadline (d->pidfd, d->seconds, &d->timed_out);
  return NULL;
}

void
ar_foreground_wait_adopted (int pidfd, int64_t timeout_seconds,
                            ar_foreground_end *end)
{
  *end = (ar_foreground_end){ .wait_status = -1 };
  if (timeout_seconds > 0)
    enforce_deadline (pidfd, timeout_seconds, &end->timed_out);
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
  forward_pid = 0;
  end->passed_on = first_ending_signal;
}

int
ar_foreground_wait (pid_t pid, int pty, int pidfd, int64_t timeout_seconds,
                    ar_foreground_end *end, ar_error_t **err)
{
  *end = (ar_foreground_end){ 0 };
  deadline d = { .pidfd = pidfd, .seconds = timeout_seconds };
  pthread_t thread;
  bool beside = false;
  if (timeout_seconds > 0 && pty < 0 && pidfd >= 0)
    enforce_deadline (pidfd, timeout_seconds, &end->timed_out);
  else if (timeout_seconds > 0 && pidfd >= 0)
    beside = pthread_create (&thread, NULL, deadline_main, &d) == 0;
  if (pty >= 0 && ar_terminal_proxy (pty, err) < 0)
    {
      /* The workload goes on; say why its terminal stopped and wait. */
      fprintf (stderr, "agentrun: %s\n", ar_error_text (*err));
      ar_error_freep (err);
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        int saved = errno;
        if (beside && pthread_cancel (thread) == 0) /* it waits in poll */
          pthread_join (thread, NULL);
        return ar_error_set (err, saved, "wait for container process %d",
                             (int) pid);
      }
  if (beside)
    {
      pthread_join (thread, NULL); /* its poll saw the end */
      end->timed_out = d.timed_out;
    }
  forward_pid = 0;
  end->wait_status = status;
  end->passed_on = first_ending_signal;
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
