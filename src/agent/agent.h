/* SPDX-License-Identifier: Apache-2.0 */
/* The agent policy: what agentrun adds on top of a plain OCI runtime.
 *
 *   spec ──ar_policy_apply──► spec' + plan     (pure: no syscalls)
 *   plan ──ar_agent_prepare─► host resources   (create, before clone)
 *   plan ──ar_agent_finish──► audit, /output   (delete, after the stop)
 *
 * The core runtime only calls these three; it never looks inside a plan.
 * The plan is persisted in the state dir (agent.json) between create and
 * delete, and never holds a secret's bytes — only host paths to read. */
#ifndef AR_AGENT_AGENT_H
#define AR_AGENT_AGENT_H

#include "../../oci/spec.h"
#include "../util/audit_log.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#define AR_AGENT_ANNOTATION_PREFIX "run.agentrun."
#define AR_AGENT_PLAN_FILE "agent.json"
#define AR_AGENT_CONFIG_DIR "/etc/agentrun"
/* Whose subordinate ranges (/etc/subuid, /etc/subgid) the containers'
 * user namespaces are leased from, and how many ids each gets. */
#define AR_USERNS_DEFAULT_USER "agentrun"
#define AR_USERNS_DEFAULT_SIZE 65536

typedef struct
{
  char *name;      /* file name under the secrets dir: [A-Za-z0-9._-]+ */
  char *host_path; /* read at create, copied into tmpfs, never persisted */
} ar_secret;

typedef enum
{
  AR_EGRESS_OPEN,      /* no filtering (the oci profile) */
  AR_EGRESS_NONE,      /* loopback only */
  AR_EGRESS_ALLOWLIST, /* entries below */
  AR_EGRESS_ASK,       /* entries below; the approver decides on others */
} ar_egress_mode;

typedef struct ar_plan
{
  char *profile; /* "agent", ... */

  /* Ephemeral overlay over the rootfs: upper layer in a tmpfs. */
  bool overlay;
  uint64_t overlay_size_bytes;
  uint64_t overlay_inodes;
  /* A snapshot's directory (agentrun snapshot) whose layers the upper
   * layers start as (sandbox --from); NULL: empty. */
  char *overlay_from;

  /* Secrets tmpfs, bind-mounted at secrets_path in the container. */
  ar_secret *secrets;
  size_t n_secrets;
  char *secrets_path;     /* default /run/secrets */
  bool secrets_main_only; /* hidden from exec'd processes */
  bool secrets_ask;       /* each open of one waits for the approver */

  /* Rules naming programs ("git push", "curl"): each exec of one waits
   * for the approver (programs.ask). */
  oci_strv programs_ask;

  /* The one directory that leaves the sandbox, at delete. */
  char *output_path;     /* in the container; default /output; NULL: off */
  char *output_host_dir; /* where it is exported; NULL: not exported */
  uint64_t output_max_bytes;
  uint64_t output_max_files;

  char *audit_path; /* JSON lines; NULL: no audit log */
  /* Where the log's head (line count and last hash) is kept, outside the
   * log: the state root's heads dir (ar_audit_heads_dir). Not saved in
   * agent.json: set by whoever has the plan in hand (NULL: no head kept). */
  char *audit_heads_dir;

  int64_t wall_clock_seconds; /* 0: none */

  ar_egress_mode egress;
  char **egress_allow; /* NULL-terminated entries (CIDR, host:port, *.domain) */
  size_t n_egress_allow;
  /* Inbound ports ("8080", "53/udp") whose new connections are let in
   * (a pod's probes, Services, hostPorts); none: only replies. */
  oci_strv ingress;
  /* Mode ask: the approver's socket (a host path) and how long it has to
   * answer, in seconds. */
  char *approver;
  int64_t ask_timeout;

  /* A host directory seen at the same path through its own overlay
   * (sandbox): the real one is never written; the changes stay in the
   * ephemeral layer for ar_workspace_export_diff. NULL: none. */
  char *workspace_host_dir;
  bool workspace_read_only; /* mounted "ro": writes fail with EROFS */

  /* Root inside is nobody outside: made by real root, the container gets
   * a user namespace whose ids 0..userns_size-1 are a host range of its
   * own, leased from userns_user's subordinate ranges (userns.h), with
   * these /proc/sys/user limits (file name -> value). */
  bool userns;
  char *userns_user;
  uint32_t userns_size;
  oci_map userns_limits;

  /* Only when the root is the host's: what to hide (expanded on the host
   * at create, see hide.h), and concrete paths the caller keeps visible
   * although a pattern matches them. */
  oci_map hide; /* pattern (absolute, '*' globs, "~/X": X below every
                   home) -> reason, as the profile, the caller or a
                   secret named it */
  oci_strv unhide;
} ar_agent_plan;

/* Profiles: "oci" (none: the spec is left as it is), "agent" (the agent
 * defaults), or a file AR_AGENT_CONFIG_DIR/profiles/<name>.json. */
typedef struct ar_profile ar_profile;

/* Resolve a profile by name; NULL name means: the default from
 * AR_AGENT_CONFIG_DIR/agentrun.json ("profile" key), else "oci". */
int ar_profile_load (const char *name, ar_profile **out, ar_error_t **err);
void ar_profile_free (ar_profile *profile);
const char *ar_profile_name (const ar_profile *profile);
/* Does the profile make the ephemeral overlay (what a sandbox needs)? */
bool ar_profile_has_overlay (const ar_profile *profile);

/* The host uids that a container of `spec` which real root makes under
 * the profile may hold: the subordinate range its user namespace is
 * leased from. False when it gets no leased user namespace (none in the
 * profile, a caller without root, a spec that brings, joins or shares
 * one, or a pid, ipc or mount namespace of the host's), or when the range
 * cannot be read (create then says why). */
bool ar_profile_leased_uids (const ar_profile *profile, const oci_spec *spec,
                             uint32_t *first, uint32_t *count);

/* The annotations come from the host user on the command line (sandbox),
 * not from whoever wrote a container spec: host paths need not be under
 * the profile's allowedHostDirs, and the caller-only keys ("audit",
 * "workspace") are accepted. */
void ar_profile_trust_caller (ar_profile *profile);

/* What the engines give a container unless told otherwise (Docker's and
 * containerd's set; Podman's and CRI-O's are within it): a sandbox asks
 * for the same. */
const char *const *ar_engine_default_caps (size_t *n);

/* An egress allow entry (CIDR, address, host:port, [v6]:port, name,
 * *.name), checked as the hook will read it; the error reads
 * "WHAT `ENTRY`: why". */
int
ar_egress_entry_check (const char *what, const char *entry, ar_error_t **err);
/* An inbound port: "PORT", "PORT/tcp" or "PORT/udp"; the error reads
 * "WHAT `ENTRY`: why". */
int
ar_ingress_entry_check (const char *what, const char *entry, ar_error_t **err);
/* A programs.ask rule: a program and its leading arguments, 1 to 16 words
 * without ',', at most 256 bytes; the error reads "WHAT `RULE`: why". */
int
ar_program_rule_check (const char *what, const char *rule, ar_error_t **err);
/* Where the egress hook (hooks/agentrun-egress) is: the runtime finds it
 * (ar_egress_hook_find) and tells the policy, which stays pure. */
#define AR_EGRESS_HOOK_NAME "agentrun-egress"
#define AR_EGRESS_HOOK_DEFAULT "/usr/local/sbin/" AR_EGRESS_HOOK_NAME
void ar_profile_set_egress_hook (ar_profile *profile, const char *path);
/* $AGENTRUN_EGRESS_HOOK, else agentrun-egress beside the runtime's own
 * binary (argv[0], then PATH), else AR_EGRESS_HOOK_DEFAULT. */
char *ar_egress_hook_find (void);
/* The runtime runs its own egress hook in-process (no fork, no exec: the
 * hook's work is a few netlink messages): a hook is ours when its path
 * is `own_path` (ar_egress_hook_find's) and it is called by its name.
 * Anything else, that binary under another path included, runs as the
 * plain hook it is. */
bool ar_egress_hook_is_own (const oci_hook *hook, const char *own_path);
/* `caller_stays`: this process lives until the container ends (run and
 * sandbox in the foreground): the resolver is then a thread, not a daemon. */
int ar_egress_hook_run_here (const oci_hook *hook, const char *state_json,
                             bool caller_stays, ar_error_t **err);

/* Rewrite `spec` for the profile and the container's run.agentrun.*
 * annotations (only where the profile allows them), and say what the host
 * must prepare. `pod`: for a container of a CRI pod, the plan its pod's
 * sandbox container runs under (NULL: none known). *plan is NULL for the
 * oci profile. Errors name the annotation or profile key. Pure: testable
 * without root. */
int ar_policy_apply (oci_spec *spec, const ar_profile *profile,
                     const ar_agent_plan *pod, ar_agent_plan **plan,
                     ar_error_t **err);

void ar_agent_plan_free (ar_agent_plan *plan);

/* One run.agentrun.SUFFIX annotation's value, read as ar_policy_apply
 * reads it under `profile` and nothing else applied: a caller that makes
 * annotations of its own flags (sandbox) finds a bad value before
 * anything is made, and names its flag. The error is the annotation's
 * handler's, without the annotation's name. */
int ar_policy_check_annotation (const ar_profile *profile, const char *suffix,
                                const char *value, ar_error_t **err);

/* A process exec'd into a container under the policy gets no more than
 * the container's own process: no_new_privileges when it had it, and
 * capabilities only from its sets (an exec's process.json comes from the
 * engine, not from the profile). Pure. */
void ar_policy_confine_exec (oci_process *exec, const oci_process *container);

/* The plan as one JSON object (what agent.json holds). */
void ar_agent_plan_gen (yajl_gen g, const ar_agent_plan *plan);

/* sandbox --print-policy: apply the policy to `spec` and describe the
 * result as JSON (hidden host paths with their reasons, mounts, masked
 * and read-only paths, egress, limits). Creates nothing; reads the host
 * only to expand the hidden paths. */
int ar_policy_describe (oci_spec *spec, const ar_profile *profile, char **json,
                        ar_error_t **err);

/* Persist / restore the plan in the state dir. */
int ar_agent_plan_save (int state_dirfd, const ar_agent_plan *plan,
                        ar_error_t **err);
int
ar_agent_plan_load (int state_dirfd, ar_agent_plan **plan, ar_error_t **err);

/* At create, before clone: mount the overlay and secrets tmpfs under the
 * state dir (`state_dir` is its absolute path), copy the secrets in
 * (owned by the process user, 0400), point spec->root_path at the merged
 * overlay and add the secrets and output mounts to spec->mounts. On
 * failure everything it made is undone. `rootfs` is the resolved rootfs. */
int ar_agent_prepare (const ar_agent_plan *plan, const char *state_dir,
                      const char *rootfs, oci_spec *spec, ar_error_t **err);

/* Append an event to the plan's audit log (plan->audit_path, not NULL),
 * keeping its head under the state root (plan->audit_heads_dir); a log
 * cut below its kept head is appended to with a warning on stderr, the
 * head left as it was (ar_audit_append_with_head). */
int
ar_agent_audit (const ar_agent_plan *plan, const char *id, const char *event,
                const char *fields_json, ar_error_t **err);
/* The same where an event that cannot be written is a warning on stderr,
 * not the caller's failure. */
void ar_agent_audit_or_warn (const ar_agent_plan *plan, const char *id,
                             const char *event, const char *fields_json);

/* At delete, after the container's processes are gone: record the
 * overlay's changes and the exported artifacts in the audit log, export
 * /output, unmount and remove everything ar_agent_prepare made. Safe to
 * call after a partial prepare, and twice. */
int ar_agent_finish (const ar_agent_plan *plan, const char *state_dir,
                     const char *container_id, ar_error_t **err);

/* sandbox --diff FILE: what the command left in the workspace against
 * the workspace as it was, in git's diff format (git apply takes it on a
 * clean checkout of the original); without .git, nor, in a git
 * repository, the files git ignores unless `include_ignored`. The
 * commits made in the sandbox go to FILE.bundle (none: no such file),
 * unless what it would carry holds a secret: then there is none either,
 * it is listed as withheld and the diff is not whole.
 * After the container stopped and before ar_agent_finish. Files holding
 * a secret are withheld as from /output; the audit log's "diff" event
 * lists them, and the error when the diff is not whole (a path that
 * could not be read is left out, the rest is still written). */
typedef struct ar_diff_result
{
  size_t changed;  /* paths in the diff, a withheld one included */
  size_t withheld; /* of those, left out (they hold a secret) */
  char *bundle;    /* FILE.bundle, when commits were made; NULL: none */
} ar_diff_result;

typedef struct ar_diff_request
{
  const char *path;       /* absolute */
  bool include_ignored;   /* --diff-ignored */
  ar_diff_result *result; /* when not NULL: as far as the diff got */
} ar_diff_request;

void ar_diff_result_clear (ar_diff_result *result);

int ar_workspace_export_diff (const ar_agent_plan *plan, const char *state_dir,
                              const char *container_id,
                              const ar_diff_request *req, ar_error_t **err);

#endif
