/* SPDX-License-Identifier: Apache-2.0 */
/* nftables transactions over netlink; see egress_batch.h. Each object is
 * one message: nfgenmsg, then the attributes nf_tables_api.c parses. */
#include "config.h"
#include "egress_batch.h"
#include "../src/util/cleanup.h"
#include "../src/util/netlink.h"

#include <endian.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct egress_rule
{
  ar_nl_buf *msgs;    /* its batch's: expressions go straight in */
  size_t expressions; /* the open NFTA_RULE_EXPRESSIONS nest */
};

struct egress_batch
{
  uint32_t family;
  char *table;
  ar_nl_buf msgs;
  uint32_t first_seq, next_seq, next_set_id;
  char **what; /* per message, for the error: "set allow4" */
  size_t n_what;
  size_t last_msg; /* offset of the last object's message */
  egress_rule rule;
};

egress_batch *
egress_batch_new (uint32_t family, const char *table)
{
  egress_batch *b = xcalloc (1, sizeof *b);
  b->family = family;
  b->table = xstrdup (table);
  b->next_seq = 1;
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
  ar_nl_buf_free (&b->msgs);
  free (b->table);
  free (b);
}

static void
nfnl_message (egress_batch *b, uint16_t type, uint16_t flags, uint8_t family,
              uint16_t res_id)
{
  ar_nl_msg (&b->msgs, type, flags, b->next_seq++);
  struct nfgenmsg nfg = { .nfgen_family = family,
                          .version = NFNETLINK_V0,
                          .res_id = htobe16 (res_id) };
  ar_nl_put (&b->msgs, &nfg, sizeof nfg);
}

/* The next message of the transaction, its table named; `what` names its
 * object in errors. */
static void
message_begin (egress_batch *b, uint16_t type, uint16_t flags, char *what)
{
  if (b->msgs.len == 0)
    {
      nfnl_message (b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC,
                    NFNL_SUBSYS_NFTABLES);
      b->first_seq = b->next_seq;
    }
  b->what = xrealloc (b->what, (b->n_what + 1) * sizeof *b->what);
  b->what[b->n_what++] = what;
  b->last_msg = b->msgs.len;
  nfnl_message (b, (uint16_t) (NFNL_SUBSYS_NFTABLES << 8 | type), flags,
                (uint8_t) b->family, 0);
}

void
egress_batch_add_table (egress_batch *b)
{
  message_begin (b, NFT_MSG_NEWTABLE, NLM_F_CREATE,
                 xasprintf ("table %s", b->table));
  ar_nl_attr_str (&b->msgs, NFTA_TABLE_NAME, b->table);
}

void
egress_batch_delete_table (egress_batch *b)
{
  message_begin (b, NFT_MSG_DELTABLE, 0,
                 xasprintf ("delete table %s", b->table));
  ar_nl_attr_str (&b->msgs, NFTA_TABLE_NAME, b->table);
}

void
egress_batch_add_chain (egress_batch *b, const char *name, int hook,
                        int priority, const char *type, int policy)
{
  ar_nl_buf *m = &b->msgs;
  message_begin (b, NFT_MSG_NEWCHAIN, NLM_F_CREATE,
                 xasprintf ("chain %s", name));
  ar_nl_attr_str (m, NFTA_CHAIN_TABLE, b->table);
  ar_nl_attr_str (m, NFTA_CHAIN_NAME, name);
  if (hook < 0)
    return;
  size_t nest = ar_nl_nest (m, NFTA_CHAIN_HOOK);
  ar_nl_attr_be32 (m, NFTA_HOOK_HOOKNUM, (uint32_t) hook);
  ar_nl_attr_be32 (m, NFTA_HOOK_PRIORITY, (uint32_t) priority);
  ar_nl_nest_end (m, nest);
  ar_nl_attr_be32 (m, NFTA_CHAIN_POLICY, (uint32_t) policy);
  ar_nl_attr_str (m, NFTA_CHAIN_TYPE, type);
}

void
egress_batch_flush_chain (egress_batch *b, const char *name)
{
  ar_nl_buf *m = &b->msgs;
  message_begin (b, NFT_MSG_DELRULE, 0, xasprintf ("flush chain %s", name));
  ar_nl_attr_str (m, NFTA_RULE_TABLE, b->table);
  ar_nl_attr_str (m, NFTA_RULE_CHAIN, name);
}

void
egress_batch_add_set (egress_batch *b, const egress_set_spec *spec)
{
  ar_nl_buf *m = &b->msgs;
  message_begin (b, NFT_MSG_NEWSET, NLM_F_CREATE,
                 xasprintf ("set %s", spec->name));
  ar_nl_attr_str (m, NFTA_SET_TABLE, b->table);
  ar_nl_attr_str (m, NFTA_SET_NAME, spec->name);
  if (spec->flags)
    ar_nl_attr_be32 (m, NFTA_SET_FLAGS, spec->flags);
  ar_nl_attr_be32 (m, NFTA_SET_KEY_TYPE, spec->key_type);
  ar_nl_attr_be32 (m, NFTA_SET_KEY_LEN, spec->key_len);
  ar_nl_attr_be32 (m, NFTA_SET_ID, b->next_set_id++);
  if (spec->host_order_key)
    {
      /* nft's set user data: one TLV (type 0, "key byte order", a u32
       * in host order), value 1: host order. */
      uint8_t udata[6] = { 0, 4 };
      uint32_t host_order = 1;
      memcpy (udata + 2, &host_order, sizeof host_order);
      ar_nl_attr (m, NFTA_SET_USERDATA, udata, sizeof udata);
    }
  if (spec->n_concat == 0)
    return;
  size_t desc = ar_nl_nest (m, NFTA_SET_DESC);
  size_t concat = ar_nl_nest (m, NFTA_SET_DESC_CONCAT);
  for (size_t i = 0; i < spec->n_concat; i++)
    {
      size_t field = ar_nl_nest (m, NFTA_LIST_ELEM);
      ar_nl_attr_be32 (m, NFTA_SET_FIELD_LEN, spec->concat_lens[i]); /* bytes */
      ar_nl_nest_end (m, field);
    }
  ar_nl_nest_end (m, concat);
  ar_nl_nest_end (m, desc);
}

/* An nft_data value: NFTA_DATA_VALUE inside `type`. */
static void
data_value (ar_nl_buf *m, uint16_t type, const void *data, size_t len)
{
  size_t nest = ar_nl_nest (m, type);
  ar_nl_attr (m, NFTA_DATA_VALUE, data, len);
  ar_nl_nest_end (m, nest);
}

void
egress_batch_element (egress_batch *b, const char *set, bool add,
                      const void *key, size_t len, const void *key_end,
                      uint64_t timeout_ms)
{
  ar_nl_buf *m = &b->msgs;
  message_begin (b, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM,
                 add ? NLM_F_CREATE : 0, xasprintf ("element of set %s", set));
  ar_nl_attr_str (m, NFTA_SET_ELEM_LIST_TABLE, b->table);
  ar_nl_attr_str (m, NFTA_SET_ELEM_LIST_SET, set);
  size_t list = ar_nl_nest (m, NFTA_SET_ELEM_LIST_ELEMENTS);
  size_t elem = ar_nl_nest (m, NFTA_LIST_ELEM);
  data_value (m, NFTA_SET_ELEM_KEY, key, len);
  if (key_end)
    data_value (m, NFTA_SET_ELEM_KEY_END, key_end, len);
  if (timeout_ms)
    ar_nl_attr_be64 (m, NFTA_SET_ELEM_TIMEOUT, timeout_ms);
  ar_nl_nest_end (m, elem);
  ar_nl_nest_end (m, list);
}

egress_rule *
egress_rule_new (egress_batch *b, const char *chain)
{
  ar_nl_buf *m = &b->msgs;
  message_begin (b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                 xasprintf ("rule in chain %s", chain));
  ar_nl_attr_str (m, NFTA_RULE_TABLE, b->table);
  ar_nl_attr_str (m, NFTA_RULE_CHAIN, chain);
  b->rule
      = (egress_rule){ .msgs = m,
                       .expressions = ar_nl_nest (m, NFTA_RULE_EXPRESSIONS) };
  return &b->rule;
}

void
egress_batch_add_rule (egress_batch *b, egress_rule *r)
{
  ar_nl_nest_end (&b->msgs, r->expressions);
}

/* ---- expressions ------------------------------------------------------ */

typedef struct
{
  ar_nl_buf *m;
  size_t elem, data;
} expr_nest;

static expr_nest
expr_begin (egress_rule *r, const char *name)
{
  expr_nest e = { .m = r->msgs };
  e.elem = ar_nl_nest (e.m, NFTA_LIST_ELEM);
  ar_nl_attr_str (e.m, NFTA_EXPR_NAME, name);
  e.data = ar_nl_nest (e.m, NFTA_EXPR_DATA);
  return e;
}

static void
expr_end (expr_nest e)
{
  ar_nl_nest_end (e.m, e.data);
  ar_nl_nest_end (e.m, e.elem);
}

void
egress_expr_meta (egress_rule *r, uint32_t key, uint32_t dreg)
{
  expr_nest e = expr_begin (r, "meta");
  ar_nl_attr_be32 (e.m, NFTA_META_DREG, dreg);
  ar_nl_attr_be32 (e.m, NFTA_META_KEY, key);
  expr_end (e);
}

void
egress_expr_cmp (egress_rule *r, uint32_t sreg, uint32_t op, const void *data,
                 size_t len)
{
  expr_nest e = expr_begin (r, "cmp");
  ar_nl_attr_be32 (e.m, NFTA_CMP_SREG, sreg);
  ar_nl_attr_be32 (e.m, NFTA_CMP_OP, op);
  data_value (e.m, NFTA_CMP_DATA, data, len);
  expr_end (e);
}

void
egress_expr_payload (egress_rule *r, uint32_t base, uint32_t offset,
                     uint32_t len, uint32_t dreg)
{
  expr_nest e = expr_begin (r, "payload");
  ar_nl_attr_be32 (e.m, NFTA_PAYLOAD_DREG, dreg);
  ar_nl_attr_be32 (e.m, NFTA_PAYLOAD_BASE, base);
  ar_nl_attr_be32 (e.m, NFTA_PAYLOAD_OFFSET, offset);
  ar_nl_attr_be32 (e.m, NFTA_PAYLOAD_LEN, len);
  expr_end (e);
}

void
egress_expr_bitwise (egress_rule *r, uint32_t reg, const void *mask, size_t len)
{
  static const uint8_t zero[16];
  expr_nest e = expr_begin (r, "bitwise");
  ar_nl_attr_be32 (e.m, NFTA_BITWISE_SREG, reg);
  ar_nl_attr_be32 (e.m, NFTA_BITWISE_DREG, reg);
  ar_nl_attr_be32 (e.m, NFTA_BITWISE_LEN, (uint32_t) len);
  data_value (e.m, NFTA_BITWISE_MASK, mask, len);
  data_value (e.m, NFTA_BITWISE_XOR, zero, len);
  expr_end (e);
}

void
egress_expr_ct (egress_rule *r, uint32_t key, uint32_t dreg)
{
  expr_nest e = expr_begin (r, "ct");
  ar_nl_attr_be32 (e.m, NFTA_CT_DREG, dreg);
  ar_nl_attr_be32 (e.m, NFTA_CT_KEY, key);
  expr_end (e);
}

void
egress_expr_lookup (egress_rule *r, uint32_t sreg, const char *set,
                    bool inverted)
{
  expr_nest e = expr_begin (r, "lookup");
  ar_nl_attr_str (e.m, NFTA_LOOKUP_SET, set);
  ar_nl_attr_be32 (e.m, NFTA_LOOKUP_SREG, sreg);
  if (inverted)
    ar_nl_attr_be32 (e.m, NFTA_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
  expr_end (e);
}

void
egress_expr_verdict (egress_rule *r, int verdict, const char *chain)
{
  expr_nest e = expr_begin (r, "immediate");
  ar_nl_attr_be32 (e.m, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
  size_t data = ar_nl_nest (e.m, NFTA_IMMEDIATE_DATA);
  size_t v = ar_nl_nest (e.m, NFTA_DATA_VERDICT);
  ar_nl_attr_be32 (e.m, NFTA_VERDICT_CODE, (uint32_t) verdict);
  if (chain)
    ar_nl_attr_str (e.m, NFTA_VERDICT_CHAIN, chain);
  ar_nl_nest_end (e.m, v);
  ar_nl_nest_end (e.m, data);
  expr_end (e);
}

void
egress_expr_reject (egress_rule *r, uint32_t type, uint32_t code)
{
  expr_nest e = expr_begin (r, "reject");
  ar_nl_attr_be32 (e.m, NFTA_REJECT_TYPE, type);
  ar_nl_attr_u8 (e.m, NFTA_REJECT_ICMP_CODE, (uint8_t) code);
  expr_end (e);
}

void
egress_expr_limit (egress_rule *r, uint64_t per_second, uint32_t burst)
{
  expr_nest e = expr_begin (r, "limit");
  ar_nl_attr_be64 (e.m, NFTA_LIMIT_RATE, per_second);
  ar_nl_attr_be64 (e.m, NFTA_LIMIT_UNIT, 1);
  ar_nl_attr_be32 (e.m, NFTA_LIMIT_BURST, burst);
  ar_nl_attr_be32 (e.m, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
  ar_nl_attr_be32 (e.m, NFTA_LIMIT_FLAGS, 0);
  expr_end (e);
}

void
egress_expr_log (egress_rule *r, uint16_t group, const char *prefix)
{
  expr_nest e = expr_begin (r, "log");
  ar_nl_attr_be16 (e.m, NFTA_LOG_GROUP, group);
  if (prefix)
    ar_nl_attr_str (e.m, NFTA_LOG_PREFIX, prefix);
  expr_end (e);
}

void
egress_expr_masquerade (egress_rule *r)
{
  expr_end (expr_begin (r, "masq"));
}

void
egress_expr_ct_set (egress_rule *r, uint32_t key, uint32_t sreg)
{
  expr_nest e = expr_begin (r, "ct");
  ar_nl_attr_be32 (e.m, NFTA_CT_KEY, key);
  ar_nl_attr_be32 (e.m, NFTA_CT_SREG, sreg);
  expr_end (e);
}

void
egress_expr_queue (egress_rule *r, uint16_t num, bool compat)
{
  if (!compat)
    {
      expr_nest e = expr_begin (r, "queue");
      ar_nl_attr_be16 (e.m, NFTA_QUEUE_NUM, num);
      ar_nl_attr_be16 (e.m, NFTA_QUEUE_TOTAL, 1);
      ar_nl_attr_be16 (e.m, NFTA_QUEUE_FLAGS, 0);
      expr_end (e);
      return;
    }
  /* xt_NFQUEUE's first revision: the queue number alone, host order. */
  expr_nest e = expr_begin (r, "target");
  ar_nl_attr_str (e.m, NFTA_TARGET_NAME, "NFQUEUE");
  ar_nl_attr_be32 (e.m, NFTA_TARGET_REV, 0);
  ar_nl_attr (e.m, NFTA_TARGET_INFO, &num, sizeof num);
  expr_end (e);
}

/* ---- commit ----------------------------------------------------------- */

int
egress_batch_commit (egress_batch *b, ar_error_t **err)
{
  if (b->n_what == 0)
    return 0;
  /* Only the last object asks for an ack: the kernel reports every
   * failing message whether asked or not, in order, after processing the
   * whole batch, so an error comes before that ack, and the ack alone
   * means the transaction committed. One answer to read, not one per
   * object (a long allow-list has hundreds). */
  struct nlmsghdr *last_nlh = (struct nlmsghdr *) (b->msgs.data + b->last_msg);
  last_nlh->nlmsg_flags |= NLM_F_ACK;
  uint32_t last = last_nlh->nlmsg_seq;
  nfnl_message (b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  cleanup_close int fd = ar_nl_socket (NETLINK_NETFILTER, err);
  if (fd < 0 || ar_nl_send (fd, &b->msgs, err) < 0)
    return ar_error_prefix (err, "nftables");
  uint32_t failed = 0;
  int r = ar_nl_wait_ack (fd, last, &failed);
  if (r == 0)
    return 0;
  size_t index = failed - b->first_seq;
  return ar_error_set (err, -r, "nftables: %s",
                       failed && index < b->n_what ? b->what[index]
                                                   : "transaction");
}
