#include "config.h"
#include "sync.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#define SYNC_TEXT_MAX 4096

struct wire
{
  int type;
  int value;
  char text[SYNC_TEXT_MAX]; /* NUL-terminated; empty when none */
};

int
ar_sync_pair (int fds[2], ar_error_t **err)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    return ar_error_set (err, errno, "socketpair");
  return 0;
}

int
ar_sync_send (int sock, ar_sync_type type, int value, int fd,
              const char *text, ar_error_t **err)
{
  struct wire w = { .type = type, .value = value };
  size_t text_len = 0;
  if (text)
    {
      text_len = strnlen (text, SYNC_TEXT_MAX - 1);
      memcpy (w.text, text, text_len);
    }
  struct iovec iov
      = { .iov_base = &w, .iov_len = offsetof (struct wire, text) + text_len + 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      memset (&control, 0, sizeof control);
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof control.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof fd);
    }
  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ar_error_set (err, errno, "sync: send");
  return 0;
}

int
ar_sync_recv (int sock, ar_sync_msg *out, ar_error_t **err)
{
  struct wire w;
  struct iovec iov = { .iov_base = &w, .iov_len = sizeof w };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ar_error_set (err, errno, "sync: receive");
  if (n == 0)
    return ar_error_set (err, 0, "container init exited during setup");
  if ((size_t) n < offsetof (struct wire, text) + 1)
    return ar_error_set (err, 0, "sync: short message");

  out->type = w.type;
  out->value = w.value;
  out->fd = -1;
  out->text = NULL;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&out->fd, CMSG_DATA (c), sizeof (int));
  w.text[SYNC_TEXT_MAX - 1] = '\0';
  if (w.text[0])
    out->text = xstrdup (w.text);
  return 0;
}

int
ar_sync_expect (int sock, ar_sync_type type, ar_sync_msg *msg,
                ar_error_t **err)
{
  if (ar_sync_recv (sock, msg, err) < 0)
    return -1;
  if (msg->type == AR_SYNC_ERROR)
    {
      cleanup_free char *text = msg->text;
      msg->text = NULL;
      return ar_error_set (err, 0, "%s", text ? text : "unknown error");
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
