/* SPDX-License-Identifier: Apache-2.0 */
/* The nftables rules, built as netlink objects (egress_batch.h), one
 * transaction each: a table appears whole or not at all.
 *
 * In the container's netns, table inet agentrun:
 *   output: policy drop. lo (our resolver on 127.0.0.53 lives there) and
 *   replies pass; host services (link-local and metadata, the host side
 *   of the veth, an engine's gateway, without root the host's own
 *   addresses that pasta would reach), DNS to anyone but the resolver,
 *   ICMP and anything an engine DNATs on lo are refused first, so that no
 *   allow entry (not even 0.0.0.0/0) opens them; then the allow entries:
 *   single addresses in sets, networks as one rule each, and the sets of
 *   addresses learnt from DNS answers (with their TTL as timeout), which
 *   only TCP reaches, through chain named.
 *   Refusals are fast: a TCP reset, an ICMP admin-prohibited otherwise.
 *   named: TCP to an address that only a name opened. A connection the
 *   name gate (egress_gate.c) let through or refused is known by its ct
 *   mark; until then its packets are queued to the gate, which answers
 *   with a mark that this chain turns into the connection's.
 *   input: only lo, replies and IPv6 neighbour discovery.
 * On the host, table inet agentrun-egress (shared): masquerade and forward
 * for each container's /30 from its own veth only, and nothing from a
 * veth to the host itself (refused at once, chain refuse_to_host).
 *
 * `nft list ruleset` shows all of it the usual way. */
#include "config.h"
#include "egress.h"
#include "egress_batch.h"
#include "egress_gate.h"
#include "../src/util/cleanup.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* nftables' datatype numbers (for `nft list`); concatenations shift. */
#define TYPE_IPADDR 7
#define TYPE_IP6ADDR 8
#define TYPE_INET_SERVICE 13
#define TYPE_ICMP6_TYPE 29
#define TYPE_IFNAME 41
#define CONCAT(a, b) (((a) << 6) | (b))

#define CT_STATE_ESTABLISHED_RELATED 0x6 /* NF_CT_STATE_BIT of both */
#define CT_STATUS_DNAT 0x20              /* IPS_DST_NAT */
#define LO_IFINDEX 1

/* Registers: the first value in REG, a second one right after it (a
 * concatenated key is read from consecutive 32-bit registers). */
#define REG NFT_REG32_00
#define REG_AFTER_4_BYTES NFT_REG32_01
#define REG_AFTER_16_BYTES NFT_REG32_04
#define PRIORITY_SRCNAT 100

static void
free_batch (egress_batch **b)
{
  egress_batch_free (*b);
}
#define cleanup_batch __attribute__ ((cleanup (free_batch)))

static size_t
addr_len (int family)
{
  return family == AF_INET ? 4 : 16;
}

static bool
is_single_address (const egress_network *n)
{
  return n->prefix == addr_len (n->family) * 8;
}

static void
prefix_mask (const egress_network *n, uint8_t mask[16])
{
  memset (mask, 0, 16);
  for (unsigned bit = 0; bit < n->prefix; bit++)
    mask[bit / 8] |= (uint8_t) (0x80 >> (bit % 8));
}

/* ---- matches ---------------------------------------------------------- */

static void
match_u8 (egress_rule *r, uint32_t meta_key, uint8_t value)
{
  egress_expr_meta (r, meta_key, REG);
  egress_expr_cmp (r, REG, NFT_CMP_EQ, &value, 1);
}

static void
match_family (egress_rule *r, int family)
{
  match_u8 (r, NFT_META_NFPROTO,
            family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

static void
match_oif_lo (egress_rule *r, uint32_t meta_key)
{
  uint32_t lo = LO_IFINDEX;
  egress_expr_meta (r, meta_key, REG);
  egress_expr_cmp (r, REG, NFT_CMP_EQ, &lo, sizeof lo);
}

static void
match_bits (egress_rule *r, uint32_t ct_key, uint32_t bits)
{
  uint32_t zero = 0;
  egress_expr_ct (r, ct_key, REG);
  egress_expr_bitwise (r, REG, &bits, sizeof bits);
  egress_expr_cmp (r, REG, NFT_CMP_NEQ, &zero, sizeof zero);
}

/* The family check, then the destination address into REG. */
static void
load_daddr (egress_rule *r, int family)
{
  match_family (r, family);
  if (family == AF_INET)
    egress_expr_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 16, 4, REG);
  else
    egress_expr_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 24, 16, REG);
}

static void
match_daddr (egress_rule *r, const egress_network *n)
{
  size_t len = addr_len (n->family);
  if (n->prefix == 0)
    {
      match_family (r, n->family);
      return;
    }
  load_daddr (r, n->family);
  if (!is_single_address (n))
    {
      uint8_t mask[16];
      prefix_mask (n, mask);
      egress_expr_bitwise (r, REG, mask, len);
    }
  egress_expr_cmp (r, REG, NFT_CMP_EQ, n->addr, len);
}

static void
match_dport (egress_rule *r, uint16_t port)
{
  uint16_t be = htons (port);
  egress_expr_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, REG);
  egress_expr_cmp (r, REG, NFT_CMP_EQ, &be, sizeof be);
}

/* ---- the container's table -------------------------------------------- */

#define CHAIN_REFUSE "refuse"
#define CHAIN_ASK "ask"
#define CHAIN_OUTPUT "output"
#define CHAIN_INPUT "input"
#define CHAIN_NAMED "named"

static const uint8_t l4_tcp_udp[] = { IPPROTO_TCP, IPPROTO_UDP };

static void
add_container_sets (egress_batch *b)
{
  static const egress_set_spec sets[] = {
    { "allow4", TYPE_IPADDR, 4, 0, NULL, 0 },
    { "allow6", TYPE_IP6ADDR, 16, 0, NULL, 0 },
    { "allow4p", CONCAT (TYPE_IPADDR, TYPE_INET_SERVICE), 8, NFT_SET_TIMEOUT,
      NULL, 0 },
    { "allow6p", CONCAT (TYPE_IP6ADDR, TYPE_INET_SERVICE), 20, NFT_SET_TIMEOUT,
      NULL, 0 },
    { "dyn4", TYPE_IPADDR, 4, NFT_SET_TIMEOUT, NULL, 0 },
    { "dyn6", TYPE_IP6ADDR, 16, NFT_SET_TIMEOUT, NULL, 0 },
    { "dyn4p", CONCAT (TYPE_IPADDR, TYPE_INET_SERVICE), 8, NFT_SET_TIMEOUT,
      NULL, 0 },
    { "dyn6p", CONCAT (TYPE_IP6ADDR, TYPE_INET_SERVICE), 20, NFT_SET_TIMEOUT,
      NULL, 0 },
    /* Mode ask: destinations the approver refused, for a while. */
    { "deny4p", CONCAT (TYPE_IPADDR, TYPE_INET_SERVICE), 8, NFT_SET_TIMEOUT,
      NULL, 0 },
    { "deny6p", CONCAT (TYPE_IP6ADDR, TYPE_INET_SERVICE), 20, NFT_SET_TIMEOUT,
      NULL, 0 },
    { "nd_out", TYPE_ICMP6_TYPE, 1, 0, NULL, 0 },
    { "nd_in", TYPE_ICMP6_TYPE, 1, 0, NULL, 0 },
  };
  for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
    egress_batch_add_set (b, &sets[i]);
  static const uint8_t nd_out[] = { 135, 136, 133, 131, 143 };
  static const uint8_t nd_in[] = { 135, 136, 134 };
  for (size_t i = 0; i < sizeof nd_out; i++)
    egress_batch_element (b, "nd_out", true, &nd_out[i], 1, NULL, 0);
  for (size_t i = 0; i < sizeof nd_in; i++)
    egress_batch_element (b, "nd_in", true, &nd_in[i], 1, NULL, 0);
}

/* Key of an address . port set element: the port padded to 4 bytes. */
static size_t
port_key (const uint8_t *addr, int family, uint16_t port, uint8_t key[20])
{
  size_t len = addr_len (family);
  uint16_t be = htons (port);
  memset (key, 0, 20);
  memcpy (key, addr, len);
  memcpy (key + len, &be, sizeof be);
  return len + 4;
}

/* A rule matching `proto` flows whose destination address and port are
 * in `set` (v6: of IPv6); the caller adds its verdict. */
static egress_rule *
flow_in_set (egress_batch *b, const char *chain, bool v6, uint8_t proto,
             const char *set)
{
  egress_rule *r = egress_rule_new (b, chain);
  match_u8 (r, NFT_META_L4PROTO, proto);
  load_daddr (r, v6 ? AF_INET6 : AF_INET);
  egress_expr_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2,
                       v6 ? REG_AFTER_16_BYTES : REG_AFTER_4_BYTES);
  egress_expr_lookup (r, REG, set, false);
  return r;
}

static void
add_refuse_chain (egress_batch *b, const egress_filter *f)
{
  egress_batch_add_chain (b, CHAIN_REFUSE, -1, 0, NULL, 0);
  egress_rule *r;
  if (f->nflog_group >= 0)
    {
      r = egress_rule_new (b, CHAIN_REFUSE);
      egress_expr_limit (r, 20, 40);
      egress_expr_log (r, (uint16_t) f->nflog_group, NULL);
      egress_batch_add_rule (b, r);
    }
  r = egress_rule_new (b, CHAIN_REFUSE);
  match_u8 (r, NFT_META_L4PROTO, IPPROTO_TCP);
  egress_expr_reject (r, NFT_REJECT_TCP_RST, 0);
  egress_batch_add_rule (b, r);
  r = egress_rule_new (b, CHAIN_REFUSE);
  egress_expr_reject (r, NFT_REJECT_ICMPX_UNREACH,
                      NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
  egress_batch_add_rule (b, r);
}

/* Mode ask: a new TCP or UDP flow the allow-list does not cover is
 * dropped and logged to EGRESS_NFLOG_ASK_GROUP, where the resolver reads
 * it and asks the approver; its retried first packet gets through once
 * an allow put the destination into an allow set, and a refused
 * destination (the deny sets) is refused at once. The rest is refused. */
static void
add_ask_chain (egress_batch *b)
{
  egress_batch_add_chain (b, CHAIN_ASK, -1, 0, NULL, 0);
  for (int v6 = 0; v6 <= 1; v6++)
    for (size_t i = 0; i < sizeof l4_tcp_udp; i++)
      {
        egress_rule *r = flow_in_set (b, CHAIN_ASK, v6, l4_tcp_udp[i],
                                      v6 ? "deny6p" : "deny4p");
        egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
        egress_batch_add_rule (b, r);
      }
  for (size_t i = 0; i < sizeof l4_tcp_udp; i++)
    {
      /* Over the limit the packet is dropped unlogged: its retry asks. */
      egress_rule *r = egress_rule_new (b, CHAIN_ASK);
      match_u8 (r, NFT_META_L4PROTO, l4_tcp_udp[i]);
      egress_expr_limit (r, 50, 100);
      egress_expr_log (r, EGRESS_NFLOG_ASK_GROUP, NULL);
      egress_expr_verdict (r, NF_DROP, NULL);
      egress_batch_add_rule (b, r);
      r = egress_rule_new (b, CHAIN_ASK);
      match_u8 (r, NFT_META_L4PROTO, l4_tcp_udp[i]);
      egress_expr_verdict (r, NF_DROP, NULL);
      egress_batch_add_rule (b, r);
    }
  egress_rule *r = egress_rule_new (b, CHAIN_ASK);
  egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
  egress_batch_add_rule (b, r);
}

/* Neighbour discovery (link-local and multicast destinations only on the
 * way out): without it no IPv6 at all works on a link. */
static void
add_neighbour_discovery (egress_batch *b, const char *chain, const char *types)
{
  static const char *const out_prefixes[] = { "fe80::/10", "ff02::/16", NULL };
  static const char *const any[] = { "::/0", NULL };
  const char *const *prefixes
      = strcmp (chain, CHAIN_OUTPUT) == 0 ? out_prefixes : any;
  for (size_t i = 0; prefixes[i]; i++)
    {
      egress_network n;
      egress_network_parse (prefixes[i], &n);
      egress_rule *r = egress_rule_new (b, chain);
      match_daddr (r, &n);
      match_u8 (r, NFT_META_L4PROTO, IPPROTO_ICMPV6);
      egress_expr_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, REG);
      egress_expr_lookup (r, REG, types, false);
      egress_expr_verdict (r, NF_ACCEPT, NULL);
      egress_batch_add_rule (b, r);
    }
}

static void
refuse_network (egress_batch *b, const egress_network *n)
{
  egress_rule *r = egress_rule_new (b, CHAIN_OUTPUT);
  match_daddr (r, n);
  egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
  egress_batch_add_rule (b, r);
}

static void
refuse_host_services (egress_batch *b, const egress_filter *f)
{
  egress_network n;
  egress_network_parse ("169.254.0.0/16", &n);
  refuse_network (b, &n);
  egress_network_parse ("fe80::/10", &n);
  refuse_network (b, &n);
  const struct in_addr *hosts[] = { f->has_host_addr ? &f->host_addr : NULL,
                                    f->has_gateway ? &f->gateway : NULL };
  for (size_t i = 0; i < 2; i++)
    if (hosts[i])
      {
        n = (egress_network){ .family = AF_INET, .prefix = 32 };
        memcpy (n.addr, hosts[i], 4);
        refuse_network (b, &n);
      }
  for (size_t i = 0; i < f->n_host_addrs; i++)
    if (egress_network_parse (f->host_addrs[i], &n))
      refuse_network (b, &n);
  for (size_t i = 0; i < sizeof l4_tcp_udp; i++)
    {
      egress_rule *r = egress_rule_new (b, CHAIN_OUTPUT);
      match_u8 (r, NFT_META_L4PROTO, l4_tcp_udp[i]);
      match_dport (r, 53);
      egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
      egress_batch_add_rule (b, r);
    }
  static const uint8_t icmp[] = { IPPROTO_ICMP, IPPROTO_ICMPV6 };
  for (size_t i = 0; i < sizeof icmp; i++)
    {
      egress_rule *r = egress_rule_new (b, CHAIN_OUTPUT);
      match_u8 (r, NFT_META_L4PROTO, icmp[i]);
      egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
      egress_batch_add_rule (b, r);
    }
}

static void
accept_rule (egress_batch *b, egress_rule *r)
{
  egress_expr_verdict (r, NF_ACCEPT, NULL);
  egress_batch_add_rule (b, r);
}

static void
reject_rule (egress_batch *b, egress_rule *r)
{
  egress_expr_reject (r, NFT_REJECT_TCP_RST, 0);
  egress_batch_add_rule (b, r);
}

/* The packet's mark, or its connection's (`of_connection`). */
static void
match_mark (egress_rule *r, bool of_connection, uint32_t mark)
{
  if (of_connection)
    egress_expr_ct (r, NFT_CT_MARK, REG);
  else
    egress_expr_meta (r, NFT_META_MARK, REG);
  egress_expr_cmp (r, REG, NFT_CMP_EQ, &mark, sizeof mark);
}

/* Matches of TCP to an address a name opened: in dyn4/dyn6, or with its
 * port in dyn4p/dyn6p (`ports`). */
static void
match_tcp_to_named (egress_rule *r, bool v6, bool ports)
{
  match_u8 (r, NFT_META_L4PROTO, IPPROTO_TCP);
  load_daddr (r, v6 ? AF_INET6 : AF_INET);
  if (ports)
    egress_expr_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2,
                         v6 ? REG_AFTER_16_BYTES : REG_AFTER_4_BYTES);
  egress_expr_lookup (
      r, REG, ports ? (v6 ? "dyn6p" : "dyn4p") : (v6 ? "dyn6" : "dyn4"), false);
}

/* Single addresses allowed as addresses (an entry's, or a flow the
 * approver allowed): accepted in `chain`, with their ports for the
 * transport protocols `l4` (n of them). */
static void
accept_address_sets (egress_batch *b, const char *chain, bool v6,
                     const uint8_t *l4, size_t n)
{
  egress_rule *r = egress_rule_new (b, chain);
  load_daddr (r, v6 ? AF_INET6 : AF_INET);
  egress_expr_lookup (r, REG, v6 ? "allow6" : "allow4", false);
  accept_rule (b, r);
  for (size_t i = 0; i < n; i++)
    accept_rule (b,
                 flow_in_set (b, chain, v6, l4[i], v6 ? "allow6p" : "allow4p"));
}

/* The set lookups of static single addresses (what DNS answers add goes
 * through chain named). */
static void
accept_sets (egress_batch *b)
{
  for (int v6 = 0; v6 <= 1; v6++)
    accept_address_sets (b, CHAIN_OUTPUT, v6, l4_tcp_udp, sizeof l4_tcp_udp);
}

/* The address or network of an entry; false for a name. */
static bool
entry_network (const egress_entry *e, egress_network *n)
{
  return (e->kind == ENTRY_NET4 || e->kind == ENTRY_NET6)
         && egress_network_parse (e->text, n);
}

/* A rule in `chain` accepting each network entry (a network takes no
 * port: egress_entry_parse); single addresses are in the sets. */
static void
accept_networks (egress_batch *b, const char *chain,
                 const egress_allowlist *allow)
{
  for (size_t i = 0; allow && i < allow->len; i++)
    {
      egress_network n;
      if (!entry_network (&allow->items[i], &n) || is_single_address (&n))
        continue;
      egress_rule *r = egress_rule_new (b, chain);
      match_daddr (r, &n);
      accept_rule (b, r);
    }
}

/* A single address entry's set element (with its port, if any). */
static void
add_address_element (egress_batch *b, const egress_entry *e)
{
  egress_network n;
  if (!entry_network (e, &n) || !is_single_address (&n))
    return;
  bool v6 = n.family == AF_INET6;
  uint8_t key[20];
  if (e->port == 0)
    egress_batch_element (b, v6 ? "allow6" : "allow4", true, n.addr,
                          addr_len (n.family), NULL, 0);
  else
    egress_batch_element (b, v6 ? "allow6p" : "allow4p", true, key,
                          port_key (n.addr, n.family, e->port, key), NULL, 0);
}

static void
add_output_chain (egress_batch *b, const egress_filter *f)
{
  egress_batch_add_chain (b, CHAIN_OUTPUT, NF_INET_LOCAL_OUT, 0, "filter",
                          NF_DROP);
  egress_rule *r;
  /* First, what the name gate let through: a download's every ack. */
  if (f->gate)
    {
      r = egress_rule_new (b, CHAIN_OUTPUT);
      match_mark (r, true, EGRESS_GATE_PASS);
      accept_rule (b, r);
    }
  r = egress_rule_new (b, CHAIN_OUTPUT);
  match_oif_lo (r, NFT_META_OIF);
  match_bits (r, NFT_CT_STATUS, CT_STATUS_DNAT);
  egress_expr_verdict (r, NFT_GOTO, CHAIN_REFUSE);
  egress_batch_add_rule (b, r);
  r = egress_rule_new (b, CHAIN_OUTPUT);
  match_oif_lo (r, NFT_META_OIF);
  accept_rule (b, r);
  /* Before the replies: a connection the gate has not yet seen its
   * name is established already. */
  for (int v6 = 0; f->gate && v6 <= 1; v6++)
    for (int ports = 0; ports <= 1; ports++)
      {
        r = egress_rule_new (b, CHAIN_OUTPUT);
        match_tcp_to_named (r, v6, ports);
        egress_expr_verdict (r, NFT_GOTO, CHAIN_NAMED);
        egress_batch_add_rule (b, r);
      }
  r = egress_rule_new (b, CHAIN_OUTPUT);
  match_bits (r, NFT_CT_STATE, CT_STATE_ESTABLISHED_RELATED);
  accept_rule (b, r);
  add_neighbour_discovery (b, CHAIN_OUTPUT, "nd_out");
  refuse_host_services (b, f);
  if (f->mode == EGRESS_MODE_OPEN)
    accept_rule (b, egress_rule_new (b, CHAIN_OUTPUT));
  accept_sets (b);
  for (size_t i = 0; f->allow && i < f->allow->len; i++)
    add_address_element (b, &f->allow->items[i]);
  accept_networks (b, CHAIN_OUTPUT, f->allow);
  r = egress_rule_new (b, CHAIN_OUTPUT);
  egress_expr_verdict (r, NFT_GOTO, f->ask ? CHAIN_ASK : CHAIN_REFUSE);
  egress_batch_add_rule (b, r);
}

/* The gate's verdict: a packet it sent through again, marked. The mark
 * becomes the connection's: one let through is accepted from then on by
 * output's first rule and never comes here again; one refused is
 * rejected here, every later packet of it too. */
static void
take_gate_verdicts (egress_batch *b)
{
  egress_rule *r = egress_rule_new (b, CHAIN_NAMED);
  match_mark (r, false, EGRESS_GATE_PASS);
  egress_expr_ct_set (r, NFT_CT_MARK, REG);
  accept_rule (b, r);
  r = egress_rule_new (b, CHAIN_NAMED);
  match_mark (r, false, EGRESS_GATE_REFUSE);
  egress_expr_ct_set (r, NFT_CT_MARK, REG);
  reject_rule (b, r);
  r = egress_rule_new (b, CHAIN_NAMED);
  match_mark (r, true, EGRESS_GATE_REFUSE);
  reject_rule (b, r);
}

/* TCP to an address a name opened. One an entry allows as an address
 * goes its own way; the others are the gate's to let through. */
static void
add_named_chain (egress_batch *b, const egress_filter *f, bool compat_queue)
{
  egress_batch_add_chain (b, CHAIN_NAMED, -1, 0, NULL, 0);
  /* The gate's reset to a server whose client it refused. */
  egress_rule *r = egress_rule_new (b, CHAIN_NAMED);
  match_mark (r, false, EGRESS_GATE_RESET);
  accept_rule (b, r);
  static const uint8_t tcp[] = { IPPROTO_TCP };
  for (int v6 = 0; v6 <= 1; v6++)
    accept_address_sets (b, CHAIN_NAMED, v6, tcp, sizeof tcp);
  accept_networks (b, CHAIN_NAMED, f->allow);
  take_gate_verdicts (b);
  r = egress_rule_new (b, CHAIN_NAMED);
  egress_expr_queue (r, f->gate_queue, compat_queue);
  egress_batch_add_rule (b, r);
}

static egress_rule *
match_ingress (egress_batch *b, const egress_ingress *in)
{
  egress_rule *r = egress_rule_new (b, CHAIN_INPUT);
  match_u8 (r, NFT_META_L4PROTO, in->proto);
  match_dport (r, in->port);
  return r;
}

/* New connections to the ingress ports (a pod's probes and Services),
 * logged for the audit as refusals are: a rule that logs (at most 20 a
 * second, burst 40), then one that accepts, so that none is dropped
 * for being over the log's limit. */
static void
accept_ingress (egress_batch *b, const egress_filter *f)
{
  for (size_t i = 0; i < f->n_ingress; i++)
    {
      if (f->nflog_group >= 0)
        {
          egress_rule *r = match_ingress (b, &f->ingress[i]);
          egress_expr_limit (r, 20, 40);
          egress_expr_log (r, (uint16_t) f->nflog_group, EGRESS_NFLOG_INBOUND);
          egress_batch_add_rule (b, r);
        }
      accept_rule (b, match_ingress (b, &f->ingress[i]));
    }
}

static void
add_input_chain (egress_batch *b, const egress_filter *f)
{
  egress_batch_add_chain (b, CHAIN_INPUT, NF_INET_LOCAL_IN, 0, "filter",
                          NF_DROP);
  egress_rule *r = egress_rule_new (b, CHAIN_INPUT);
  match_oif_lo (r, NFT_META_IIF);
  accept_rule (b, r);
  r = egress_rule_new (b, CHAIN_INPUT);
  match_bits (r, NFT_CT_STATE, CT_STATE_ESTABLISHED_RELATED);
  accept_rule (b, r);
  add_neighbour_discovery (b, CHAIN_INPUT, "nd_in");
  accept_ingress (b, f);
}

/* nft's `queue` expression is a module of its own (nft_queue) that some
 * kernels leave out where xtables' NFQUEUE target is there; asking for a
 * missing expression costs a failed modprobe (10-20 ms measured). So the
 * module loaded or on disk says which to ask for first. */
static bool
queue_module_present (void)
{
  if (access ("/sys/module/nft_queue", F_OK) == 0)
    return true;
  struct utsname u;
  if (uname (&u) < 0)
    return false;
  static const char *const suffixes[] = { "", ".xz", ".zst", ".gz" };
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
    {
      cleanup_free char *path
          = xasprintf ("/lib/modules/%s/kernel/net/netfilter/nft_queue.ko%s",
                       u.release, suffixes[i]);
      if (access (path, F_OK) == 0)
        return true;
    }
  return false;
}

static int
container_filter (const egress_filter *f, bool compat_queue, ar_error_t **err)
{
  cleanup_batch egress_batch *b
      = egress_batch_new (NFPROTO_INET, EGRESS_CONTAINER_TABLE);
  /* Start from nothing: a second create in the same netns (an engine's
   * restart) replaces, never stacks. */
  if (!f->fresh_netns)
    {
      egress_batch_add_table (b);
      egress_batch_delete_table (b);
    }
  egress_batch_add_table (b);
  add_container_sets (b);
  add_refuse_chain (b, f);
  if (f->ask)
    add_ask_chain (b);
  if (f->gate)
    add_named_chain (b, f, compat_queue);
  add_output_chain (b, f);
  add_input_chain (b, f);
  return egress_batch_commit (b, err);
}

int
egress_nft_container_filter (const egress_filter *f, ar_error_t **err)
{
  bool compat = f->gate && !queue_module_present ();
  ar_error_t *first = NULL;
  if (container_filter (f, compat, &first) == 0)
    return 0;
  if (!f->gate)
    return ar_error_pass (err, first);
  /* The other way of queueing, once; the first one's error if both fail. */
  cleanup_error ar_error_t *second = NULL;
  if (container_filter (f, !compat, &second) == 0)
    {
      ar_error_free (first);
      return 0;
    }
  return ar_error_pass (err, first);
}

int
egress_nft_learn (const egress_learnt *items, size_t n, ar_error_t **err)
{
  cleanup_batch egress_batch *b
      = egress_batch_new (NFPROTO_INET, EGRESS_CONTAINER_TABLE);
  for (size_t i = 0; i < n; i++)
    {
      const egress_learnt *l = &items[i];
      bool v6 = l->family == AF_INET6;
      uint64_t timeout_ms = (uint64_t) l->ttl * 1000;
      uint8_t key[20];
      if (l->by_name && l->port == 0)
        egress_batch_element (b, v6 ? "dyn6" : "dyn4", true, l->addr,
                              addr_len (l->family), NULL, timeout_ms);
      else if (l->by_name)
        egress_batch_element (b, v6 ? "dyn6p" : "dyn4p", true, key,
                              port_key (l->addr, l->family, l->port, key), NULL,
                              timeout_ms);
      else
        egress_batch_element (b, v6 ? "allow6p" : "allow4p", true, key,
                              port_key (l->addr, l->family, l->port, key), NULL,
                              timeout_ms);
    }
  return egress_batch_commit (b, err);
}

int
egress_nft_refuse (const egress_learnt *item, ar_error_t **err)
{
  cleanup_batch egress_batch *b
      = egress_batch_new (NFPROTO_INET, EGRESS_CONTAINER_TABLE);
  bool v6 = item->family == AF_INET6;
  uint8_t key[20];
  egress_batch_element (b, v6 ? "deny6p" : "deny4p", true, key,
                        port_key (item->addr, item->family, item->port, key),
                        NULL, (uint64_t) item->ttl * 1000);
  return egress_batch_commit (b, err);
}

/* ---- the host's table ------------------------------------------------- */

#define HOST_LINKS "links"
#define HOST_PAIRS "pairs"

/* iifname/oifname into REG and a lookup in the links set. */
static void
match_link (egress_rule *r, uint32_t meta_key, bool inverted)
{
  egress_expr_meta (r, meta_key, REG);
  egress_expr_lookup (r, REG, HOST_LINKS, inverted);
}

/* iifname . ip saddr in the pairs set: a container's own address from its
 * own veth. */
static void
match_pair (egress_rule *r)
{
  match_family (r, AF_INET);
  egress_expr_meta (r, NFT_META_IIFNAME, REG);
  egress_expr_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 12, 4,
                       REG_AFTER_16_BYTES);
  egress_expr_lookup (r, REG, HOST_PAIRS, false);
}

static void
host_rule (egress_batch *b, const char *chain, int kind, int verdict)
{
  egress_rule *r = egress_rule_new (b, chain);
  switch (kind)
    {
    case 'p':
      match_pair (r);
      break;
    case 'i':
      match_link (r, NFT_META_IIFNAME, false);
      break;
    case 'o':
      match_link (r, NFT_META_OIFNAME, false);
      break;
    }
  if (verdict == NF_ACCEPT && kind != 'p')
    match_bits (r, NFT_CT_STATE, CT_STATE_ESTABLISHED_RELATED);
  egress_expr_verdict (r, verdict, NULL);
  egress_batch_add_rule (b, r);
}

/* Made once and kept: each container only adds its veth and /30 to the
 * sets. Registering a NAT or filter hook is what costs (the kernel
 * patches its code when the first hook of a kind appears and again when
 * the last goes: 5-10 ms in a VM), so the table also holds an empty
 * output chain: with it, the chains in each container's netns never are
 * the first of their kind. */
static void
add_host_table (egress_batch *b)
{
  static const uint8_t pair_fields[] = { IFNAMSIZ, 4 };
  const egress_set_spec links
      = { HOST_LINKS, TYPE_IFNAME, IFNAMSIZ, 0, NULL, 0, true };
  const egress_set_spec pairs
      = { HOST_PAIRS,   CONCAT (TYPE_IFNAME, TYPE_IPADDR),
          IFNAMSIZ + 4, NFT_SET_INTERVAL | NFT_SET_CONCAT,
          pair_fields,  2 };
  egress_batch_add_table (b);
  egress_batch_add_set (b, &links);
  egress_batch_add_set (b, &pairs);
  egress_batch_add_chain (b, "postrouting", NF_INET_POST_ROUTING,
                          PRIORITY_SRCNAT, "nat", NF_ACCEPT);
  egress_rule *r = egress_rule_new (b, "postrouting");
  match_pair (r);
  match_link (r, NFT_META_OIFNAME, true);
  egress_expr_masquerade (r);
  egress_batch_add_rule (b, r);
  egress_batch_add_chain (b, "forward", NF_INET_FORWARD, 0, "filter",
                          NF_ACCEPT);
  host_rule (b, "forward", 'p', NF_ACCEPT);
  host_rule (b, "forward", 'i', NF_DROP);
  host_rule (b, "forward", 'o', NF_ACCEPT);
  host_rule (b, "forward", 'o', NF_DROP);
  egress_batch_add_chain (b, "input", NF_INET_LOCAL_IN, 0, "filter", NF_ACCEPT);
  host_rule (b, "input", 'i', NF_ACCEPT);
  host_rule (b, "input", 'i', NF_DROP);
  egress_batch_add_chain (b, "output", NF_INET_LOCAL_OUT, 0, "filter",
                          NF_ACCEPT);
}

static void
link_key (const char *hash, uint8_t key[IFNAMSIZ])
{
  memset (key, 0, IFNAMSIZ);
  snprintf ((char *) key, IFNAMSIZ, "ar%s", hash);
}

static void
host_elements (egress_batch *b, bool add, const char *hash,
               const egress_lease *lease, bool link, bool pair)
{
  uint8_t key[IFNAMSIZ + 4], key_end[IFNAMSIZ + 4];
  link_key (hash, key);
  if (link)
    egress_batch_element (b, HOST_LINKS, add, key, IFNAMSIZ, NULL, 0);
  if (!pair)
    return;
  uint32_t net = ntohl (lease->network.s_addr);
  uint32_t first = htonl (net), last = htonl (net + 3);
  memcpy (key_end, key, IFNAMSIZ);
  memcpy (key + IFNAMSIZ, &first, 4);
  memcpy (key_end + IFNAMSIZ, &last, 4);
  egress_batch_element (b, HOST_PAIRS, add, key, sizeof key, key_end, 0);
}

/* What a container sends through its veth to one of the host's own
 * addresses (not just the veth's host side, which its own filter
 * refuses) is refused at once, a reset or admin-prohibited, instead of
 * dropped: a connect fails then rather than hanging until its timeout.
 * A base chain before "input", filled anew by every attach: a table an
 * older agentrun made (which only dropped) gets it too. */
#define HOST_REFUSE "refuse_to_host"

static void
refuse_to_host_chain (egress_batch *b)
{
  egress_batch_add_chain (b, HOST_REFUSE, NF_INET_LOCAL_IN, -1, "filter",
                          NF_ACCEPT);
  egress_batch_flush_chain (b, HOST_REFUSE);
  egress_rule *r = egress_rule_new (b, HOST_REFUSE);
  match_link (r, NFT_META_IIFNAME, false);
  match_bits (r, NFT_CT_STATE, CT_STATE_ESTABLISHED_RELATED);
  accept_rule (b, r);
  r = egress_rule_new (b, HOST_REFUSE);
  match_link (r, NFT_META_IIFNAME, false);
  match_u8 (r, NFT_META_L4PROTO, IPPROTO_TCP);
  egress_expr_reject (r, NFT_REJECT_TCP_RST, 0);
  egress_batch_add_rule (b, r);
  r = egress_rule_new (b, HOST_REFUSE);
  match_link (r, NFT_META_IIFNAME, false);
  egress_expr_reject (r, NFT_REJECT_ICMPX_UNREACH,
                      NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
  egress_batch_add_rule (b, r);
}

static int
host_transaction (bool with_table, bool add, const char *hash,
                  const egress_lease *lease, bool link, bool pair,
                  ar_error_t **err)
{
  cleanup_batch egress_batch *b
      = egress_batch_new (NFPROTO_INET, EGRESS_HOST_TABLE);
  if (with_table)
    add_host_table (b);
  if (add && link)
    refuse_to_host_chain (b);
  host_elements (b, add, hash, lease, link, pair);
  return egress_batch_commit (b, err);
}

/* The table is made by the first create that finds it missing; creates
 * are serialised by the lease lock, so only one does. */
int
egress_nft_host_attach (const char *hash, const egress_lease *lease,
                        ar_error_t **err)
{
  cleanup_error ar_error_t *missing = NULL;
  if (host_transaction (false, true, hash, lease, true, true, &missing) == 0)
    return 0;
  return host_transaction (true, true, hash, lease, true, true, err);
}

/* A failed transaction changes nothing: when one element is already
 * gone, the other is removed on its own. `lease` NULL: only the link. */
void
egress_nft_host_detach (const char *hash, const egress_lease *lease)
{
  cleanup_error ar_error_t *ignored = NULL;
  if (lease
      && host_transaction (false, false, hash, lease, true, true, &ignored)
             == 0)
    return;
  ar_error_free (steal_pointer (&ignored));
  if (lease)
    host_transaction (false, false, hash, lease, false, true, &ignored);
  ar_error_free (steal_pointer (&ignored));
  host_transaction (false, false, hash, lease, true, false, &ignored);
}
