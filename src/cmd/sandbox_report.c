/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sandbox_report.h"
#include "failure_status.h"
#include "../../oci/oci.h"
#include "../agent/hostfs.h"
#include "../agent/output.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/signals.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>

/* What main exits with when the sandbox itself failed. */

void
ar_sandbox_report_plan (ar_sandbox_report *r, const oci_map *annotations,
                        const char *id, const char *root)
{
  const char *output
      = oci_map_get (annotations, AR_AGENT_ANNOTATION_PREFIX "output");
  const char *audit
      = oci_map_get (annotations, AR_AGENT_ANNOTATION_PREFIX "audit");
  free (r->output_host_dir);
  free (r->output_kept_dir);
  free (r->audit_path);
  free (r->audit_heads_dir);
  free (r->id);
  r->output_host_dir = output ? xstrdup (output) : NULL;
  r->output_kept_dir = ar_output_kept_dir (root);
  r->audit_path = audit ? xstrdup (audit) : NULL;
  r->audit_heads_dir = ar_audit_heads_dir (root);
  r->id = xstrdup (id);
}

void
ar_sandbox_report_ended (ar_sandbox_report *r)
{
  r->ran = true;
  ar_run_outcome_say_signal (&r->outcome, "sandbox");
}

static void
gen_key (yajl_gen gen, const char *key)
{
  yajl_gen_string (gen, (const unsigned char *) key, strlen (key));
}

/* A string, or null for NULL. */
static void
gen_text (yajl_gen gen, const char *key, const char *value)
{
  gen_key (gen, key);
  if (value)
    ar_hostfs_gen_name (gen, value);
  else
    yajl_gen_null (gen);
}

static void
gen_number (yajl_gen gen, const char *key, long long value, bool known)
{
  gen_key (gen, key);
  if (known)
    yajl_gen_integer (gen, value);
  else
    yajl_gen_null (gen);
}

static void
gen_signal (yajl_gen gen, const char *key, int sig)
{
  cleanup_free char *name = sig ? ar_signal_name (sig) : NULL;
  gen_text (gen, key, name);
}

/* exitStatus, reason, exitCode, signal, receivedSignal, error. */
static void
gen_end (yajl_gen gen, const ar_sandbox_report *r, int status,
         const ar_error_t *error)
{
  const ar_run_outcome *o = &r->outcome;
  gen_number (gen, "exitStatus",
              status < 0 ? ar_cmd_failure_status ("sandbox", error) : status,
              true);
  gen_text (gen, "reason", error ? "error" : ar_end_reason_name (o->reason));
  gen_number (gen, "exitCode", o->exit_code, r->ran && o->exit_code >= 0);
  gen_signal (gen, "signal", r->ran ? o->signal : 0);
  gen_signal (gen, "receivedSignal", r->ran ? o->passed_on : 0);
  gen_text (gen, "error", error ? ar_error_text (error) : NULL);
}

/* durationMs, and what the cgroup counted (null without one). */
static void
gen_usage (yajl_gen gen, const ar_sandbox_report *r)
{
  const ar_run_outcome *o = &r->outcome;
  bool counted = r->ran && o->has_cgroup;
  gen_key (gen, "durationMs");
  yajl_gen_map_open (gen);
  gen_number (gen, "total", ar_now_ms () - r->began_ms, true);
  gen_number (gen, "command", o->run_ms, r->ran);
  yajl_gen_map_close (gen);
  gen_number (gen, "memoryPeakBytes", (long long) o->memory_peak,
              r->ran && o->has_memory_peak);
  gen_number (gen, "oomKills", (long long) o->oom_kills, counted);
  gen_number (gen, "refusedForks", (long long) o->refused_forks, counted);
}

static void
gen_output (yajl_gen gen, const char *destination, size_t files,
            size_t withheld, bool kept)
{
  gen_key (gen, "output");
  if (destination == NULL)
    {
      yajl_gen_null (gen);
      return;
    }
  yajl_gen_map_open (gen);
  gen_text (gen, "path", destination);
  gen_number (gen, "files", (long long) files, true);
  gen_number (gen, "withheld", (long long) withheld, true);
  gen_key (gen, "kept");
  yajl_gen_bool (gen, kept);
  yajl_gen_map_close (gen);
}

static void
gen_diff (yajl_gen gen, const ar_sandbox_report *r)
{
  gen_key (gen, "diff");
  if (!r->diffed)
    {
      yajl_gen_null (gen);
      return;
    }
  yajl_gen_map_open (gen);
  gen_text (gen, "path", r->diff_path);
  gen_number (gen, "filesChanged", (long long) r->diff.changed, true);
  gen_number (gen, "withheld", (long long) r->diff.withheld, true);
  gen_text (gen, "bundle", r->diff.bundle);
  gen_text (gen, "error", r->diff_error);
  yajl_gen_map_close (gen);
}

static char *
status_json (const ar_sandbox_report *r, int status, const ar_error_t *error,
             const char *exported, size_t files, size_t withheld, bool kept,
             const char *audit_head)
{
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_config (gen, yajl_gen_beautify, 1);
  yajl_gen_map_open (gen);
  gen_text (gen, "id", r->id);
  gen_end (gen, r, status, error);
  gen_usage (gen, r);
  gen_output (gen, exported, files, withheld, kept);
  gen_diff (gen, r);
  gen_text (gen, "auditHead", audit_head);
  yajl_gen_map_close (gen);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (gen, &buf, &len);
  char *json = xasprintf ("%.*s\n", (int) len, (const char *) buf);
  yajl_gen_free (gen);
  return json;
}

static void
warn (const char *what, const ar_error_t *e)
{
  fprintf (stderr, "agentrun: sandbox: %s: %s\n", what, ar_error_text (e));
}

void
ar_sandbox_report_finish (ar_sandbox_report *r, int status,
                          const ar_error_t *error)
{
  ar_output_report out = { .destination = NULL };
  cleanup_error ar_error_t *e = NULL;
  if (r->output_host_dir && r->id
      && ar_output_exported (r->output_host_dir, r->id, &out, &e) < 0)
    warn ("--output", e);
  /* Refused at the end: kept under the state root instead. */
  bool kept = false;
  if (r->output_host_dir && r->id && out.destination == NULL && e == NULL
      && ar_output_exported (r->output_kept_dir, r->id, &out, &e) == 0
      && out.destination)
    {
      kept = true;
      cleanup_free char *why_path
          = xasprintf ("%s/%s.why", r->output_kept_dir, r->id);
      cleanup_free char *why = NULL;
      cleanup_error ar_error_t *ignored = NULL;
      if (ar_read_file_at (AT_FDCWD, why_path, 4096, &why, NULL, &ignored) == 0)
        why[strcspn (why, "\n")] = '\0';
      fprintf (stderr,
               "agentrun: output: not exported to `%s` (%s): kept in %s\n",
               r->output_host_dir, why ? why : "refused", out.destination);
    }
  const char *exported = out.destination;
  size_t files = out.n_files;
  if (exported)
    fprintf (stderr, "agentrun: output: %s (%zu file%s)\n", exported, files,
             files == 1 ? "" : "s");
  for (size_t i = 0; i < out.n_withheld; i++)
    fprintf (stderr, "agentrun: output: withheld %s (%s)\n",
             out.withheld[i].path, out.withheld[i].reason);
  if (r->json_path == NULL)
    {
      ar_output_report_clear (&out);
      return;
    }
  cleanup_free char *head = NULL;
  ar_error_freep (&e);
  if (r->audit_path
      && ar_audit_head (r->audit_path, r->audit_heads_dir, &head, &e) < 0)
    warn ("--json-status: the audit head", e);
  cleanup_free char *json = status_json (r, status, error, exported, files,
                                         out.n_withheld, kept, head);
  ar_output_report_clear (&out);
  ar_error_freep (&e);
  if (ar_write_file_atomic_at (AT_FDCWD, r->json_path, json, strlen (json),
                               0644, &e)
      < 0)
    warn ("--json-status", e);
}

void
ar_sandbox_report_clear (ar_sandbox_report *r)
{
  free (r->json_path);
  free (r->id);
  free (r->output_host_dir);
  free (r->output_kept_dir);
  free (r->audit_path);
  free (r->audit_heads_dir);
  ar_diff_result_clear (&r->diff);
  free (r->diff_error);
  *r = (ar_sandbox_report){ 0 };
}
