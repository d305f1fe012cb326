/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot: save a container's ephemeral layers under a name, list and
 * remove them. A fork starts from one (sandbox --from ID:NAME); rollback
 * puts the container itself back to one. The container is frozen while
 * its layers are copied, so a snapshot is one moment of it. */
#include "config.h"
#include "cmd.h"
#include "../../oci/json.h"
#include "../agent/agent.h"
#include "../agent/snapshot.h"
#include "../agent/overlay.h"
#include "../agent/stage.h"
#include "../core/cgroups/cgroups.h"
#include "../core/container.h"
#include "../core/state.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static const ar_option options[]
    = { { "format", 'f', true, "ls: table (default) or json" }, { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc = {
  "snapshot",
  "CONTAINER_ID NAME | ls [--format json] CONTAINER_ID | rm CONTAINER_ID NAME",
  "Save a copy of an agent container's ephemeral layers (what changed in "
  "its root and its workspace) as NAME, list the snapshots, or remove "
  "one. `sandbox --from CONTAINER_ID:NAME` runs a command in a new sandbox "
  "that starts from one. `snapshot take ID NAME` is the same as "
  "`snapshot ID NAME`, for a container named ls, rm or take."
};

/* The container's state dir and agent plan; refused when it has no
 * overlay, or when its overlay is out of this process's reach. */
typedef struct
{
  char *state_dir;
  ar_agent_plan *plan;
} target;

static void
target_clear (target *t)
{
  free (t->state_dir);
  ar_agent_plan_free (t->plan);
}

static int
open_target (const ar_globals *g, const char *id, target *t, ar_error_t **err)
{
  *t = (target){ 0 };
  cleanup_close int state_fd = ar_container_open_dir (g->root, id, err);
  if (state_fd < 0)
    return -1;
  if (ar_agent_stage_load (state_fd, &t->plan, err) < 0)
    return -1;
  if (t->plan == NULL || !t->plan->overlay)
    return ar_error_set (err, 0,
                         "snapshot: container `%s` has no ephemeral overlay "
                         "(created without the agent profile)",
                         id);
  /* Without root the overlay lives in the mount namespace of the runtime
   * that made the container, which this process is not in. */
  if (geteuid () != 0)
    return ar_error_set (err, 0,
                         "snapshot: container `%s`: snapshots need root (a "
                         "container made without root keeps its overlay in "
                         "its runtime's own mount namespace)",
                         id);
  t->state_dir = ar_container_state_path (g->root, id, err);
  return t->state_dir ? 0 : -1;
}

typedef struct
{
  pid_t pid;
  int done_fd;
} thaw_guard;

/* A container must not stay frozen because this process was killed while
 * it copied: a child in a session of its own waits for a byte, and thaws
 * the cgroup when its pipe ends without one. Started before the freeze. */
static pid_t
start_thaw_guard (const ar_cgroup *cg, int *done_fd, ar_error_t **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "snapshot: pipe");
  pid_t pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_NAME, "agentrun-thaw");
      setsid ();
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2 (null, fd);
      close_range (3, (unsigned) p[0] - 1, 0);
      close_range ((unsigned) p[0] + 1, ~0u, 0);
      char c;
      ssize_t n;
      do
        n = read (p[0], &c, 1);
      while (n < 0 && errno == EINTR);
      if (n <= 0)
        {
          ar_error_t *ignored = NULL;
          ar_cgroup_freeze (cg, false, &ignored);
        }
      _exit (0);
    }
  close (p[0]);
  if (pid < 0)
    {
      close (p[1]);
      return ar_error_set (err, errno, "snapshot: fork");
    }
  *done_fd = p[1];
  return pid;
}

static void
stop_thaw_guard (pid_t guard, int done_fd)
{
  (void) !write (done_fd, "", 1);
  close (done_fd);
  waitpid (guard, NULL, 0);
}

/* Frozen while its layers are copied, when it has processes; one that a
 * pause froze already stays so. */
static int
freeze (const ar_globals *g, const char *id, ar_cgroup **frozen,
        thaw_guard *guard, ar_error_t **err)
{
  *frozen = NULL;
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (g->root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_status status = ar_state_status (state_fd, st);
  if (status == AR_STATUS_STOPPED || status == AR_STATUS_PAUSED)
    return 0;
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup_for (st, "to freeze while its layers are copied", &cg,
                               err)
      < 0)
    return ar_error_prefix (err, "snapshot");
  guard->pid = start_thaw_guard (cg, &guard->done_fd, err);
  if (guard->pid < 0 || ar_cgroup_freeze (cg, true, err) < 0)
    {
      if (guard->pid > 0)
        stop_thaw_guard (guard->pid, guard->done_fd);
      ar_cgroup_free (cg);
      return ar_error_prefix (err, "snapshot: freeze `%s`", id);
    }
  *frozen = cg;
  return 0;
}

static int
thaw (ar_cgroup *frozen, const thaw_guard *guard, const char *id,
      ar_error_t **err)
{
  if (frozen == NULL)
    return 0;
  int r = ar_cgroup_freeze (frozen, false, err);
  stop_thaw_guard (guard->pid, guard->done_fd);
  ar_cgroup_free (frozen);
  return r < 0 ? ar_error_prefix (err, "snapshot: thaw `%s`", id) : 0;
}

static int
take (const ar_globals *g, const char *id, const char *name, ar_error_t **err)
{
  target t;
  int r = open_target (g, id, &t, err);
  ar_cgroup *frozen = NULL;
  thaw_guard guard = { -1, -1 };
  ar_snapshot_info info = { 0 };
  long long t0 = ar_now_us ();
  if (r == 0 && freeze (g, id, &frozen, &guard, err) == 0)
    {
      cleanup_free char *created = ar_now_rfc3339 ();
      r = ar_snapshot_take (t.state_dir, name, t.plan->workspace_host_dir,
                            created, &info, err);
      if (r < 0)
        ar_error_prefix (err, "container `%s`", id);
      cleanup_error ar_error_t *thaw_err = NULL;
      if (thaw (frozen, &guard, id, &thaw_err) < 0 && r == 0)
        r = ar_error_pass (err, steal_pointer (&thaw_err));
    }
  else
    r = -1;
  if (info.name)
    {
      cleanup_free char *fields = xasprintf (
          "\"name\":\"%s\",\"entries\":%llu,\"bytes\":%llu,\"ms\":%.2f", name,
          (unsigned long long) info.entries, (unsigned long long) info.bytes,
          (ar_now_us () - t0) / 1000.0);
      ar_container_audit (g->root, id, "snapshot", fields);
    }
  ar_snapshot_info_clear (&info);
  target_clear (&t);
  return r;
}

static void
print_table (const ar_snapshot_info *list, size_t n)
{
  printf ("%-24s %-26s %10s %12s\n", "NAME", "CREATED", "ENTRIES", "BYTES");
  for (size_t i = 0; i < n; i++)
    printf ("%-24s %-26s %10llu %12llu\n", list[i].name,
            list[i].created ? list[i].created : "-",
            (unsigned long long) list[i].entries,
            (unsigned long long) list[i].bytes);
}

static void
print_json (const ar_snapshot_info *list, size_t n)
{
  yajl_gen gen = oj_gen_new (false, NULL);
  yajl_gen_array_open (gen);
  for (size_t i = 0; i < n; i++)
    ar_snapshot_info_gen (gen, &list[i]);
  yajl_gen_array_close (gen);
  cleanup_free char *json = oj_gen_finish (gen);
  printf ("%s\n", json);
}

static int
list (const ar_globals *g, const char *id, const char *format, ar_error_t **err)
{
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    return ar_error_set (
        err, 0, "snapshot ls: --format: unknown format `%s` (table or json)",
        format);
  target t;
  ar_snapshot_info *all = NULL;
  size_t n = 0;
  int r = open_target (g, id, &t, err) < 0
                  || ar_snapshot_list (t.state_dir, &all, &n, err) < 0
              ? -1
              : 0;
  if (r == 0)
    (json ? print_json : print_table) (all, n);
  ar_snapshot_list_free (all, n);
  target_clear (&t);
  return r;
}

static int
remove_one (const ar_globals *g, const char *id, const char *name,
            ar_error_t **err)
{
  target t;
  int r = open_target (g, id, &t, err) < 0
                  || ar_snapshot_remove (t.state_dir, name, err) < 0
              ? -1
              : 0;
  if (r < 0 && t.state_dir)
    ar_error_prefix (err, "container `%s`", id);
  if (r == 0)
    {
      cleanup_free char *fields = xasprintf ("\"name\":\"%s\"", name);
      ar_container_audit (g->root, id, "snapshot-rm", fields);
    }
  target_clear (&t);
  return r;
}

int
ar_cmd_snapshot (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  const char *verb = p.n_args > 0 ? p.args[0] : "";
  const char *format = p.value[0] ? p.value[0] : "table";
  if (strcmp (verb, "ls") == 0 && p.n_args == 2)
    return list (g, p.args[1], format, err);
  if (p.value[0])
    return ar_error_set (err, 0, "snapshot: --format is for snapshot ls");
  if (strcmp (verb, "rm") == 0 && p.n_args == 3)
    return remove_one (g, p.args[1], p.args[2], err);
  if (strcmp (verb, "take") == 0 && p.n_args == 3)
    return take (g, p.args[1], p.args[2], err);
  if (p.n_args == 2 && strcmp (verb, "ls") != 0 && strcmp (verb, "rm") != 0
      && strcmp (verb, "take") != 0)
    return take (g, p.args[0], p.args[1], err);
  return ar_error_set (err, 0,
                       "snapshot: expected CONTAINER_ID NAME, ls CONTAINER_ID "
                       "or rm CONTAINER_ID NAME (agentrun snapshot --help)");
}

static const ar_option rollback_options[] = { { 0 } };
AR_OPTIONS_FIT (rollback_options);

static const ar_command_doc rollback_doc
    = { "rollback", "CONTAINER_ID NAME",
        "Put an agent container back to its snapshot NAME: every process of it "
        "is killed, its root becomes the snapshot's again, and its init is "
        "started afresh from its config (a container that was only created is "
        "left created). Its snapshots, cgroup, secrets and exported /output "
        "stay." };

/* The engine's monitor the init was handed to (containerd's shim, conmon),
 * or NULL: it waits for that init, and its end would make the engine
 * delete the container under a new one it does not know. */
static const char *
engine_monitor (pid_t init, char comm[static 32])
{
  pid_t parent = init > 0 ? ar_pid_parent (init) : 0;
  cleanup_free char *path = xasprintf ("/proc/%d/comm", (int) parent);
  cleanup_free char *text = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (parent <= 1
      || ar_read_file_at (AT_FDCWD, path, 64, &text, NULL, &ignored) < 0)
    return NULL;
  snprintf (comm, 32, "%.*s", (int) strcspn (text, "\n"), text);
  return strncmp (comm, "containerd-shim", 15) == 0
                 || strcmp (comm, "conmon") == 0
             ? comm
             : NULL;
}

/* What a restart cannot give back: a caller in the foreground that owns
 * the container's end, an engine that monitors it, a terminal, a systemd
 * scope that went with the processes. */
static int
check_restartable (const ar_globals *g, const char *id, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (g->root, id, &state_fd, &st, err) < 0)
    return -1;
  oci_spec *spec = NULL;
  if (ar_container_load_spec (state_fd, &spec, err) < 0)
    return -1;
  bool terminal = spec->process && spec->process->terminal;
  oci_spec_free (spec);
  if (faccessat (state_fd, AR_SUPERVISOR_FILE, F_OK, 0) == 0)
    return ar_error_set (
        err, 0,
        "rollback: container `%s` belongs to the `agentrun run` or `sandbox` that waits for it: roll back one made with create or run --detach",
        id);
  char comm[32];
  const char *monitor
      = ar_state_init_alive (st) ? engine_monitor (st->pid, comm) : NULL;
  if (monitor)
    return ar_error_set (
        err, 0,
        "rollback: container `%s` is run by an engine (its init's parent is %s), which would see its init end and remove it: snapshot and sandbox --from work under an engine, rollback does not",
        id, monitor);
  if (terminal)
    return ar_error_set (
        err, 0,
        "rollback: container `%s` has a terminal (process.terminal): its new init would have no console socket to send it to",
        id);
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup (st, &cg, err) < 0)
    return -1;
  bool scope = cg && cg->unit;
  ar_cgroup_free (cg);
  if (scope)
    return ar_error_set (
        err, 0,
        "rollback: container `%s` is in a systemd scope, which ends with its processes: not supported yet",
        id);
  return 0;
}

static bool
was_started (const ar_globals *g, const char *id)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  return ar_container_load (g->root, id, &state_fd, &st, &ignored) == 0
         && ar_state_status (state_fd, st) != AR_STATUS_CREATED;
}

static int
restart (const ar_globals *g, const char *id, bool start, ar_error_t **err)
{
  ar_create_options opts = { .root = g->root, .id = id, .restart = true };
  ar_created created = { .pidfd = -1, .sync_fd = -1, .pty_master = -1 };
  int r = ar_container_create (&opts, &created, err);
  ar_created_close (&created);
  if (r == 0 && start)
    r = ar_container_start (g->root, id, err);
  return r;
}

int
ar_cmd_rollback (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&rollback_doc, rollback_options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("rollback", &p, 2, "CONTAINER_ID NAME", err) < 0)
    return -1;
  const char *id = p.args[0], *name = p.args[1];
  target t;
  cleanup_free char *dir = NULL;
  ar_snapshot_info info = { 0 };
  long long t0 = ar_now_us ();
  r = open_target (g, id, &t, err) < 0
              || ar_snapshot_find (t.state_dir, id, name, &dir, &info, err) < 0
              || check_restartable (g, id, err) < 0
          ? -1
          : 0;
  /* A sandbox's workspace layer is its caller's to diff; sandboxes are
   * refused above as supervised, this says why should one not be. */
  if (r == 0 && t.plan->workspace_host_dir)
    r = ar_error_set (
        err, 0,
        "rollback: container `%s` has a sandbox workspace: not supported", id);
  bool start = r == 0 && was_started (g, id);
  if (r == 0
      && (ar_container_stop (g->root, id, err) < 0
          || ar_overlay_remount (t.state_dir, dir, err) < 0))
    r = ar_error_prefix (err, "rollback: container `%s` (stopped)", id);
  if (r == 0)
    {
      cleanup_free char *fields = xasprintf (
          "\"name\":\"%s\",\"ms\":%.2f", name, (ar_now_us () - t0) / 1000.0);
      ar_container_audit (g->root, id, "rollback", fields);
      if (restart (g, id, start, err) < 0)
        r = ar_error_prefix (err, "rollback: container `%s` (stopped, at `%s`)",
                             id, name);
    }
  ar_snapshot_info_clear (&info);
  target_clear (&t);
  return r;
}
