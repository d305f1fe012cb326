/* SPDX-License-Identifier: Apache-2.0 */
/* Running helper programs (newuidmap, pasta, git, diff): one way to
 * start one, with clean signals and only the fds asked for. */
#ifndef AR_UTIL_SPAWN_H
#define AR_UTIL_SPAWN_H

#include "error.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct
{
  char *const *argv;         /* argv[0] is looked up in the caller's PATH */
  const char *file;          /* the program instead, when not NULL */
  char *const *envp;         /* NULL: the caller's environment */
  int in_fd, out_fd, err_fd; /* its stdin, stdout, stderr; -1: the caller's */
  const int *pass_fds;       /* more fds it gets under the same numbers */
  size_t n_pass_fds;
  bool new_session; /* setsid: no terminal, no job control of the caller's */
} ar_spawn_request;

/* Start the program, every signal at its default and none blocked; the
 * caller's other fds stay closed to it (ours are O_CLOEXEC; those this
 * process inherited are closed in the child when no fd is passed). */
int ar_spawn (const ar_spawn_request *req, pid_t *pid, ar_error_t **err);

/* Wait for a started program: its exit status, or 128 + the signal that
 * killed it; -1 with *err when waiting failed. */
int ar_spawn_reap (pid_t pid, const char *name, ar_error_t **err);

/* Run argv[0], looked up in PATH, with the caller's environment and its
 * stderr captured, and wait for it. 0 when it exited 0; 1 when it ran and
 * failed, *message then holding the last line it wrote to stderr ("" if
 * none; malloc'd); -1 with *err (errno kept) when it could not be run.
 * The line is read after the exit, without waiting: a daemon it left
 * behind may hold the pipe open. */
int ar_spawn_wait (char *const argv[], char **message, ar_error_t **err);

#endif
