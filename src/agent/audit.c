/* SPDX-License-Identifier: Apache-2.0 */
/* An event in a plan's audit log, its head kept under the state root. */
#include "config.h"
#include "agent.h"
#include "../util/cleanup.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static void
warn (const char *text)
{
  fprintf (stderr, "agentrun: warning: audit log: %s\n", text);
}

int
ar_agent_audit (const ar_agent_plan *plan, const char *id, const char *event,
                const char *fields_json, ar_error_t **err)
{
  cleanup_free char *stale = NULL;
  int r = ar_audit_append_with_head (plan->audit_path, plan->audit_heads_dir,
                                     id, event, fields_json, &stale, err);
  /* Appended all the same: a log someone cut is not a sandbox's failure.
   * Said once per log in a process: its later appends find the same. */
  static char said_for[PATH_MAX];
  if (stale && strcmp (said_for, plan->audit_path) != 0)
    {
      warn (stale);
      snprintf (said_for, sizeof said_for, "%s", plan->audit_path);
    }
  return r;
}

void
ar_agent_audit_or_warn (const ar_agent_plan *plan, const char *id,
                        const char *event, const char *fields_json)
{
  cleanup_error ar_error_t *err = NULL;
  if (ar_agent_audit (plan, id, event, fields_json, &err) < 0)
    warn (ar_error_text (err));
}
