/* Refused connections, as the container's filter reports them: its refuse
 * chain sends the first bytes of each refused packet to NFLOG group
 * EGRESS_NFLOG_GROUP (rate-limited in the rule), which is per netns. The
 * resolver reads them from a socket made in the container's netns and
 * writes one audit line each. Spoken with libmnl, as rtnetlink is. */
#include "config.h"
#include "egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
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

static struct nlmsghdr *
config_request (char *buf, uint8_t family, uint16_t group)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = (uint32_t) time (NULL);
  struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header (nlh, sizeof *nfg);
  nfg->nfgen_family = family;
  nfg->version = NFNETLINK_V0;
  nfg->res_id = htons (group);
  return nlh;
}

static int
config_send (int fd, struct nlmsghdr *nlh)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  if (sendto (fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return -1;
  ssize_t n = recv (fd, buf, sizeof buf, 0);
  if (n < 0)
    return -1;
  return mnl_cb_run (buf, (size_t) n, nlh->nlmsg_seq, 0, NULL, NULL) < 0 ? -1 : 0;
}

int
egress_nflog_open (int *fd, ar_error_t **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct sockaddr_nl local = { .nl_family = AF_NETLINK };
  *fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (*fd < 0 || bind (*fd, (struct sockaddr *) &local, sizeof local) < 0)
    goto fail;
  struct nlmsghdr *nlh = config_request (buf, AF_UNSPEC, EGRESS_NFLOG_GROUP);
  struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
  mnl_attr_put (nlh, NFULA_CFG_CMD, sizeof cmd, &cmd);
  if (config_send (*fd, nlh) < 0)
    goto fail;
  nlh = config_request (buf, AF_UNSPEC, EGRESS_NFLOG_GROUP);
  struct nfulnl_msg_config_mode mode = { .copy_range = htonl (COPY_BYTES),
                                         .copy_mode = NFULNL_COPY_PACKET };
  mnl_attr_put (nlh, NFULA_CFG_MODE, sizeof mode, &mode);
  /* Each packet at once: by default the kernel batches up to 100 of them
   * or a second, and a container that exits sooner takes them along. */
  mnl_attr_put_u32 (nlh, NFULA_CFG_QTHRESH, htonl (1));
  if (config_send (*fd, nlh) < 0)
    goto fail;
  return 0;
fail:;
  int saved = errno;
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
  return ar_error_set (err, saved, "nflog group %d", EGRESS_NFLOG_GROUP);
}

static const char *
proto_name (int proto)
{
  switch (proto)
    {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return "other";
    }
}

/* Destination, protocol and port of an IPv4 or IPv6 packet's start. */
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
      inet_ntop (AF_INET, p + 16, out->addr, sizeof out->addr);
      l4 = p + ihl;
      l4_len = len - ihl;
    }
  else if (len >= sizeof (struct ip6_hdr) && (p[0] >> 4) == 6)
    {
      out->proto = p[6]; /* extension headers are not followed */
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

typedef struct
{
  egress_refusal_fn fn;
  void *data;
} walk_ctx;

static int
attr_cb (const struct nlattr *attr, void *data)
{
  const struct nlattr **tb = data;
  int type = mnl_attr_get_type (attr);
  if (mnl_attr_type_valid (attr, NFULA_MAX) >= 0)
    tb[type] = attr;
  return MNL_CB_OK;
}

static int
packet_cb (const struct nlmsghdr *nlh, void *data)
{
  walk_ctx *w = data;
  const struct nlattr *tb[NFULA_MAX + 1] = { 0 };
  mnl_attr_parse (nlh, sizeof (struct nfgenmsg), attr_cb, tb);
  egress_refusal r;
  if (tb[NFULA_PAYLOAD]
      && parse_packet (mnl_attr_get_payload (tb[NFULA_PAYLOAD]),
                       mnl_attr_get_payload_len (tb[NFULA_PAYLOAD]), &r))
    w->fn (&r, w->data);
  return MNL_CB_OK;
}

bool
egress_nflog_read (int fd, egress_refusal_fn fn, void *data)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  ssize_t n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n <= 0)
    return false;
  walk_ctx w = { fn, data };
  mnl_cb_run (buf, (size_t) n, 0, 0, packet_cb, &w);
  return true;
}
