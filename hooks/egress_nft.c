/* The nftables rules, as nft text run through libnftables in the current
 * netns (one transaction per buffer: the table appears whole or not at
 * all).
 *
 * In the container's netns, table inet agentrun:
 *   output: policy drop. lo (our resolver on 127.0.0.53 lives there) and
 *   replies pass; host services (link-local and metadata, the host side
 *   of the veth, an engine's gateway), DNS to anyone but the resolver,
 *   ICMP and anything an engine DNATs on lo are refused first, so that no
 *   allow entry (not even 0.0.0.0/0) opens them; then the allow sets.
 *   Refusals are fast: a TCP reset, an ICMP admin-prohibited otherwise.
 *   input: only lo, replies and IPv6 neighbour discovery.
 * On the host, table inet agentrun-egress (shared): masquerade and forward
 * for each container's /30 from its own veth only, and nothing from a
 * veth to the host itself. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <string.h>

int
egress_nft_run (const char *commands, ar_error_t **err)
{
  struct nft_ctx *nft = nft_ctx_new (NFT_CTX_DEFAULT);
  if (nft == NULL)
    return ar_error_set (err, 0, "nftables: cannot make a context");
  nft_ctx_buffer_output (nft);
  nft_ctx_buffer_error (nft);
  int r = nft_run_cmd_from_buffer (nft, commands);
  if (r != 0)
    {
      const char *msg = nft_ctx_get_error_buffer (nft);
      cleanup_free char *line = strndup (msg ? msg : "", 400);
      for (char *p = line; *p; p++)
        if (*p == '\n')
          *p = ' ';
      ar_error_set (err, 0, "nftables: %s", *line ? line : "failed");
    }
  nft_ctx_free (nft);
  return r != 0 ? -1 : 0;
}

/* A growing string. */
typedef struct
{
  char *buf;
  size_t len, cap;
} text;

static void __attribute__ ((format (printf, 2, 3)))
put (text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;)
    {
      va_start (ap, fmt);
      int n = vsnprintf (t->buf + t->len, t->cap - t->len, fmt, ap);
      va_end (ap);
      if ((size_t) n < t->cap - t->len)
        {
          t->len += (size_t) n;
          return;
        }
      t->cap = (t->cap + (size_t) n) * 2;
      t->buf = xrealloc (t->buf, t->cap);
    }
}

/* The static elements of one set: entries of `kind`, with or without a
 * port. Returns how many were written. */
static size_t
put_elements (text *t, const egress_allowlist *allow, egress_entry_kind kind,
              bool with_port)
{
  size_t n = 0;
  for (size_t i = 0; allow && i < allow->len; i++)
    {
      const egress_entry *e = &allow->items[i];
      if (e->kind != kind || (e->port != 0) != with_port)
        continue;
      put (t, n ? ", " : " elements = { ");
      if (with_port)
        put (t, "%s . %u", e->text, e->port);
      else
        put (t, "%s", e->text);
      n++;
    }
  if (n)
    put (t, " };");
  return n;
}

static void
put_sets (text *t, const egress_allowlist *allow)
{
  put (t, "  set allow4 { type ipv4_addr; flags interval;");
  put_elements (t, allow, ENTRY_NET4, false);
  put (t, " }\n  set allow6 { type ipv6_addr; flags interval;");
  put_elements (t, allow, ENTRY_NET6, false);
  put (t, " }\n  set allow4p { type ipv4_addr . inet_service; flags timeout;");
  put_elements (t, allow, ENTRY_NET4, true);
  put (t, " }\n  set allow6p { type ipv6_addr . inet_service; flags timeout;");
  put_elements (t, allow, ENTRY_NET6, true);
  put (t, " }\n"
          "  set dyn4 { type ipv4_addr; flags timeout; }\n"
          "  set dyn6 { type ipv6_addr; flags timeout; }\n");
}

static void
put_host_service_refusals (text *t, const egress_filter *f)
{
  char addr[INET_ADDRSTRLEN];
  put (t, "    ip daddr 169.254.0.0/16 goto refuse\n"
          "    ip6 daddr fe80::/10 goto refuse\n");
  if (f->has_host_addr)
    put (t, "    ip daddr %s goto refuse\n",
         inet_ntop (AF_INET, &f->host_addr, addr, sizeof addr));
  if (f->has_gateway)
    put (t, "    ip daddr %s goto refuse\n",
         inet_ntop (AF_INET, &f->gateway, addr, sizeof addr));
}

char *
egress_container_ruleset (const egress_filter *f)
{
  text t = { 0 };
  /* Start from nothing: a second create in the same netns (an engine's
   * restart) replaces, never stacks. */
  put (&t, "table inet " EGRESS_CONTAINER_TABLE "\n"
           "delete table inet " EGRESS_CONTAINER_TABLE "\n"
           "table inet " EGRESS_CONTAINER_TABLE " {\n");
  put_sets (&t, f->allow);
  put (&t, "  chain refuse {\n");
  if (f->nflog_group >= 0)
    put (&t, "    limit rate 20/second burst 40 packets log group %d\n", f->nflog_group);
  put (&t, "    meta l4proto tcp reject with tcp reset\n"
           "    reject with icmpx admin-prohibited\n  }\n");
  put (&t, "  chain output {\n"
           "    type filter hook output priority filter; policy drop;\n"
           "    oif lo ct status dnat goto refuse\n"
           "    oif lo accept\n"
           "    ct state established,related accept\n"
           "    ip6 daddr { fe80::/10, ff02::/16 } icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, mld-listener-report, mld2-listener-report } accept\n");
  put_host_service_refusals (&t, f);
  put (&t, "    meta l4proto { tcp, udp } th dport 53 goto refuse\n"
           "    meta l4proto { icmp, ipv6-icmp } goto refuse\n");
  if (f->mode == EGRESS_MODE_OPEN)
    put (&t, "    accept\n");
  put (&t, "    ip daddr @allow4 accept\n"
           "    ip daddr @dyn4 accept\n"
           "    ip6 daddr @allow6 accept\n"
           "    ip6 daddr @dyn6 accept\n"
           "    meta l4proto { tcp, udp } ip daddr . th dport @allow4p accept\n"
           "    meta l4proto { tcp, udp } ip6 daddr . th dport @allow6p accept\n"
           "    goto refuse\n  }\n");
  put (&t, "  chain input {\n"
           "    type filter hook input priority filter; policy drop;\n"
           "    iif lo accept\n"
           "    ct state established,related accept\n"
           "    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert } accept\n"
           "  }\n}\n");
  return t.buf;
}

/* One host table for all containers, made once and kept: each container
 * only adds its veth and /30 to the sets. Registering a NAT or filter
 * hook is what costs (the kernel patches its code when the first hook of
 * a kind appears and again when the last goes: 5-10 ms in a VM), so the
 * table also holds an empty output chain: with it, the chains in each
 * container's netns never are the first of their kind. */
char *
egress_host_table (void)
{
  return xstrdup (
      "table inet " EGRESS_HOST_TABLE " {\n"
      "  set links { type ifname; }\n"
      "  set pairs { type ifname . ipv4_addr; flags interval; }\n"
      "  chain postrouting {\n"
      "    type nat hook postrouting priority srcnat; policy accept;\n"
      "    iifname . ip saddr @pairs oifname != @links masquerade\n"
      "  }\n"
      "  chain forward {\n"
      "    type filter hook forward priority filter; policy accept;\n"
      "    iifname . ip saddr @pairs accept\n"
      "    iifname @links drop\n"
      "    oifname @links ct state established,related accept\n"
      "    oifname @links drop\n"
      "  }\n"
      "  chain input {\n"
      "    type filter hook input priority filter; policy accept;\n"
      "    iifname @links ct state established,related accept\n"
      "    iifname @links drop\n"
      "  }\n"
      "  chain output {\n"
      "    type filter hook output priority filter; policy accept;\n"
      "  }\n"
      "}\n");
}

char *
egress_host_elements (const char *verb, const char *hash,
                      const egress_lease *lease, bool pair)
{
  char net[INET_ADDRSTRLEN];
  inet_ntop (AF_INET, &lease->network, net, sizeof net);
  if (pair)
    return xasprintf ("%s element inet " EGRESS_HOST_TABLE
                      " pairs { \"ar%s\" . %s/30 }\n", verb, hash, net);
  return xasprintf ("%s element inet " EGRESS_HOST_TABLE " links { \"ar%s\" }\n",
                    verb, hash);
}
