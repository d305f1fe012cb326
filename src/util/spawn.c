#include "config.h"
#include "spawn.h"
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char *
first_line (int fd)
{
  char buf[512];
  ssize_t n = read (fd, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return xstrdup (buf);
}

int
ar_spawn_wait (char *const argv[], char **message, ar_error_t **err)
{
  *message = NULL;
  int errpipe[2];
  if (pipe2 (errpipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return ar_error_set (err, errno, "%s: pipe", argv[0]);
  cleanup_close int rd = errpipe[0];
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, errpipe[1], STDERR_FILENO);
  pid_t child;
  int r = posix_spawnp (&child, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  close (errpipe[1]);
  if (r != 0)
    return ar_error_set (err, r, "run %s", argv[0]);
  int status;
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "%s: wait", argv[0]);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  *message = first_line (rd);
  return 1;
}
