/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun sandbox [OPTIONS] -- CMD...: run CMD in a fresh agent sandbox
 * with no bundle, then remove it. The spec is made here from the default
 * one and handed to create in memory (the state dir is its bundle), the
 * options become run.agentrun.* annotations that the policy trusts (they
 * come from the host user), and the rest is `run`. */
#include "config.h"
#include "cmd.h"
#include "destination.h"
#include "failure_status.h"
#include "pool.h"
#include "sandbox_report.h"
#include "sandbox_flags.h"
#include "../../oci/oci.h"
#include "../agent/agent.h"
#include "../agent/snapshot.h"
#include "../agent/stage.h"
#include "../core/container.h"
#include "../core/foreground.h"
#include "../core/policy_stage.h"
#include "../core/cgroups/cgroups.h"
#include "../core/rootless.h"
#include "../core/state.h"
#include "../core/take.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/sealed_exe.h"
#include "../util/timings.h"
#include "../util/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const ar_option options[] = {
  { "rootfs", 0, true,
    "root filesystem (default: the host's /, read-only under the overlay)" },
  { "workspace", 'w', true,
    "working directory, seen through an overlay (default: the current directory)" },
  { "diff", 0, true,
    "write the workspace's changes to FILE in git's diff format (commits: FILE.bundle)" },
  { "diff-ignored", 0, false, "keep the files git ignores in the diff" },
  { "diff-strict", 0, false,
    "exit 125 when the diff cannot be written whole (default: the command's status)" },
  { "output", 'o', true, "export /output to DIR/<id> when done" },
  { "secret", 's', true,
    "NAME=FILE: a secret at /run/secrets/NAME (at most 1 MiB)", true },
  { "timeout", 0, true,
    "wall-clock limit (e.g. 30s, 10m, 1h); no short form: -t is --tty, as in runc and docker" },
  { "memory", 'm', true, "memory limit (e.g. 512m, 2g)" },
  { "pids", 0, true, "process limit" },
  { "audit", 0, true, "append the audit log (JSON lines) to FILE" },
  { "env", 'e', true,
    "NAME=VALUE for the command; NAME alone passes the host's value (none: left out)",
    true },
  { "allow-net", 0, true, "allow egress to ENTRY (CIDR, host:port, *.domain)",
    true },
  { "tty", 't', false,
    "give the command a terminal (default: when stdin and stdout are one); stdin is always passed on: there is no -i" },
  { "no-tty", 0, false, "never give the command a terminal" },
  { "hide", 0, true, "also hide host PATH from the command (host root only)",
    true },
  { "unhide", 0, true, "do not hide host PATH (one the profile hides)", true },
  { "print-policy", 0, false, "print the effective policy as JSON and exit" },
  { "no-init", 0, false,
    "run the command as PID 1 itself, without the reaping init" },
  { "json-status", 0, true,
    "write how it ended to FILE as JSON (status, reason, times, memory, output, diff, audit head)" },
  { "env-file", 0, true,
    "FILE of NAME=VALUE lines (NAME alone: the host's value; # comments); -e wins" },
  { "user", 'u', true,
    "run the command as UID[:GID], numbers (default 0:0; GID 0 when not given); the workspace dir and /output are its" },
  { "workdir", 0, true,
    "the command's directory in the sandbox (default: the workspace; relative: below it)" },
  { "hostname", 0, true, "the sandbox's hostname (default: sandbox)" },
  { "overlay-size", 0, true,
    "size of the tmpfs that holds every write (e.g. 512m, 4g; default: the profile's)" },
  { "read-only-workspace", 0, false,
    "show the workspace read-only (writes fail with EROFS; no --diff)" },
  { "pool", 0, true,
    "take a sandbox made ahead by `agentrun pool create NAME` (its options; this call gives the command, -e, --env-file, --workdir, --diff, --json-status)" },
  { "from", 0, true,
    "ID:NAME: start from snapshot NAME of container ID (agentrun snapshot): its rootfs, its workspace and the files it had changed (root only)" },
  { "approver", 0, true,
    "ask the approver listening on SOCKET before a name or address outside --allow-net is reached (egress mode ask; agentrun approve is one)" },
  { "ask-secrets", 0, false,
    "each open of a secret waits for the approver's decision (needs --approver or the profile's; root only)" },
  { "ask-program", 0, true,
    "RULE (\"git push\", \"curl\"; repeatable): each exec of a program it names waits for the approver's decision (root only)",
    true },
  { 0 }
};
enum
{
  OPT_ROOTFS,
  OPT_WORKSPACE,
  OPT_DIFF,
  OPT_DIFF_IGNORED,
  OPT_DIFF_STRICT,
  OPT_OUTPUT,
  OPT_SECRET,
  OPT_TIMEOUT,
  OPT_MEMORY,
  OPT_PIDS,
  OPT_AUDIT,
  OPT_ENV,
  OPT_ALLOW_NET,
  OPT_TTY,
  OPT_NO_TTY,
  OPT_HIDE,
  OPT_UNHIDE,
  OPT_PRINT_POLICY,
  OPT_NO_INIT,
  OPT_JSON_STATUS,
  OPT_ENV_FILE,
  OPT_USER,
  OPT_WORKDIR,
  OPT_HOSTNAME,
  OPT_OVERLAY_SIZE,
  OPT_READ_ONLY_WORKSPACE,
  OPT_POOL,
  OPT_FROM,
  OPT_APPROVER,
  OPT_ASK_SECRETS,
  OPT_ASK_PROGRAM
};
AR_OPTIONS_MATCH (options, OPT_ASK_PROGRAM);

/* --diff-strict: what agentrun exits with when the diff failed. */
#define DIFF_FAILED_STATUS AR_EXIT_OWN_FAILURE

static const ar_command_doc doc = {
  "sandbox", "[OPTIONS] -- COMMAND [ARGS...]",
  "Run a command in a fresh agent sandbox (ephemeral overlay, no network,\n"
  "hardened defaults), pass its exit status through, and remove it.\n"
  "\n"
  "The policy is the global --profile's (agentrun --profile NAME sandbox ...,\n"
  "default: agent); a profile without the overlay cannot make a sandbox.\n"
  "A path given to a flag may be relative to the current directory (--hide\n"
  "and --unhide take absolute host paths). The command's environment:\n"
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin,\n"
  "TERM=xterm, HOME=/root (/ with --user), then --env-file, then each -e.",
  true
};

static void
annotate (oci_spec *spec, const char *suffix, const char *value)
{
  oci_map *m = &spec->annotations;
  m->items = xrealloc (m->items, (m->len + 1) * sizeof *m->items);
  m->items[m->len].key = xasprintf ("run.agentrun.%s", suffix);
  m->items[m->len].value = xstrdup (value);
  m->len++;
}

static int
absolute_dir (const char *flag, const char *path, char **out, ar_error_t **err)
{
  char buf[PATH_MAX];
  struct stat st;
  if (realpath (path, buf) == NULL)
    return ar_error_set (err, errno, "sandbox: %s `%s`", flag, path);
  if (stat (buf, &st) < 0 || !S_ISDIR (st.st_mode))
    return ar_error_set (err, 0, "sandbox: %s `%s` is not a directory", flag,
                         path);
  *out = xstrdup (buf);
  return 0;
}

/* --rootfs and --workspace, absolute (default: / and the current dir). */
static int
sandbox_dirs (const ar_parsed *p, char **rootfs, char **workspace,
              ar_error_t **err)
{
  const char *r = p->value[OPT_ROOTFS] ? p->value[OPT_ROOTFS] : "/";
  const char *w = p->value[OPT_WORKSPACE] ? p->value[OPT_WORKSPACE] : ".";
  if (absolute_dir ("--rootfs", r, rootfs, err) < 0
      || absolute_dir ("--workspace", w, workspace, err) < 0)
    return -1;
  /* The workspace is a directory of the root under its own overlay: the
   * root itself would be that overlay's lower layer twice over. */
  if (strcmp (*workspace, "/") == 0)
    return ar_error_set (
        err, 0,
        "sandbox: --workspace `/`%s: a sandbox's root cannot be its workspace; run it from a project directory, or give --workspace DIR",
        p->value[OPT_WORKSPACE] ? "" : " (the current directory)");
  return 0;
}

/* A directory flag given with --from must be the snapshot's own. */
static int
same_dir (const char *flag, const ar_parsed *p, int option,
          const char *snapshot_dir, const char *given, ar_error_t **err)
{
  if (p->value[option] && strcmp (given, snapshot_dir) != 0)
    return ar_error_set (
        err, 0,
        "sandbox: --from `%s`: the snapshot's %s is `%s`, not `%s` (leave %s out to take it)",
        p->value[OPT_FROM], flag + 2, snapshot_dir, given, flag);
  return 0;
}

/* --from ID:NAME: the snapshot's directory, and the rootfs and workspace
 * its layers sit on, which the fork takes (absolute, as recorded). */
static int
from_snapshot (const ar_globals *g, const ar_parsed *p, char **rootfs,
               char **workspace, char **from_dir, ar_error_t **err)
{
  const char *from = p->value[OPT_FROM];
  const char *colon = strchr (from, ':');
  if (colon == NULL || colon == from || colon[1] == '\0')
    return ar_error_set (
        err, 0, "sandbox: --from `%s`: expected CONTAINER_ID:NAME", from);
  if (geteuid () != 0)
    return ar_error_set (
        err, 0, "sandbox: --from `%s`: snapshots need root (agentrun snapshot)",
        from);
  cleanup_free char *id = xasprintf ("%.*s", (int) (colon - from), from);
  cleanup_close int state_fd = ar_container_open_dir (g->root, id, err);
  cleanup_free char *state_dir
      = state_fd < 0 ? NULL : ar_container_state_path (g->root, id, err);
  ar_snapshot_info info = { 0 };
  if (state_dir == NULL
      || ar_snapshot_find (state_dir, id, colon + 1, from_dir, &info, err) < 0)
    return ar_error_prefix (err, "sandbox: --from `%s`", from);
  int r = same_dir ("--rootfs", p, OPT_ROOTFS, info.rootfs, *rootfs, err);
  if (r == 0 && info.workspace)
    r = same_dir ("--workspace", p, OPT_WORKSPACE, info.workspace, *workspace,
                  err);
  if (r == 0)
    {
      free (*rootfs);
      *rootfs = steal_pointer (&info.rootfs);
      if (info.workspace)
        {
          free (*workspace);
          *workspace = steal_pointer (&info.workspace);
        }
    }
  ar_snapshot_info_clear (&info);
  return r;
}

/* A repeatable flag's values, comma-separated, as one annotation, after
 * `first` (NULL: none). */
static void
annotate_joined (const ar_parsed *p, int option, const char *first,
                 oci_spec *spec, const char *annotation)
{
  cleanup_free char *joined = xstrdup (first ? first : "");
  for (size_t i = 0; i < p->n_multi[option]; i++)
    xappend (&joined, ",", p->multi[option][i]);
  if (joined[0])
    annotate (spec, annotation, joined);
}

/* --hide and --unhide name host paths as they are (no symlink resolved:
 * the host side does that when it hides them). */
static int
check_hide_paths (const ar_parsed *p, int option, const char *flag,
                  ar_error_t **err)
{
  for (size_t i = 0; i < p->n_multi[option]; i++)
    {
      const char *path = p->multi[option][i];
      if (path[0] != '/' || strchr (path, ',') != NULL)
        return ar_error_set (
            err, 0, "sandbox: %s `%s`: expected an absolute path without ','",
            flag, path);
    }
  return 0;
}

/* --hide's paths, and the state root this sandbox's is in: other
 * containers' specs and environment are there. It is made by the create
 * when it is not there yet, before the host side looks for what to
 * hide. */
static void
annotate_hide (const ar_parsed *p, const char *state_root, oci_spec *spec)
{
  char real[PATH_MAX];
  const char *root = realpath (state_root, real) ? real : state_root;
  annotate_joined (p, OPT_HIDE, root[0] == '/' ? root : NULL, spec, "hide");
}

/* Secrets and limits: each flag is the annotation of the same name. */
static int
annotate_options (const ar_parsed *p, const char *state_root, oci_spec *spec,
                  ar_error_t **err)
{
  if (check_hide_paths (p, OPT_HIDE, "--hide", err) < 0
      || check_hide_paths (p, OPT_UNHIDE, "--unhide", err) < 0)
    return -1;
  for (size_t i = 0; i < p->n_multi[OPT_SECRET]; i++)
    {
      const char *s = p->multi[OPT_SECRET][i];
      const char *eq = strchr (s, '=');
      if (eq == NULL || eq == s || eq[1] == '\0')
        return ar_error_set (err, 0,
                             "sandbox: --secret `%s`: expected NAME=FILE", s);
      char buf[PATH_MAX];
      if (realpath (eq + 1, buf) == NULL)
        return ar_error_set (err, errno, "sandbox: --secret %.*s: `%s`",
                             (int) (eq - s), s, eq + 1);
      cleanup_free char *key = xasprintf ("secret.%.*s", (int) (eq - s), s);
      cleanup_free char *annotation = xasprintf ("run.agentrun.%s", key);
      if (oci_map_get (&spec->annotations, annotation))
        return ar_error_set (err, 0, "sandbox: --secret %.*s: given twice",
                             (int) (eq - s), s);
      annotate (spec, key, buf);
    }
  if (p->value[OPT_OUTPUT])
    {
      cleanup_free char *dir = NULL;
      if (absolute_dir ("--output", p->value[OPT_OUTPUT], &dir, err) < 0)
        return -1;
      /* Checked before the command runs, not found out when its /output
       * cannot be exported at the end. */
      if (access (dir, W_OK | X_OK) < 0)
        return ar_error_set (
            err, errno,
            "sandbox: --output `%s`: /output could not be exported there",
            p->value[OPT_OUTPUT]);
      annotate (spec, "output", dir);
    }
  static const struct
  {
    int option;
    const char *annotation;
  } plain[] = { { OPT_TIMEOUT, "timeout" },
                { OPT_MEMORY, "memory" },
                { OPT_PIDS, "pids" },
                { OPT_OVERLAY_SIZE, "overlay.size" } };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (p->value[plain[i].option])
      annotate (spec, plain[i].annotation, p->value[plain[i].option]);
  if (p->value[OPT_AUDIT])
    {
      cleanup_free char *audit = NULL;
      if (ar_sandbox_host_file ("--audit", p->value[OPT_AUDIT], &audit, err)
          < 0)
        return -1;
      annotate (spec, "audit", audit);
    }
  if (p->value[OPT_APPROVER])
    {
      cleanup_free char *approver = NULL;
      if (ar_sandbox_host_file ("--approver", p->value[OPT_APPROVER], &approver,
                                err)
          < 0)
        return -1;
      annotate (spec, "approver", approver);
    }
  if (ar_flag (p, OPT_READ_ONLY_WORKSPACE))
    annotate (spec, "workspace.readOnly", "true");
  if (ar_flag (p, OPT_ASK_SECRETS))
    annotate (spec, "secrets.ask", "true");
  annotate_joined (p, OPT_ALLOW_NET, NULL, spec, "egress.allow");
  annotate_joined (p, OPT_ASK_PROGRAM, NULL, spec, "programs.ask");
  annotate_hide (p, state_root, spec);
  annotate_joined (p, OPT_UNHIDE, NULL, spec, "unhide");
  return 0;
}

/* Each --allow-net in full, before anything is made: a bad one would
 * otherwise fail only in the egress hook, half-way through the create.
 * Each --ask-program whole: joined by ',' into one annotation, a ',' in
 * one would split it. */
static int
check_entry_flags (const ar_parsed *p, ar_error_t **err)
{
  for (size_t i = 0; i < p->n_multi[OPT_ALLOW_NET]; i++)
    if (ar_egress_entry_check ("sandbox: --allow-net",
                               p->multi[OPT_ALLOW_NET][i], err)
        < 0)
      return -1;
  for (size_t i = 0; i < p->n_multi[OPT_ASK_PROGRAM]; i++)
    if (ar_program_rule_check ("sandbox: --ask-program",
                               p->multi[OPT_ASK_PROGRAM][i], err)
        < 0)
      return -1;
  return 0;
}

static bool
wants_tty (const ar_parsed *p)
{
  if (ar_flag (p, OPT_NO_TTY))
    return false;
  return ar_flag (p, OPT_TTY)
         || (isatty (STDIN_FILENO) && isatty (STDOUT_FILENO));
}

/* The capabilities the sandbox asks for: Docker's default set. The
 * profile then keeps what it allows (the agent profile: nine of them), so
 * a root command can chown, setuid and override file modes in its own
 * overlay as it would in a container. */
static void
request_caps (oci_process *proc)
{
  if (proc->capabilities == NULL)
    proc->capabilities = xcalloc (1, sizeof *proc->capabilities);
  size_t n;
  char *const *caps = (char *const *) ar_engine_default_caps (&n);
  oci_capabilities *c = proc->capabilities;
  oci_strv_set (&c->bounding, caps, n);
  oci_strv_set (&c->effective, caps, n);
  oci_strv_set (&c->permitted, caps, n);
}

static int
build_spec (const ar_parsed *p, const char *rootfs, const char *workspace,
            const char *state_root, bool rootless, oci_spec **out,
            ar_error_t **err)
{
  cleanup_free char *json = oci_spec_default_json (false, 0, 0);
  oci_spec *spec = NULL;
  if (oci_spec_parse (json, strlen (json), "default spec", &spec, err) < 0)
    return -1;
  free (spec->root_path);
  spec->root_path = xstrdup (rootfs);
  oci_process *proc = spec->process;
  oci_strv_set (&proc->args, p->args, (size_t) p->n_args);
  request_caps (proc);
  proc->terminal = wants_tty (p);
  const ar_sandbox_process_flags process_flags = {
    .workspace = workspace,
    .user = p->value[OPT_USER],
    .workdir = p->value[OPT_WORKDIR],
    .hostname = p->value[OPT_HOSTNAME],
    .env_file = p->value[OPT_ENV_FILE],
    .env = p->multi[OPT_ENV],
    .n_env = p->n_multi[OPT_ENV],
    .rootless = rootless,
  };
  annotate (spec, "workspace", workspace);
  if (ar_sandbox_set_process (&process_flags, spec, err) < 0
      || annotate_options (p, state_root, spec, err) < 0)
    {
      oci_spec_free (spec);
      return -1;
    }
  *out = spec;
  return 0;
}

static char *
new_sandbox_id (void)
{
  unsigned char r[6] = { 0 };
  if (getrandom (r, sizeof r, 0) != (ssize_t) sizeof r)
    r[0] = (unsigned char) getpid ();
  return xasprintf ("sandbox-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
                    r[4], r[5]);
}

static int
print_policy (const ar_globals *g, oci_spec *spec, ar_error_t **err)
{
  cleanup_free char *json = NULL;
  if (ar_agent_stage_describe (g->profile ? g->profile : "agent", true, spec,
                               &json, err)
      < 0)
    return ar_error_prefix (err, "sandbox: --print-policy");
  printf ("%s\n", json);
  return 0;
}

/* The command's status stays what agentrun exits with unless
 * --diff-strict: the failure is one line on stderr (and in the audit
 * log's "diff" event). */
static int
diff_after (const ar_globals *g, const ar_parsed *p, const char *id,
            ar_sandbox_report *report, int status)
{
  const ar_diff_request req
      = { .path = report->diff_path,
          .include_ignored = ar_flag (p, OPT_DIFF_IGNORED),
          .result = &report->diff };
  cleanup_error ar_error_t *err = NULL;
  report->diffed = true;
  if (ar_container_workspace_diff (g->root, id, &req, &err) == 0)
    return status;
  report->diff_error = xstrdup (ar_error_text (err));
  if (!ar_flag (p, OPT_DIFF_STRICT))
    {
      fprintf (stderr,
               "agentrun: sandbox: %s (the command's exit status %d is kept)\n",
               ar_error_text (err), status);
      return status;
    }
  fprintf (
      stderr,
      "agentrun: sandbox: %s (exit %d for --diff-strict; the command exited %d)\n",
      ar_error_text (err), DIFF_FAILED_STATUS, status);
  return DIFF_FAILED_STATUS;
}

/* The command ended (status >= 0) or could not run: the report, --diff,
 * and the delete, whose failure is the error when nothing else was. */
static int
finish_sandbox (const ar_globals *g, const ar_parsed *p, const char *id,
                ar_sandbox_report *report, int status, ar_error_t **err)
{
  if (status >= 0)
    ar_sandbox_report_ended (report);
  if (status >= 0 && report->diff_path)
    {
      status = diff_after (g, p, id, report, status);
      ar_timings_mark ("diff");
    }
  cleanup_error ar_error_t *delete_err = NULL;
  if (ar_container_delete (g->root, id, true, &delete_err) < 0 && status >= 0)
    {
      *err = steal_pointer (&delete_err);
      status = -1;
    }
  ar_timings_mark ("delete");
  return status;
}

/* "sandbox: --memory 64m --pids 40", as given: what a sandbox without a
 * cgroup refuses (one per process, so a static buffer). */
static const char *
limits_asked_by (const ar_parsed *p)
{
  static char text[128];
  snprintf (text, sizeof text, "sandbox:%s%s%s%s",
            p->value[OPT_MEMORY] ? " --memory " : "",
            p->value[OPT_MEMORY] ? p->value[OPT_MEMORY] : "",
            p->value[OPT_PIDS] ? " --pids " : "",
            p->value[OPT_PIDS] ? p->value[OPT_PIDS] : "");
  return text;
}

/* What a fresh sandbox and a pooled one are made with alike. */
static ar_create_options
sandbox_create_options (const ar_globals *g, const ar_parsed *p, const char *id,
                        const char *config_json)
{
  return (ar_create_options){
    .root = g->root,
    .id = id,
    .config_json = config_json,
    .profile = g->profile ? g->profile : "agent",
    /* Without root, the cgroup delegated to the user is a scope of its
     * systemd instance: the limits hold wherever there is one. */
    .systemd_cgroup
    = g->systemd_cgroup
      || (ar_userns_unprivileged () && ar_cgroup_user_systemd_available ()),
    .rootless = g->rootless,
    /* The profile's own default limits cannot stop a sandbox that has no
     * cgroup to put them in: they are named in a warning. Those asked for
     * with --memory or --pids are refused unless --rootless-limits=ignore. */
    .ignore_unenforced_limits
    = g->ignore_unenforced_limits
      || (!p->value[OPT_MEMORY] && !p->value[OPT_PIDS]),
    .limits_asked_by = limits_asked_by (p),
    .trust_caller = true,
    .started_by_parent = true,
    .init_reaper = !ar_flag (p, OPT_NO_INIT),
    .delete_when_done = true,
  };
}

static int
run_sandbox (const ar_globals *g, const ar_parsed *p, char *const *argv,
             const char *id, const char *config_json, ar_sandbox_report *report,
             ar_error_t **err)
{
  ar_create_options opts = sandbox_create_options (g, p, id, config_json);
  opts.caller_waits = true;
  opts.command_line = argv;
  cleanup_created ar_created created;
  if (ar_container_create (&opts, &created, err) < 0)
    return -1;
  ar_foreground_forward_signals (created.pid);
  int status = -1;
  if (ar_container_release (g->root, id, &created, err) == 0)
    {
      ar_timings_mark ("start");
      status = ar_container_wait (g->root, id, "sandbox", &created,
                                  &report->outcome, err);
      ar_timings_mark ("wait");
    }
  return finish_sandbox (g, p, id, report, status, err);
}

/* The spec the flags ask for, checked by the profile's own parsers (an
 * error names the flag), before anything is made. */
static int
checked_spec (const ar_globals *g, const ar_parsed *p, const char *rootfs,
              const char *workspace, oci_spec **spec, ar_held_uids *held,
              size_t *n_held, ar_error_t **err)
{
  ar_profile *profile = NULL;
  if (ar_sandbox_load_profile (g->profile, &profile, err) < 0)
    return -1;
  int r = build_spec (p, rootfs, workspace, g->root,
                      g->rootless && geteuid () != 0, spec, err);
  /* The root is the host's (or --rootfs): written only through the
   * overlay, and not at all without one. */
  if (r == 0)
    (*spec)->root_readonly = !ar_profile_has_overlay (profile);
  if (r == 0 && ar_sandbox_check_annotations (profile, *spec, err) < 0)
    {
      oci_spec_free (*spec);
      *spec = NULL;
      r = -1;
    }
  *n_held = r == 0
                    && ar_profile_leased_uids (profile, *spec, &held->first,
                                               &held->count)
                ? 1
                : 0;
  ar_profile_free (profile);
  return r;
}

/* -------------------------------------------------------------------- */
/* Pools (pool.h): what a pool fixes, and what each call gives.          */

/* What one `sandbox --pool` call may give; the rest is the pool's. */
static const int call_options[]
    = { OPT_ENV,         OPT_ENV_FILE,     OPT_WORKDIR,
        OPT_DIFF,        OPT_DIFF_IGNORED, OPT_DIFF_STRICT,
        OPT_JSON_STATUS, OPT_NO_TTY,       OPT_POOL };
/* What only a call gives, never a pool (a pooled sandbox has no terminal
 * and keeps its reaping init, which reports how the command ended). */
static const int never_pool_options[]
    = { OPT_DIFF,        OPT_DIFF_IGNORED, OPT_DIFF_STRICT,
        OPT_JSON_STATUS, OPT_PRINT_POLICY, OPT_TTY,
        OPT_NO_INIT,     OPT_POOL,         OPT_FROM };

/* The first flag given that is not in `allowed` (n of them), or -1. */
static int
first_given_outside (const ar_parsed *p, const int *allowed, size_t n)
{
  for (int o = 0; options[o].long_name; o++)
    {
      bool in = false;
      for (size_t i = 0; i < n; i++)
        in = in || allowed[i] == o;
      if (p->present[o] && !in)
        return o;
    }
  return -1;
}

/* The first flag given that is in `refused` (n of them), or -1. */
static int
first_given_of (const ar_parsed *p, const int *refused, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p->present[refused[i]])
      return refused[i];
  return -1;
}

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

int
ar_sandbox_make_ready (const ar_globals *g, char **pool_options,
                       size_t n_options, const char *id, int ready_fd,
                       bool in_own_namespaces, ar_error_t **err)
{
  cleanup_free char **argv = xcalloc (n_options + 4, sizeof *argv);
  argv[0] = (char *) "sandbox";
  for (size_t i = 0; i < n_options; i++)
    argv[1 + i] = pool_options[i];
  /* The command comes with each take; this one is never run. */
  argv[n_options + 1] = (char *) "--";
  argv[n_options + 2] = (char *) "true";
  cleanup_parsed ar_parsed p = { 0 };
  if (ar_parse_options ("pool create", options, (int) n_options + 3, argv,
                        false, &p, err)
      < 0)
    return -1;
  int refused
      = first_given_of (&p, never_pool_options, COUNT (never_pool_options));
  if (refused >= 0)
    return ar_error_set (
        err, 0,
        "pool create: --%s: not an option of a pool (each `sandbox --pool` call gives --diff and --json-status; a pooled sandbox has no terminal and keeps its init)",
        options[refused].long_name);
  if (p.n_args != 1)
    return ar_error_set (
        err, 0,
        "pool create: `%s`: a pool takes no command (each `sandbox --pool NAME -- COMMAND` gives one)",
        p.args[0]);
  if (check_entry_flags (&p, err) < 0)
    return -1;
  cleanup_free char *rootfs = NULL;
  cleanup_free char *workspace = NULL;
  if (sandbox_dirs (&p, &rootfs, &workspace, err) < 0)
    return -1;
  oci_spec *spec = NULL;
  ar_held_uids held; /* `pool` runs from a sealed copy (main.c) */
  size_t n_held;
  if (checked_spec (g, &p, rootfs, workspace, &spec, &held, &n_held, err) < 0)
    return -1;
  spec->process->terminal = false;
  cleanup_free char *config_json = oci_spec_to_json (spec, false);
  oci_spec_free (spec);
  ar_create_options opts = sandbox_create_options (g, &p, id, config_json);
  opts.await_take = true;
  cleanup_created ar_created created
      = { .pidfd = -1, .sync_fd = -1, .pty_master = -1 };
  int r = ar_container_create (&opts, &created, err);
  if (r == 0 && ar_take_offer (created.sync_fd, ready_fd, id, err) < 0)
    r = -1;
  /* Its overlay is in this process's mount namespace. */
  if (r == 0 && in_own_namespaces)
    {
      cleanup_close int state_fd = ar_container_open_dir (g->root, id, err);
      if (state_fd < 0
          || ar_rootless_hold_namespaces (state_fd, created.pidfd, err) < 0)
        {
          unlinkat (ready_fd, id, 0);
          r = -1;
        }
    }
  if (r < 0 && created.pidfd >= 0)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_container_delete (g->root, id, true, &ignored);
    }
  return r;
}

/* What this call gives the pooled sandbox's process: the command, -e and
 * --env-file entries (set over the pool's env), --workdir (relative:
 * below the pool's working directory, the workspace by default). */
static int
call_command (const ar_parsed *p, ar_take_command *cmd, ar_error_t **err)
{
  const ar_sandbox_process_flags flags = {
    .env_file = p->value[OPT_ENV_FILE],
    .env = p->multi[OPT_ENV],
    .n_env = p->n_multi[OPT_ENV],
  };
  oci_strv_set (&cmd->args, p->args, (size_t) p->n_args);
  oci_strv_set (&cmd->env, NULL, 0);
  if (p->value[OPT_WORKDIR])
    {
      if (p->value[OPT_WORKDIR][0] == '\0')
        return ar_error_set (err, 0,
                             "sandbox: --workdir: expected a directory");
      cmd->cwd = xstrdup (p->value[OPT_WORKDIR]);
    }
  return ar_sandbox_env_entries (&flags, &cmd->env, err);
}

/* A pool made without root keeps each sandbox's user and mount
 * namespaces (its overlay's mounts are there) in a holder process. This
 * process joins them for good, as a fresh sandbox without root unshares
 * its own; the refill starts first, from outside them. So the join comes
 * last in a claim: after it no other member's can be joined. 1: joined;
 * 0: none held; -1: they are gone. */
static int
join_if_held (const ar_globals *g, const char *name, ar_pool_member *m,
              ar_error_t **err)
{
  cleanup_error ar_error_t *no_state = NULL;
  cleanup_close int state_fd
      = ar_container_open_dir (g->root, m->id, &no_state);
  if (state_fd < 0 || !ar_rootless_held (state_fd))
    return 0;
  ar_pool_refill (g, name, m);
  return ar_rootless_join_held (state_fd, err) < 0 ? -1 : 1;
}

/* A pool's member that cannot be taken: deleted, its socket too. */
static void
discard_member (const ar_globals *g, ar_pool_member *m)
{
  ar_pool_release_socket (m);
  cleanup_error ar_error_t *ignored = NULL;
  ar_container_delete (g->root, m->id, true, &ignored);
}

/* Claim a member (or take the launcher's claim, `done`), connect to its
 * init (or take the launcher's connection), hand it `cmd` up to its
 * READY, and join the member's namespaces if they are held. A member
 * that cannot be taken (its init gone, even after the connection was
 * made, or its holder and with it its overlay) is discarded with a
 * warning and the next one claimed: nothing of the command ran in it. One
 * whose init refuses the command is discarded, and that is the error. */
#define CLAIM_ATTEMPTS 3
static int
claim_member (const ar_globals *g, const char *name, const ar_take_command *cmd,
              ar_pool_member *m, ar_take_handover *done, ar_take_ready *ready,
              ar_error_t **err)
{
  for (int attempt = 1;; attempt++)
    {
      bool handed = attempt == 1 && done->id;
      if ((handed ? ar_pool_adopt_claim (g, name, done->id, m, err)
                  : ar_pool_claim (g, name, m, err))
          < 0)
        return -1;
      int sock
          = handed ? done->sock : ar_take_connect (m->taken_fd, m->id, err);
      if (handed)
        done->sock = -1;
      if (sock < 0 && !*err)
        ar_error_set_code (err, AR_ERR_PEER_GONE, 0, "its init is gone");
      int handled = sock < 0 ? -1
                             : ar_take_hand (sock, cmd, handed ? done : NULL,
                                             ready, err);
      bool refused
          = handled < 0 && sock >= 0 && !ar_error_is (*err, AR_ERR_PEER_GONE);
      int joined = handled < 0 ? -1 : join_if_held (g, name, m, err);
      if (joined >= 0)
        return 0;
      ar_created_close (&ready->created);
      ar_error_prefix (err, "container `%s`", m->id);
      discard_member (g, m);
      if (refused || attempt == CLAIM_ATTEMPTS)
        return -1;
      fprintf (stderr,
               "agentrun: warning: pool `%s`: %s; deleted, another taken\n",
               name, ar_error_text (*err));
      ar_error_freep (err);
      ar_pool_member_clear (m);
    }
}

/* The caller's command could not be read: the launcher's claim, if it
 * made one, is taken into *m and discarded. */
static void
discard_handed (const ar_globals *g, const char *name,
                const ar_take_handover *done, ar_pool_member *m)
{
  cleanup_error ar_error_t *ignored = NULL;
  if (done->id && ar_pool_adopt_claim (g, name, done->id, m, &ignored) == 0)
    discard_member (g, m);
}

static int
sandbox_from_pool (const ar_globals *g, const ar_parsed *p, char *const *argv,
                   ar_sandbox_report *report, ar_error_t **err)
{
  if (p->present[OPT_TTY])
    return ar_error_set (
        err, 0,
        "sandbox: --tty with --pool: a pooled sandbox has no terminal (it gets this process's stdin, stdout and stderr)");
  int misplaced = first_given_outside (p, call_options, COUNT (call_options));
  if (misplaced >= 0)
    return ar_error_set (
        err, 0,
        "sandbox: --%s with --pool: a pooled sandbox has the options its pool was made with (agentrun pool create NAME ... --%s)",
        options[misplaced].long_name, options[misplaced].long_name);
  const char *name = p->value[OPT_POOL];
  cleanup_pool_member ar_pool_member m = { .taken_fd = -1 };
  cleanup_take_handover ar_take_handover done = { .sock = -1, .pidfd = -1 };
  if (g->take_handover
      && ar_take_handover_parse (g->take_handover, &done, err) < 0)
    return -1;
  cleanup_take_command ar_take_command cmd = { 0 };
  cleanup_take_ready ar_take_ready ready
      = { .created = { .pidfd = -1, .sync_fd = -1, .pty_master = -1 } };
  int claimed = call_command (p, &cmd, err);
  if (claimed < 0)
    discard_handed (g, name, &done, &m);
  else
    claimed = claim_member (g, name, &cmd, &m, &done, &ready, err);
  if (m.id)
    report->id = xstrdup (m.id);
  if (claimed < 0)
    {
      /* One was claimed and deleted: the pool is one short. */
      if (m.id)
        ar_pool_refill (g, name, &m);
      return -1;
    }
  ar_timings_mark ("claim");
  int taken = ar_container_take (g->root, m.id, &cmd, argv, &ready, err);
  ar_timings_mark ("take");
  if (taken < 0)
    discard_member (g, &m);
  else
    ar_pool_release_socket (&m);
  /* Taken or gone, the pool is one short. */
  ar_pool_refill (g, name, &m);
  if (taken < 0)
    return -1;
  int status = ar_container_wait (g->root, m.id, "sandbox", &ready.created,
                                  &report->outcome, err);
  ar_timings_mark ("wait");
  /* Where /output and the audit log went, read while the state is
   * there: off the command's start. */
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_container_load (g->root, m.id, &state_fd, &st, &ignored) == 0)
    ar_sandbox_report_plan (report, &st->annotations, m.id, g->root);
  return finish_sandbox (g, p, m.id, report, status, err);
}

static char **
strv_copy (char *const *v, size_t n)
{
  char **copy = xcalloc (n + 1, sizeof *copy);
  for (size_t i = 0; i < n; i++)
    copy[i] = xstrdup (v[i]);
  return copy;
}

int
ar_cmd_sandbox (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_sandbox_report ar_sandbox_report report
      = { .began_ms = ar_now_ms () };
  /* The command line as given, for the audit log and the sealed re-exec:
   * parsing reorders it. */
  cleanup_strv char **command_line = strv_copy (argv, (size_t) argc);
  size_t n_main = 0;
  while (g->argv[n_main])
    n_main++;
  cleanup_strv char **main_argv = strv_copy (g->argv, n_main);
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  bool print_only = ar_flag (&p, OPT_PRINT_POLICY);
  if (p.n_args == 0 && !print_only)
    return ar_error_set (
        err, 0,
        "sandbox: give a command after the options (agentrun sandbox [OPTIONS] -- COMMAND)");
  if (check_entry_flags (&p, err) < 0)
    return -1;
  if (p.value[OPT_DIFF] && ar_flag (&p, OPT_READ_ONLY_WORKSPACE))
    return ar_error_set (
        err, 0,
        "sandbox: --diff with --read-only-workspace: the command cannot change the workspace, there is no diff to write");

  cleanup_free char *rootfs = NULL;
  cleanup_free char *workspace = NULL;
  if (sandbox_dirs (&p, &rootfs, &workspace, err) < 0)
    return -1;
  cleanup_free char *from_dir = NULL;
  if (p.value[OPT_FROM] && p.value[OPT_POOL])
    return ar_error_set (
        err, 0,
        "sandbox: --from with --pool: a pooled sandbox was made ahead, not from a snapshot");
  if (p.value[OPT_FROM]
      && from_snapshot (g, &p, &rootfs, &workspace, &from_dir, err) < 0)
    return -1;
  cleanup_free char *diff_path = NULL;
  if (p.value[OPT_DIFF] && !print_only
      && ar_cmd_file_destination ("--diff", p.value[OPT_DIFF], &diff_path, err)
             < 0)
    return -1;
  if (p.value[OPT_JSON_STATUS] && !print_only
      && ar_cmd_file_destination ("--json-status", p.value[OPT_JSON_STATUS],
                                  &report.json_path, err)
             < 0)
    return -1;
  report.diff_path = diff_path;
  /* From here on a failure is also written to --json-status. */
  if (p.value[OPT_POOL])
    {
      int taken = sandbox_from_pool (g, &p, command_line, &report, err);
      ar_sandbox_report_finish (&report, taken, taken < 0 ? *err : NULL);
      return taken;
    }
  oci_spec *spec = NULL;
  ar_held_uids held;
  size_t n_held = 0;
  int status
      = checked_spec (g, &p, rootfs, workspace, &spec, &held, &n_held, err);
  if (status == 0 && from_dir)
    annotate (spec, "overlay.from", from_dir);
  if (status == 0 && print_only)
    {
      status = print_policy (g, spec, err);
      oci_spec_free (spec);
      return status;
    }
  /* Nothing is made before here: a sealed copy (needed unless the
   * command's user namespace puts the binary out of its reach, which the
   * launcher cannot know) starts over with the same command line. */
  if (status == 0
      && ar_prepare_container_command (&held, n_held, main_argv, g->envp, err)
             < 0)
    status = -1;
  if (status == 0 && g->rootless && geteuid () != 0)
    status = ar_rootless_unshare_self (err);
  cleanup_free char *id = NULL;
  cleanup_free char *config_json = NULL;
  if (status == 0)
    {
      id = new_sandbox_id ();
      ar_sandbox_report_plan (&report, &spec->annotations, id, g->root);
      config_json = oci_spec_to_json (spec, false);
      ar_timings_mark ("build");
    }
  oci_spec_free (spec);
  if (status == 0)
    status = run_sandbox (g, &p, command_line, id, config_json, &report, err);
  ar_sandbox_report_finish (&report, status, status < 0 ? *err : NULL);
  return status;
}
