/* SPDX-License-Identifier: Apache-2.0 */
/* The plan between create and delete: freed here, and kept as JSON in the
 * container's state dir (AR_AGENT_PLAN_FILE). Secrets are stored as name
 * and host path only; their bytes never pass through this file. */
#include "config.h"
#include "policy_internal.h"
#include "../../oci/json.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define PLAN_VERSION 1
#define PLAN_MAX_FILE_SIZE (1u << 20)

void
ar_agent_plan_free (ar_agent_plan *plan)
{
  if (plan == NULL)
    return;
  free (plan->profile);
  for (size_t i = 0; i < plan->n_secrets; i++)
    {
      free (plan->secrets[i].name);
      free (plan->secrets[i].host_path);
    }
  free (plan->secrets);
  free (plan->secrets_path);
  free (plan->output_path);
  free (plan->output_host_dir);
  free (plan->workspace_host_dir);
  free (plan->overlay_from);
  free (plan->audit_path);
  free (plan->audit_heads_dir);
  oj_strv_clear (&plan->ingress);
  for (size_t i = 0; i < plan->n_egress_allow; i++)
    free (plan->egress_allow[i]);
  free (plan->egress_allow);
  free (plan->approver);
  oj_map_clear (&plan->hide);
  oj_strv_clear (&plan->unhide);
  free (plan->userns_user);
  oj_map_clear (&plan->userns_limits);
  oj_strv_clear (&plan->programs_ask);
  free (plan);
}

/* ------------------------------------------------------------------ */
/* Saving.                                                             */

static void
emit_secrets (yajl_gen g, const ar_agent_plan *plan)
{
  if (plan->secrets_path == NULL && plan->n_secrets == 0)
    return;
  oj_gen_key (g, "secrets");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "path", plan->secrets_path);
  oj_gen_kv_bool (g, "mainOnly", plan->secrets_main_only);
  oj_gen_kv_bool (g, "ask", plan->secrets_ask);
  oj_gen_key (g, "files");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < plan->n_secrets; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "name", plan->secrets[i].name);
      oj_gen_kv_string (g, "hostPath", plan->secrets[i].host_path);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static void
emit_output (yajl_gen g, const ar_agent_plan *plan)
{
  if (plan->output_path == NULL)
    return;
  oj_gen_key (g, "output");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "path", plan->output_path);
  oj_gen_kv_string (g, "hostDir", plan->output_host_dir);
  oj_gen_kv_u64 (g, "maxBytes", plan->output_max_bytes);
  oj_gen_kv_u64 (g, "maxFiles", plan->output_max_files);
  yajl_gen_map_close (g);
}

static void
emit_egress (yajl_gen g, const ar_agent_plan *plan)
{
  oj_gen_key (g, "egress");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "mode", ar_egress_mode_name (plan->egress));
  oj_gen_key (g, "allow");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < plan->n_egress_allow; i++)
    oj_gen_string (g, plan->egress_allow[i]);
  yajl_gen_array_close (g);
  /* A pod's containers compare theirs with it (pod.c). */
  if (plan->ingress.len > 0)
    {
      oj_gen_key (g, "ingress");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < plan->ingress.len; i++)
        oj_gen_string (g, plan->ingress.items[i]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_programs (yajl_gen g, const ar_agent_plan *plan)
{
  if (plan->programs_ask.len == 0)
    return;
  oj_gen_key (g, "programs");
  yajl_gen_map_open (g);
  oj_gen_kv_strv (g, "ask", &plan->programs_ask);
  yajl_gen_map_close (g);
}

static int
read_programs (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  return oj_expect_object (c, v) < 0
                 || oj_field (c, v, "ask", oj_read_strv, &plan->programs_ask)
                        < 0
             ? -1
             : 0;
}

static void
emit_hide (yajl_gen g, const ar_agent_plan *plan)
{
  if (plan->hide.len == 0 && plan->unhide.len == 0)
    return;
  oj_gen_kv_map (g, "hide", &plan->hide);
  oj_gen_kv_strv (g, "unhide", &plan->unhide);
}

void
ar_agent_plan_gen (yajl_gen g, const ar_agent_plan *plan)
{
  yajl_gen_map_open (g);
  oj_gen_kv_i64 (g, "version", PLAN_VERSION);
  oj_gen_kv_string (g, "profile", plan->profile);

  oj_gen_key (g, "overlay");
  yajl_gen_map_open (g);
  oj_gen_kv_bool (g, "enabled", plan->overlay);
  oj_gen_kv_u64 (g, "sizeBytes", plan->overlay_size_bytes);
  oj_gen_kv_u64 (g, "inodes", plan->overlay_inodes);
  oj_gen_kv_string (g, "from", plan->overlay_from);
  yajl_gen_map_close (g);

  if (plan->userns)
    {
      oj_gen_key (g, "userNamespace");
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "subidUser", plan->userns_user);
      oj_gen_kv_u64 (g, "size", plan->userns_size);
      oj_gen_kv_map (g, "limits", &plan->userns_limits);
      yajl_gen_map_close (g);
    }
  emit_secrets (g, plan);
  emit_output (g, plan);
  oj_gen_kv_string (g, "audit", plan->audit_path);
  oj_gen_kv_string (g, "workspace", plan->workspace_host_dir);
  oj_gen_kv_bool (g, "workspaceReadOnly", plan->workspace_read_only);
  oj_gen_kv_i64 (g, "wallClockSeconds", plan->wall_clock_seconds);
  emit_egress (g, plan);
  if (plan->approver)
    {
      oj_gen_key (g, "approver");
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "socket", plan->approver);
      oj_gen_kv_i64 (g, "timeout", plan->ask_timeout);
      yajl_gen_map_close (g);
    }
  emit_programs (g, plan);
  emit_hide (g, plan);
  yajl_gen_map_close (g);
}

static char *
plan_to_json (const ar_agent_plan *plan)
{
  yajl_gen g = oj_gen_new (true, "  ");
  ar_agent_plan_gen (g, plan);
  return oj_gen_finish (g);
}

int
ar_agent_plan_save (int state_dirfd, const ar_agent_plan *plan,
                    ar_error_t **err)
{
  if (plan == NULL)
    return 0; /* the oci profile: nothing to keep */
  cleanup_free char *json = plan_to_json (plan);
  if (ar_write_file_atomic_at (state_dirfd, AR_AGENT_PLAN_FILE, json,
                               strlen (json), 0600, err)
      < 0)
    return ar_error_prefix (err, "save agent plan");
  return 0;
}

/* ------------------------------------------------------------------ */
/* Loading. The file is ours, so unknown keys are ignored: a newer
 * agentrun may add some, and delete must still work. */

static int
read_secret (oj_ctx *c, const oj_value *v, void *out)
{
  ar_secret *s = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "name", oj_read_string, &s->name) < 0
      || oj_required (c, v, "hostPath", oj_read_string, &s->host_path) < 0)
    return -1;
  if (!ar_secret_name_valid (s->name))
    return oj_fail (c, "name: invalid secret name");
  return 0;
}

static int
read_secrets (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  const oj_value *files = oj_get (v, "files");
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "path", oj_read_string, &plan->secrets_path) < 0
      || oj_field (c, v, "mainOnly", oj_read_bool, &plan->secrets_main_only) < 0
      || oj_field (c, v, "ask", oj_read_bool, &plan->secrets_ask) < 0)
    return -1;
  if (files == NULL)
    return 0;
  size_t mark = oj_path_push_key (&c->path, "files", 5);
  int r = oj_read_array (c, files, sizeof *plan->secrets, read_secret,
                         (void **) &plan->secrets, &plan->n_secrets);
  oj_path_pop (&c->path, mark);
  return r;
}

static int
read_overlay (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "enabled", oj_read_bool, &plan->overlay) < 0
      || oj_field (c, v, "sizeBytes", oj_read_u64, &plan->overlay_size_bytes)
             < 0
      || oj_field (c, v, "inodes", oj_read_u64, &plan->overlay_inodes) < 0
      || oj_field (c, v, "from", oj_read_string, &plan->overlay_from) < 0)
    return -1;
  return 0;
}

static int
read_userns (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  plan->userns = true;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "subidUser", oj_read_string, &plan->userns_user) < 0
      || oj_required (c, v, "size", oj_read_u32, &plan->userns_size) < 0
      || oj_field (c, v, "limits", oj_read_map, &plan->userns_limits) < 0)
    return -1;
  return 0;
}

static int
read_output (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "path", oj_read_string, &plan->output_path) < 0
      || oj_field (c, v, "hostDir", oj_read_string, &plan->output_host_dir) < 0
      || oj_field (c, v, "maxBytes", oj_read_u64, &plan->output_max_bytes) < 0
      || oj_field (c, v, "maxFiles", oj_read_u64, &plan->output_max_files) < 0)
    return -1;
  return 0;
}

static int
read_mode (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type != OJ_STRING || !ar_egress_mode_parse (v->text, out))
    return oj_fail_type (c, v, "\"none\", \"allowlist\", \"open\" or \"ask\"");
  return 0;
}

static int
read_egress (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  oci_strv allow = { 0 };
  int r = oj_expect_object (c, v);
  if (r == 0)
    r = oj_field (c, v, "mode", read_mode, &plan->egress);
  if (r == 0)
    r = oj_field (c, v, "allow", oj_read_strv, &allow);
  if (r == 0)
    r = oj_field (c, v, "ingress", oj_read_strv, &plan->ingress);

  if (r < 0)
    {
      oj_strv_clear (&allow);
      return -1;
    }
  /* oci_strv's items are NULL-terminated already: take them over. */
  if (allow.items == NULL)
    allow.items = xcalloc (1, sizeof *allow.items);
  plan->egress_allow = allow.items;
  plan->n_egress_allow = allow.len;
  return 0;
}

static int
read_version (oj_ctx *c, const oj_value *v, void *out)
{
  (void) out;
  int64_t version;
  if (oj_read_i64 (c, v, &version) < 0)
    return -1;
  if (version != PLAN_VERSION)
    return oj_fail (c,
                    "unsupported version %" PRId64 " (this agentrun "
                    "reads %d)",
                    version, PLAN_VERSION);
  return 0;
}

static int
read_approver (oj_ctx *c, const oj_value *v, void *out)
{
  ar_agent_plan *plan = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "socket", oj_read_string, &plan->approver) < 0
      || oj_field (c, v, "timeout", oj_read_i64, &plan->ask_timeout) < 0)
    return -1;
  return 0;
}

static int
read_plan (oj_ctx *c, const oj_value *doc, ar_agent_plan *plan)
{
  if (oj_expect_object (c, doc) < 0
      || oj_required (c, doc, "version", read_version, NULL) < 0
      || oj_required (c, doc, "profile", oj_read_string, &plan->profile) < 0
      || oj_field (c, doc, "overlay", read_overlay, plan) < 0
      || oj_field (c, doc, "userNamespace", read_userns, plan) < 0
      || oj_field (c, doc, "secrets", read_secrets, plan) < 0
      || oj_field (c, doc, "output", read_output, plan) < 0
      || oj_field (c, doc, "audit", oj_read_string, &plan->audit_path) < 0
      || oj_field (c, doc, "workspace", oj_read_string,
                   &plan->workspace_host_dir)
             < 0
      || oj_field (c, doc, "workspaceReadOnly", oj_read_bool,
                   &plan->workspace_read_only)
             < 0
      || oj_field (c, doc, "wallClockSeconds", oj_read_i64,
                   &plan->wall_clock_seconds)
             < 0
      || oj_field (c, doc, "egress", read_egress, plan) < 0
      || oj_field (c, doc, "approver", read_approver, plan) < 0
      || oj_field (c, doc, "programs", read_programs, plan) < 0
      || oj_field (c, doc, "hide", oj_read_map, &plan->hide) < 0
      || oj_field (c, doc, "unhide", oj_read_strv, &plan->unhide) < 0)
    return -1;
  return 0;
}

/* A state dir without the file belongs to a container created without a
 * plan (the oci profile): *plan is NULL and that is not an error. */
int
ar_agent_plan_load (int state_dirfd, ar_agent_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  cleanup_free char *data = NULL;
  size_t len = 0;
  cleanup_error ar_error_t *read_err = NULL;
  if (ar_read_file_at (state_dirfd, AR_AGENT_PLAN_FILE, PLAN_MAX_FILE_SIZE,
                       &data, &len, &read_err)
      < 0)
    {
      if (read_err->errno_value == ENOENT)
        return 0;
      *err = steal_pointer (&read_err);
      return ar_error_prefix (err, "load agent plan");
    }

  oj_value doc = { 0 };
  if (oj_parse (data, len, AR_AGENT_PLAN_FILE, &doc, err) < 0)
    return -1;
  cleanup_plan ar_agent_plan *p = xcalloc (1, sizeof *p);
  p->egress = AR_EGRESS_OPEN;
  oj_ctx c = { .file = AR_AGENT_PLAN_FILE, .err = err };
  int r = read_plan (&c, &doc, p);
  oj_value_clear (&doc);
  if (r < 0)
    return -1;
  if (p->egress_allow == NULL)
    p->egress_allow = xcalloc (1, sizeof *p->egress_allow);
  *plan = steal_pointer (&p);
  return 0;
}
