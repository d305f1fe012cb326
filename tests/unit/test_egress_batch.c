/* SPDX-License-Identifier: Apache-2.0 */
/* nftables transactions over netlink (hooks/egress_batch.c), in a network
 * namespace of the test's own: what commits, what a failure reports, and
 * that a failed transaction leaves nothing. Needs root (skipped
 * otherwise). */
#define _GNU_SOURCE
#include "config.h"
#include "unit.h"
#include "../../hooks/egress.h"
#include "../../hooks/egress_batch.h"
#include "../../src/util/error.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <sched.h>
#include <unistd.h>

#define TABLE "unit"

static egress_batch *
batch (void)
{
  return egress_batch_new (NFPROTO_INET, TABLE);
}

static int
commit (egress_batch *b, char **msg, int *errno_value)
{
  ar_error_t *err = NULL;
  int r = egress_batch_commit (b, &err);
  *msg = err ? strdup (ar_error_text (err)) : NULL;
  *errno_value = err ? err->errno_value : 0;
  ar_error_free (err);
  egress_batch_free (b);
  return r;
}

/* Whether the table is there, found by deleting it. */
static bool
table_existed (void)
{
  egress_batch *b = batch ();
  egress_batch_delete_table (b);
  char *msg;
  int e;
  bool existed = commit (b, &msg, &e) == 0;
  free (msg);
  return existed;
}

static void
test_commit (void)
{
  egress_batch *b = batch ();
  egress_batch_add_table (b);
  const egress_set_spec set = { "s", 7, 4, 0, NULL, 0, false };
  egress_batch_add_set (b, &set);
  const uint8_t addr[4] = { 192, 0, 2, 1 };
  egress_batch_element (b, "s", true, addr, sizeof addr, NULL, 0);
  egress_batch_add_chain (b, "out", NF_INET_LOCAL_OUT, 0, "filter", NF_ACCEPT);
  egress_rule *r = egress_rule_new (b, "out");
  egress_expr_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG32_00);
  egress_expr_lookup (r, NFT_REG32_00, "s", false);
  egress_expr_verdict (r, NF_DROP, NULL);
  egress_batch_add_rule (b, r);
  char *msg;
  int e;
  CHECK_INT (commit (b, &msg, &e), 0);
  CHECK_STR (msg, NULL);
  free (msg);
  CHECK (table_existed ());
}

/* An error in the middle of a batch: the object is named, the errno is
 * the kernel's, and nothing of the batch stays (not even the table made
 * before the failing rule). */
static void
test_failure_in_the_middle (void)
{
  egress_batch *b = batch ();
  egress_batch_add_table (b);
  egress_rule *r = egress_rule_new (b, "no-such-chain");
  egress_expr_verdict (r, NF_ACCEPT, NULL);
  egress_batch_add_rule (b, r);
  const egress_set_spec set = { "later", 7, 4, 0, NULL, 0, false };
  egress_batch_add_set (b, &set);
  char *msg;
  int e;
  CHECK_INT (commit (b, &msg, &e), -1);
  CHECK_STR (
      msg, "nftables: rule in chain no-such-chain: No such file or directory");
  CHECK_INT (e, ENOENT);
  free (msg);
  CHECK (!table_existed ());
}

/* The last message failing: its error, not a hang waiting for its ack. */
static void
test_failure_at_the_end (void)
{
  egress_batch *b = batch ();
  egress_batch_add_table (b);
  const uint8_t addr[4] = { 192, 0, 2, 1 };
  egress_batch_element (b, "no-such-set", true, addr, sizeof addr, NULL, 0);
  char *msg;
  int e;
  CHECK_INT (commit (b, &msg, &e), -1);
  CHECK_STR (msg,
             "nftables: element of set no-such-set: No such file or directory");
  free (msg);
}

int
main (void)
{
  if (geteuid () != 0 || unshare (CLONE_NEWNET) < 0)
    {
      printf ("skipped: needs root (a network namespace of its own)\n");
      return unit_finish ();
    }
  RUN (test_commit);
  RUN (test_failure_in_the_middle);
  RUN (test_failure_at_the_end);
  return unit_finish ();
}
