/* SPDX-License-Identifier: Apache-2.0 */
/* Netlink messages, built in a growing buffer and sent over a raw socket.
 * rtnetlink and nfnetlink (nftables, NFLOG) need no more than this, and
 * no library means nothing more for the dynamic loader on a container's
 * start. Offsets, not pointers, mark the open message and nests, so the
 * buffer may move as it grows. */
#ifndef AR_UTIL_NETLINK_H
#define AR_UTIL_NETLINK_H

#include "error.h"

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct
{
  uint8_t *data;
  size_t len, cap;
  size_t msg; /* offset of the message being built */
} ar_nl_buf;

void ar_nl_buf_free (ar_nl_buf *b);
#define cleanup_nl_buf __attribute__ ((cleanup (ar_nl_buf_free)))

/* Start a message (NLM_F_REQUEST is added); the puts below extend it. */
void ar_nl_msg (ar_nl_buf *b, uint16_t type, uint16_t flags, uint32_t seq);
/* The open message's header; valid until the next put. */
struct nlmsghdr *ar_nl_current (ar_nl_buf *b);
/* A family header (ifinfomsg, nfgenmsg…), aligned. */
void ar_nl_put (ar_nl_buf *b, const void *data, size_t len);

void ar_nl_attr (ar_nl_buf *b, uint16_t type, const void *data, size_t len);
void ar_nl_attr_str (ar_nl_buf *b, uint16_t type, const char *s);
void ar_nl_attr_u8 (ar_nl_buf *b, uint16_t type, uint8_t v);
void ar_nl_attr_u32 (ar_nl_buf *b, uint16_t type, uint32_t v);
/* Network byte order, as nfnetlink wants its integers. */
void ar_nl_attr_be16 (ar_nl_buf *b, uint16_t type, uint16_t v);
void ar_nl_attr_be32 (ar_nl_buf *b, uint16_t type, uint32_t v);
void ar_nl_attr_be64 (ar_nl_buf *b, uint16_t type, uint64_t v);
/* A nested attribute: everything put until ar_nl_nest_end is inside. */
size_t ar_nl_nest (ar_nl_buf *b, uint16_t type);
void ar_nl_nest_end (ar_nl_buf *b, size_t nest);

/* A netlink socket of `protocol` in the current netns. */
int ar_nl_socket (int protocol, ar_error_t **err);
/* Send the whole buffer (all its messages) in one datagram. */
int ar_nl_send (int fd, const ar_nl_buf *b, ar_error_t **err);
/* Read answers until `last_seq` is acknowledged (0) or a message fails
 * (-errno, its sequence number in *failed_seq). */
int ar_nl_wait_ack (int fd, uint32_t last_seq, uint32_t *failed_seq);

/* Each message of a received datagram of `len` bytes. */
static inline bool
ar_nl_msg_ok (const struct nlmsghdr *nlh, const void *buf, size_t len)
{
  size_t off = (size_t) ((const uint8_t *) nlh - (const uint8_t *) buf);
  return off + sizeof *nlh <= len && nlh->nlmsg_len >= sizeof *nlh
         && off + nlh->nlmsg_len <= len;
}
#define ar_nl_for_each_msg(nlh, buf, len)                                      \
  for (const struct nlmsghdr *nlh = (const struct nlmsghdr *) (buf);           \
       ar_nl_msg_ok (nlh, (buf), (len));                                       \
       nlh = (const struct nlmsghdr *) ((const uint8_t *) nlh                  \
                                        + NLMSG_ALIGN (nlh->nlmsg_len)))

/* Attributes of a received message, after its family header of
 * `header_len` bytes: tb[type] for every type up to max. */
void ar_nl_parse (const struct nlmsghdr *nlh, size_t header_len,
                  const struct nlattr **tb, uint16_t max);
static inline const void *
ar_nl_attr_data (const struct nlattr *a)
{
  return (const uint8_t *) a + NLA_HDRLEN;
}
static inline size_t
ar_nl_attr_len (const struct nlattr *a)
{
  return a->nla_len - NLA_HDRLEN;
}

#endif
