/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "policy_stage.h"
#include "cgroups/cgroups.h"
#include "hooks.h"
#include "process.h"
#include "../agent/secrets.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
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

static int
load_profile (const char *profile_name, bool trust_caller,
              ar_profile **profile, ar_error_t **err)
{
  if (ar_profile_load (profile_name, profile, err) < 0)
    return -1;
  if (trust_caller)
    ar_profile_trust_caller (*profile);
  cleanup_free char *egress_hook = ar_egress_hook_find ();
  ar_profile_set_egress_hook (*profile, egress_hook);
  return 0;
}

int
ar_stage_apply_policy (const char *profile_name, bool trust_caller,
                       oci_spec *spec, ar_agent_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  ar_profile *profile = NULL;
  if (load_profile (profile_name, trust_caller, &profile, err) < 0)
    return -1;
  int r = ar_policy_apply (spec, profile, plan, err);
  ar_profile_free (profile);
  return r;
}

int
ar_stage_describe_policy (const char *profile_name, bool trust_caller,
                          oci_spec *spec, char **json, ar_error_t **err)
{
  ar_profile *profile = NULL;
  if (load_profile (profile_name, trust_caller, &profile, err) < 0)
    return -1;
  int r = ar_policy_describe (spec, profile, json, err);
  ar_profile_free (profile);
  return r;
}

int
ar_stage_prepare (const ar_agent_plan *plan, int state_fd,
                  const char *state_dir, const char *rootfs, oci_spec *spec,
                  ar_error_t **err)
{
  if (plan == NULL)
    return 0;
  if (ar_agent_plan_save (state_fd, plan, err) < 0)
    return -1;
  return ar_agent_prepare (plan, state_dir, rootfs, spec, err);
}

void
ar_stage_keep_audit_head (ar_agent_plan *plan, const char *state_dir)
{
  if (plan == NULL || plan->audit_path == NULL)
    return;
  const char *slash = strrchr (state_dir, '/');
  free (plan->audit_heads_dir);
  plan->audit_heads_dir = xasprintf ("%.*s/" AR_AUDIT_HEADS_DIR,
                                     (int) (slash ? slash - state_dir : 0), state_dir);
}

void
ar_stage_confine_exec (const ar_agent_plan *plan, const oci_spec *spec,
                       oci_process *proc)
{
  if (plan)
    ar_policy_confine_exec (proc, spec->process);
}

int
ar_stage_load_plan (int state_fd, ar_agent_plan **plan, ar_error_t **err)
{
  *plan = NULL;
  if (faccessat (state_fd, AR_AGENT_PLAN_FILE, F_OK, 0) < 0)
    return 0;
  if (ar_agent_plan_load (state_fd, plan, err) < 0)
    return -1;
  /* The state dir's own path, from the fd: every caller has that. */
  char link[64], dir[PATH_MAX];
  snprintf (link, sizeof link, "/proc/self/fd/%d", state_fd);
  ssize_t n = readlink (link, dir, sizeof dir - 1);
  if (n > 0)
    {
      dir[n] = '\0';
      ar_stage_keep_audit_head (*plan, dir);
    }
  return 0;
}

void
ar_stage_audit (const ar_agent_plan *plan, const char *id, const char *event,
                const char *fields_json)
{
  if (plan == NULL || plan->audit_path == NULL)
    return;
  cleanup_error ar_error_t *err = NULL;
  if (ar_audit_append_with_head (plan->audit_path, plan->audit_heads_dir, id,
                                 event, fields_json, &err) < 0)
    fprintf (stderr, "agentrun: warning: audit log: %s\n", ar_error_text (err));
}

/* yajl_gen emits a whole object; the audit log wants its inside. */
static char *
object_inside (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  return len >= 2 ? xstrndup ((const char *) buf + 1, len - 2) : xstrdup ("");
}

static void
gen_key (yajl_gen g, const char *key)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
}

/* A secret typed on an exec command line must not reach the log. */
static void
gen_argv_redacted (yajl_gen g, const oci_strv *args, const ar_secret_set *secrets)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; i < args->len; i++)
    {
      const char *arg = args->items[i];
      const char *secret = ar_secret_set_find (secrets, arg, strlen (arg));
      cleanup_free char *shown = secret ? xasprintf ("[redacted: contains secret %s]", secret) : NULL;
      const char *out = shown ? shown : arg;
      yajl_gen_string (g, (const unsigned char *) out, strlen (out));
    }
  yajl_gen_array_close (g);
}

static void
gen_process (yajl_gen g, const oci_process *proc, const ar_secret_set *secrets)
{
  gen_key (g, "argv");
  gen_argv_redacted (g, &proc->args, secrets);
  gen_key (g, "uid");
  yajl_gen_integer (g, proc->user.uid);
  gen_key (g, "gid");
  yajl_gen_integer (g, proc->user.gid);
  const char *cwd = proc->cwd ? proc->cwd : "/";
  gen_key (g, "cwd");
  yajl_gen_string (g, (const unsigned char *) cwd, strlen (cwd));
}

/* A record about a process, its argv redacted against the secrets. */
static void
audit_process (const ar_agent_plan *plan, const char *state_dir,
               const char *id, const char *event, const oci_process *proc,
               void (*more) (yajl_gen, const void *, const ar_secret_set *),
               const void *arg)
{
  if (plan == NULL || plan->audit_path == NULL || proc == NULL)
    return;
  ar_secret_set secrets = { 0 };
  cleanup_error ar_error_t *ignored = NULL;
  ar_secrets_load (plan, state_dir, &secrets, &ignored);
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  gen_process (g, proc, &secrets);
  if (more)
    more (g, arg, &secrets);
  ar_secret_set_clear (&secrets);
  yajl_gen_map_close (g);
  cleanup_free char *fields = object_inside (g);
  yajl_gen_free (g);
  ar_stage_audit (plan, id, event, fields);
}

static void
gen_command_line (yajl_gen g, const void *arg, const ar_secret_set *secrets)
{
  char *const *argv = arg;
  oci_strv view = { .items = (char **) argv, .len = 0 };
  while (argv[view.len])
    view.len++;
  gen_key (g, "command");
  gen_argv_redacted (g, &view, secrets);
}

void
ar_stage_audit_create (const ar_agent_plan *plan, const char *state_dir,
                       const char *id, const oci_process *proc,
                       char *const *command_line)
{
  audit_process (plan, state_dir, id, "create", proc,
                 command_line ? gen_command_line : NULL, command_line);
}

static void
gen_exec_outcome (yajl_gen g, const void *arg, const ar_secret_set *secrets)
{
  (void) secrets;
  const ar_exec_outcome *o = arg;
  if (o->pid > 0)
    {
      gen_key (g, "pid");
      yajl_gen_integer (g, o->pid);
    }
  if (o->status >= 0)
    {
      gen_key (g, "status");
      yajl_gen_integer (g, o->status);
    }
  if (o->error)
    {
      gen_key (g, "error");
      yajl_gen_string (g, (const unsigned char *) o->error, strlen (o->error));
    }
}

void
ar_stage_audit_exec (const ar_agent_plan *plan, const char *state_dir,
                     const char *id, const oci_process *proc,
                     const ar_exec_outcome *outcome)
{
  audit_process (plan, state_dir, id, outcome->event, proc, gen_exec_outcome, outcome);
}

static char *
fields_of (void (*fill) (yajl_gen, const void *), const void *arg)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  fill (g, arg);
  yajl_gen_map_close (g);
  char *fields = object_inside (g);
  yajl_gen_free (g);
  return fields;
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
  gen_key (g, "phase");
  yajl_gen_string (g, (const unsigned char *) o->phase, strlen (o->phase));
  gen_key (g, "hooks");
  yajl_gen_integer (g, (long long) o->count);
  gen_key (g, "ok");
  yajl_gen_bool (g, o->error == NULL);
  if (o->error)
    {
      gen_key (g, "error");
      yajl_gen_string (g, (const unsigned char *) o->error, strlen (o->error));
    }
}

/* Only a container under the agent policy has the runtime's own egress
 * hook in its spec: no lookup for the rest (Docker's prestart hook, on
 * every container). */
static char *
own_egress_hook (const ar_agent_plan *plan)
{
  return plan ? ar_egress_hook_find () : NULL;
}

static int
run_hooks (const ar_agent_plan *plan, const char *id, const oci_hook_list *hooks,
           const char *phase, const char *state_json, const char *own_egress,
           bool caller_stays, ar_error_t **err)
{
  int r = 0;
  for (size_t i = 0; i < hooks->len && r == 0; i++)
    {
      const oci_hook *hook = &hooks->items[i];
      if (!ar_egress_hook_is_own (hook, own_egress))
        r = ar_hooks_run_one (hook, phase, i, state_json, err);
      else if ((r = ar_egress_hook_run_here (hook, state_json, caller_stays, err)) < 0)
        ar_error_prefix (err, "%s hook #%zu (%s)", phase, i, hook->path);
    }
  if (plan && plan->audit_path)
    {
      hook_outcome o = { phase, hooks->len, r < 0 && *err ? ar_error_text (*err) : NULL };
      cleanup_free char *fields = fields_of (fill_hook_outcome, &o);
      ar_stage_audit (plan, id, "hook", fields);
    }
  return r;
}

int
ar_stage_run_hooks (const ar_agent_plan *plan, const char *id,
                    const oci_hook_list *hooks, const char *phase,
                    const char *state_json, ar_error_t **err)
{
  if (hooks->len == 0)
    return 0;
  cleanup_free char *own_egress = own_egress_hook (plan);
  return run_hooks (plan, id, hooks, phase, state_json, own_egress, false, err);
}

int
ar_stage_run_egress_early (const ar_agent_plan *plan, const char *id,
                           const oci_spec *spec, const char *state_json,
                           bool caller_stays, bool *ran, ar_error_t **err)
{
  *ran = false;
  const oci_hooks *hooks = &spec->hooks;
  const oci_namespace *netns = oci_spec_find_namespace (spec, OCI_NS_NETWORK);
  if (plan == NULL || hooks->prestart.len > 0 || hooks->create_runtime.len == 0
      || (netns && netns->path))
    return 0;
  cleanup_free char *own_egress = own_egress_hook (plan);
  if (!ar_egress_hook_is_own (&hooks->create_runtime.items[0], own_egress))
    return 0;
  *ran = true;
  const oci_hook_list first = { .items = hooks->create_runtime.items, .len = 1 };
  return run_hooks (plan, id, &first, "createRuntime", state_json, own_egress,
                    caller_stays, err);
}

static void
fill_error (yajl_gen g, const void *arg)
{
  const char *message = arg;
  gen_key (g, "error");
  yajl_gen_string (g, (const unsigned char *) message, strlen (message));
}

void
ar_stage_audit_error (const ar_agent_plan *plan, const char *id,
                      const char *event, const char *message)
{
  if (plan == NULL || plan->audit_path == NULL)
    return;
  cleanup_free char *fields = fields_of (fill_error, message);
  ar_stage_audit (plan, id, event, fields);
}

bool
ar_stage_secrets_main_only (const ar_agent_plan *plan)
{
  return plan && plan->secrets_main_only && plan->n_secrets > 0;
}

int
ar_stage_hide_secrets (const ar_agent_plan *plan, ar_error_t **err)
{
  if (!ar_stage_secrets_main_only (plan))
    return 0;
  return ar_secrets_hide (plan->secrets_path, err);
}

/* The watchdog is a grandchild in its own session, holding only a pidfd
 * of the init: it ends when the init ends, or kills the container when
 * the wall-clock limit comes first. */
static _Noreturn void
watchdog_main (const ar_agent_plan *plan, const char *id, int init_pidfd,
               const char *cgroup_text)
{
  setsid ();
  /* Hold nothing of the caller's: a copy of its stdout would keep a pipe
   * reader waiting for EOF until the watchdog ends. */
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; devnull >= 0 && fd < 3; fd++)
    dup2 (devnull, fd);
  int keep[] = { init_pidfd };
  ar_process_close_fds (3, keep, 1);
  struct pollfd p = { .fd = init_pidfd, .events = POLLIN };
  long long ms = (long long) plan->wall_clock_seconds * 1000;
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
  cleanup_free char *fields = xasprintf ("\"limit\":\"wall-clock\",\"seconds\":%lld",
                                         (long long) plan->wall_clock_seconds);
  ar_stage_audit (plan, id, "limit", fields);
  _exit (0);
}

int
ar_stage_start_watchdog (const ar_agent_plan *plan, const char *id,
                         pid_t init_pid, const char *cgroup_text,
                         ar_error_t **err)
{
  if (plan == NULL || plan->wall_clock_seconds <= 0)
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
ar_stage_audit_limits (const ar_agent_plan *plan, const char *id,
                       const ar_cgroup *cg)
{
  if (plan == NULL || plan->audit_path == NULL || cg == NULL)
    return;
  ar_cgroup_limit_hits hits;
  ar_cgroup_limit_hits_read (cg, &hits);
  if (hits.oom_kills)
    {
      cleanup_free char *f = xasprintf ("\"limit\":\"memory\",\"oomKills\":%llu",
                                        (unsigned long long) hits.oom_kills);
      ar_stage_audit (plan, id, "limit", f);
    }
  if (hits.refused_forks)
    {
      cleanup_free char *f = xasprintf ("\"limit\":\"pids\",\"refusedForks\":%llu",
                                        (unsigned long long) hits.refused_forks);
      ar_stage_audit (plan, id, "limit", f);
    }
}

void
ar_stage_release_unstarted (const ar_agent_plan *plan, const char *state_dir,
                            const char *id)
{
  if (plan == NULL)
    return;
  ar_agent_plan quiet = *plan;
  quiet.output_host_dir = NULL;
  quiet.audit_path = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  ar_stage_finish (&quiet, state_dir, id, &ignored);
}

int
ar_stage_finish (const ar_agent_plan *plan, const char *state_dir,
                 const char *id, ar_error_t **err)
{
  if (plan == NULL)
    return 0;
  return ar_agent_finish (plan, state_dir, id, err);
}
