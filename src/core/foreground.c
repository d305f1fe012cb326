#include "config.h"
#include "foreground.h"
#include "terminal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

static volatile pid_t forward_pid;

static void
forward_signal (int sig)
{
  if (forward_pid > 0)
    kill (forward_pid, sig);
}

void
ar_foreground_forward_signals (pid_t pid)
{
  static const int sigs[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                              SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
  forward_pid = pid;
  struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
}

int
ar_foreground_wait (pid_t pid, int pty, ar_error_t **err)
{
  if (pty >= 0 && ar_terminal_proxy (pty, err) < 0)
    {
      /* The workload goes on; say why its terminal stopped and wait. */
      fprintf (stderr, "agentrun: %s\n", (*err)->msg);
      ar_error_freep (err);
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "wait for container process %d", (int) pid);
  forward_pid = 0;
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
