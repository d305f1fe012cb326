/* SPDX-License-Identifier: Apache-2.0 */
/* Netlink messages and sockets; see netlink.h. */
#include "config.h"
#include "netlink.h"
#include "cleanup.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Large enough for a dump's batch of answers. */
#define RECV_BUFFER 32768

void
ar_nl_buf_free (ar_nl_buf *b)
{
  free (b->data);
  *b = (ar_nl_buf){ 0 };
}

/* `len` more bytes, aligned and zeroed, at the end of the open message. */
static void *
grow (ar_nl_buf *b, size_t len)
{
  size_t aligned = NLMSG_ALIGN (len);
  if (b->cap - b->len < aligned)
    {
      b->cap = (b->cap + aligned) * 2 + 4096;
      b->data = xrealloc (b->data, b->cap);
    }
  void *p = b->data + b->len;
  memset (p, 0, aligned);
  b->len += aligned;
  ar_nl_current (b)->nlmsg_len = (uint32_t) (b->len - b->msg);
  return p;
}

struct nlmsghdr *
ar_nl_current (ar_nl_buf *b)
{
  return (struct nlmsghdr *) (b->data + b->msg);
}

void
ar_nl_msg (ar_nl_buf *b, uint16_t type, uint16_t flags, uint32_t seq)
{
  /* The header is written at once, so grow() can fill in its length. */
  if (b->cap - b->len < NLMSG_HDRLEN)
    {
      b->cap = b->cap * 2 + 4096;
      b->data = xrealloc (b->data, b->cap);
    }
  b->msg = b->len;
  struct nlmsghdr *nlh = ar_nl_current (b);
  *nlh = (struct nlmsghdr){ .nlmsg_len = NLMSG_HDRLEN,
                            .nlmsg_type = type,
                            .nlmsg_flags = (uint16_t) (NLM_F_REQUEST | flags),
                            .nlmsg_seq = seq };
  b->len += NLMSG_HDRLEN;
}

void
ar_nl_put (ar_nl_buf *b, const void *data, size_t len)
{
  memcpy (grow (b, len), data, len);
}

void
ar_nl_attr (ar_nl_buf *b, uint16_t type, const void *data, size_t len)
{
  struct nlattr *a = grow (b, NLA_HDRLEN + len);
  a->nla_type = type;
  a->nla_len = (uint16_t) (NLA_HDRLEN + len);
  if (len)
    memcpy ((uint8_t *) a + NLA_HDRLEN, data, len);
}

void
ar_nl_attr_str (ar_nl_buf *b, uint16_t type, const char *s)
{
  ar_nl_attr (b, type, s, strlen (s) + 1);
}

void
ar_nl_attr_u8 (ar_nl_buf *b, uint16_t type, uint8_t v)
{
  ar_nl_attr (b, type, &v, sizeof v);
}

void
ar_nl_attr_u32 (ar_nl_buf *b, uint16_t type, uint32_t v)
{
  ar_nl_attr (b, type, &v, sizeof v);
}

void
ar_nl_attr_be16 (ar_nl_buf *b, uint16_t type, uint16_t v)
{
  uint16_t be = htobe16 (v);
  ar_nl_attr (b, type, &be, sizeof be);
}

void
ar_nl_attr_be32 (ar_nl_buf *b, uint16_t type, uint32_t v)
{
  uint32_t be = htobe32 (v);
  ar_nl_attr (b, type, &be, sizeof be);
}

void
ar_nl_attr_be64 (ar_nl_buf *b, uint16_t type, uint64_t v)
{
  uint64_t be = htobe64 (v);
  ar_nl_attr (b, type, &be, sizeof be);
}

size_t
ar_nl_nest (ar_nl_buf *b, uint16_t type)
{
  size_t start = b->len;
  ar_nl_attr (b, type | NLA_F_NESTED, NULL, 0);
  return start;
}

void
ar_nl_nest_end (ar_nl_buf *b, size_t nest)
{
  struct nlattr *a = (struct nlattr *) (b->data + nest);
  a->nla_len = (uint16_t) (b->len - nest);
}

int
ar_nl_socket (int protocol, ar_error_t **err)
{
  int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  struct sockaddr_nl local = { .nl_family = AF_NETLINK };
  if (fd < 0 || bind (fd, (struct sockaddr *) &local, sizeof local) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      return ar_error_set (err, saved, "open a netlink socket");
    }
  return fd;
}

int
ar_nl_send (int fd, const ar_nl_buf *b, ar_error_t **err)
{
  /* A large batch (a long allow-list) may not fit the default buffers;
   * root may raise them. */
  int size = (int) b->len + 4096;
  if (size > 200000)
    {
      setsockopt (fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
      setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    }
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  if (sendto (fd, b->data, b->len, 0, (struct sockaddr *) &kernel,
              sizeof kernel)
      < 0)
    return ar_error_set (err, errno, "send a netlink request");
  return 0;
}

int
ar_nl_wait_ack (int fd, uint32_t last_seq, uint32_t *failed_seq)
{
  uint8_t buf[RECV_BUFFER] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  for (;;)
    {
      ssize_t n = recv (fd, buf, sizeof buf, 0);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      ar_nl_for_each_msg (nlh, buf, (size_t) n)
      {
        if (nlh->nlmsg_type != NLMSG_ERROR
            || nlh->nlmsg_len < NLMSG_LENGTH (sizeof (struct nlmsgerr)))
          continue;
        const struct nlmsgerr *e = NLMSG_DATA (nlh);
        if (e->error != 0)
          {
            if (failed_seq)
              *failed_seq = nlh->nlmsg_seq;
            return e->error;
          }
        if (nlh->nlmsg_seq == last_seq)
          return 0;
      }
    }
}

void
ar_nl_parse (const struct nlmsghdr *nlh, size_t header_len,
             const struct nlattr **tb, uint16_t max)
{
  memset (tb, 0, (max + 1) * sizeof *tb);
  size_t start = NLMSG_HDRLEN + NLMSG_ALIGN (header_len);
  if (nlh->nlmsg_len < start)
    return;
  const uint8_t *p = (const uint8_t *) nlh + start;
  size_t left = nlh->nlmsg_len - start;
  while (left >= NLA_HDRLEN)
    {
      const struct nlattr *a = (const struct nlattr *) p;
      if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
        return;
      uint16_t type = a->nla_type & NLA_TYPE_MASK;
      if (type <= max)
        tb[type] = a;
      size_t step = NLA_ALIGN (a->nla_len);
      if (step >= left)
        return;
      p += step;
      left -= step;
    }
}
