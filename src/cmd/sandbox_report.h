/* SPDX-License-Identifier: Apache-2.0 */
/* How a sandbox ended, for a person (one line on stderr for each way it
 * ends other than the command's own exit, and where /output went) and for
 * a program (--json-status FILE; the schema is in docs/profiles.md). */
#ifndef AR_CMD_SANDBOX_REPORT_H
#define AR_CMD_SANDBOX_REPORT_H

#include "../../oci/spec.h"
#include "../agent/agent.h"
#include "../core/outcome.h"
#include "../util/error.h"
#include <stdbool.h>

typedef struct
{
  long long began_ms; /* ar_now_ms () when agentrun sandbox started */
  char *json_path;    /* --json-status, absolute; NULL: none */
  char *id;
  bool ran; /* the command ran to its end: `outcome` holds */
  ar_run_outcome outcome;
  char *output_host_dir; /* the run.agentrun.output the policy was given */
  char *output_kept_dir; /* where it is kept when that refused it */
  char *audit_path;      /* the run.agentrun.audit */
  char *audit_heads_dir; /* where the state root keeps the log's head */
  const char *diff_path; /* --diff, absolute; NULL: none */
  bool diffed;           /* a diff was tried: `diff` holds */
  ar_diff_result diff;
  char *diff_error; /* NULL: the diff is whole */
} ar_sandbox_report;

/* What the policy was asked for (the output dir, the audit log), from
 * the sandbox's annotations, its id and its state root. */
void ar_sandbox_report_plan (ar_sandbox_report *r, const oci_map *annotations,
                             const char *id, const char *root);

/* The command ended: `r->outcome` is set; say how, unless it exited by
 * itself (see ar_run_outcome_say_signal). */
void ar_sandbox_report_ended (ar_sandbox_report *r);

/* The sandbox is gone (deleted, /output exported): say where /output
 * went, and write --json-status. `status` is what agentrun exits with,
 * -1 when `error` ended it. A status file that cannot be written is one
 * line on stderr; the status is kept. */
void ar_sandbox_report_finish (ar_sandbox_report *r, int status,
                               const ar_error_t *error);

void ar_sandbox_report_clear (ar_sandbox_report *r);
#define cleanup_sandbox_report                                                 \
  __attribute__ ((cleanup (ar_sandbox_report_clear)))

#endif
