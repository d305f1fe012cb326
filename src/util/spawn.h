/* Running a helper program (newuidmap, pasta) to completion. */
#ifndef AR_UTIL_SPAWN_H
#define AR_UTIL_SPAWN_H

#include "error.h"

/* Run argv[0], looked up in PATH, with the caller's environment and its
 * stderr captured, and wait for it. 0 when it exited 0; 1 when it ran and
 * failed, *message then holding the last line it wrote to stderr ("" if
 * none; malloc'd); -1 with *err (errno kept) when it could not be run.
 * The line is read after the exit, without waiting: a daemon it left
 * behind may hold the pipe open. */
int ar_spawn_wait (char *const argv[], char **message, ar_error_t **err);

#endif
