/* One error type for the whole runtime: created where a failure happens,
 * passed up unchanged or with context prepended, printed once by main. */
#ifndef AR_UTIL_ERROR_H
#define AR_UTIL_ERROR_H

#include <stdarg.h>

typedef struct ar_error
{
  int errno_value; /* 0 when the failure is not a system call's */
  char *msg;       /* one line, no trailing newline */
} ar_error_t;

/* Set *err (if err and *err is NULL) and return -1, so callers can write
 * `return ar_error_set (err, errno, "open `%s`", path);`.
 * When errno_value != 0, ": strerror(errno_value)" is appended. */
int ar_error_set (ar_error_t **err, int errno_value, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Prepend "context: " to an existing error; returns -1. */
int ar_error_prefix (ar_error_t **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Of several independent steps that all run, the first failure is the one
 * reported: *step (when set) moves into an empty *first. A later failure
 * is handed back for the caller to warn about and free; NULL otherwise.
 * *step is NULL afterwards. */
ar_error_t *ar_error_keep_first (ar_error_t **first, ar_error_t **step);

/* Hand `e` (owned, may be NULL) to the caller's err: into *err when that
 * is empty, else freed. Returns -1 when e was set, 0 otherwise. */
int ar_error_pass (ar_error_t **err, ar_error_t *e);

void ar_error_free (ar_error_t *err);

/* For cleanup attributes: frees and NULLs *err. */
void ar_error_freep (ar_error_t **err);
#define cleanup_error __attribute__ ((cleanup (ar_error_freep)))

#endif
