/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "stage.h"
#include "gate.h"
#include "pod.h"
#include "policy_internal.h"
#include "secrets.h"
#include "../../oci/json.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int
load_profile (const char *profile_name, bool trust_caller, ar_profile **profile,
              ar_error_t **err)
{
  if (ar_profile_load (profile_name, profile, err) < 0)
    return -1;
  if (trust_caller)
    ar_profile_trust_caller (*profile);
  cleanup_free char *egress_hook = ar_egress_hook_find ();
  ar_profile_set_egress_hook (*profile, egress_hook);
  return 0;
}

/* The plan in a state dir; NULL and 0 when it holds none. */
static int
load_plan_if_any (int state_fd, ar_agent_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  if (faccessat (state_fd, AR_AGENT_PLAN_FILE, F_OK, 0) < 0)
    return 0;
  return ar_agent_plan_load (state_fd, plan, err);
}

/* A state dir's name is one path component. */
static bool
plain_name (const char *id)
{
  return *id && strchr (id, '/') == NULL && strcmp (id, ".") != 0
         && strcmp (id, "..") != 0;
}

/* The plan of the pod sandbox container a pod's container belongs to,
 * from its state dir beside the one being made (an engine gives a pod's
 * containers one state root). NULL when there is none: no pod, a sandbox
 * that is not in this root, or one that runs under no plan. */
static int
load_pod_plan (const oci_spec *spec, const char *state_root,
               ar_agent_plan **pod, ar_error_t **err)
{
  *pod = NULL;
  const char *id = ar_pod_sandbox_id (spec);
  if (id == NULL || state_root == NULL || !plain_name (id))
    return 0;
  cleanup_close int root_fd
      = open (state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int fd
      = root_fd < 0 ? -1
                    : openat (root_fd, id,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return 0;
  if (load_plan_if_any (fd, pod, err) < 0)
    return ar_error_prefix (err, "the pod's sandbox container `%s`", id);
  return 0;
}

int
ar_agent_stage_apply (const char *profile_name, bool trust_caller,
                      const char *state_root, oci_spec *spec,
                      ar_agent_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  cleanup_profile ar_profile *profile = NULL;
  cleanup_plan ar_agent_plan *pod = NULL;
  if (load_profile (profile_name, trust_caller, &profile, err) < 0
      || load_pod_plan (spec, state_root, &pod, err) < 0)
    return -1;
  return ar_policy_apply (spec, profile, pod, plan, err);
}

int
ar_agent_stage_describe (const char *profile_name, bool trust_caller,
                         oci_spec *spec, char **json, ar_error_t **err)
{
  ar_profile *profile = NULL;
  if (load_profile (profile_name, trust_caller, &profile, err) < 0)
    return -1;
  int r = ar_policy_describe (spec, profile, json, err);
  ar_profile_free (profile);
  return r;
}

void
ar_agent_stage_keep_audit_head (ar_agent_plan *plan, const char *state_dir)
{
  if (plan->audit_path == NULL)
    return;
  const char *slash = strrchr (state_dir, '/');
  cleanup_free char *root
      = xstrndup (state_dir, slash ? (size_t) (slash - state_dir) : 0);
  free (plan->audit_heads_dir);
  plan->audit_heads_dir = ar_audit_heads_dir (root);
}

int
ar_agent_stage_load (int state_fd, ar_agent_plan **plan, ar_error_t **err)
{
  if (load_plan_if_any (state_fd, plan, err) < 0)
    return -1;
  if (*plan == NULL)
    return 0;
  /* The state dir's own path, from the fd: every caller has that. */
  cleanup_free char *state_dir = ar_fd_real_path (state_fd);
  if (state_dir)
    ar_agent_stage_keep_audit_head (*plan, state_dir);
  return 0;
}

int
ar_agent_stage_prepare (const ar_agent_plan *plan, int state_fd,
                        const char *state_dir, const char *rootfs,
                        oci_spec *spec, ar_error_t **err)
{
  if (ar_agent_plan_save (state_fd, plan, err) < 0)
    return -1;
  return ar_agent_prepare (plan, state_dir, rootfs, spec, err);
}

void
ar_agent_stage_confine_exec (const ar_agent_plan *plan, const oci_spec *spec,
                             oci_process *proc)
{
  (void) plan;
  ar_policy_confine_exec (proc, spec->process);
}

bool
ar_agent_stage_has_overlay (const ar_agent_plan *plan)
{
  return plan->overlay;
}

int64_t
ar_agent_stage_wall_clock_seconds (const ar_agent_plan *plan)
{
  return plan->wall_clock_seconds;
}

int
ar_agent_stage_start_gates (const ar_agent_plan *plan, const char *id,
                            pid_t init_pid, ar_error_t **err)
{
  return ar_gate_start (plan, id, init_pid, err);
}

bool
ar_agent_stage_audits (const ar_agent_plan *plan)
{
  return plan->audit_path != NULL;
}

void
ar_agent_stage_audit (const ar_agent_plan *plan, const char *id,
                      const char *event, const char *fields_json)
{
  ar_agent_audit_or_warn (plan, id, event, fields_json);
}

/* A secret typed on a command line must not reach the log. */
static void
gen_argv_redacted (yajl_gen g, char *const *argv, size_t argc,
                   const ar_secret_set *secrets)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; i < argc; i++)
    {
      const char *arg = argv[i];
      const char *secret = ar_secret_set_find (secrets, arg, strlen (arg));
      cleanup_free char *shown
          = secret ? xasprintf ("[redacted: contains secret %s]", secret)
                   : NULL;
      const char *out = shown ? shown : arg;
      yajl_gen_string (g, (const unsigned char *) out, strlen (out));
    }
  yajl_gen_array_close (g);
}

static void
gen_process (yajl_gen g, const oci_process *proc, char *const *command_line,
             const ar_secret_set *secrets)
{
  oj_gen_key (g, "argv");
  gen_argv_redacted (g, proc->args.items, proc->args.len, secrets);
  oj_gen_key (g, "uid");
  yajl_gen_integer (g, proc->user.uid);
  oj_gen_key (g, "gid");
  yajl_gen_integer (g, proc->user.gid);
  const char *cwd = proc->cwd ? proc->cwd : "/";
  oj_gen_key (g, "cwd");
  yajl_gen_string (g, (const unsigned char *) cwd, strlen (cwd));
  if (command_line)
    {
      size_t argc = 0;
      while (command_line[argc])
        argc++;
      oj_gen_key (g, "command");
      gen_argv_redacted (g, command_line, argc, secrets);
    }
}

void
ar_agent_stage_audit_process (const ar_agent_plan *plan, const char *state_dir,
                              const char *id, const char *event,
                              const oci_process *proc,
                              char *const *command_line,
                              const char *more_fields)
{
  ar_secret_set secrets = { 0 };
  cleanup_error ar_error_t *ignored = NULL;
  ar_secrets_load (plan, state_dir, &secrets, &ignored);
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  gen_process (g, proc, command_line, &secrets);
  /* A fork names the snapshot it started from. */
  if (strcmp (event, "create") == 0 && plan->overlay_from)
    oj_gen_kv_string (g, "from", plan->overlay_from);
  yajl_gen_map_close (g);
  ar_secret_set_clear (&secrets);
  cleanup_free char *own = oj_gen_finish_fields (g);
  /* The process's fields, then the caller's. */
  cleanup_free char *fields = more_fields && *more_fields
                                  ? xasprintf ("%s,%s", own, more_fields)
                                  : NULL;
  ar_agent_stage_audit (plan, id, event, fields ? fields : own);
}

bool
ar_agent_stage_hook_is_own (const ar_agent_plan *plan, const oci_hook *hook)
{
  (void) plan;
  cleanup_free char *own = ar_egress_hook_find ();
  return ar_egress_hook_is_own (hook, own);
}

bool
ar_agent_stage_secrets_main_only (const ar_agent_plan *plan)
{
  return plan->secrets_main_only && plan->n_secrets > 0;
}

int
ar_agent_stage_hide_secrets (const ar_agent_plan *plan, ar_error_t **err)
{
  return ar_secrets_hide (plan->secrets_path, err);
}

int
ar_agent_stage_finish (const ar_agent_plan *plan, const char *state_dir,
                       const char *id, bool started, ar_error_t **err)
{
  if (started)
    return ar_agent_finish (plan, state_dir, id, err);
  /* A container that never ran: release the host resources, but export
   * nothing and log nothing. */
  ar_agent_plan quiet = *plan;
  quiet.output_host_dir = NULL;
  quiet.audit_path = NULL;
  return ar_agent_finish (&quiet, state_dir, id, err);
}
