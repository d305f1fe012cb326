/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "fdpass.h"
#include "cleanup.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Room for one fd: a message never carries more. */
typedef union
{
  char buf[CMSG_SPACE (sizeof (int))];
  struct cmsghdr align;
} one_fd_control;

ssize_t
ar_fd_sendmsg (int sock, const void *data, size_t len, int fd)
{
  one_fd_control control;
  memset (&control, 0, sizeof control);
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      mh.msg_control = control.buf;
      mh.msg_controllen = sizeof control.buf;
      struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cm), &fd, sizeof (int));
    }
  ssize_t n;
  do
    n = sendmsg (sock, &mh, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

ssize_t
ar_fd_recvmsg (int sock, void *buf, size_t len, int *fd)
{
  *fd = -1;
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control.buf,
                       .msg_controllen = sizeof control.buf };
  ssize_t n;
  do
    n = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c; c = CMSG_NXTHDR (&mh, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t count = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < count; i++)
        {
          int got;
          memcpy (&got, CMSG_DATA (c) + i * sizeof (int), sizeof got);
          if (*fd < 0)
            *fd = got;
          else
            close (got);
        }
    }
  return n;
}

/* Send `fd` with `payload` as the data over the connected stream socket
 * `sock`; at least one byte goes along, or the peer may not see the
 * message. A payload longer than one sendmsg follows as plain data. */
static int
fd_send (int sock, int fd, const char *payload, ar_error_t **err)
{
  size_t len = payload && *payload ? strlen (payload) : 1;
  const char *data = payload && *payload ? payload : "\0";
  ssize_t n = ar_fd_sendmsg (sock, data, len, fd);
  if (n < 0)
    return ar_error_set (err, errno, "send fd");
  /* The fd went with the first bytes; the rest is plain stream data. */
  if ((size_t) n < len && ar_write_all (sock, data + n, len - (size_t) n) < 0)
    return ar_error_set (err, errno, "send fd: the data after the fd");
  return 0;
}

int
ar_fd_send_to_path (const char *path, int fd, const char *payload,
                    ar_error_t **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return ar_error_set (err, ENAMETOOLONG, "socket `%s`", path);
  strcpy (addr.sun_path, path);
  cleanup_close int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ar_error_set (err, errno, "socket");
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_error_set (err, errno, "connect to `%s`", path);
  if (fd_send (sock, fd, payload, err) < 0)
    return ar_error_prefix (err, "`%s`", path);
  return 0;
}

/* A socket of `type` and the address of `name` in `dirfd`. */
static int
socket_at (int dirfd, const char *name, int type, struct sockaddr_un *addr,
           ar_error_t **err)
{
  *addr = (struct sockaddr_un){ .sun_family = AF_UNIX };
  int n = snprintf (addr->sun_path, sizeof addr->sun_path,
                    "/proc/self/fd/%d/%s", dirfd, name);
  if (n < 0 || (size_t) n >= sizeof addr->sun_path)
    return ar_error_set (err, ENAMETOOLONG, "socket `%s`", name);
  int sock = socket (AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ar_error_set (err, errno, "socket");
  return sock;
}

int
ar_socket_listen_at (int dirfd, const char *name, int type, int backlog,
                     ar_error_t **err)
{
  /* Bound aside and renamed into place once it listens: a peer that finds
   * `name` (inotify, a listing) and connects at once is never refused. */
  cleanup_free char *aside = xasprintf (".new-%s", name);
  struct sockaddr_un addr;
  cleanup_close int sock = socket_at (dirfd, aside, type, &addr, err);
  if (sock < 0)
    return -1;
  unlinkat (dirfd, aside, 0);
  if (bind (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_error_set (err, errno, "bind socket `%s`", name);
  int r = listen (sock, backlog);
  if (r < 0)
    ar_error_set (err, errno, "listen on socket `%s`", name);
  else if ((r = renameat2 (dirfd, aside, dirfd, name, RENAME_NOREPLACE)) < 0)
    ar_error_set (err, errno, "socket `%s`", name);
  if (r < 0)
    {
      unlinkat (dirfd, aside, 0);
      return -1;
    }
  return steal_fd (&sock);
}

int
ar_seqpacket_listen_at (int dirfd, const char *name, ar_error_t **err)
{
  return ar_socket_listen_at (dirfd, name, SOCK_SEQPACKET, 1, err);
}

int
ar_seqpacket_connect_at (int dirfd, const char *name, ar_error_t **err)
{
  struct sockaddr_un addr;
  cleanup_close int sock = socket_at (dirfd, name, SOCK_SEQPACKET, &addr, err);
  if (sock < 0)
    return -1;
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_error_set (err, errno, "connect to socket `%s`", name);
  return steal_fd (&sock);
}
