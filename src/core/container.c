/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "container.h"
#include "container_internal.h"
#include "../../oci/oci.h"
#include "cgroups/cgroups.h"
#include "pidns.h"
#include "hooks.h"
#include "host_mounts.h"
#include "foreground.h"
#include "outcome.h"
#include "policy_stage.h"
#include "state.h"
#include "sync.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <dirent.h>

int
ar_container_open_dir (const char *root, const char *id, ar_error_t **err)
{
  if (ar_state_validate_id (id, err) < 0)
    return -1;
  cleanup_free char *path = xasprintf ("%s/%s", root, id);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return ar_error_set_code (err, AR_ERR_NO_CONTAINER, 0,
                              "container does not exist: `%s`", id);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  return fd;
}

char *
ar_container_state_path (const char *root, const char *id, ar_error_t **err)
{
  char real_root[PATH_MAX];
  if (realpath (root, real_root) == NULL)
    {
      ar_error_set (err, errno, "state root `%s`", root);
      return NULL;
    }
  return xasprintf ("%s/%s", real_root, id);
}

int
ar_container_load (const char *root, const char *id, int *state_fd,
                   ar_state **state, ar_error_t **err)
{
  *state = NULL;
  *state_fd = ar_container_open_dir (root, id, err);
  if (*state_fd < 0)
    return -1;
  if (ar_state_load (*state_fd, state, err) < 0)
    {
      ar_closep (state_fd);
      return -1;
    }
  return 0;
}

int
ar_container_cgroup (const ar_state *st, ar_cgroup **cg, ar_error_t **err)
{
  *cg = NULL;
  if (st->cgroup == NULL)
    return 0;
  return ar_cgroup_deserialize (st->cgroup, cg, err);
}

int
ar_container_cgroup_for (const ar_state *st, const char *what, ar_cgroup **cg,
                         ar_error_t **err)
{
  if (ar_container_cgroup (st, cg, err) < 0)
    return -1;
  if (*cg == NULL)
    return ar_error_set (err, 0, "container `%s` has no cgroup %s", st->id,
                         what);
  return 0;
}

void
ar_container_remove_state_dir (int root_fd, const char *id, int state_fd)
{
  /* Whatever the runtime and the policy stage kept there: the policy's
   * files are its own business. */
  ar_unlink_files_at (state_fd);
  unlinkat (root_fd, id, AT_REMOVEDIR);
}

/* Wait (bounded) for a pid to be gone; works for non-children too. */
void
ar_wait_pidfd_exit (int pidfd, pid_t pid, int timeout_ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  if (pidfd >= 0)
    poll (&p, 1, timeout_ms);
  waitpid (pid, NULL, WNOHANG);
}

/* Hooks stored with the container, for start (poststart) and delete. */
int
ar_container_load_spec (int state_fd, oci_spec **spec, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (ar_read_file_at (state_fd, AR_CONFIG_FILE, AR_CONFIG_MAX_SIZE, &data,
                       &len, err)
      < 0)
    return -1;
  return oci_spec_parse (data, len, "config.json", spec, err);
}

static void
warn (const char *what, ar_error_t *e)
{
  fprintf (stderr, "agentrun: warning: %s: %s\n", what, ar_error_text (e));
}

void
ar_container_run_hooks_of (const oci_spec *spec, const ar_plan *plan,
                           const ar_state *st, bool poststart)
{
  const char *phase = poststart ? "poststart" : "poststop";
  const oci_hook_list *hooks
      = poststart ? &spec->hooks.poststart : &spec->hooks.poststop;
  if (hooks->len == 0)
    return;
  cleanup_error ar_error_t *e = NULL;
  cleanup_free char *json = ar_state_to_oci_json (
      st, poststart ? AR_STATUS_RUNNING : AR_STATUS_STOPPED, false);
  if (ar_stage_run_hooks (plan, st->id, hooks, phase, json, &e) < 0)
    warn (phase, e);
}

/* The same, with the hooks of the stored spec. */
static void
run_stored_hooks (int state_fd, const ar_state *st, bool poststart)
{
  oci_spec *spec = NULL;
  cleanup_error ar_error_t *e = NULL;
  if (ar_container_load_spec (state_fd, &spec, &e) < 0)
    {
      warn (poststart ? "poststart" : "poststop", e);
      return;
    }
  const oci_hook_list *hooks
      = poststart ? &spec->hooks.poststart : &spec->hooks.poststop;
  if (hooks->len > 0)
    {
      ar_plan *plan = NULL;
      cleanup_error ar_error_t *plan_err = NULL;
      ar_stage_load_plan (state_fd, &plan, &plan_err);
      ar_container_run_hooks_of (spec, plan, st, poststart);
      ar_stage_free_plan (plan);
    }
  oci_spec_free (spec);
}

/* An audit event for a container whose plan is only in its state dir;
 * whether it has an audit log (an agent plan) to write to. */
static bool
audit_event (int state_fd, const char *id, const char *event,
             const char *fields_json)
{
  ar_plan *plan = NULL;
  cleanup_error ar_error_t *e = NULL;
  if (ar_stage_load_plan (state_fd, &plan, &e) < 0)
    {
      warn ("audit", e);
      return false;
    }
  ar_stage_audit (plan, id, event, fields_json);
  ar_stage_free_plan (plan);
  return plan != NULL;
}

int
ar_container_release (const char *root, const char *id, ar_created *created,
                      ar_error_t **err)
{
  /* The channel stays open: a reaping init reports on it at the end. */
  if (ar_sync_send (created->sync_fd, AR_SYNC_START, 0, -1, NULL, err) < 0)
    return -1;
  created->started_ms = ar_now_ms ();
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  audit_event (state_fd, id, "start", NULL);
  run_stored_hooks (state_fd, st, true);
  return 0;
}

/* Wait for the init to open its end of exec.fifo and write its byte, or
 * to die trying; then for the end of file that its execve (the fd is
 * close-on-exec) or its death makes. Returning only then means poststart
 * hooks and a `kill` right after `start` meet the user's program, not the
 * init still on its way to execve (the validation suite's killsig traps a
 * signal in the program and sends it as soon as start returned). */
static int
release_through_fifo (int state_fd, const ar_state *st, ar_error_t **err)
{
  /* The pidfd first: opening the fifo releases the init, and a short
   * program can exit and be reaped by the engine's shim before a pidfd
   * opened after it would find the pid. */
  cleanup_close int pidfd = ar_pidfd_open (st->pid);
  if (pidfd < 0)
    return ar_error_set (err, errno, "pidfd_open %d", (int) st->pid);
  cleanup_close int fifo
      = openat (state_fd, AR_EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0)
    return ar_error_set (err, errno, "open exec fifo");
  bool released = false;
  for (;;)
    {
      struct pollfd p[2] = { { .fd = fifo, .events = POLLIN },
                             { .fd = pidfd, .events = POLLIN } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return ar_error_set (err, errno, "poll exec fifo");
        }
      if (p[0].revents & (POLLIN | POLLHUP))
        {
          char c;
          ssize_t n = read (fifo, &c, 1);
          if (n == 1)
            released = true;
          else if (n == 0 && released)
            break;
          else if (n == 0)
            return ar_error_set (err, 0, "container init exited before start");
          continue;
        }
      if (p[1].revents & POLLIN)
        {
          if (released)
            break;
          return ar_error_set (err, 0, "container init exited before start");
        }
    }
  if (unlinkat (state_fd, AR_EXEC_FIFO, 0) < 0)
    return ar_error_set (err, errno, "remove exec fifo");
  return 0;
}

int
ar_container_start (const char *root, const char *id, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_status status = ar_state_status (state_fd, st);
  /* runc's words: shims and scripts match them */
  if (status == AR_STATUS_RUNNING || status == AR_STATUS_PAUSED)
    return ar_error_set (err, 0,
                         "cannot start an already running container: `%s`", id);
  if (status == AR_STATUS_STOPPED)
    return ar_error_set (err, 0,
                         "cannot start a container that has stopped: `%s`", id);
  if (status != AR_STATUS_CREATED)
    return ar_error_set (err, 0,
                         "cannot start a container in the %s state: `%s`",
                         ar_status_name (status), id);
  if (faccessat (state_fd, AR_AWAIT_TAKE_FILE, F_OK, 0) == 0)
    return ar_error_set (
        err, 0,
        "container `%s` waits in a pool: agentrun sandbox --pool takes it", id);
  if (release_through_fifo (state_fd, st, err) < 0)
    return -1;
  if (faccessat (state_fd, AR_PLAIN_START_FILE, F_OK, 0) == 0)
    return 0; /* nothing to audit, no hooks: the launcher's start too */
  audit_event (state_fd, id, "start", NULL);
  run_stored_hooks (state_fd, st, true);
  return 0;
}

/* A v1 freezer holds even SIGKILL until thawed. runc thaws a paused
 * container after SIGKILL and after any `kill --all`, so the signal takes
 * effect now; the container ends up stopped or running, no longer paused. */
static void
thaw_after_kill (const ar_state *st, ar_status status, int signal, bool all)
{
  if (status != AR_STATUS_PAUSED || !(all || signal == SIGKILL))
    return;
  cleanup_error ar_error_t *ignored = NULL;
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup (st, &cg, &ignored) == 0 && cg)
    ar_cgroup_freeze (cg, false, &ignored);
  ar_cgroup_free (cg);
}

static int
kill_init (const ar_state *st, const char *id, int signal, ar_error_t **err)
{
  cleanup_close int pidfd = ar_pidfd_open (st->pid);
  /* The pidfd pins the process: check it is still our init, then signal
   * through the pidfd so a recycled pid can never be hit. */
  if (pidfd < 0 || !ar_state_init_alive (st))
    return ar_error_set (err, 0, "container not running: `%s`", id);
  if (ar_pidfd_send_signal (pidfd, signal) < 0)
    return ar_error_set (err, errno, "kill container `%s`", id);
  return 0;
}

/* kill --all without a cgroup (rootless, none delegated): the init's pid
 * namespace holds the container's processes. */
static int
kill_pid_namespace (const ar_state *st, const char *id, int signal,
                    ar_error_t **err)
{
  if (!ar_state_init_alive (st))
    return ar_error_set (err, 0, "container not running: `%s`", id);
  return ar_pidns_kill_all (st->pid, signal, err);
}

int
ar_container_kill (const char *root, const char *id, int signal, bool all,
                   ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_status status = ar_state_status (state_fd, st);
  ar_cgroup *cg = NULL;
  if (all && ar_container_cgroup (st, &cg, err) < 0)
    return -1;
  int r = cg    ? ar_cgroup_kill_all (cg, signal, err)
          : all ? kill_pid_namespace (st, id, signal, err)
                : kill_init (st, id, signal, err);
  ar_cgroup_free (cg);
  if (r == 0)
    thaw_after_kill (st, status, signal, all);
  return r;
}

static int
stop_init (const ar_state *st, ar_error_t **err)
{
  cleanup_close int pidfd = ar_pidfd_open (st->pid);
  if (pidfd < 0 || !ar_state_init_alive (st))
    return 0;
  if (ar_pidfd_send_signal (pidfd, SIGKILL) < 0 && errno != ESRCH)
    return ar_error_set (err, errno, "kill container init %d", (int) st->pid);
  ar_wait_pidfd_exit (pidfd, st->pid, 10000);
  return 0;
}

int
ar_container_stop (const char *root, const char *id, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  if (ar_state_status (state_fd, st) != AR_STATUS_STOPPED
      && ar_container_kill (root, id, SIGKILL, true, err) < 0)
    return -1;
  if (stop_init (st, err) < 0)
    return -1;
  run_stored_hooks (state_fd, st, false);
  return 0;
}

/* An empty file in the state dir that records a step as done. */
static void
mark (int state_fd, const char *name)
{
  ar_write_file_atomic_at (state_fd, name, "", 0, 0600, NULL);
}

/* A step of delete failed: the first failure is the one delete reports;
 * a later one is printed as a warning, so none goes unsaid. */
static void
step_failed (ar_error_t **first, ar_error_t **step)
{
  ar_error_t *later = ar_error_keep_first (first, step);
  if (later)
    warn ("delete", later);
  ar_error_free (later);
}

/* Processes, then what they used: limits hit are read before the cgroup
 * goes, the agent's teardown (changes, /output) after nothing can write.
 * Every step runs whatever the ones before it did: a cgroup that will not
 * go must not keep the overlay, the secrets tmpfs, the egress lease or
 * the mounts. A step that is done removes its record from the state dir
 * (host mounts, config.json with the poststop hooks) or marks it done
 * (the agent's teardown: its plan still names the audit log), so when
 * something could not be undone the dir stays with what is left, and a
 * second delete redoes only that. */
static int
tear_down (int state_fd, const ar_state *st, const char *state_dir,
           const ar_plan *plan, ar_status status, ar_error_t **err)
{
  ar_error_t *first = NULL, *step = NULL;
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup (st, &cg, &step) < 0)
    step_failed (&first, &step);
  if (status == AR_STATUS_PAUSED && cg)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_cgroup_freeze (cg, false, &ignored);
    }
  if (stop_init (st, &step) < 0)
    step_failed (&first, &step);
  ar_stage_audit_limits (plan, st->id, cg);
  if (cg && ar_cgroup_destroy (cg, &step) < 0)
    step_failed (&first, &step);
  ar_cgroup_free (cg);
  if (ar_host_mounts_undo (state_fd, &step) < 0)
    step_failed (&first, &step);
  else
    unlinkat (state_fd, AR_HOST_MOUNTS_FILE, 0);
  if (faccessat (state_fd, AR_CONFIG_FILE, F_OK, 0) == 0)
    {
      run_stored_hooks (state_fd, st, false);
      unlinkat (state_fd, AR_CONFIG_FILE, 0);
    }
  bool agent_done = faccessat (state_fd, AR_AGENT_FINISHED_FILE, F_OK, 0) == 0;
  if (!agent_done && ar_stage_finish (plan, state_dir, st->id, &step) < 0)
    step_failed (&first, &step);
  else if (!agent_done && first)
    mark (state_fd, AR_AGENT_FINISHED_FILE);
  return ar_error_pass (err, first);
}

static int
remove_half_made_cgroup (int state_fd, ar_error_t **err)
{
  cleanup_free char *text = NULL;
  if (ar_read_file_at (state_fd, AR_CGROUP_FILE, AR_CONFIG_MAX_SIZE, &text,
                       NULL, NULL)
      < 0)
    return 0; /* none made yet */
  ar_cgroup *cg = NULL;
  if (ar_cgroup_deserialize (text, &cg, err) < 0)
    return -1;
  int r = ar_cgroup_destroy (cg, err);
  ar_cgroup_free (cg);
  return r;
}

/* A state dir without a state record: a create that died before it wrote
 * one (the runtime SIGKILLed). Its init died with it (it waits for the
 * runtime's go-ahead on a socket that then closes), so what is left is
 * what the dir records: the agent plan's host resources, the cgroup and the
 * mounts of a container without a mount namespace. A create still running holds
 * the dir's lock. */
static int
remove_half_made (const char *root, const char *id, int state_fd,
                  ar_error_t **err)
{
  if (flock (state_fd, LOCK_EX | LOCK_NB) < 0)
    return ar_error_set (err, errno == EWOULDBLOCK ? 0 : errno,
                         "container `%s` is still being created", id);
  cleanup_free char *state_dir = ar_container_state_path (root, id, err);
  ar_plan *plan = NULL;
  if (state_dir == NULL || ar_stage_load_plan (state_fd, &plan, err) < 0)
    return -1;
  ar_stage_release_unstarted (plan, state_dir, id);
  ar_stage_free_plan (plan);
  if (remove_half_made_cgroup (state_fd, err) < 0
      || ar_host_mounts_undo (state_fd, err) < 0)
    return -1;
  cleanup_close int root_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return ar_error_set (err, errno, "open state root `%s`", root);
  ar_container_remove_state_dir (root_fd, id, state_fd);
  return 0;
}

/* A sandbox's bundle, as builds before the spec went in memory made it. */
static void
remove_owned_bundle (const char *bundle)
{
  cleanup_free char *config = xasprintf ("%s/config.json", bundle);
  unlink (config);
  rmdir (bundle);
}

int
ar_container_delete (const char *root, const char *id, bool force,
                     ar_error_t **err)
{
  cleanup_close int state_fd = ar_container_open_dir (root, id, err);
  if (state_fd < 0)
    {
      /* runc: a forced delete of a container that is gone is no error */
      if (force && ar_error_is (*err, AR_ERR_NO_CONTAINER))
        {
          ar_error_freep (err);
          return 0;
        }
      return -1;
    }
  cleanup_state ar_state *st = NULL;
  if (ar_state_load (state_fd, &st, err) < 0)
    {
      if (!force || faccessat (state_fd, AR_STATE_FILE, F_OK, 0) == 0)
        return -1;
      ar_error_freep (err);
      return remove_half_made (root, id, state_fd, err);
    }
  ar_status status = ar_state_status (state_fd, st);
  if (!force && (status == AR_STATUS_RUNNING || status == AR_STATUS_PAUSED))
    return ar_error_set (err, 0,
                         "cannot delete container %s that is not stopped: %s",
                         id, ar_status_name (status));

  cleanup_free char *state_dir = ar_container_state_path (root, id, err);
  if (state_dir == NULL)
    return -1;
  ar_plan *plan = NULL;
  if (ar_stage_load_plan (state_fd, &plan, err) < 0)
    return -1;
  /* A detached container's exit status went to whoever reaped it; what
   * the log can still say is whether it ended by itself or was stopped by
   * this delete. (run and sandbox log the status itself.) */
  bool logged = faccessat (state_fd, AR_EXIT_LOGGED_FILE, F_OK, 0) == 0;
  if (status != AR_STATUS_STOPPED)
    ar_stage_audit (plan, id, "exit", "\"killedByDelete\":true");
  else if (!logged)
    ar_stage_audit (plan, id, "exit", "\"killedByDelete\":false");
  /* Once: a delete that fails part way is retried. */
  if (plan && !logged)
    mark (state_fd, AR_EXIT_LOGGED_FILE);
  int r = tear_down (state_fd, st, state_dir, plan, status, err);
  if (r < 0)
    ar_error_prefix (
        err,
        "delete `%s` left this behind (the rest is undone; its state is kept: run delete again to retry)",
        id);
  else
    {
      ar_stage_audit (plan, id, "delete", NULL);
      if (faccessat (state_fd, AR_OWNED_BUNDLE_FILE, F_OK, 0) == 0)
        remove_owned_bundle (st->bundle);
      cleanup_close int root_fd
          = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (root_fd < 0)
        r = ar_error_set (err, errno, "open state root `%s`", root);
      else
        ar_container_remove_state_dir (root_fd, id, state_fd);
    }
  ar_stage_free_plan (plan);
  return r;
}

int
ar_container_print_state (const char *root, const char *id, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  cleanup_free char *json
      = ar_state_to_oci_json (st, ar_state_status (state_fd, st), true);
  puts (json);
  return 0;
}

int
ar_container_pause (const char *root, const char *id, bool pause,
                    ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_status status = ar_state_status (state_fd, st);
  ar_status wanted = pause ? AR_STATUS_RUNNING : AR_STATUS_PAUSED;
  if (status != wanted && !(pause && status == AR_STATUS_CREATED))
    return ar_error_set (err, 0, "container not %s: `%s` is %s",
                         pause ? "running" : "paused", id,
                         ar_status_name (status));
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup_for (st, "to freeze", &cg, err) < 0)
    return -1;
  int r = ar_cgroup_freeze (cg, pause, err);
  ar_cgroup_free (cg);
  return r;
}

int
ar_container_pids (const char *root, const char *id, pid_t **pids, size_t *n,
                   ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup (st, &cg, err) < 0)
    return -1;
  if (cg == NULL)
    {
      /* No cgroup (rootless): the init's pid namespace, if it has one. */
      if (ar_state_init_alive (st))
        return ar_pidns_members (st->pid, pids, n, err);
      *n = 0;
      *pids = xcalloc (1, sizeof (pid_t));
      return 0;
    }
  int r = ar_cgroup_pids (cg, pids, n, err);
  ar_cgroup_free (cg);
  return r;
}

void
ar_container_audit (const char *root, const char *id, const char *event,
                    const char *fields_json)
{
  cleanup_close int state_fd = ar_container_open_dir (root, id, NULL);
  if (state_fd >= 0)
    audit_event (state_fd, id, event, fields_json);
}

/* run and sandbox log the exit with its status, and mark it so that
 * delete does not log a second one (no log, no mark). */
static void
audit_exit (const char *root, const char *id, int status)
{
  cleanup_close int state_fd = ar_container_open_dir (root, id, NULL);
  cleanup_free char *fields = xasprintf ("\"status\":%d", status);
  if (state_fd >= 0 && audit_event (state_fd, id, "exit", fields))
    mark (state_fd, AR_EXIT_LOGGED_FILE);
}

static void
read_cgroup_numbers (const char *root, const char *id, ar_run_outcome *o)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  ar_cgroup *cg = NULL;
  if (ar_container_load (root, id, &state_fd, &st, &ignored) < 0
      || ar_container_cgroup (st, &cg, &ignored) < 0 || cg == NULL)
    return;
  ar_cgroup_limit_hits hits;
  ar_cgroup_limit_hits_read (cg, &hits);
  o->has_cgroup = true;
  o->memory_limit = hits.memory_limit;
  o->oom_kills = hits.oom_kills;
  o->pids_limit = hits.pids_limit;
  o->refused_forks = hits.refused_forks;
  o->has_memory_peak = ar_cgroup_memory_peak (cg, &o->memory_peak);
  ar_cgroup_free (cg);
}

/* When the init is the command's reaper, it reports the command's wait
 * status (its own exit code cannot tell a command killed by signal N from
 * one that exited 128 + N) and then waits while the cgroup is read: an
 * empty cgroup may go at once (systemd removes an empty scope), and with
 * it the peak memory and the OOM and fork counts. A thread takes the
 * report while the runtime waits for the init. */
typedef struct
{
  const char *root, *id;
  int sync_fd;
  bool reported; /* the init's report came: wait_status, cgroup numbers */
  int wait_status;
  ar_run_outcome numbers;
} exit_report;

static void *
take_exit_report (void *arg)
{
  exit_report *r = arg;
  ar_sync_msg msg;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_sync_recv (r->sync_fd, &msg, &ignored) < 0)
    return NULL; /* the init ended without one */
  if (msg.fd >= 0)
    close (msg.fd);
  free (msg.text);
  if (msg.type != AR_SYNC_EXIT)
    return NULL;
  read_cgroup_numbers (r->root, r->id, &r->numbers);
  r->wait_status = msg.value;
  r->reported = true;
  ar_sync_send (r->sync_fd, AR_SYNC_EXIT_SEEN, 0, -1, NULL, &ignored);
  return NULL;
}

/* Start the thread, with every signal blocked in it: they are the main
 * thread's to take. false: no thread (no sync fd, or it could not start;
 * the init then waits its bounded time and the cgroup is read after). */
static bool
start_exit_report (exit_report *r, pthread_t *thread)
{
  if (r->sync_fd < 0)
    return false;
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, &old);
  bool started = pthread_create (thread, NULL, take_exit_report, r) == 0;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  return started;
}

static void
end_exit_report (int sync_fd, pthread_t thread)
{
  /* The init is gone, so its end is closed and the thread's read ends;
   * the shutdown makes sure of it. */
  shutdown (sync_fd, SHUT_RDWR);
  pthread_join (thread, NULL);
}

static void
gather_outcome (const char *root, const char *id, const ar_created *created,
                const ar_foreground_end *end, int status,
                const exit_report *report, ar_run_outcome *o)
{
  int ws = end->wait_status;
  /* The report is taken only when it agrees with the init's exit code. */
  if (!WIFSIGNALED (ws) && report->reported)
    {
      int rs = report->wait_status;
      int as_code = WIFSIGNALED (rs) ? 128 + WTERMSIG (rs) : WEXITSTATUS (rs);
      if (as_code == WEXITSTATUS (ws))
        ws = rs;
    }
  int64_t run_ms = ar_now_ms () - created->started_ms;
  /* The cgroup's numbers as the report took them, else read now. */
  *o = report->reported ? report->numbers : (ar_run_outcome){ 0 };
  if (!report->reported)
    read_cgroup_numbers (root, id, o);
  o->status = status;
  o->exit_code = WIFSIGNALED (ws) ? -1 : WEXITSTATUS (ws);
  o->signal = WIFSIGNALED (ws) ? WTERMSIG (ws) : 0;
  o->passed_on = end->passed_on;
  o->run_ms = run_ms;
  o->wall_clock_seconds = created->wall_clock_seconds;
  if (end->timed_out)
    o->reason = AR_END_TIMEOUT;
  else if (o->oom_kills)
    o->reason = AR_END_OOM;
  else if (o->signal)
    o->reason = AR_END_SIGNAL;
  else if (o->refused_forks)
    o->reason = AR_END_PIDS;
  else
    o->reason = AR_END_EXITED;
}

/* An init that is not our child: the command's status is its report, and
 * without one the init was killed (the wall-clock limit, or the OOM
 * killer) before it could send it. */
static int
adopted_status (const exit_report *report, ar_foreground_end *end)
{
  end->wait_status = report->reported ? report->wait_status : SIGKILL;
  int ws = end->wait_status;
  return WIFSIGNALED (ws) ? 128 + WTERMSIG (ws) : WEXITSTATUS (ws);
}

int
ar_container_wait (const char *root, const char *id, const char *who,
                   const ar_created *created, ar_run_outcome *outcome,
                   ar_error_t **err)
{
  exit_report report = { .root = root, .id = id, .sync_fd = created->sync_fd };
  pthread_t thread;
  bool reporting = start_exit_report (&report, &thread);
  ar_foreground_end end;
  int status = 0;
  if (created->adopted)
    ar_foreground_wait_adopted (created->pidfd, created->wall_clock_seconds,
                                &end);
  else
    status
        = ar_foreground_wait (created->pid, created->pty_master, created->pidfd,
                              created->wall_clock_seconds, &end, err);
  if (reporting)
    end_exit_report (created->sync_fd, thread);
  if (created->adopted)
    status = adopted_status (&report, &end);
  if (end.timed_out && status >= 0)
    status = AR_EXIT_TIMEOUT;
  if (end.timed_out)
    {
      cleanup_free char *f
          = xasprintf ("\"limit\":\"wall-clock\",\"seconds\":%lld",
                       (long long) created->wall_clock_seconds);
      ar_container_audit (root, id, "limit", f);
    }
  ar_run_outcome o;
  gather_outcome (root, id, created, &end, status, &report, &o);
  ar_run_outcome_say_limits (&o, who);
  if (outcome)
    *outcome = o;
  if (status >= 0)
    audit_exit (root, id, status);
  return status;
}

int
ar_container_workspace_diff (const char *root, const char *id,
                             const struct ar_diff_request *req,
                             ar_error_t **err)
{
  cleanup_close int state_fd = ar_container_open_dir (root, id, err);
  if (state_fd < 0)
    return -1;
  cleanup_free char *state_dir = ar_container_state_path (root, id, err);
  if (state_dir == NULL)
    return -1;
  ar_plan *plan = NULL;
  if (ar_stage_load_plan (state_fd, &plan, err) < 0)
    return -1;
  int r = ar_stage_export_diff (plan, state_dir, id, req, err);
  ar_stage_free_plan (plan);
  return r;
}

/* The supervisor recorded at create is gone (its pid ended, or is another
 * process now). A live one holds its record's lock: one open and a flock
 * per container at each create, not a read of the record and of
 * /proc/PID/stat. */
static bool
supervisor_gone (int root_fd, const char *id)
{
  char record[NAME_MAX + sizeof "/" AR_SUPERVISOR_FILE];
  snprintf (record, sizeof record, "%s/" AR_SUPERVISOR_FILE, id);
  return ar_pid_record_gone (root_fd, record);
}

void
ar_container_reap_abandoned (const char *root)
{
  cleanup_dir DIR *dir = opendir (root);
  for (struct dirent *e; dir && (e = readdir (dir));)
    {
      if (e->d_name[0] == '.')
        continue;
      if (!supervisor_gone (dirfd (dir), e->d_name))
        continue;
      cleanup_close int fd
          = openat (dirfd (dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      cleanup_state ar_state *st = NULL;
      cleanup_error ar_error_t *e_load = NULL;
      /* The lock keeps two reapers (two creates) off one container. */
      if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0
          || ar_state_load (fd, &st, &e_load) < 0 || ar_state_init_alive (st))
        continue;
      cleanup_error ar_error_t *e_delete = NULL;
      ar_container_audit (root, st->id, "supervisor-gone", NULL);
      if (ar_container_delete (root, st->id, true, &e_delete) < 0)
        fprintf (stderr,
                 "agentrun: warning: remove abandoned container `%s`: %s\n",
                 st->id, ar_error_text (e_delete));
    }
}
