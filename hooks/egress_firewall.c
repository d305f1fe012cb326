/* SPDX-License-Identifier: Apache-2.0 */
/* The host's own firewall. Docker sets iptables' FORWARD policy to DROP
 * (so do ufw and others that forward nothing by default), and a packet
 * must be accepted by every base chain of its hook: the accept in
 * agentrun's table does not outvote that drop, and a sandbox's
 * connections through its veth time out. So, as libvirt and Podman's
 * netavark do, agentrun adds accept rules of its own to that chain for
 * its veths (`ar+`): what they send, and the replies to it. They go in
 * through iptables itself, so that iptables and Docker keep reading their
 * table (a rule of nf_tables' own making there is one they refuse), and
 * carry the comment EGRESS_FIREWALL_MARK; the last lease to go takes
 * them away. Where the chain's policy accepts, or there is no such chain
 * in nf_tables, nothing is touched. (iptables-legacy's tables are not
 * seen: docs/profiles.md.)
 *
 * Looking is cheap (two netlink requests); iptables runs only when the
 * rules are missing: once, and again after the firewall was reloaded. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/netlink.h"
#include "../src/util/spawn.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <string.h>

#define EGRESS_FIREWALL_MARK "agentrun-egress"
#define IPTABLES_TABLE "filter"
#define IPTABLES_CHAIN "FORWARD"
#define RECV_BYTES 65536 /* room for one datagram of a dump */

typedef struct
{
  bool chain; /* iptables' filter FORWARD exists in nf_tables */
  bool drops; /* its policy is drop */
  bool ours;  /* a rule of ours is in it */
} forward_chain;

static void
request (ar_nl_buf *b, uint16_t type, uint16_t flags)
{
  ar_nl_msg (b, (uint16_t) (NFNL_SUBSYS_NFTABLES << 8 | type),
             NLM_F_REQUEST | flags, 1);
  struct nfgenmsg nfg
      = { .nfgen_family = NFPROTO_IPV4, .version = NFNETLINK_V0 };
  ar_nl_put (b, &nfg, sizeof nfg);
}

/* The answers to one request, until the dump's end or the first error:
 * each message is handed to `each`. */
static int
ask (const ar_nl_buf *b, void (*each) (const struct nlmsghdr *, void *),
     void *data)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd = ar_nl_socket (NETLINK_NETFILTER, &err);
  if (fd < 0 || ar_nl_send (fd, b, &err) < 0)
    return -1;
  cleanup_free uint8_t *buf = xmalloc (RECV_BYTES);
  for (;;)
    {
      ssize_t len = recv (fd, buf, RECV_BYTES, 0);
      if (len < 0)
        return -1;
      ar_nl_for_each_msg (nlh, buf, (size_t) len)
      {
        if (nlh->nlmsg_type == NLMSG_DONE)
          return 0;
        if (nlh->nlmsg_type == NLMSG_ERROR)
          {
            const struct nlmsgerr *e = NLMSG_DATA (nlh);
            return e->error == 0 ? 0 : -1;
          }
        each (nlh, data);
        if (!(nlh->nlmsg_flags & NLM_F_MULTI))
          return 0;
      }
    }
}

static void
note_policy (const struct nlmsghdr *nlh, void *data)
{
  forward_chain *f = data;
  const struct nlattr *tb[NFTA_CHAIN_MAX + 1];
  ar_nl_parse (nlh, sizeof (struct nfgenmsg), tb, NFTA_CHAIN_MAX);
  f->chain = true;
  uint32_t policy;
  if (tb[NFTA_CHAIN_POLICY] && ar_nl_attr_len (tb[NFTA_CHAIN_POLICY]) == 4)
    {
      memcpy (&policy, ar_nl_attr_data (tb[NFTA_CHAIN_POLICY]), 4);
      f->drops = be32toh (policy) == NF_DROP;
    }
}

/* A rule whose bytes (its comment is in its user data) hold our mark. */
static void
note_rule (const struct nlmsghdr *nlh, void *data)
{
  forward_chain *f = data;
  f->ours = f->ours
            || memmem (nlh, nlh->nlmsg_len, EGRESS_FIREWALL_MARK,
                       strlen (EGRESS_FIREWALL_MARK))
                   != NULL;
}

static forward_chain
look_at_forward (void)
{
  forward_chain f = { 0 };
  cleanup_nl_buf ar_nl_buf chain = { 0 };
  request (&chain, NFT_MSG_GETCHAIN, 0);
  ar_nl_attr_str (&chain, NFTA_CHAIN_TABLE, IPTABLES_TABLE);
  ar_nl_attr_str (&chain, NFTA_CHAIN_NAME, IPTABLES_CHAIN);
  if (ask (&chain, note_policy, &f) < 0 || !f.chain)
    return (forward_chain){ 0 };
  cleanup_nl_buf ar_nl_buf rules = { 0 };
  request (&rules, NFT_MSG_GETRULE, NLM_F_DUMP);
  ar_nl_attr_str (&rules, NFTA_RULE_TABLE, IPTABLES_TABLE);
  ar_nl_attr_str (&rules, NFTA_RULE_CHAIN, IPTABLES_CHAIN);
  ask (&rules, note_rule, &f);
  return f;
}

/* iptables -w OP FORWARD ... for each of our two rules. */
static int
iptables_rules (const char *op, ar_error_t **err)
{
  static const char *const rules[][8] = {
    { "-i", "ar+", "-j", "ACCEPT", NULL },
    { "-o", "ar+", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j",
      "ACCEPT" },
  };
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
    {
      const char *argv[24] = { "iptables", "-w", op, IPTABLES_CHAIN };
      size_t n = 4;
      if (strcmp (op, "-I") == 0)
        argv[n++] = i == 0 ? "1" : "2";
      for (size_t k = 0; k < 8 && rules[i][k]; k++)
        argv[n++] = rules[i][k];
      argv[n++] = "-m";
      argv[n++] = "comment";
      argv[n++] = "--comment";
      argv[n++] = EGRESS_FIREWALL_MARK;
      cleanup_free char *message = NULL;
      int r = ar_spawn_wait ((char *const *) argv, &message, err);
      if (r < 0)
        return ar_error_prefix (
            err, "the host's FORWARD chain drops what the sandbox sends");
      if (r > 0)
        return ar_error_set (err, 0, "iptables %s FORWARD: %s", op, message);
    }
  return 0;
}

void
egress_firewall_close (void)
{
  cleanup_error ar_error_t *ignored = NULL;
  while (look_at_forward ().ours && iptables_rules ("-D", &ignored) == 0)
    ;
}

int
egress_firewall_open (ar_error_t **err)
{
  forward_chain f = look_at_forward ();
  if (!f.drops || f.ours)
    return 0;
  if (iptables_rules ("-I", err) == 0)
    return 0;
  egress_firewall_close (); /* the first rule, when the second failed */
  return -1;
}
