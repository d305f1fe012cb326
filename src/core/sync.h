/* SPDX-License-Identifier: Apache-2.0 */
/* The parent <-> container-init channel during create: a SOCK_SEQPACKET
 * pair carrying small typed messages, optionally with one fd. */
#ifndef AR_CORE_SYNC_H
#define AR_CORE_SYNC_H

#include "../util/error.h"

typedef enum
{
  AR_SYNC_GO = 1,       /* parent: maps written, cgroup joined; carries the
                         init's host pid in `value` */
  AR_SYNC_HOOKS,        /* init: mounts ready, run prestart/createRuntime */
  AR_SYNC_HOOKS_DONE,   /* parent: hooks ran */
  AR_SYNC_PTY,          /* init: the pty master, as the attached fd */
  AR_SYNC_READY,        /* init: set up, waiting to be started; to a taker
                         (take.h): its host pid in `value`, the number of
                         poststart hooks in `text` */
  AR_SYNC_START,        /* parent (run): exec now, no fifo involved */
  AR_SYNC_SECCOMP,      /* child: the seccomp listener fd, for listenerPath */
  AR_SYNC_SECCOMP_DONE, /* parent: the listener has it */
  AR_SYNC_ERROR,        /* either side: text is a one-line error */
  AR_SYNC_EXIT,         /* init as reaper (reaper.h): the command's wait
                         status in `value`, just before the init exits */
  AR_SYNC_EXIT_SEEN,    /* parent: the cgroup is read, the init may go */
  AR_SYNC_TAKE,         /* parent (a pool's filler): instead of a start,
                         the listening socket to wait on (take.h) */
  AR_SYNC_COMMAND,      /* taker: a memfd holding the command */
  AR_SYNC_STDIO,        /* taker: the fd to become the command's fd `value` */
} ar_sync_type;

typedef struct
{
  ar_sync_type type;
  int value;
  int fd;     /* -1 unless an fd came along */
  char *text; /* NULL unless text came along; caller frees */
} ar_sync_msg;

int ar_sync_pair (int fds[2], ar_error_t **err);

/* A peer that closed its end (it died) fails a send or receive with
 * AR_ERR_PEER_GONE: callers that can go on without it test for that. */
int ar_sync_send (int sock, ar_sync_type type, int value, int fd,
                  const char *text, ar_error_t **err);

/* An error for the peer: its text, and its code (ar_error_code) as the
 * message's value, so a command that could not run stays one. */
int ar_sync_send_error (int sock, const ar_error_t *e);
/* The peer's AR_SYNC_ERROR `msg` as *err, with its code (`fallback` when
 * it came without text); -1. */
int
ar_sync_error (const ar_sync_msg *msg, const char *fallback, ar_error_t **err);

/* Receive the next message; EOF is an error. */
int ar_sync_recv (int sock, ar_sync_msg *msg, ar_error_t **err);

/* Receive and require `type`; an AR_SYNC_ERROR from the peer becomes *err
 * with the peer's text. */
int ar_sync_expect (int sock, ar_sync_type type, ar_sync_msg *msg,
                    ar_error_t **err);

#endif
