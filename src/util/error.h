/* SPDX-License-Identifier: Apache-2.0 */
/* One error type for the whole runtime: created where a failure happens,
 * passed up unchanged or with context prepended, printed once by main. */
#ifndef AR_UTIL_ERROR_H
#define AR_UTIL_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* What a caller may branch on; the text is for people only. */
typedef enum
{
  AR_ERR_FAILED = 0,   /* nothing more specific */
  AR_ERR_NO_CONTAINER, /* no container of that id under the state root */
  AR_ERR_PEER_GONE,    /* the other end of a connection closed or reset it */
  AR_ERR_COMMAND_NOT_FOUND,    /* the process's command is not there */
  AR_ERR_COMMAND_NOT_RUNNABLE, /* it is, but cannot be executed */
} ar_error_code;

typedef struct ar_error
{
  int errno_value; /* 0 when the failure is not a system call's */
  ar_error_code code;
  char *message;  /* with its context, without the errno's text */
  char *text;     /* rendered by ar_error_text, NULL until then */
  int errno_said; /* the message says what errno_value means itself */
} ar_error_t;

/* Set *err (if err and *err is NULL) and return -1, so callers can write
 * `return ar_error_set (err, errno, "open `%s`", path);`. A second error
 * for an err already set is not kept: the first failure is the one that
 * is reported (see ar_error_keep_first for steps that all run). */
int ar_error_set (ar_error_t **err, int errno_value, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The same, with a code callers can test with ar_error_is. */
int ar_error_set_code (ar_error_t **err, ar_error_code code, int errno_value,
                       const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* The same, for a message that says what the errno means in its own
 * words (runc's lower-case Go style): the errno is kept for callers to
 * test, the text is not repeated. */
int ar_error_set_errno_said (ar_error_t **err, int errno_value, const char *fmt,
                             ...) __attribute__ ((format (printf, 3, 4)));

/* Prepend "context: " to an existing error; returns -1. */
int ar_error_prefix (ar_error_t **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Each of these returns -1, and says so where it is called: the static
 * analyzer then knows `return ar_error_set (...)` is a failure, as the
 * compiler does not across files. */
#ifndef AR_ERROR_DEFINING
#define ar_error_set(err, ...)                                                 \
  ({                                                                           \
    ar_error_set (err, __VA_ARGS__);                                           \
    -1;                                                                        \
  })
#define ar_error_set_code(err, ...)                                            \
  ({                                                                           \
    ar_error_set_code (err, __VA_ARGS__);                                      \
    -1;                                                                        \
  })
#define ar_error_set_errno_said(err, ...)                                      \
  ({                                                                           \
    ar_error_set_errno_said (err, __VA_ARGS__);                                \
    -1;                                                                        \
  })
#define ar_error_prefix(err, ...)                                              \
  ({                                                                           \
    ar_error_prefix (err, __VA_ARGS__);                                        \
    -1;                                                                        \
  })
#endif

/* The one line people see: the message and, when there is an errno, ":
 * strerror(errno)". Rendered when asked (and kept until the error changes
 * or is freed). */
const char *ar_error_text (const ar_error_t *err);

/* Is `err` set, with this code? */
static inline int
ar_error_is (const ar_error_t *err, ar_error_code code)
{
  return err != NULL && err->code == code;
}

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
