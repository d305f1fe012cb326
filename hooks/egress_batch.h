/* SPDX-License-Identifier: Apache-2.0 */
/* One nftables transaction over netlink, built object by object and
 * committed whole or not at all. Speaking nf_tables' netlink directly
 * rather than through libnftables' text parser is what keeps the egress
 * controller off a container's start-up path: no cache fetch, no parser,
 * no library to load (about 3 ms a transaction → under one). The
 * attributes are the kernel's (linux/netfilter/nf_tables.h). */
#ifndef AR_HOOKS_EGRESS_BATCH_H
#define AR_HOOKS_EGRESS_BATCH_H

#include "../src/util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct egress_batch egress_batch;
typedef struct egress_rule egress_rule;

egress_batch *egress_batch_new (uint32_t family, const char *table);
void egress_batch_free (egress_batch *b);

void egress_batch_add_table (egress_batch *b);
void egress_batch_delete_table (egress_batch *b);
/* A regular chain when `hook` is negative; else a base chain. */
void egress_batch_add_chain (egress_batch *b, const char *name, int hook,
                             int priority, const char *type, int policy);
/* Every rule of the chain goes (the chain stays). */
void egress_batch_flush_chain (egress_batch *b, const char *name);

typedef struct
{
  const char *name;
  uint32_t key_type; /* nftables' datatype number, for `nft list` */
  uint32_t key_len;
  uint32_t flags;             /* NFT_SET_* */
  const uint8_t *concat_lens; /* field lengths of a concatenated interval key */
  size_t n_concat;
  bool host_order_key; /* a string key (ifname): how `nft list` must read it */
} egress_set_spec;
void egress_batch_add_set (egress_batch *b, const egress_set_spec *spec);

/* Elements; `key_end` is NULL but for ranges in concatenated interval
 * sets. `timeout_ms` 0: never expires. */
void egress_batch_element (egress_batch *b, const char *set, bool add,
                           const void *key, size_t len, const void *key_end,
                           uint64_t timeout_ms);

/* A rule appended to `chain`; fill it with the egress_expr_* calls, then
 * egress_batch_add_rule. One rule is open at a time. */
egress_rule *egress_rule_new (egress_batch *b, const char *chain);
void egress_batch_add_rule (egress_batch *b, egress_rule *r);

void egress_expr_meta (egress_rule *r, uint32_t key, uint32_t dreg);
void egress_expr_cmp (egress_rule *r, uint32_t sreg, uint32_t op,
                      const void *data, size_t len);
void egress_expr_payload (egress_rule *r, uint32_t base, uint32_t offset,
                          uint32_t len, uint32_t dreg);
void egress_expr_bitwise (egress_rule *r, uint32_t reg, const void *mask,
                          size_t len);
void egress_expr_ct (egress_rule *r, uint32_t key, uint32_t dreg);
void egress_expr_lookup (egress_rule *r, uint32_t sreg, const char *set,
                         bool inverted);
/* NF_ACCEPT, NF_DROP or NFT_GOTO (with `chain`). */
void egress_expr_verdict (egress_rule *r, int verdict, const char *chain);
void egress_expr_reject (egress_rule *r, uint32_t type, uint32_t code);
void egress_expr_limit (egress_rule *r, uint64_t per_second, uint32_t burst);
/* To NFLOG `group`, with `prefix` (NULL: none). */
void egress_expr_log (egress_rule *r, uint16_t group, const char *prefix);
void egress_expr_masquerade (egress_rule *r);

/* Set the connection's `key` (NFT_CT_MARK) from `sreg`. */
void egress_expr_ct_set (egress_rule *r, uint32_t key, uint32_t sreg);
/* To userspace on queue `num` (nfnetlink_queue), as nft's `queue`
 * expression or, where the kernel lacks it (`compat`), as xt_NFQUEUE
 * through nft_compat; with nobody bound to the queue, the packet is
 * dropped. */
void egress_expr_queue (egress_rule *r, uint16_t num, bool compat);

/* Send the transaction in the current netns and wait for the kernel's
 * verdict on it. */
int egress_batch_commit (egress_batch *b, ar_error_t **err);

#endif
