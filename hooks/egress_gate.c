/* SPDX-License-Identifier: Apache-2.0 */
/* The name gate over nfnetlink_queue; see egress_gate.h. Spoken directly,
 * as NFLOG is (egress_nflog.c): bind, read packets, send verdicts. */
#include "config.h"
#include "egress_gate.h"
#include "peek_name.h"
#include "../src/util/bytes.h"
#include "../src/util/cleanup.h"
#include "../src/util/netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A packet is copied whole (a GSO one can hold a whole ClientHello). */
#define COPY_BYTES 0xffff
#define RECV_BYTES (COPY_BYTES + 4096)
/* A burst of connections (npm opens a dozen at once) in one turn. */
#define PACKETS_PER_RUN 64
#define SOCKET_BUFFER (4 * 1024 * 1024)
#define TEXT(x) #x
#define TEXT_OF(x) TEXT (x)
#define SECONDS_TEXT TEXT_OF (EGRESS_GATE_HELLO_SECONDS)

typedef struct
{
  int family;
  uint8_t src[16], dst[16];
  uint16_t sport, dport;
} flow_key;

/* A TCP segment of a queued packet. */
typedef struct
{
  flow_key key;
  uint32_t seq;
  const uint8_t *data;
  size_t len;
} segment;

/* A connection whose first data is held until it says its name. */
typedef struct flow flow;
struct flow
{
  flow *next;
  flow_key key;
  uint32_t first_seq; /* of its first data byte */
  uint8_t data[PEEK_BYTES_MAX];
  size_t len;
  uint32_t *held; /* packet ids, in the order they came */
  size_t n_held;
  time_t deadline;
};

struct egress_gate
{
  int fd;
  int raw[2]; /* IPv4, IPv6 */
  uint16_t queue;
  flow *flows;
  size_t n_flows;
  ar_nl_buf verdicts; /* sent once a run */
  uint8_t *buf;
  egress_gate_allows allows;
  egress_gate_refused refused;
  void *data;
};

/* ---- the queue -------------------------------------------------------- */

static void
config_request (ar_nl_buf *req, uint16_t queue, uint32_t seq)
{
  ar_nl_msg (req, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_CONFIG, NLM_F_ACK, seq);
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC,
                          .version = NFNETLINK_V0,
                          .res_id = htons (queue) };
  ar_nl_put (req, &nfg, sizeof nfg);
}

/* Bind `queue` (-EBUSY: another socket has it), then ask for whole
 * packets, GSO ones unsegmented. One at a time: an error of the first
 * must not be read as the second's. */
static int
bind_queue (int sock, uint16_t queue)
{
  cleanup_nl_buf ar_nl_buf bind = { 0 };
  config_request (&bind, queue, 1);
  struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND };
  ar_nl_attr (&bind, NFQA_CFG_CMD, &cmd, sizeof cmd);
  cleanup_nl_buf ar_nl_buf params = { 0 };
  config_request (&params, queue, 2);
  struct nfqnl_msg_config_params p
      = { .copy_range = htonl (COPY_BYTES), .copy_mode = NFQNL_COPY_PACKET };
  ar_nl_attr (&params, NFQA_CFG_PARAMS, &p, sizeof p);
  ar_nl_attr_be32 (&params, NFQA_CFG_FLAGS, NFQA_CFG_F_GSO);
  ar_nl_attr_be32 (&params, NFQA_CFG_MASK, NFQA_CFG_F_GSO);
  int r;
  if (ar_nl_send (sock, &bind, NULL) < 0)
    return -errno;
  if ((r = ar_nl_wait_ack (sock, 1, NULL)) < 0)
    return r;
  if (ar_nl_send (sock, &params, NULL) < 0)
    return -errno;
  return ar_nl_wait_ack (sock, 2, NULL);
}

/* A raw socket that writes whole packets (IPPROTO_RAW: the IP header
 * too), marked as the gate's. */
static int
open_raw (int family, int *fd)
{
  uint32_t mark = EGRESS_GATE_RESET;
  *fd = socket (family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
  if (*fd < 0)
    return family == AF_INET6 && errno == EAFNOSUPPORT ? 0 : -1;
  return setsockopt (*fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark);
}

int
egress_gate_open (int fds[EGRESS_GATE_FDS], uint16_t *queue, ar_error_t **err)
{
  cleanup_close int raw4 = -1;
  cleanup_close int raw6 = -1;
  if (open_raw (AF_INET, &raw4) < 0 || open_raw (AF_INET6, &raw6) < 0)
    return ar_error_set (err, errno, "name gate: raw socket");
  cleanup_close int sock = ar_nl_socket (NETLINK_NETFILTER, err);
  if (sock < 0)
    return ar_error_prefix (err, "name gate");
  /* Packets wait in the kernel while a lookup is answered; a verdict
   * lost to a full buffer would be a connection that hangs. */
  int size = SOCKET_BUFFER, one = 1;
  setsockopt (sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt (sock, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  int r = -EBUSY;
  for (uint16_t q = EGRESS_GATE_QUEUE_FIRST;
       r == -EBUSY && q < EGRESS_GATE_QUEUE_FIRST + EGRESS_GATE_QUEUES; q++)
    if ((r = bind_queue (sock, q)) == 0)
      *queue = q;
  if (r < 0)
    return ar_error_set (err, -r,
                         "name gate: bind a packet queue (nfnetlink_queue)");
  fds[0] = steal_fd (&sock);
  fds[1] = steal_fd (&raw4);
  fds[2] = steal_fd (&raw6);
  return 0;
}

static void
verdict (egress_gate *g, uint32_t id, uint32_t what, uint32_t mark)
{
  ar_nl_msg (&g->verdicts, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_VERDICT, 0, 0);
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC,
                          .version = NFNETLINK_V0,
                          .res_id = htons (g->queue) };
  ar_nl_put (&g->verdicts, &nfg, sizeof nfg);
  struct nfqnl_msg_verdict_hdr h
      = { .verdict = htonl (what), .id = htonl (id) };
  ar_nl_attr (&g->verdicts, NFQA_VERDICT_HDR, &h, sizeof h);
  if (mark)
    ar_nl_attr_be32 (&g->verdicts, NFQA_MARK, mark);
}

/* Marked and sent through the filter's chain again, which marks the
 * connection by it. */
static void
verdict_mark (egress_gate *g, uint32_t id, uint32_t mark)
{
  verdict (g, id, NF_REPEAT, mark);
}

static void
send_verdicts (egress_gate *g)
{
  /* To the socket's default peer: the kernel (a unit test's socket pair
   * too). */
  if (g->verdicts.len > 0)
    send (g->fd, g->verdicts.data, g->verdicts.len, 0);
  g->verdicts.len = 0;
}

/* ---- packets ---------------------------------------------------------- */

/* The addresses, ports, sequence number and data of an IPv4 or IPv6 TCP
 * packet (the filter queues only TCP; Linux puts no extension header on
 * its own). A GSO packet's length field may be 0: the copy's length is
 * the packet's then. */
static bool
parse_segment (const uint8_t *p, size_t len, segment *s)
{
  size_t l4, end = len, alen;
  memset (&s->key, 0, sizeof s->key);
  if (len >= 20 && (p[0] >> 4) == 4)
    {
      l4 = (size_t) (p[0] & 0x0f) * 4;
      if (l4 < 20 || p[9] != IPPROTO_TCP)
        return false;
      if (ar_load_be16 (p + 2) != 0 && ar_load_be16 (p + 2) < end)
        end = ar_load_be16 (p + 2);
      s->key.family = AF_INET;
      alen = 4;
      memcpy (s->key.src, p + 12, alen);
      memcpy (s->key.dst, p + 16, alen);
    }
  else if (len >= 40 && (p[0] >> 4) == 6)
    {
      l4 = 40;
      if (p[6] != IPPROTO_TCP)
        return false;
      if (ar_load_be16 (p + 4) != 0 && 40u + ar_load_be16 (p + 4) < end)
        end = 40u + ar_load_be16 (p + 4);
      s->key.family = AF_INET6;
      alen = 16;
      memcpy (s->key.src, p + 8, alen);
      memcpy (s->key.dst, p + 24, alen);
    }
  else
    return false;
  if (l4 + 20 > end)
    return false;
  const uint8_t *tcp = p + l4;
  size_t header = (size_t) (tcp[12] >> 4) * 4;
  if (header < 20 || l4 + header > end)
    return false;
  s->key.sport = ar_load_be16 (tcp);
  s->key.dport = ar_load_be16 (tcp + 2);
  s->seq = ar_load_be32 (tcp + 4);
  s->data = tcp + header;
  s->len = end - l4 - header;
  return true;
}

static flow *
find_flow (egress_gate *g, const flow_key *key)
{
  for (flow *f = g->flows; f; f = f->next)
    if (memcmp (&f->key, key, sizeof *key) == 0)
      return f;
  return NULL;
}

static void
forget (egress_gate *g, flow *f)
{
  for (flow **p = &g->flows; *p; p = &(*p)->next)
    if (*p == f)
      {
        *p = f->next;
        break;
      }
  g->n_flows--;
  free (f->held);
  free (f);
}

/* The one's complement sum of RFC 1071, over the pseudo-header's fields
 * and the TCP header. */
static uint32_t
sum16 (uint32_t sum, const uint8_t *p, size_t len)
{
  for (size_t i = 0; i + 1 < len; i += 2)
    sum += ar_load_be16 (p + i);
  if (len % 2)
    sum += (uint32_t) p[len - 1] << 8;
  return sum;
}

/* A reset to the server as from the client, at the sequence number the
 * server waits for (nothing after the handshake reached it): the server
 * closes its end at once (RFC 5961 3.2) instead of waiting for a hello
 * that will never come. */
static void
reset_server (egress_gate *g, const flow_key *key, uint32_t seq)
{
  bool v6 = key->family == AF_INET6;
  size_t alen = v6 ? 16 : 4, ip = v6 ? 40 : 20;
  uint8_t packet[60] = { 0 };
  uint8_t *tcp = packet + ip;
  ar_store_be16 (tcp, key->sport);
  ar_store_be16 (tcp + 2, key->dport);
  ar_store_be32 (tcp + 4, seq);
  tcp[12] = 5 << 4; /* no options */
  tcp[13] = 0x04;   /* RST */
  uint32_t sum = sum16 (sum16 (0, key->src, alen), key->dst, alen);
  sum = sum16 (sum + IPPROTO_TCP + 20, tcp, 20);
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  ar_store_be16 (tcp + 16, (uint16_t) ~sum);
  struct sockaddr_storage to = { 0 };
  if (v6)
    {
      packet[0] = 0x60;
      ar_store_be16 (packet + 4, 20);
      packet[6] = IPPROTO_TCP;
      packet[7] = 64;
      memcpy (packet + 8, key->src, alen);
      memcpy (packet + 24, key->dst, alen);
      struct sockaddr_in6 *a = (struct sockaddr_in6 *) &to;
      a->sin6_family = AF_INET6;
      memcpy (&a->sin6_addr, key->dst, alen);
    }
  else
    {
      packet[0] = 0x45; /* the kernel fills in its checksum and id */
      ar_store_be16 (packet + 2, 40);
      packet[8] = 64;
      packet[9] = IPPROTO_TCP;
      memcpy (packet + 12, key->src, alen);
      memcpy (packet + 16, key->dst, alen);
      struct sockaddr_in *a = (struct sockaddr_in *) &to;
      a->sin_family = AF_INET;
      memcpy (&a->sin_addr, key->dst, alen);
    }
  int fd = g->raw[v6];
  if (fd >= 0)
    sendto (fd, packet, ip + 20, 0, (struct sockaddr *) &to, sizeof to);
}

static void
refused (egress_gate *g, const flow_key *key, uint32_t seq, const char *name,
         const char *why)
{
  reset_server (g, key, seq);
  char addr[INET6_ADDRSTRLEN];
  inet_ntop (key->family, key->dst, addr, sizeof addr);
  g->refused (g->data, addr, key->dport, name, why);
}

/* The first held packet is answered with a reset (and marks the
 * connection refused); the rest are dropped. */
static void
refuse (egress_gate *g, flow *f, const char *name, const char *why)
{
  for (size_t i = 0; i < f->n_held; i++)
    if (i == 0)
      verdict_mark (g, f->held[i], EGRESS_GATE_REFUSE);
    else
      verdict (g, f->held[i], NF_DROP, 0);
  refused (g, &f->key, f->first_seq, name, why);
  forget (g, f);
}

static void
pass (egress_gate *g, flow *f)
{
  for (size_t i = 0; i < f->n_held; i++)
    verdict_mark (g, f->held[i], EGRESS_GATE_PASS);
  forget (g, f);
}

/* The segment's bytes that follow what the flow has (a retransmission
 * may repeat some, or carry more); a later segment whose start is
 * missing adds nothing until the start comes again. */
static void
append (flow *f, const segment *s)
{
  uint32_t at = s->seq - f->first_seq;
  if (at > f->len)
    return;
  size_t repeated = f->len - at;
  if (s->len <= repeated)
    return;
  size_t take = s->len - repeated;
  if (take > sizeof f->data - f->len)
    take = sizeof f->data - f->len;
  memcpy (f->data + f->len, s->data + repeated, take);
  f->len += take;
}

static void
decide (egress_gate *g, flow *f)
{
  peek_name name;
  cleanup_error ar_error_t *why = NULL;
  switch (peek_name_read (f->data, f->len, &name, &why))
    {
    case PEEK_MORE:
      return;
    case PEEK_REFUSE:
      refuse (g, f, NULL, why ? why->message : "no name");
      return;
    case PEEK_NAME:
      {
        char addr[INET6_ADDRSTRLEN];
        inet_ntop (f->key.family, f->key.dst, addr, sizeof addr);
        if (g->allows (g->data, name.name, addr, f->key.dport))
          pass (g, f);
        else
          refuse (g, f, name.name, "not an allowed name");
        return;
      }
    }
}

static void
on_packet (egress_gate *g, uint32_t id, const uint8_t *p, size_t len)
{
  segment s;
  if (!parse_segment (p, len, &s))
    {
      verdict (g, id, NF_DROP, 0);
      return;
    }
  flow *f = find_flow (g, &s.key);
  /* The handshake, and acks of what the server says first: no data. */
  if (s.len == 0)
    {
      verdict (g, id, NF_ACCEPT, 0);
      return;
    }
  if (f == NULL)
    {
      if (g->n_flows >= EGRESS_GATE_MAX_CONNECTIONS)
        {
          verdict_mark (g, id, EGRESS_GATE_REFUSE);
          refused (g, &s.key, s.seq, NULL,
                   "too many connections waiting at once");
          return;
        }
      f = xcalloc (1, sizeof *f);
      *f = (flow){ .next = g->flows,
                   .key = s.key,
                   .first_seq = s.seq,
                   .deadline = time (NULL) + EGRESS_GATE_HELLO_SECONDS };
      g->flows = f;
      g->n_flows++;
    }
  f->held = xrealloc (f->held, (f->n_held + 1) * sizeof *f->held);
  f->held[f->n_held++] = id;
  append (f, &s);
  decide (g, f);
}

static void
read_message (egress_gate *g, const struct nlmsghdr *nlh)
{
  if (nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
    return;
  const struct nlattr *tb[NFQA_MAX + 1];
  ar_nl_parse (nlh, sizeof (struct nfgenmsg), tb, NFQA_MAX);
  if (tb[NFQA_PACKET_HDR] == NULL
      || ar_nl_attr_len (tb[NFQA_PACKET_HDR])
             < sizeof (struct nfqnl_msg_packet_hdr))
    return;
  const struct nfqnl_msg_packet_hdr *h = ar_nl_attr_data (tb[NFQA_PACKET_HDR]);
  uint32_t id = ntohl (h->packet_id);
  if (tb[NFQA_PAYLOAD] == NULL)
    verdict (g, id, NF_DROP, 0);
  else
    on_packet (g, id, ar_nl_attr_data (tb[NFQA_PAYLOAD]),
               ar_nl_attr_len (tb[NFQA_PAYLOAD]));
}

/* ---- the gate --------------------------------------------------------- */

egress_gate *
egress_gate_new (const int fds[EGRESS_GATE_FDS], uint16_t queue,
                 egress_gate_allows allows, egress_gate_refused refused,
                 void *data)
{
  egress_gate *g = xcalloc (1, sizeof *g);
  *g = (egress_gate){ .fd = fds[0],
                      .raw = { fds[1], fds[2] },
                      .queue = queue,
                      .buf = xcalloc (1, RECV_BYTES),
                      .allows = allows,
                      .refused = refused,
                      .data = data };
  return g;
}

void
egress_gate_free (egress_gate *g)
{
  if (g == NULL)
    return;
  /* Closing the socket unbinds the queue: the kernel drops what waits. */
  while (g->flows)
    forget (g, g->flows);
  ar_closep (&g->fd);
  ar_closep (&g->raw[0]);
  ar_closep (&g->raw[1]);
  ar_nl_buf_free (&g->verdicts);
  free (g->buf);
  free (g);
}

int
egress_gate_fd (const egress_gate *g)
{
  return g->fd;
}

void
egress_gate_run (egress_gate *g)
{
  /* A bounded batch a call: the resolver's loop has lookups to answer
   * between batches (its poll wakes at once while more wait). */
  for (int i = 0; i < PACKETS_PER_RUN; i++)
    {
      ssize_t n = recv (g->fd, g->buf, RECV_BYTES, MSG_DONTWAIT);
      if (n <= 0)
        break;
      ar_nl_for_each_msg (nlh, g->buf, (size_t) n) read_message (g, nlh);
    }
  time_t now = time (NULL);
  for (flow *f = g->flows, *next; f; f = next)
    {
      next = f->next;
      if (f->deadline < now)
        refuse (g, f, NULL, "no name within " SECONDS_TEXT " s");
    }
  send_verdicts (g);
}
