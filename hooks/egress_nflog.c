/* SPDX-License-Identifier: Apache-2.0 */
/* Refused connections, as the container's filter reports them: its refuse
 * chain sends the first bytes of each refused packet to NFLOG group
 * EGRESS_NFLOG_GROUP (rate-limited in the rule), which is per netns. The
 * resolver reads them from a socket made in the container's netns and
 * writes one audit line each. Spoken directly, as rtnetlink is. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

/* IP header and the ports: all a log line needs. */
#define COPY_BYTES 80

static void
config_request (ar_nl_buf *req, uint16_t group)
{
  ar_nl_msg (req, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG, NLM_F_ACK,
             (uint32_t) (req->len + 1));
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC,
                          .version = NFNETLINK_V0,
                          .res_id = htons (group) };
  ar_nl_put (req, &nfg, sizeof nfg);
}

/* Bind the group, then ask for each packet's first bytes, at once: by
 * default the kernel batches up to 100 of them or a second, and a
 * container that exits sooner takes them along. Two messages, one
 * datagram; the second's ack settles both. */
int
egress_nflog_open (uint16_t group, int *fd, ar_error_t **err)
{
  cleanup_nl_buf ar_nl_buf req = { 0 };
  config_request (&req, group);
  struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
  ar_nl_attr (&req, NFULA_CFG_CMD, &cmd, sizeof cmd);
  config_request (&req, group);
  struct nfulnl_msg_config_mode mode
      = { .copy_range = htonl (COPY_BYTES), .copy_mode = NFULNL_COPY_PACKET };
  ar_nl_attr (&req, NFULA_CFG_MODE, &mode, sizeof mode);
  ar_nl_attr_be32 (&req, NFULA_CFG_QTHRESH, 1);
  cleanup_close int sock = ar_nl_socket (NETLINK_NETFILTER, err);
  if (sock < 0 || ar_nl_send (sock, &req, err) < 0)
    return ar_error_prefix (err, "nflog group %u", group);
  int r = ar_nl_wait_ack (sock, ar_nl_current (&req)->nlmsg_seq, NULL);
  if (r < 0)
    return ar_error_set (err, -r, "nflog group %u", group);
  *fd = steal_fd (&sock);
  return 0;
}

static const char *
proto_name (int proto)
{
  switch (proto)
    {
    case IPPROTO_TCP:
      return "tcp";
    case IPPROTO_UDP:
      return "udp";
    case IPPROTO_ICMP:
      return "icmp";
    case IPPROTO_ICMPV6:
      return "icmpv6";
    default:
      return "other";
    }
}

/* Addresses, protocol and destination port of an IPv4 or IPv6 packet's
 * start. */
static bool
parse_packet (const unsigned char *p, size_t len, egress_refusal *out)
{
  const unsigned char *l4;
  size_t l4_len;
  if (len >= sizeof (struct ip) && (p[0] >> 4) == 4)
    {
      size_t ihl = (size_t) (p[0] & 0x0f) * 4;
      if (ihl < 20 || ihl > len)
        return false;
      out->proto = p[9];
      inet_ntop (AF_INET, p + 12, out->source, sizeof out->source);
      inet_ntop (AF_INET, p + 16, out->addr, sizeof out->addr);
      l4 = p + ihl;
      l4_len = len - ihl;
    }
  else if (len >= sizeof (struct ip6_hdr) && (p[0] >> 4) == 6)
    {
      out->proto = p[6]; /* extension headers are not followed */
      inet_ntop (AF_INET6, p + 8, out->source, sizeof out->source);
      inet_ntop (AF_INET6, p + 24, out->addr, sizeof out->addr);
      l4 = p + 40;
      l4_len = len - 40;
    }
  else
    return false;
  out->port = 0;
  if ((out->proto == IPPROTO_TCP || out->proto == IPPROTO_UDP) && l4_len >= 4)
    out->port = (uint16_t) (l4[2] << 8 | l4[3]);
  out->proto_name = proto_name (out->proto);
  return true;
}

bool
egress_nflog_read (int fd, egress_refusal_fn fn, void *data)
{
  uint8_t buf[16384] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  ssize_t n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n <= 0)
    return false;
  ar_nl_for_each_msg (nlh, buf, (size_t) n)
  {
    const struct nlattr *tb[NFULA_MAX + 1];
    ar_nl_parse (nlh, sizeof (struct nfgenmsg), tb, NFULA_MAX);
    egress_refusal r;
    if (tb[NFULA_PAYLOAD] == NULL
        || !parse_packet (ar_nl_attr_data (tb[NFULA_PAYLOAD]),
                          ar_nl_attr_len (tb[NFULA_PAYLOAD]), &r))
      continue;
    const struct nlattr *prefix = tb[NFULA_PREFIX];
    r.inbound = prefix != NULL
                && ar_nl_attr_len (prefix) >= sizeof EGRESS_NFLOG_INBOUND
                && memcmp (ar_nl_attr_data (prefix), EGRESS_NFLOG_INBOUND,
                           sizeof EGRESS_NFLOG_INBOUND)
                       == 0;
    fn (&r, data);
  }
  return true;
}
