/* SPDX-License-Identifier: Apache-2.0 */
/* The one place where the core calls a policy stage above it (the agent
 * policy, src/agent/): the core sees only an opaque plan and the steps
 * below, and reaches the policy through a table of callbacks that the
 * program installs (src/cmd/agent_stage.c). Without one, every container
 * is plain OCI: no plan is ever made or loaded. The core never includes
 * an agent header, so it compiles and its unit tests link without
 * src/agent. */
#ifndef AR_CORE_POLICY_STAGE_H
#define AR_CORE_POLICY_STAGE_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the policy decided for one container; only the policy looks
 * inside. */
typedef struct ar_plan ar_plan;
/* sandbox --diff's request, passed through from the command to the
 * policy (see ar_container_workspace_diff). */
struct ar_diff_request;

/* The policy's side of each step; called only with a plan, except apply
 * and load, which make one. */
typedef struct
{
  /* `state_root`: where the container's state dir will be (a pod's
   * sandbox container's is there too). */
  int (*apply) (const char *profile_name, bool trust_caller,
                const char *state_root, oci_spec *spec, ar_plan **plan,
                ar_error_t **err);
  /* NULL and 0 when the state dir holds no plan. */
  int (*load) (int state_fd, ar_plan **plan, ar_error_t **err);
  void (*free) (ar_plan *plan);
  void (*keep_audit_head) (ar_plan *plan, const char *state_dir);
  int (*prepare) (const ar_plan *plan, int state_fd, const char *state_dir,
                  const char *rootfs, oci_spec *spec, ar_error_t **err);
  void (*confine_exec) (const ar_plan *plan, const oci_spec *spec,
                        oci_process *proc);
  bool (*has_overlay) (const ar_plan *plan);
  int64_t (*wall_clock_seconds) (const ar_plan *plan);
  /* Once the init has mounted everything: what guards the container from
   * the host side while it lives (secrets.ask's gate). */
  int (*start_gates) (const ar_plan *plan, const char *id, pid_t init_pid,
                      ar_error_t **err);
  bool (*audits) (const ar_plan *plan);
  void (*audit) (const ar_plan *plan, const char *id, const char *event,
                 const char *fields_json);
  /* A record about a process: its argv, and `command_line` when not NULL,
   * redacted against the container's secrets, then `more_fields`. */
  void (*audit_process) (const ar_plan *plan, const char *state_dir,
                         const char *id, const char *event,
                         const oci_process *proc, char *const *command_line,
                         const char *more_fields);
  /* Is this the policy's own hook, which runs in this process? */
  bool (*hook_is_own) (const ar_plan *plan, const oci_hook *hook);
  int (*run_own_hook) (const oci_hook *hook, const char *state_json,
                       bool caller_stays, ar_error_t **err);
  bool (*secrets_main_only) (const ar_plan *plan);
  int (*hide_secrets) (const ar_plan *plan, ar_error_t **err);
  int (*export_diff) (const ar_plan *plan, const char *state_dir,
                      const char *id, const struct ar_diff_request *req,
                      ar_error_t **err);
  /* `started`: the container ran, so its changes are logged and /output
   * is exported; otherwise the host resources are only released. */
  int (*finish) (const ar_plan *plan, const char *state_dir, const char *id,
                 bool started, ar_error_t **err);
} ar_stage_ops;

/* Once, before any container operation (main). */
void ar_stage_install (const ar_stage_ops *ops);

void ar_stage_free_plan (ar_plan *plan);

/* exec: under a plan, the process gets no more than the container's own
 * (no_new_privileges, capabilities); without one it stays as given. */
void ar_stage_confine_exec (const ar_plan *plan, const oci_spec *spec,
                            oci_process *proc);

/* create: rewrite the spec for the profile (NULL: the configured default).
 * *plan stays NULL when the profile adds nothing (oci). */
int ar_stage_apply_policy (const char *profile_name, bool trust_caller,
                           const char *state_root, oci_spec *spec,
                           ar_plan **plan, ar_error_t **err);

/* create, once the state dir exists: persist the plan and prepare the host
 * resources; may rewrite spec->root_path (the overlay) and spec->mounts. */
int ar_stage_prepare (const ar_plan *plan, int state_fd, const char *state_dir,
                      const char *rootfs, oci_spec *spec, ar_error_t **err);

/* create, once the init is ready: the policy's gates. */
int ar_stage_start_gates (const ar_plan *plan, const char *id, pid_t init_pid,
                          ar_error_t **err);

/* create, once the init is ready: the wall-clock limit's watchdog. */
int64_t ar_stage_wall_clock_seconds (const ar_plan *plan);
int
ar_stage_start_watchdog (const ar_plan *plan, const char *id, pid_t init_pid,
                         const char *cgroup_text, ar_error_t **err);

/* Keep the audit log's head under the state root of `state_dir` (the
 * container's state dir): ar_stage_load_plan does it for a loaded plan. */
void ar_stage_keep_audit_head (ar_plan *plan, const char *state_dir);

/* The plan saved with a container; NULL (and 0) when it has none. */
int ar_stage_load_plan (int state_fd, ar_plan **plan, ar_error_t **err);

/* Does the plan keep an audit log? */
bool ar_stage_audits (const ar_plan *plan);

/* Append an audit event when the plan has an audit log; failures to log
 * are reported on stderr, never fatal to the container operation. */
void ar_stage_audit (const ar_plan *plan, const char *id, const char *event,
                     const char *fields_json);

/* The container was made: its process (argv, user, cwd) and, for a
 * sandbox, the runtime's own command line (NULL: none). */
void ar_stage_audit_create (const ar_plan *plan, const char *state_dir,
                            const char *id, const oci_process *proc,
                            char *const *command_line);

/* Another record about the container's process under `event` (a pooled
 * sandbox's "take": the command it was given). */
void
ar_stage_audit_process (const ar_plan *plan, const char *state_dir,
                        const char *id, const char *event,
                        const oci_process *proc, char *const *command_line);

/* How an exec went, in two records: "exec-start" (argv, user, cwd) before
 * the process exists, "exec" when it ended (pid, and its status when
 * known: status >= 0), or failed to start (`error`). A start without an
 * end is the trace of an exec whose runtime was killed. */
typedef struct
{
  const char *event;
  pid_t pid;  /* 0: none */
  int status; /* -1: unknown (detached, or never started) */
  const char *error;
} ar_exec_outcome;

void
ar_stage_audit_exec (const ar_plan *plan, const char *state_dir, const char *id,
                     const oci_process *proc, const ar_exec_outcome *outcome);

/* Run one phase of OCI hooks and, when there are any, audit the outcome
 * ("hook" event: phase, count, ok, and the error when one failed). */
int ar_stage_run_hooks (const ar_plan *plan, const char *id,
                        const oci_hook_list *hooks, const char *phase,
                        const char *state_json, ar_error_t **err);

/* create, as soon as the init exists: when the first createRuntime hook
 * is the runtime's own egress hook and no prestart hook has to run
 * before it, run it now, while the init mounts its root. A fresh netns
 * exists from clone on (a netns joined by path exists only once the init
 * has joined it, so then the hook waits for the createRuntime point like
 * any other), and the init waits at the createRuntime point
 * until the parent says so, so the filter is still in place before the
 * container's first instruction; the set-up just no longer adds to the
 * start. *ran says whether it did: the caller then skips that hook.
 * `caller_stays`: this process waits for the container (run, sandbox in
 * the foreground), so the hook's resolver can be a thread of it. */
int ar_stage_run_egress_early (const ar_plan *plan, const char *id,
                               const oci_spec *spec, const char *state_json,
                               bool caller_stays, bool *ran, ar_error_t **err);

/* An event carrying a one-line error ("create-failed"). */
void ar_stage_audit_error (const ar_plan *plan, const char *id,
                           const char *event, const char *message);

/* Are the container's secrets limited to its main process? */
bool ar_stage_secrets_main_only (const ar_plan *plan);

/* Does the plan put an overlay over the rootfs? */
bool ar_stage_has_overlay (const ar_plan *plan);

/* sandbox --diff (see struct ar_diff_request's policy). */
int ar_stage_export_diff (const ar_plan *plan, const char *state_dir,
                          const char *id, const struct ar_diff_request *req,
                          ar_error_t **err);

/* exec, in the child after joining the mount namespace: hide the secrets
 * from exec'd processes when the plan limits them to the main process. */
int ar_stage_hide_secrets (const ar_plan *plan, ar_error_t **err);

struct ar_cgroup;

/* delete, before the cgroup goes: audit the limits that were hit (OOM
 * kills, refused forks). */
void ar_stage_audit_limits (const ar_plan *plan, const char *id,
                            const struct ar_cgroup *cg);

/* A container that never ran (a failed create, one whose create was
 * killed): release the host resources, but export nothing and log
 * nothing. `plan` may be NULL. */
void ar_stage_release_unstarted (const ar_plan *plan, const char *state_dir,
                                 const char *id);

/* delete, after the processes are gone: the agent's own teardown
 * (changes, /output export, unmounts). */
int ar_stage_finish (const ar_plan *plan, const char *state_dir, const char *id,
                     ar_error_t **err);

#endif
