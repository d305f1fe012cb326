/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sync.h"
#include "launcher_wire.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SYNC_TEXT_MAX AR_TAKE_WIRE_TEXT_MAX

/* The launcher takes from a pool with these numbers (launcher_wire.h). */
_Static_assert(AR_SYNC_READY == AR_TAKE_WIRE_READY
                   && AR_SYNC_START == AR_TAKE_WIRE_START
                   && AR_SYNC_ERROR == AR_TAKE_WIRE_ERROR
                   && AR_SYNC_COMMAND == AR_TAKE_WIRE_COMMAND
                   && AR_SYNC_STDIO == AR_TAKE_WIRE_STDIO,
               "sync.h's take messages and launcher_wire.h agree");

struct wire
{
  int type;
  int value;
  char text[SYNC_TEXT_MAX]; /* NUL-terminated; empty when none */
};

/* A send or receive that failed because the other end closed (a reset
 * when it closed with a message unread, a broken pipe) says so. */
static ar_error_code
peer_gone (int errno_value)
{
  return errno_value == ECONNRESET || errno_value == EPIPE ? AR_ERR_PEER_GONE
                                                           : AR_ERR_FAILED;
}

int
ar_sync_pair (int fds[2], ar_error_t **err)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    return ar_error_set (err, errno, "socketpair");
  return 0;
}

int
ar_sync_send (int sock, ar_sync_type type, int value, int fd, const char *text,
              ar_error_t **err)
{
  struct wire w = { .type = type, .value = value };
  size_t text_len = 0;
  if (text)
    {
      text_len = strnlen (text, SYNC_TEXT_MAX - 1);
      memcpy (w.text, text, text_len);
    }
  size_t len = offsetof (struct wire, text) + text_len + 1;
  if (ar_fd_sendmsg (sock, &w, len, fd) < 0)
    return ar_error_set_code (err, peer_gone (errno), errno, "sync: send");
  return 0;
}

int
ar_sync_recv (int sock, ar_sync_msg *out, ar_error_t **err)
{
  struct wire w;
  int received;
  ssize_t n = ar_fd_recvmsg (sock, &w, sizeof w, &received);
  if (n < 0)
    return ar_error_set_code (err, peer_gone (errno), errno, "sync: receive");
  cleanup_close int fd = received;
  if (n == 0)
    return ar_error_set_code (err, AR_ERR_PEER_GONE, 0,
                              "container init exited during setup");
  if ((size_t) n < offsetof (struct wire, text) + 1)
    return ar_error_set (err, 0, "sync: short message");

  out->type = w.type;
  out->value = w.value;
  out->fd = steal_fd (&fd);
  out->text = NULL;
  w.text[SYNC_TEXT_MAX - 1] = '\0';
  if (w.text[0])
    out->text = xstrdup (w.text);
  return 0;
}

int
ar_sync_send_error (int sock, const ar_error_t *e)
{
  return ar_sync_send (sock, AR_SYNC_ERROR, (int) e->code, -1,
                       ar_error_text (e), NULL);
}

int
ar_sync_error (const ar_sync_msg *msg, const char *fallback, ar_error_t **err)
{
  ar_error_code code
      = msg->value > 0 ? (ar_error_code) msg->value : AR_ERR_FAILED;
  return ar_error_set_code (err, code, 0, "%s",
                            msg->text ? msg->text : fallback);
}

int
ar_sync_expect (int sock, ar_sync_type type, ar_sync_msg *msg, ar_error_t **err)
{
  if (ar_sync_recv (sock, msg, err) < 0)
    return -1;
  if (msg->type == AR_SYNC_ERROR)
    {
      ar_sync_error (msg, "unknown error", err);
      free (msg->text);
      msg->text = NULL;
      return -1;
    }
  if ((int) msg->type != (int) type)
    {
      free (msg->text);
      msg->text = NULL;
      if (msg->fd >= 0)
        close (msg->fd);
      return ar_error_set (err, 0, "sync: expected message %d, got %d",
                           (int) type, (int) msg->type);
    }
  return 0;
}
