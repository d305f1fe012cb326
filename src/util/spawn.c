/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "spawn.h"
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The line that says why: the last one written.  Helpers print notes
   before their error (Debian 12's pasta logs "No external routable
   interface for IPv6" even with --quiet).  */
static char *
last_line (int fd)
{
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf - 1);
  while (n > 0 && buf[n - 1] == '\n')
    n--;
  buf[n > 0 ? n : 0] = '\0';
  char *nl = strrchr (buf, '\n');
  return xstrdup (nl ? nl + 1 : buf);
}

/* The helper starts with every signal at its default and none blocked,
   whatever the runtime inherited: started from a systemd service, whose
   SIGPIPE is ignored, Debian 12's pasta takes the SIG_IGN that
   signal(SIGPIPE, SIG_IGN) returns for an error and exits.  */
static void
default_signals (posix_spawnattr_t *attr, bool new_session)
{
  sigset_t all, none;
  sigfillset (&all);
  sigemptyset (&none);
  posix_spawnattr_init (attr);
  posix_spawnattr_setsigdefault (attr, &all);
  posix_spawnattr_setsigmask (attr, &none);
  posix_spawnattr_setflags (attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
                                      | (new_session ? POSIX_SPAWN_SETSID : 0));
}

int
ar_spawn (const ar_spawn_request *req, pid_t *pid, ar_error_t **err)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  const int std_fds[] = { req->in_fd, req->out_fd, req->err_fd };
  for (int i = 0; i < 3; i++)
    if (std_fds[i] >= 0)
      posix_spawn_file_actions_adddup2 (&fa, std_fds[i], i);
  /* dup2 onto itself: glibc clears the fd's O_CLOEXEC in the child. */
  for (size_t i = 0; i < req->n_pass_fds; i++)
    posix_spawn_file_actions_adddup2 (&fa, req->pass_fds[i], req->pass_fds[i]);
  /* What this process inherited without O_CLOEXEC (a pipe its own
   * caller reads to EOF) stays out. */
  if (req->n_pass_fds == 0)
    posix_spawn_file_actions_addclosefrom_np (&fa, 3);
  posix_spawnattr_t attr;
  default_signals (&attr, req->new_session);
  char *const *envp = req->envp ? req->envp : environ;
  int r = req->file
              ? posix_spawn (pid, req->file, &fa, &attr, req->argv, envp)
              : posix_spawnp (pid, req->argv[0], &fa, &attr, req->argv, envp);
  posix_spawnattr_destroy (&attr);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    return ar_error_set (err, r, "run %s", req->argv[0]);
  return 0;
}

int
ar_spawn_reap (pid_t pid, const char *name, ar_error_t **err)
{
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "%s: wait", name);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

int
ar_spawn_wait (char *const argv[], char **message, ar_error_t **err)
{
  *message = NULL;
  int errpipe[2];
  if (pipe2 (errpipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return ar_error_set (err, errno, "%s: pipe", argv[0]);
  cleanup_close int rd = errpipe[0];
  const ar_spawn_request req
      = { .argv = argv, .in_fd = -1, .out_fd = -1, .err_fd = errpipe[1] };
  pid_t child;
  int r = ar_spawn (&req, &child, err);
  close (errpipe[1]);
  if (r == 0)
    r = ar_spawn_reap (child, argv[0], err);
  if (r <= 0)
    return r;
  *message = last_line (rd);
  return 1;
}
