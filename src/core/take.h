/* SPDX-License-Identifier: Apache-2.0 */
/* Sandboxes made ahead (sandbox --pool): a container created in full
 * whose init, once ready, waits on a listening socket instead of for a
 * start. Whoever takes it connects, sends the command (take_command.h)
 * and its stdio, and from then on is the container's caller as `run` is:
 * it starts it, waits for it (the init reports the command's end on the
 * connection) and deletes it. The init ends the container when the
 * connection drops. */
#ifndef AR_CORE_TAKE_H
#define AR_CORE_TAKE_H

#include "container.h"
#include "take_command.h"
#include "../util/error.h"

/* The filler, once ar_container_create (with await_take) returned: a
 * listening socket at `name` in `dirfd`, handed to the init on `sync_fd`.
 * The socket file stays; the filler may exit. */
int ar_take_offer (int sync_fd, int dirfd, const char *name, ar_error_t **err);

/* The init: wait on `listener` for one taker, then its command and stdio.
 * *conn is the connection (the init reports on it), stdio[i] the fd for
 * the command's fd i. */
int ar_take_await (int listener, ar_take_command *cmd, int stdio[3], int *conn,
                   ar_error_t **err);

/* The taker: connect to a waiting container's init through its socket
 * `name` in `dirfd`. An init that is gone is AR_ERR_PEER_GONE, "its init
 * is gone". */
int ar_take_connect (int dirfd, const char *name, ar_error_t **err);

/* What the launcher (launcher/take.c) did of a take before it executed
 * this runtime, told in AR_TAKE_HANDOVER_ENV (launcher_wire.h) as "ID",
 * "ID SOCK" or "ID SOCK PIDFD POSTSTART": it claimed `id`; with `sock`
 * (>= 0), the connection, it sent the command and this process's stdio;
 * with `pidfd` (>= 0), it read the init's READY (`poststart`: its number
 * of poststart hooks is not 0) and started the command. */
typedef struct
{
  char *id;
  int sock;  /* the taker takes it over (-1 then) */
  bool sent; /* there was one: the command went */
  int pidfd;
  pid_t pid; /* the init's, read from the pidfd */
  bool poststart;
} ar_take_handover;

/* Parse the handover; its fds get FD_CLOEXEC (they were passed across an
 * exec, and must go no further). Bad text, or an fd that is not open as
 * it should be (a socket; a pidfd), is an error naming it. */
int ar_take_handover_parse (const char *text, ar_take_handover *h,
                            ar_error_t **err);
void ar_take_handover_clear (ar_take_handover *h);
#define cleanup_take_handover __attribute__ ((cleanup (ar_take_handover_clear)))

/* A taken container's init, once it has the command: `created` as
 * ar_container_create and ar_container_release leave it for `run` (pid,
 * pidfd, sync_fd: the connection), with `adopted` set (the init is not
 * this process's child); whether the launcher started the command
 * already, and whether the init has poststart hooks. */
typedef struct
{
  ar_created created;
  bool started;
  bool poststart;
} ar_take_ready;

static inline void
ar_take_ready_close (ar_take_ready *ready)
{
  ar_created_close (&ready->created);
}
#define cleanup_take_ready __attribute__ ((cleanup (ar_take_ready_close)))

/* Then hand the init, on the connection `sock` (from here
 * out->created.sync_fd), `cmd` and this process's stdio, and read its
 * READY; what `done` (NULL: nothing) says the launcher did already is not
 * done again. An init gone before its READY (killed while it waited: the
 * connection ended) is AR_ERR_PEER_GONE, "its init is gone": nothing of
 * the command ran, and another container may take it. An init that
 * refuses the command is an error. The caller deletes the container
 * either way. */
int ar_take_hand (int sock, const ar_take_command *cmd,
                  const ar_take_handover *done, ar_take_ready *out,
                  ar_error_t **err);

/* Then start the command in the container `id` of `root` (unless the
 * launcher did), audit it ("take", with `command_line`; "start") and run
 * its poststart hooks; ready->created gets wall_clock_seconds and
 * started_ms. */
int ar_container_take (const char *root, const char *id,
                       const ar_take_command *cmd, char *const *command_line,
                       ar_take_ready *ready, ar_error_t **err);

#endif
