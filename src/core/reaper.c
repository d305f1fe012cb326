/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "reaper.h"
#include "sync.h"
#include "../util/clock.h"
#include "../util/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Reap every child that ended; true (with *status) once `workload` did. */
static bool
reap_children (pid_t workload, int *status)
{
  bool done = false;
  int st;
  pid_t p;
  while ((p = waitpid (-1, &st, WNOHANG)) > 0)
    if (p == workload)
      {
        *status = st;
        done = true;
      }
  return done;
}

/* Wait for the next signal; with a deadline (>= 0) 0 once it passed. */
static int
next_signal (const sigset_t *set, siginfo_t *info, int64_t deadline_ms)
{
  if (deadline_ms < 0)
    return sigwaitinfo (set, info);
  int64_t left = deadline_ms - ar_now_ms ();
  if (left <= 0)
    return 0;
  struct timespec ts
      = { .tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000 };
  int sig = sigtimedwait (set, info, &ts);
  return sig < 0 && errno == EAGAIN ? 0 : sig;
}

/* The parent reads the container's cgroup (peak memory, OOM kills,
 * refused forks) while this process keeps it populated: a cgroup that
 * empties may go at once (systemd removes an empty scope). So wait for
 * its word, or its end, before exiting; bounded, should it never read. */
static void
await_parent (int report_fd)
{
  struct pollfd p = { .fd = report_fd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, AR_REAPER_REPORT_WAIT_MS);
  while (r < 0 && errno == EINTR);
}

/* The command ended with wait status `status`: report it, and end as it
 * did. */
static _Noreturn void
end_as (int report_fd, int status)
{
  if (report_fd >= 0
      && ar_sync_send (report_fd, AR_SYNC_EXIT, status, -1, NULL, NULL) == 0)
    await_parent (report_fd);
  _exit (WIFSIGNALED (status) ? 128 + WTERMSIG (status) : WEXITSTATUS (status));
}

/* The runtime that waits on `report_fd` is gone (killed, or a taker of
 * a pooled sandbox that died): nobody would see the command's end, or
 * stop it. A run's init dies with its parent; a taken one's parent is
 * not its runtime, so the hang-up (SIGIO, O_ASYNC) is what tells it. */
static bool
runtime_gone (int report_fd)
{
  struct pollfd p = { .fd = report_fd, .events = POLLRDHUP };
  return poll (&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void
watch_runtime (int report_fd)
{
  if (report_fd < 0 || fcntl (report_fd, F_SETOWN, getpid ()) < 0)
    return;
  int flags = fcntl (report_fd, F_GETFL);
  if (flags >= 0)
    fcntl (report_fd, F_SETFL, flags | O_ASYNC);
  /* Gone already: no SIGIO would come. */
  if (runtime_gone (report_fd))
    raise (SIGIO);
}

/* Signals from a process (the runtime passing on what it got) are passed
 * on; those the kernel makes (a terminal's ^C, its hang-up) already
 * reached the workload's process group. The first termination signal
 * goes to every process of the namespace, the second one or the end of
 * the grace period is SIGKILL to all. */
static _Noreturn void
reap_until_workload_ends (pid_t workload, int report_fd)
{
  sigset_t all;
  sigfillset (&all);
  int64_t deadline = -1;
  for (;;)
    {
      siginfo_t info = { 0 };
      int sig = next_signal (&all, &info, deadline);
      if (sig == 0)
        {
          kill (-1, SIGKILL);
          deadline = -1;
          continue;
        }
      if (sig < 0)
        continue;
      int status = 0;
      if (sig == SIGCHLD && reap_children (workload, &status))
        end_as (report_fd, status);
      if (sig == SIGIO && report_fd >= 0 && runtime_gone (report_fd))
        {
          kill (-1, SIGKILL);
          _exit (128 + SIGKILL);
        }
      if (sig == SIGCHLD || info.si_code > 0)
        continue;
      if (!ar_signal_ends_program (sig))
        kill (workload, sig);
      else if (deadline >= 0)
        kill (-1, SIGKILL);
      else
        {
          kill (-1, sig);
          deadline = ar_now_ms () + AR_REAPER_GRACE_SECONDS * 1000;
        }
    }
}

typedef struct
{
  const ar_workload *w;
  const sigset_t *mask;
  int exec_errno;
} spawn_order;

/* The child, on a stack of its own, sharing this process's memory until
 * its exec (CLONE_VM | CLONE_VFORK): its mask back, and the exec; why that
 * failed it leaves in the order, for the parent. Handlers need no reset
 * (posix_spawn makes two calls per signal for that): the exec resets
 * them, and the init's own only exit. Not instrumented by ASan: on a stack
 * it does not know, its bookkeeping before _exit would warn on the
 * command's stderr. */
__attribute__ ((no_sanitize_address)) static int
exec_workload (void *arg)
{
  spawn_order *o = arg;
  sigprocmask (SIG_SETMASK, o->mask, NULL);
  execve (o->w->exe, o->w->args, o->w->envp);
  o->exec_errno = errno;
  _exit (127);
}

#define SPAWN_STACK_BYTES (64 * 1024)

int
ar_reaper_run_workload (int report_fd, const ar_workload *w, ar_error_t **err)
{
  /* Blocked until the reaper waits for them: none is lost. */
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  if (report_fd >= 0 && fcntl (report_fd, F_SETFD, FD_CLOEXEC) < 0)
    return ar_error_set (err, errno, "init: keep the report from the command");
  /* No copy of the init's page tables, no copy-on-write fault on each page
   * either side touches, nothing to tear down at the exec: what a fork
   * would cost here. The stack is the child's alone: this process waits
   * until its exec. */
  static char stack[SPAWN_STACK_BYTES] __attribute__ ((aligned (16)));
  spawn_order o = { .w = w, .mask = &old };
  pid_t child = clone (exec_workload, stack + sizeof stack,
                       CLONE_VM | CLONE_VFORK | SIGCHLD, &o);
  if (child < 0)
    {
      int saved = errno;
      sigprocmask (SIG_SETMASK, &old, NULL);
      return ar_error_set (err, saved, "init: start the command");
    }
  /* As the init's own exec would fail: its message, and status 127 (the
   * child's, reaped below). */
  if (o.exec_errno)
    dprintf (STDERR_FILENO, "agentrun: exec `%s`: %s\n", w->exe,
             strerror (o.exec_errno));
  watch_runtime (report_fd);
  reap_until_workload_ends (child, report_fd);
}
