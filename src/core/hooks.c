/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "hooks.h"
#include "process.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A hook that is running: its pid, a pidfd to wait on, the write end of
 * its stdin and the read end of the pipe on which the child reports a
 * failed execve. */
typedef struct
{
  pid_t pid;
  int pidfd;
  int stdin_fd;
  int exec_error_fd;
} running_hook;

/* How the hook ended, as runc reports it. */
typedef enum
{
  HOOK_EXITED,
  HOOK_SIGNALED,
  HOOK_TIMED_OUT,
  HOOK_EXEC_FAILED
} hook_outcome;

/* ---- child side ------------------------------------------------------- */

/* Runs in the forked child: only async-signal-safe calls, no returns. */
static _Noreturn void
exec_hook (const oci_hook *hook, int stdin_fd, int exec_error_fd)
{
  char *default_argv[] = { hook->path, NULL };
  /* runc hands a hook without env its own environment; ours may hold
   * what the agent must not see, so such a hook gets a PATH only. */
  char *default_env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          NULL };
  char *const *argv = hook->args.len > 0 ? hook->args.items : default_argv;
  char *const *envp = hook->env.len > 0 ? hook->env.items : default_env;

  /* Hook chatter goes to our stderr: our stdout may be parsed by the
   * caller (`agentrun state`, the containerd shim). */
  if (stdin_fd == STDIN_FILENO)
    fcntl (stdin_fd, F_SETFD, 0); /* dup2 onto itself keeps CLOEXEC */
  else if (dup2 (stdin_fd, STDIN_FILENO) < 0)
    goto fail;
  if (dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      /* We run without a stderr: give the hook somewhere harmless. */
      int null_fd = open ("/dev/null", O_WRONLY);
      if (null_fd < 0 || dup2 (null_fd, STDOUT_FILENO) < 0
          || dup2 (null_fd, STDERR_FILENO) < 0)
        goto fail;
    }

  /* The hook is a fresh program: default signal handling, nothing of
   * ours beyond stdio (exec_error_fd is already close-on-exec). */
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  ar_cloexec_fds_from (STDERR_FILENO + 1);

  execve (hook->path, argv, envp);

fail:;
  int saved = errno;
  ar_write_all (exec_error_fd, &saved, sizeof saved);
  _exit (127);
}

/* ---- parent side ------------------------------------------------------ */

static void
running_hook_release (running_hook *h)
{
  ar_closep (&h->pidfd);
  ar_closep (&h->stdin_fd);
  ar_closep (&h->exec_error_fd);
}

static int
spawn_hook (const oci_hook *hook, running_hook *h, ar_error_t **err)
{
  int stdin_pipe[2], exec_error_pipe[2];
  if (pipe2 (stdin_pipe, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "pipe");
  if (pipe2 (exec_error_pipe, O_CLOEXEC) < 0)
    {
      int saved = errno;
      close (stdin_pipe[0]);
      close (stdin_pipe[1]);
      return ar_error_set (err, saved, "pipe");
    }
  cleanup_close int stdin_read = stdin_pipe[0];
  cleanup_close int exec_error_write = exec_error_pipe[1];
  h->stdin_fd = stdin_pipe[1];
  h->exec_error_fd = exec_error_pipe[0];

  h->pid = fork ();
  if (h->pid < 0)
    return ar_error_set (err, errno, "fork");
  if (h->pid == 0)
    exec_hook (hook, stdin_read, exec_error_write);

  h->pidfd = ar_pidfd_open (h->pid);
  if (h->pidfd < 0)
    {
      int saved = errno;
      kill (h->pid, SIGKILL);
      while (waitpid (h->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      h->pid = -1;
      return ar_error_set (err, saved, "pidfd_open of hook `%s`", hook->path);
    }
  /* The state is written as the hook reads it, inside the wait loop, so a
   * hook that never reads cannot block us past its timeout. */
  fcntl (h->stdin_fd, F_SETFL, O_NONBLOCK);
  return 0;
}

/* Write what the pipe takes; close it once everything is written or the
 * hook has gone away (EPIPE: it may legitimately ignore its stdin). */
static void
feed_state (running_hook *h, const char *state, size_t len, size_t *written)
{
  while (h->stdin_fd >= 0 && *written < len)
    {
      ssize_t n = write (h->stdin_fd, state + *written, len - *written);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n < 0)
        break;
      *written += (size_t) n;
    }
  ar_closep (&h->stdin_fd);
}

/* Reap without blocking; true once the child is gone. */
static bool
try_reap (pid_t pid, int *status)
{
  pid_t r;
  do
    r = waitpid (pid, status, WNOHANG);
  while (r < 0 && errno == EINTR);
  return r == pid || (r < 0 && errno == ECHILD);
}

static void
reap (pid_t pid, int *status)
{
  while (waitpid (pid, status, 0) < 0 && errno == EINTR)
    ;
}

/* Sleep until the hook exits, the pipe wants more state, or `ms` passes. */
static void
wait_for_event (running_hook *h, int ms)
{
  struct pollfd fds[2];
  nfds_t n = 0;
  fds[n++] = (struct pollfd){ .fd = h->pidfd, .events = POLLIN };
  if (h->stdin_fd >= 0)
    fds[n++] = (struct pollfd){ .fd = h->stdin_fd, .events = POLLOUT };
  poll (fds, n, ms);
}

/* The parser rejects timeouts <= 0; treat them as "none" regardless, and
 * keep absurdly large ones from overflowing. */
static int64_t
timeout_deadline (const oci_hook *hook)
{
  const int64_t max_seconds = INT64_MAX / 1000 / 2;
  if (!hook->timeout.set || hook->timeout.value <= 0)
    return -1;
  int64_t seconds = hook->timeout.value;
  if (seconds > max_seconds)
    seconds = max_seconds;
  return ar_now_ms () + seconds * 1000;
}

static hook_outcome
wait_hook (running_hook *h, const oci_hook *hook, const char *state,
           int *status)
{
  size_t len = state ? strlen (state) : 0, written = 0;
  int64_t deadline = timeout_deadline (hook);
  for (;;)
    {
      feed_state (h, state, len, &written);
      if (try_reap (h->pid, status))
        return HOOK_EXITED;
      int remaining = -1;
      if (deadline >= 0)
        {
          int64_t left = deadline - ar_now_ms ();
          if (left <= 0)
            {
              kill (h->pid, SIGKILL);
              reap (h->pid, status);
              return HOOK_TIMED_OUT;
            }
          remaining = left > INT32_MAX ? INT32_MAX : (int) left;
        }
      wait_for_event (h, remaining);
    }
}

/* After the child is reaped: did it fail to exec? */
static int
exec_errno (running_hook *h)
{
  int child_errno = 0;
  if (ar_read_all (h->exec_error_fd, &child_errno, sizeof child_errno)
      != (ssize_t) sizeof child_errno)
    return 0;
  return child_errno;
}

static int
report (const oci_hook *hook, const char *phase, size_t index,
        hook_outcome outcome, int status, int child_errno, ar_error_t **err)
{
  /* runc's words first ("error running hook #N"), which scripts match. */
  const char *path = hook->path ? hook->path : "";
  if (outcome == HOOK_TIMED_OUT)
    return ar_error_set (
        err, 0, "error running hook #%zu (%s %s): timed out after %" PRId64 "s",
        index, phase, path, hook->timeout.value);
  if (child_errno != 0)
    return ar_error_set (err, child_errno,
                         "error running hook #%zu (%s %s): exec", index, phase,
                         path);
  if (WIFSIGNALED (status))
    return ar_error_set (err, 0,
                         "error running hook #%zu (%s %s): killed by signal %d",
                         index, phase, path, WTERMSIG (status));
  if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    return ar_error_set (err, 0,
                         "error running hook #%zu (%s %s): exit status %d",
                         index, phase, path, WEXITSTATUS (status));
  return 0;
}

/* The hook may close its stdin before we finish writing; that must not
 * kill the runtime with SIGPIPE. Block it while hooks run and discard a
 * SIGPIPE raised meanwhile, unless one was already pending. */
typedef struct
{
  sigset_t old_mask;
  bool was_pending;
} sigpipe_guard;

static void
sigpipe_block (sigpipe_guard *g)
{
  sigset_t pipe_only, pending;
  sigemptyset (&pipe_only);
  sigaddset (&pipe_only, SIGPIPE);
  sigpending (&pending);
  g->was_pending = sigismember (&pending, SIGPIPE);
  sigprocmask (SIG_BLOCK, &pipe_only, &g->old_mask);
}

static void
sigpipe_restore (sigpipe_guard *g)
{
  sigset_t pipe_only;
  sigemptyset (&pipe_only);
  sigaddset (&pipe_only, SIGPIPE);
  if (!g->was_pending)
    {
      struct timespec zero = { 0, 0 };
      while (sigtimedwait (&pipe_only, NULL, &zero) == SIGPIPE)
        ;
    }
  sigprocmask (SIG_SETMASK, &g->old_mask, NULL);
}

static int
run_one (const oci_hook *hook, const char *phase, size_t index,
         const char *state_json, ar_error_t **err)
{
  running_hook h
      = { .pid = -1, .pidfd = -1, .stdin_fd = -1, .exec_error_fd = -1 };
  if (hook->path == NULL)
    return ar_error_set (err, 0, "error running hook #%zu (%s): no path", index,
                         phase);
  if (spawn_hook (hook, &h, err) < 0)
    {
      running_hook_release (&h);
      return ar_error_prefix (err, "error running hook #%zu (%s %s)", index,
                              phase, hook->path);
    }

  int status = 0;
  hook_outcome outcome = wait_hook (&h, hook, state_json, &status);
  int child_errno = outcome == HOOK_TIMED_OUT ? 0 : exec_errno (&h);
  running_hook_release (&h);
  return report (hook, phase, index, outcome, status, child_errno, err);
}

int
ar_hooks_run_one (const oci_hook *hook, const char *phase, size_t index,
                  const char *state_json, ar_error_t **err)
{
  sigpipe_guard guard;
  sigpipe_block (&guard);
  int rc = run_one (hook, phase, index, state_json, err);
  sigpipe_restore (&guard);
  return rc;
}

int
ar_hooks_run (const oci_hook_list *hooks, const char *phase,
              const char *state_json, ar_error_t **err)
{
  int rc = 0;
  for (size_t i = 0; hooks && i < hooks->len && rc == 0; i++)
    rc = ar_hooks_run_one (&hooks->items[i], phase, i, state_json, err);
  return rc;
}
