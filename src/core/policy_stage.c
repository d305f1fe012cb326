/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "policy_stage.h"
#include "cgroups/cgroups.h"
#include "hooks.h"
#include "process.h"
#include "../../oci/json.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/fs.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <yajl/yajl_gen.h>

static const ar_stage_ops *stage;

void
ar_stage_install (const ar_stage_ops *ops)
{
  stage = ops;
}

int
ar_stage_apply_policy (const char *profile_name, bool trust_caller,
                       const char *state_root, oci_spec *spec, ar_plan **plan,
                       ar_error_t **err)
{
  *plan = NULL;
  return stage ? stage->apply (profile_name, trust_caller, state_root, spec,
                               plan, err)
               : 0;
}

void
ar_stage_free_plan (ar_plan *plan)
{
  if (plan)
    stage->free (plan);
}

int
ar_stage_prepare (const ar_plan *plan, int state_fd, const char *state_dir,
                  const char *rootfs, oci_spec *spec, ar_error_t **err)
{
  return plan ? stage->prepare (plan, state_fd, state_dir, rootfs, spec, err)
              : 0;
}

void
ar_stage_keep_audit_head (ar_plan *plan, const char *state_dir)
{
  if (plan)
    stage->keep_audit_head (plan, state_dir);
}

void
ar_stage_confine_exec (const ar_plan *plan, const oci_spec *spec,
                       oci_process *proc)
{
  if (plan)
    stage->confine_exec (plan, spec, proc);
}

int
ar_stage_load_plan (int state_fd, ar_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  return stage ? stage->load (state_fd, plan, err) : 0;
}

bool
ar_stage_has_overlay (const ar_plan *plan)
{
  return plan && stage->has_overlay (plan);
}

int64_t
ar_stage_wall_clock_seconds (const ar_plan *plan)
{
  return plan ? stage->wall_clock_seconds (plan) : 0;
}

bool
ar_stage_audits (const ar_plan *plan)
{
  return plan && stage->audits (plan);
}

void
ar_stage_audit (const ar_plan *plan, const char *id, const char *event,
                const char *fields_json)
{
  if (ar_stage_audits (plan))
    stage->audit (plan, id, event, fields_json);
}

/* yajl_gen emits a whole object; the audit log wants its inside. */
static char *
fields_of (void (*fill) (yajl_gen, const void *), const void *arg)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  fill (g, arg);
  yajl_gen_map_close (g);
  return oj_gen_finish_fields (g);
}

void
ar_stage_audit_process (const ar_plan *plan, const char *state_dir,
                        const char *id, const char *event,
                        const oci_process *proc, char *const *command_line)
{
  if (ar_stage_audits (plan) && proc)
    stage->audit_process (plan, state_dir, id, event, proc, command_line, NULL);
}

void
ar_stage_audit_create (const ar_plan *plan, const char *state_dir,
                       const char *id, const oci_process *proc,
                       char *const *command_line)
{
  ar_stage_audit_process (plan, state_dir, id, "create", proc, command_line);
}

static void
fill_exec_outcome (yajl_gen g, const void *arg)
{
  const ar_exec_outcome *o = arg;
  if (o->pid > 0)
    oj_gen_kv_i64 (g, "pid", o->pid);
  if (o->status >= 0)
    oj_gen_kv_i64 (g, "status", o->status);
  if (o->error)
    oj_gen_kv_string (g, "error", o->error);
}

void
ar_stage_audit_exec (const ar_plan *plan, const char *state_dir, const char *id,
                     const oci_process *proc, const ar_exec_outcome *outcome)
{
  if (!ar_stage_audits (plan) || proc == NULL)
    return;
  cleanup_free char *fields = fields_of (fill_exec_outcome, outcome);
  stage->audit_process (plan, state_dir, id, outcome->event, proc, NULL,
                        fields);
}

typedef struct
{
  const char *phase;
  size_t count;
  const char *error;
} hook_outcome;

static void
fill_hook_outcome (yajl_gen g, const void *arg)
{
  const hook_outcome *o = arg;
  oj_gen_kv_string (g, "phase", o->phase);
  oj_gen_kv_i64 (g, "hooks", (int64_t) o->count);
  oj_gen_kv_bool (g, "ok", o->error == NULL);
  if (o->error)
    oj_gen_kv_string (g, "error", o->error);
}

/* Only a container under a plan can have the policy's own hook (the
 * egress controller): no look-up for the rest (Docker's prestart hook,
 * on every container). */
static bool
hook_is_own (const ar_plan *plan, const oci_hook *hook)
{
  return plan && stage->hook_is_own (plan, hook);
}

static int
run_hooks (const ar_plan *plan, const char *id, const oci_hook_list *hooks,
           const char *phase, const char *state_json, bool caller_stays,
           ar_error_t **err)
{
  int r = 0;
  for (size_t i = 0; i < hooks->len && r == 0; i++)
    {
      const oci_hook *hook = &hooks->items[i];
      if (!hook_is_own (plan, hook))
        r = ar_hooks_run_one (hook, phase, i, state_json, err);
      else if ((r = stage->run_own_hook (hook, state_json, caller_stays, err))
               < 0)
        ar_error_prefix (err, "%s hook #%zu (%s)", phase, i, hook->path);
    }
  if (ar_stage_audits (plan))
    {
      hook_outcome o
          = { phase, hooks->len, r < 0 && *err ? ar_error_text (*err) : NULL };
      cleanup_free char *fields = fields_of (fill_hook_outcome, &o);
      ar_stage_audit (plan, id, "hook", fields);
    }
  return r;
}

int
ar_stage_run_hooks (const ar_plan *plan, const char *id,
                    const oci_hook_list *hooks, const char *phase,
                    const char *state_json, ar_error_t **err)
{
  if (hooks->len == 0)
    return 0;
  return run_hooks (plan, id, hooks, phase, state_json, false, err);
}

int
ar_stage_run_egress_early (const ar_plan *plan, const char *id,
                           const oci_spec *spec, const char *state_json,
                           bool caller_stays, bool *ran, ar_error_t **err)
{
  *ran = false;
  const oci_hooks *hooks = &spec->hooks;
  const oci_namespace *netns = oci_spec_find_namespace (spec, OCI_NS_NETWORK);
  if (plan == NULL || hooks->prestart.len > 0 || hooks->create_runtime.len == 0
      || (netns && netns->path))
    return 0;
  if (!hook_is_own (plan, &hooks->create_runtime.items[0]))
    return 0;
  *ran = true;
  const oci_hook_list first
      = { .items = hooks->create_runtime.items, .len = 1 };
  return run_hooks (plan, id, &first, "createRuntime", state_json, caller_stays,
                    err);
}

static void
fill_error (yajl_gen g, const void *arg)
{
  oj_gen_kv_string (g, "error", arg);
}

void
ar_stage_audit_error (const ar_plan *plan, const char *id, const char *event,
                      const char *message)
{
  if (!ar_stage_audits (plan))
    return;
  cleanup_free char *fields = fields_of (fill_error, message);
  ar_stage_audit (plan, id, event, fields);
}

bool
ar_stage_secrets_main_only (const ar_plan *plan)
{
  return plan && stage->secrets_main_only (plan);
}

int
ar_stage_hide_secrets (const ar_plan *plan, ar_error_t **err)
{
  return ar_stage_secrets_main_only (plan) ? stage->hide_secrets (plan, err)
                                           : 0;
}

/* The watchdog is a grandchild in its own session, holding only a pidfd
 * of the init: it ends when the init ends, or kills the container when
 * the wall-clock limit comes first. */
static _Noreturn void
watchdog_main (const ar_plan *plan, const char *id, int init_pidfd,
               const char *cgroup_text)
{
  setsid ();
  /* Hold nothing of the caller's: a copy of its stdout would keep a pipe
   * reader waiting for EOF until the watchdog ends. */
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; devnull >= 0 && fd < 3; fd++)
    dup2 (devnull, fd);
  int keep[] = { init_pidfd };
  ar_close_fds_from (3, keep, 1);
  struct pollfd p = { .fd = init_pidfd, .events = POLLIN };
  long long seconds = stage->wall_clock_seconds (plan);
  long long ms = seconds * 1000;
  int r;
  do
    r = poll (&p, 1, ms > INT32_MAX ? INT32_MAX : (int) ms);
  while (r < 0 && errno == EINTR);
  if (r != 0)
    _exit (0); /* the container ended first */
  ar_cgroup *cg = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (cgroup_text && ar_cgroup_deserialize (cgroup_text, &cg, &err) == 0)
    ar_cgroup_kill_all (cg, SIGKILL, &err);
  ar_pidfd_send_signal (init_pidfd, SIGKILL);
  cleanup_free char *fields
      = xasprintf ("\"limit\":\"wall-clock\",\"seconds\":%lld", seconds);
  ar_stage_audit (plan, id, "limit", fields);
  _exit (0);
}

int
ar_stage_start_gates (const ar_plan *plan, const char *id, pid_t init_pid,
                      ar_error_t **err)
{
  return plan ? stage->start_gates (plan, id, init_pid, err) : 0;
}

int
ar_stage_start_watchdog (const ar_plan *plan, const char *id, pid_t init_pid,
                         const char *cgroup_text, ar_error_t **err)
{
  if (ar_stage_wall_clock_seconds (plan) <= 0)
    return 0;
  cleanup_close int pidfd = ar_pidfd_open (init_pid);
  if (pidfd < 0)
    return ar_error_set (err, errno, "watchdog: pidfd_open");
  /* One fork, not waited for: the callers that get here (create, run -d,
   * a foreground run with a terminal) exit soon or wait only for their own
   * container, and the watchdog is reparented and reaped when they go.
   * A second fork would cost as much again for nothing. */
  pid_t child = fork ();
  if (child < 0)
    return ar_error_set (err, errno, "watchdog: fork");
  if (child == 0)
    watchdog_main (plan, id, pidfd, cgroup_text);
  return 0;
}

void
ar_stage_audit_limits (const ar_plan *plan, const char *id, const ar_cgroup *cg)
{
  if (!ar_stage_audits (plan) || cg == NULL)
    return;
  ar_cgroup_limit_hits hits;
  ar_cgroup_limit_hits_read (cg, &hits);
  if (hits.oom_kills)
    {
      cleanup_free char *f
          = xasprintf ("\"limit\":\"memory\",\"oomKills\":%llu",
                       (unsigned long long) hits.oom_kills);
      ar_stage_audit (plan, id, "limit", f);
    }
  if (hits.refused_forks)
    {
      cleanup_free char *f
          = xasprintf ("\"limit\":\"pids\",\"refusedForks\":%llu",
                       (unsigned long long) hits.refused_forks);
      ar_stage_audit (plan, id, "limit", f);
    }
}

void
ar_stage_release_unstarted (const ar_plan *plan, const char *state_dir,
                            const char *id)
{
  cleanup_error ar_error_t *ignored = NULL;
  if (plan)
    stage->finish (plan, state_dir, id, false, &ignored);
}

int
ar_stage_finish (const ar_plan *plan, const char *state_dir, const char *id,
                 ar_error_t **err)
{
  return plan ? stage->finish (plan, state_dir, id, true, err) : 0;
}

int
ar_stage_export_diff (const ar_plan *plan, const char *state_dir,
                      const char *id, const struct ar_diff_request *req,
                      ar_error_t **err)
{
  if (plan == NULL)
    return ar_error_set (err, 0, "--diff: the sandbox has no workspace");
  return stage->export_diff (plan, state_dir, id, req, err);
}
