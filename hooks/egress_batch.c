/* nftables transactions over netlink; see egress_batch.h. */
#include "config.h"
#include "egress_batch.h"
#include "../src/util/cleanup.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

/* Room for the largest single message (a rule, one element). */
#define MESSAGE_ROOM 8192

struct egress_batch
{
  uint32_t family;
  char *table;
  uint8_t *buf;
  size_t len, cap;
  uint32_t first_seq, next_seq, next_set_id;
  char **what; /* per message, for the error: "set allow4" */
  size_t n_what;
};

egress_batch *
egress_batch_new (uint32_t family, const char *table)
{
  egress_batch *b = xcalloc (1, sizeof *b);
  b->family = family;
  b->table = xstrdup (table);
  b->first_seq = b->next_seq = 1;
  b->next_set_id = 1;
  return b;
}

void
egress_batch_free (egress_batch *b)
{
  if (b == NULL)
    return;
  for (size_t i = 0; i < b->n_what; i++)
    free (b->what[i]);
  free (b->what);
  free (b->buf);
  free (b->table);
  free (b);
}

static void *
message_room (egress_batch *b)
{
  if (b->cap - b->len < MESSAGE_ROOM)
    {
      b->cap = (b->cap + MESSAGE_ROOM) * 2;
      b->buf = xrealloc (b->buf, b->cap);
    }
  return b->buf + b->len;
}

static void
message_done (egress_batch *b, struct nlmsghdr *nlh)
{
  b->len += NLMSG_ALIGN (nlh->nlmsg_len);
}

/* The header of the next message of the transaction; `what` names its
 * object in errors. */
static struct nlmsghdr *
message_begin (egress_batch *b, uint16_t type, uint16_t flags, char *what)
{
  if (b->len == 0)
    {
      message_done (b, nftnl_batch_begin (message_room (b), b->next_seq++));
      b->first_seq = b->next_seq;
    }
  b->what = xrealloc (b->what, (b->n_what + 1) * sizeof *b->what);
  b->what[b->n_what++] = what;
  return nftnl_nlmsg_build_hdr (message_room (b), type, (uint16_t) b->family,
                                flags, b->next_seq++);
}

void
egress_batch_add_table (egress_batch *b)
{
  struct nftnl_table *t = nftnl_table_alloc ();
  nftnl_table_set_str (t, NFTNL_TABLE_NAME, b->table);
  struct nlmsghdr *nlh = message_begin (b, NFT_MSG_NEWTABLE, NLM_F_CREATE,
                                        xasprintf ("table %s", b->table));
  nftnl_table_nlmsg_build_payload (nlh, t);
  message_done (b, nlh);
  nftnl_table_free (t);
}

void
egress_batch_delete_table (egress_batch *b)
{
  struct nftnl_table *t = nftnl_table_alloc ();
  nftnl_table_set_str (t, NFTNL_TABLE_NAME, b->table);
  struct nlmsghdr *nlh = message_begin (b, NFT_MSG_DELTABLE, 0,
                                        xasprintf ("delete table %s", b->table));
  nftnl_table_nlmsg_build_payload (nlh, t);
  message_done (b, nlh);
  nftnl_table_free (t);
}

void
egress_batch_add_chain (egress_batch *b, const char *name, int hook,
                        int priority, const char *type, int policy)
{
  struct nftnl_chain *c = nftnl_chain_alloc ();
  nftnl_chain_set_str (c, NFTNL_CHAIN_TABLE, b->table);
  nftnl_chain_set_str (c, NFTNL_CHAIN_NAME, name);
  if (hook >= 0)
    {
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_HOOKNUM, (uint32_t) hook);
      nftnl_chain_set_s32 (c, NFTNL_CHAIN_PRIO, priority);
      nftnl_chain_set_str (c, NFTNL_CHAIN_TYPE, type);
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_POLICY, (uint32_t) policy);
    }
  struct nlmsghdr *nlh = message_begin (b, NFT_MSG_NEWCHAIN, NLM_F_CREATE,
                                        xasprintf ("chain %s", name));
  nftnl_chain_nlmsg_build_payload (nlh, c);
  message_done (b, nlh);
  nftnl_chain_free (c);
}

void
egress_batch_add_set (egress_batch *b, const egress_set_spec *spec)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, b->table);
  nftnl_set_set_str (s, NFTNL_SET_NAME, spec->name);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, b->family);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_LEN, spec->key_len);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_TYPE, spec->key_type);
  nftnl_set_set_u32 (s, NFTNL_SET_ID, b->next_set_id++);
  if (spec->flags)
    nftnl_set_set_u32 (s, NFTNL_SET_FLAGS, spec->flags);
  if (spec->host_order_key)
    {
      /* nft's set user data: one TLV (type 0, "key byte order", a u32
       * in host order), value 1: host order. */
      uint8_t udata[6] = { 0, 4 };
      uint32_t host_order = 1;
      memcpy (udata + 2, &host_order, sizeof host_order);
      nftnl_set_set_data (s, NFTNL_SET_USERDATA, udata, sizeof udata);
    }
  if (spec->n_concat)
    nftnl_set_set_data (s, NFTNL_SET_DESC_CONCAT, spec->concat_lens,
                        (uint32_t) spec->n_concat);
  struct nlmsghdr *nlh = message_begin (b, NFT_MSG_NEWSET, NLM_F_CREATE,
                                        xasprintf ("set %s", spec->name));
  nftnl_set_nlmsg_build_payload (nlh, s);
  message_done (b, nlh);
  nftnl_set_free (s);
}

void
egress_batch_element (egress_batch *b, const char *set, bool add,
                      const void *key, size_t len, const void *key_end,
                      uint64_t timeout_ms)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, b->table);
  nftnl_set_set_str (s, NFTNL_SET_NAME, set);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, b->family);
  struct nftnl_set_elem *e = nftnl_set_elem_alloc ();
  nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY, key, (uint32_t) len);
  if (key_end)
    nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY_END, key_end, (uint32_t) len);
  if (timeout_ms)
    nftnl_set_elem_set_u64 (e, NFTNL_SET_ELEM_TIMEOUT, timeout_ms);
  nftnl_set_elem_add (s, e);
  struct nlmsghdr *nlh = message_begin (b, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM,
                                        add ? NLM_F_CREATE : 0,
                                        xasprintf ("element of set %s", set));
  nftnl_set_elems_nlmsg_build_payload (nlh, s);
  message_done (b, nlh);
  nftnl_set_free (s);
}

struct nftnl_rule *
egress_rule_new (egress_batch *b, const char *chain)
{
  struct nftnl_rule *r = nftnl_rule_alloc ();
  nftnl_rule_set_str (r, NFTNL_RULE_TABLE, b->table);
  nftnl_rule_set_str (r, NFTNL_RULE_CHAIN, chain);
  nftnl_rule_set_u32 (r, NFTNL_RULE_FAMILY, b->family);
  return r;
}

void
egress_batch_add_rule (egress_batch *b, struct nftnl_rule *r)
{
  const char *chain = nftnl_rule_get_str (r, NFTNL_RULE_CHAIN);
  struct nlmsghdr *nlh = message_begin (b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                                        xasprintf ("rule in chain %s", chain));
  nftnl_rule_nlmsg_build_payload (nlh, r);
  message_done (b, nlh);
  nftnl_rule_free (r);
}

/* ---- expressions ------------------------------------------------------ */

static struct nftnl_expr *
expr (struct nftnl_rule *r, const char *name)
{
  struct nftnl_expr *e = nftnl_expr_alloc (name);
  if (e == NULL)
    abort (); /* only for a name this file does not know */
  nftnl_rule_add_expr (r, e);
  return e;
}

void
egress_expr_meta (struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *e = expr (r, "meta");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_DREG, dreg);
}

void
egress_expr_cmp (struct nftnl_rule *r, uint32_t sreg, uint32_t op,
                 const void *data, size_t len)
{
  struct nftnl_expr *e = expr (r, "cmp");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_SREG, sreg);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_OP, op);
  nftnl_expr_set (e, NFTNL_EXPR_CMP_DATA, data, (uint32_t) len);
}

void
egress_expr_payload (struct nftnl_rule *r, uint32_t base, uint32_t offset,
                     uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *e = expr (r, "payload");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_LEN, len);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
}

void
egress_expr_bitwise (struct nftnl_rule *r, uint32_t reg, const void *mask,
                     size_t len)
{
  static const uint8_t zero[16];
  struct nftnl_expr *e = expr (r, "bitwise");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_SREG, reg);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_DREG, reg);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_LEN, (uint32_t) len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_MASK, mask, (uint32_t) len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_XOR, zero, (uint32_t) len);
}

void
egress_expr_ct (struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *e = expr (r, "ct");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_DREG, dreg);
}

void
egress_expr_lookup (struct nftnl_rule *r, uint32_t sreg, const char *set,
                    bool inverted)
{
  struct nftnl_expr *e = expr (r, "lookup");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_SREG, sreg);
  nftnl_expr_set_str (e, NFTNL_EXPR_LOOKUP_SET, set);
  if (inverted)
    nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
}

void
egress_expr_verdict (struct nftnl_rule *r, int verdict, const char *chain)
{
  struct nftnl_expr *e = expr (r, "immediate");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_VERDICT, (uint32_t) verdict);
  if (chain)
    nftnl_expr_set_str (e, NFTNL_EXPR_IMM_CHAIN, chain);
}

void
egress_expr_reject (struct nftnl_rule *r, uint32_t type, uint32_t code)
{
  struct nftnl_expr *e = expr (r, "reject");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_REJECT_TYPE, type);
  nftnl_expr_set_u8 (e, NFTNL_EXPR_REJECT_CODE, (uint8_t) code);
}

void
egress_expr_limit (struct nftnl_rule *r, uint64_t per_second, uint32_t burst)
{
  struct nftnl_expr *e = expr (r, "limit");
  nftnl_expr_set_u64 (e, NFTNL_EXPR_LIMIT_RATE, per_second);
  nftnl_expr_set_u64 (e, NFTNL_EXPR_LIMIT_UNIT, 1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LIMIT_BURST, burst);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
}

void
egress_expr_log (struct nftnl_rule *r, uint16_t group)
{
  struct nftnl_expr *e = expr (r, "log");
  nftnl_expr_set_u16 (e, NFTNL_EXPR_LOG_GROUP, group);
}

void
egress_expr_masquerade (struct nftnl_rule *r)
{
  expr (r, "masq");
}

/* ---- commit ----------------------------------------------------------- */

static void
mnl_socket_closep (struct mnl_socket **nl)
{
  if (*nl)
    mnl_socket_close (*nl);
}

/* Every message asks for an ack: the kernel answers each (after the
 * commit, or with the abort), so the last ack, or the first error,
 * settles it. Buffers grow to fit a large allow-list. */
static int
send_batch (struct mnl_socket *nl, egress_batch *b, ar_error_t **err)
{
  int fd = mnl_socket_get_fd (nl);
  int size = (int) b->len + 4096;
  int acks = (int) (b->n_what * 64) + 4096;
  if (size > 212992)
    setsockopt (fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
  if (acks > 212992)
    setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &acks, sizeof acks);
  if (mnl_socket_sendto (nl, b->buf, b->len) < 0)
    return ar_error_set (err, errno, "nftables: send the transaction");
  return 0;
}

static int
wait_for_verdict (struct mnl_socket *nl, egress_batch *b, ar_error_t **err)
{
  uint32_t last = b->next_seq - 2; /* the end message has no ack */
  cleanup_free uint8_t *buf = xmalloc (MNL_SOCKET_BUFFER_SIZE);
  for (;;)
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, MNL_SOCKET_BUFFER_SIZE);
      if (n < 0)
        return ar_error_set (err, errno, "nftables: read the kernel's answer");
      int left = (int) n;
      for (struct nlmsghdr *nlh = (struct nlmsghdr *) buf; mnl_nlmsg_ok (nlh, left);
           nlh = mnl_nlmsg_next (nlh, &left))
        {
          if (nlh->nlmsg_type != NLMSG_ERROR)
            continue;
          const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
          size_t index = nlh->nlmsg_seq - b->first_seq;
          if (e->error != 0)
            return ar_error_set (err, -e->error, "nftables: %s",
                                 index < b->n_what ? b->what[index] : "transaction");
          if (nlh->nlmsg_seq == last)
            return 0;
        }
    }
}

int
egress_batch_commit (egress_batch *b, ar_error_t **err)
{
  if (b->n_what == 0)
    return 0;
  /* Every message but the batch markers gets NLM_F_ACK here, once. */
  for (size_t off = 0; off < b->len;)
    {
      struct nlmsghdr *nlh = (struct nlmsghdr *) (b->buf + off);
      if (nlh->nlmsg_type != NFNL_MSG_BATCH_BEGIN)
        nlh->nlmsg_flags |= NLM_F_ACK;
      off += NLMSG_ALIGN (nlh->nlmsg_len);
    }
  message_done (b, nftnl_batch_end (message_room (b), b->next_seq++));
  __attribute__ ((cleanup (mnl_socket_closep))) struct mnl_socket *nl
      = mnl_socket_open2 (NETLINK_NETFILTER, SOCK_CLOEXEC);
  if (nl == NULL || mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return ar_error_set (err, errno, "nftables: open a netlink socket");
  if (send_batch (nl, b, err) < 0)
    return -1;
  return wait_for_verdict (nl, b, err);
}
