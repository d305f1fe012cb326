/* SPDX-License-Identifier: Apache-2.0 */
/* core/sync: a peer that went (it closed its end, or was killed while the
 * connection still waited to be accepted) is AR_ERR_PEER_GONE on a
 * receive and a send, which a pool's taker tells from a refusal: it then
 * takes the next sandbox. A message, or the peer's own error, is not. */
#include "config.h"
#include "unit.h"
#include "../../src/core/sync.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fdpass.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static char top[] = "/tmp/agentrun-unit-sync.XXXXXX";

static void
test_closed_peer (void)
{
  int fds[2];
  cleanup_error ar_error_t *e = NULL;
  CHECK (ar_sync_pair (fds, &e) == 0);
  cleanup_close int mine = fds[0];
  close (fds[1]);
  ar_sync_msg msg;
  CHECK (ar_sync_recv (mine, &msg, &e) < 0);
  CHECK (ar_error_is (e, AR_ERR_PEER_GONE));
  CHECK_STR (ar_error_text (e), "container init exited during setup");
  ar_error_freep (&e);
  CHECK (ar_sync_send (mine, AR_SYNC_START, 0, -1, NULL, &e) < 0);
  CHECK (ar_error_is (e, AR_ERR_PEER_GONE));
  CHECK_INT (e ? e->errno_value : 0, EPIPE);
}

/* The pool's case: the taker connected and sent, the init (the listener's
 * owner) was killed before it accepted. */
static void
test_listener_gone_with_connection_queued (void)
{
  cleanup_error ar_error_t *e = NULL;
  cleanup_close int dir = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int listener = ar_seqpacket_listen_at (dir, "init", &e);
  CHECK (listener >= 0);
  cleanup_close int taker = ar_seqpacket_connect_at (dir, "init", &e);
  CHECK (taker >= 0);
  CHECK (ar_sync_send (taker, AR_SYNC_COMMAND, 0, -1, NULL, &e) == 0);
  close (listener);
  ar_sync_msg msg;
  CHECK (ar_sync_recv (taker, &msg, &e) < 0);
  CHECK (ar_error_is (e, AR_ERR_PEER_GONE));
  CHECK_INT (e ? e->errno_value : 0, ECONNRESET);
  ar_error_freep (&e);
  /* The reset is said once; after it the connection is at its end. */
  CHECK (ar_sync_recv (taker, &msg, &e) < 0);
  CHECK (ar_error_is (e, AR_ERR_PEER_GONE));
  unlinkat (dir, "init", 0);
}

static void
test_message_and_peer_error_are_not_gone (void)
{
  int fds[2];
  cleanup_error ar_error_t *e = NULL;
  CHECK (ar_sync_pair (fds, &e) == 0);
  cleanup_close int mine = fds[0];
  cleanup_close int peer = fds[1];
  CHECK (ar_sync_send (peer, AR_SYNC_READY, 42, -1, "0", &e) == 0);
  ar_sync_msg msg = { 0 };
  CHECK (ar_sync_expect (mine, AR_SYNC_READY, &msg, &e) == 0);
  CHECK_INT (msg.value, 42);
  free (msg.text);
  CHECK (ar_sync_send (peer, AR_SYNC_ERROR, 0, -1, "exec `nope`: not found", &e)
         == 0);
  CHECK (ar_sync_expect (mine, AR_SYNC_READY, &msg, &e) < 0);
  CHECK (e != NULL && !ar_error_is (e, AR_ERR_PEER_GONE));
  CHECK_STR (ar_error_text (e), "exec `nope`: not found");
}

int
main (void)
{
  if (!mkdtemp (top))
    return 1;
  RUN (test_closed_peer);
  RUN (test_listener_gone_with_connection_queued);
  RUN (test_message_and_peer_error_are_not_gone);
  rmdir (top);
  return unit_finish ();
}
