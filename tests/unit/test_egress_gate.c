/* SPDX-License-Identifier: Apache-2.0 */
/* The name gate (hooks/egress_gate.c) without a kernel queue: queued
 * packets are written to it as nfnetlink_queue sends them, over a socket
 * pair, and its verdicts are read back from the other end. What passes
 * at once, what is held until a name is said, in which order held
 * packets go on, and what is refused. */
#define _GNU_SOURCE
#include "config.h"
#include "unit.h"
#include "../../hooks/egress_gate.h"
#include "../../src/util/netlink.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <sys/socket.h>

#define QUEUE 7
#define FIRST_SEQ 1000u

typedef struct
{
  uint32_t id, verdict, mark;
} verdict;

typedef struct
{
  int fds[2]; /* the gate's end, the test's */
  egress_gate *gate;
  char refused_name[64], refused_why[128];
  int refusals;
} fixture;

static bool
allows (void *data, const char *name, const char *addr, uint16_t port)
{
  (void) data;
  return strcmp (name, "good.test") == 0 && strcmp (addr, "10.0.0.2") == 0
         && port == 80;
}

static void
refused (void *data, const char *addr, uint16_t port, const char *name,
         const char *why)
{
  fixture *f = data;
  (void) addr;
  (void) port;
  snprintf (f->refused_name, sizeof f->refused_name, "%s", name ? name : "");
  snprintf (f->refused_why, sizeof f->refused_why, "%s", why);
  f->refusals++;
}

static void
setup (fixture *f)
{
  memset (f, 0, sizeof *f);
  socketpair (AF_UNIX, SOCK_DGRAM, 0, f->fds);
  const int fds[EGRESS_GATE_FDS] = { f->fds[0], -1, -1 };
  f->gate = egress_gate_new (fds, QUEUE, allows, refused, f);
}

static void
teardown (fixture *f)
{
  egress_gate_free (f->gate);
  close (f->fds[1]);
}

/* An IPv4 TCP packet from 10.0.0.1:40000 (`sport` changes it) to
 * 10.0.0.2:80 with `data` at `seq`, queued as packet `id`. */
static void
queue_packet (fixture *f, uint32_t id, uint16_t sport, uint32_t seq,
              const char *data)
{
  size_t len = strlen (data);
  uint8_t p[1500] = { 0x45 };
  uint16_t total = htons ((uint16_t) (40 + len));
  memcpy (p + 2, &total, 2);
  p[9] = IPPROTO_TCP;
  inet_pton (AF_INET, "10.0.0.1", p + 12);
  inet_pton (AF_INET, "10.0.0.2", p + 16);
  uint16_t ports[2] = { htons (sport), htons (80) };
  memcpy (p + 20, ports, 4);
  uint32_t be = htonl (seq);
  memcpy (p + 24, &be, 4);
  p[32] = 5 << 4;
  memcpy (p + 40, data, len);
  cleanup_nl_buf ar_nl_buf m = { 0 };
  ar_nl_msg (&m, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET, 0, 0);
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC,
                          .version = NFNETLINK_V0,
                          .res_id = htons (QUEUE) };
  ar_nl_put (&m, &nfg, sizeof nfg);
  struct nfqnl_msg_packet_hdr h = { .packet_id = htonl (id) };
  ar_nl_attr (&m, NFQA_PACKET_HDR, &h, sizeof h);
  ar_nl_attr (&m, NFQA_PAYLOAD, p, 40 + len);
  send (f->fds[1], m.data, m.len, 0);
}

/* The verdicts of one run, in the order sent (at most `max`). */
static size_t
run_gate (fixture *f, verdict *out, size_t max)
{
  egress_gate_run (f->gate);
  uint8_t buf[8192] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  ssize_t n = recv (f->fds[1], buf, sizeof buf, MSG_DONTWAIT);
  size_t count = 0;
  if (n <= 0)
    return 0;
  ar_nl_for_each_msg (nlh, buf, (size_t) n)
  {
    const struct nlattr *tb[NFQA_MAX + 1];
    ar_nl_parse (nlh, sizeof (struct nfgenmsg), tb, NFQA_MAX);
    if (count == max || tb[NFQA_VERDICT_HDR] == NULL)
      continue;
    const struct nfqnl_msg_verdict_hdr *v
        = ar_nl_attr_data (tb[NFQA_VERDICT_HDR]);
    uint32_t mark = 0;
    if (tb[NFQA_MARK])
      memcpy (&mark, ar_nl_attr_data (tb[NFQA_MARK]), 4);
    out[count++] = (verdict){ .id = ntohl (v->id),
                              .verdict = ntohl (v->verdict),
                              .mark = ntohl (mark) };
  }
  return count;
}

static void
test_handshake_passes_at_once (void)
{
  fixture f;
  setup (&f);
  verdict v[4];
  queue_packet (&f, 1, 40000, FIRST_SEQ - 1, "");
  CHECK_INT ((int) run_gate (&f, v, 4), 1);
  CHECK_INT ((int) v[0].id, 1);
  CHECK_INT ((int) v[0].verdict, NF_ACCEPT);
  CHECK_INT ((int) v[0].mark, 0);
  teardown (&f);
}

static void
test_allowed_host_passes_marked (void)
{
  fixture f;
  setup (&f);
  verdict v[4];
  queue_packet (&f, 5, 40000, FIRST_SEQ,
                "GET / HTTP/1.1\r\nHost: good.test\r\n\r\n");
  CHECK_INT ((int) run_gate (&f, v, 4), 1);
  CHECK_INT ((int) v[0].id, 5);
  CHECK_INT ((int) v[0].verdict, NF_REPEAT);
  CHECK (v[0].mark == EGRESS_GATE_PASS);
  CHECK_INT (f.refusals, 0);
  teardown (&f);
}

static void
test_other_host_is_refused_and_said (void)
{
  fixture f;
  setup (&f);
  verdict v[4];
  queue_packet (&f, 9, 40000, FIRST_SEQ,
                "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n");
  CHECK_INT ((int) run_gate (&f, v, 4), 1);
  CHECK_INT ((int) v[0].verdict, NF_REPEAT);
  CHECK (v[0].mark == EGRESS_GATE_REFUSE);
  CHECK_INT (f.refusals, 1);
  CHECK_STR (f.refused_name, "evil.test");
  CHECK_STR (f.refused_why, "not an allowed name");
  teardown (&f);
}

/* A request in three segments, the first sent twice (a retransmission):
 * nothing goes until the name is whole, then all in the order they came;
 * another connection is decided on its own meanwhile. */
static void
test_split_name_is_held_then_passed_in_order (void)
{
  fixture f;
  setup (&f);
  verdict v[8];
  queue_packet (&f, 1, 40000, FIRST_SEQ, "GET / HTTP/1.1\r\nHo");
  CHECK_INT ((int) run_gate (&f, v, 8), 0);
  queue_packet (&f, 2, 40000, FIRST_SEQ, "GET / HTTP/1.1\r\nHo");
  queue_packet (&f, 3, 40001, FIRST_SEQ, "GET / HTTP/1.0\r\n\r\n");
  queue_packet (&f, 4, 40000, FIRST_SEQ + 18, "st: good.te");
  size_t n = run_gate (&f, v, 8);
  CHECK_INT ((int) n, 1);
  CHECK_INT ((int) v[0].id, 3);
  CHECK (v[0].mark == EGRESS_GATE_REFUSE);
  CHECK_STR (f.refused_why, "HTTP: no Host header in the request");
  queue_packet (&f, 5, 40000, FIRST_SEQ + 29, "st\r\n\r\n");
  n = run_gate (&f, v, 8);
  static const uint32_t order[] = { 1, 2, 4, 5 };
  CHECK_INT ((int) n, 4);
  for (size_t i = 0; i < n && i < 4; i++)
    {
      CHECK_INT ((int) v[i].id, (int) order[i]);
      CHECK (v[i].mark == EGRESS_GATE_PASS);
    }
  teardown (&f);
}

/* Refused: the first held packet carries the refusal (the filter resets
 * the client by it), the others are dropped. */
static void
test_refusal_resets_once_and_drops_the_rest (void)
{
  fixture f;
  setup (&f);
  verdict v[4];
  queue_packet (&f, 1, 40000, FIRST_SEQ, "GET / HTTP/1.1\r\nHo");
  queue_packet (&f, 2, 40000, FIRST_SEQ + 18, "st: evil.test\r\n\r\n");
  CHECK_INT ((int) run_gate (&f, v, 4), 2);
  CHECK_INT ((int) v[0].id, 1);
  CHECK (v[0].mark == EGRESS_GATE_REFUSE);
  CHECK_INT ((int) v[1].id, 2);
  CHECK_INT ((int) v[1].verdict, NF_DROP);
  CHECK_INT (f.refusals, 1);
  teardown (&f);
}

static void
test_not_a_tcp_packet_is_dropped (void)
{
  fixture f;
  setup (&f);
  verdict v[2];
  cleanup_nl_buf ar_nl_buf m = { 0 };
  ar_nl_msg (&m, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET, 0, 0);
  struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0 };
  ar_nl_put (&m, &nfg, sizeof nfg);
  struct nfqnl_msg_packet_hdr h = { .packet_id = htonl (3) };
  ar_nl_attr (&m, NFQA_PACKET_HDR, &h, sizeof h);
  ar_nl_attr (&m, NFQA_PAYLOAD, "\x45garbage", 8);
  send (f.fds[1], m.data, m.len, 0);
  CHECK_INT ((int) run_gate (&f, v, 2), 1);
  CHECK_INT ((int) v[0].id, 3);
  CHECK_INT ((int) v[0].verdict, NF_DROP);
  teardown (&f);
}

int
main (void)
{
  RUN (test_handshake_passes_at_once);
  RUN (test_allowed_host_passes_marked);
  RUN (test_other_host_is_refused_and_said);
  RUN (test_split_name_is_held_then_passed_in_order);
  RUN (test_refusal_resets_once_and_drops_the_rest);
  RUN (test_not_a_tcp_packet_is_dropped);
  return unit_finish ();
}
