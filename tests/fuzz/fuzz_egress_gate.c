/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the name gate's reading of queued packets
 * (hooks/egress_gate.c): the input is a run of packets, each a 2-byte
 * length then that many bytes of IP packet, queued to the gate as
 * nfnetlink_queue sends them (over a socket pair) with ids 1, 2, ...
 * Seeds: tests/fuzz/corpus/fuzz_egress_gate (a handshake and an HTTP
 * request, one split over segments, a retransmission).
 *
 * Checked: every verdict names a packet that was queued, none twice; a
 * verdict is accept, drop or a marked repeat with one of the gate's two
 * marks; and a refusal is said in one line. */
#include "config.h"
#include "fuzz.h"
#include "../../hooks/egress_gate.h"
#include "../../src/util/netlink.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PACKETS 64

static bool
allows (void *data, const char *name, const char *addr, uint16_t port)
{
  (void) data;
  (void) addr;
  return port == 80 && strcmp (name, "good.test") == 0;
}

static void
refused (void *data, const char *addr, uint16_t port, const char *name,
         const char *why)
{
  (void) data;
  (void) port;
  (void) name;
  if (addr == NULL || why == NULL || why[0] == '\0' || strchr (why, '\n'))
    abort ();
}

static void
queue_packet (int fd, uint32_t id, const uint8_t *p, size_t len)
{
  cleanup_nl_buf ar_nl_buf m = { 0 };
  ar_nl_msg (&m, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET, 0, 0);
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0 };
  ar_nl_put (&m, &nfg, sizeof nfg);
  struct nfqnl_msg_packet_hdr h = { .packet_id = htonl (id) };
  ar_nl_attr (&m, NFQA_PACKET_HDR, &h, sizeof h);
  ar_nl_attr (&m, NFQA_PAYLOAD, p, len);
  send (fd, m.data, m.len, 0);
}

static void
check_verdicts (int fd, uint32_t queued, bool *answered)
{
  static uint8_t buf[1 << 16] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  ssize_t n;
  while ((n = recv (fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
    ar_nl_for_each_msg (nlh, buf, (size_t) n)
    {
      const struct nlattr *tb[NFQA_MAX + 1];
      ar_nl_parse (nlh, sizeof (struct nfgenmsg), tb, NFQA_MAX);
      if (tb[NFQA_VERDICT_HDR] == NULL)
        abort ();
      const struct nfqnl_msg_verdict_hdr *v
          = ar_nl_attr_data (tb[NFQA_VERDICT_HDR]);
      uint32_t id = ntohl (v->id), what = ntohl (v->verdict), mark = 0;
      if (tb[NFQA_MARK])
        memcpy (&mark, ar_nl_attr_data (tb[NFQA_MARK]), 4);
      mark = ntohl (mark);
      if (id == 0 || id > queued || answered[id])
        abort ();
      answered[id] = true;
      bool marked_repeat
          = what == NF_REPEAT
            && (mark == EGRESS_GATE_PASS || mark == EGRESS_GATE_REFUSE);
      if (!marked_repeat && what != NF_ACCEPT && what != NF_DROP)
        abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
    return 0;
  int big = 1 << 20;
  setsockopt (sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  setsockopt (sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  const int fds[EGRESS_GATE_FDS] = { sv[0], -1, -1 };
  egress_gate *g = egress_gate_new (fds, 7, allows, refused, NULL);
  bool answered[MAX_PACKETS + 1] = { false };
  uint32_t queued = 0;
  while (size >= 2 && queued < MAX_PACKETS)
    {
      size_t len = (size_t) data[0] << 8 | data[1];
      data += 2;
      size -= 2;
      if (len > size)
        len = size;
      queue_packet (sv[1], ++queued, data, len);
      data += len;
      size -= len;
      /* A few packets a run, as they come from the kernel. */
      if (queued % 3 == 0)
        {
          egress_gate_run (g);
          check_verdicts (sv[1], queued, answered);
        }
    }
  egress_gate_run (g);
  check_verdicts (sv[1], queued, answered);
  egress_gate_free (g);
  close (sv[1]);
  return 0;
}
