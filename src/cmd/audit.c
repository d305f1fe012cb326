/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun audit FILE: check an audit log's hash chain. Each line carries
 * the sha256 of the line before it, so an edited, removed or cut line
 * shows at the first line whose "prev" no longer matches. What the chain
 * cannot show, lines cut off at the end, the head does: the line count
 * and last hash the runtime keeps under the state root at every append,
 * or one given with --head N:HASH. A log moved away to be rotated has
 * its kept head removed with --forget-head (which prints it, to check the
 * moved log with later). */
#include "config.h"
#include "cmd.h"
#include "../agent/agent.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <stdio.h>

static const ar_option options[] = {
  { "head", 0, true,
    "N:HASH: line N must be there and hash to HASH (as --show-head printed)" },
  { "show-head", 0, false,
    "print the head kept for FILE under the state root (N:HASH)" },
  { "forget-head", 0, false,
    "after moving FILE away to rotate it: remove its kept head, printing "
    "it (the next append starts a new one)" },
  { 0 }
};
enum
{
  OPT_HEAD,
  OPT_SHOW_HEAD,
  OPT_FORGET_HEAD
};
AR_OPTIONS_MATCH (options, OPT_FORGET_HEAD);

static const ar_command_doc doc = {
  "audit", "[--head N:HASH | --show-head | --forget-head] FILE",
  "Verify an audit log: its hash chain, and its head (the one given, else\n"
  "the one kept under the state root, if any): print \"ok N lines\", or\n"
  "the first problem and exit 1. --show-head prints the kept head;\n"
  "--forget-head removes it (after the log was moved away) and prints it."
};

static int
show_head (const char *path, const char *heads_dir, bool forget,
           ar_error_t **err)
{
  cleanup_free char *head = NULL;
  if (forget ? ar_audit_forget_head (path, heads_dir, &head, err) < 0
             : ar_audit_kept_head (path, heads_dir, &head, err) < 0)
    return -1;
  puts (head);
  return 0;
}

int
ar_cmd_audit (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("audit", &p, 1, "FILE", err) < 0)
    return -1;
  const char *path = p.args[0];
  cleanup_free char *heads_dir = ar_audit_heads_dir (g->root);
  if (ar_flag (&p, OPT_SHOW_HEAD) || ar_flag (&p, OPT_FORGET_HEAD))
    return show_head (path, heads_dir, ar_flag (&p, OPT_FORGET_HEAD), err);

  size_t bad_line = 0, lines = 0;
  if (ar_audit_verify (path, &bad_line, err) < 0)
    return -1;
  if (bad_line > 0)
    {
      printf ("line %zu: chain broken\n", bad_line);
      return 1;
    }
  cleanup_free char *kept = NULL;
  if (p.value[OPT_HEAD] == NULL
      && ar_audit_stored_head (path, heads_dir, &kept, err) < 0)
    return -1;
  const char *head = p.value[OPT_HEAD] ? p.value[OPT_HEAD] : kept;
  cleanup_free char *problem = NULL;
  if (head && ar_audit_check_head (path, head, &problem, err) < 0)
    return -1;
  if (problem)
    {
      puts (problem);
      return 1;
    }
  if (ar_audit_count_lines (path, &lines, err) < 0)
    return -1;
  printf ("ok %zu lines\n", lines);
  return 0;
}
