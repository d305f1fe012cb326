/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "exec.h"
#include "../../oci/oci.h"
#include "foreground.h"
#include "cgroups/cgroups.h"
#include "container.h"
#include "policy_stage.h"
#include "mounts.h"
#include "privileges.h"
#include "process.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/userns.h"
#include "../util/fs.h"
#include "../util/pidfd.h"
#include "../util/prefault.h"
#include "../util/timings.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int
ar_exec_base_process (const char *root, const char *id, oci_process **out,
                      ar_error_t **err)
{
  cleanup_close int state_fd = ar_container_open_dir (root, id, err);
  if (state_fd < 0)
    return -1;
  oci_spec *spec = NULL;
  if (ar_container_load_spec (state_fd, &spec, err) < 0)
    return -1;
  *out = spec->process;
  spec->process = NULL;
  oci_spec_free (spec);
  if (*out == NULL)
    return ar_error_set (err, 0, "container `%s` has no process section", id);
  return 0;
}

/* Namespaces of the container that differ from ours: setns into our own
 * user namespace would fail, and joining the others we share is waste. */
static int
differing_namespaces (pid_t pid)
{
  static const struct
  {
    const char *name;
    int flag;
  } types[] = { { "user", CLONE_NEWUSER },     { "mnt", CLONE_NEWNS },
                { "pid", CLONE_NEWPID },       { "net", CLONE_NEWNET },
                { "ipc", CLONE_NEWIPC },       { "uts", CLONE_NEWUTS },
                { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME } };
  int flags = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    {
      char theirs[64], ours[64];
      snprintf (theirs, sizeof theirs, "/proc/%d/ns/%s", (int) pid,
                types[i].name);
      snprintf (ours, sizeof ours, "/proc/self/ns/%s", types[i].name);
      struct stat a, b;
      if (stat (theirs, &a) == 0 && stat (ours, &b) == 0
          && a.st_ino != b.st_ino)
        flags |= types[i].flag;
    }
  return flags;
}

typedef struct
{
  const oci_process *proc;
  const ar_seccomp_program *seccomp;
  const ar_plan *plan;
  const oci_spec *spec;
  int init_pidfd;
  int root_fd; /* the init's root, when its mount namespace is ours */
  int join_flags;
  int sync_fd;
  int preserve_fds;
  bool die_with_parent; /* exec in the foreground */
  /* Where it is born: the container's cgroup v2 directory (-1: moved by
   * the parent), and the v1 ones it moves itself into (NULL: the parent). */
  int cgroup_v2_fd;
  bool born_in_cgroup_v2;
  ar_cgroup_self_move *cgroup_self_move;
} exec_child;

/* The relay between `agentrun exec` and the isolated process: it passes
 * signals on and ends the way the process ended. */
static _Noreturn void
relay_until_exit (pid_t pid)
{
  ar_foreground_forward_signals (pid);
  ar_foreground_end end;
  cleanup_error ar_error_t *err = NULL;
  int status = ar_foreground_wait (pid, -1, -1, 0, &end, &err);
  if (status > 128)
    {
      /* End by the same signal, so the caller sees 128 + it as well. */
      signal (status - 128, SIG_DFL);
      kill (getpid (), status - 128);
    }
  _exit (status < 0 ? 1 : status);
}

/* Secrets limited to the main process: hiding the mount is not enough,
 * since a process of the same user could read them through
 * /proc/1/root. The exec'd process gets a pid namespace of its own, under
 * the container's, and a /proc of that namespace (masked and read-only
 * paths applied again), so no process of the main one's is in reach. */
static int
isolate_from_main (const exec_child *c, ar_error_t **err)
{
  if (unshare (CLONE_NEWPID) < 0)
    return ar_error_set (err, errno, "secrets.mainOnly: new pid namespace");
  pid_t pid = fork ();
  if (pid < 0)
    return ar_error_set (err, errno, "secrets.mainOnly: fork");
  if (pid > 0)
    {
      if (c->die_with_parent
          && ar_process_die_with_parent (c->sync_fd, err) < 0)
        {
          kill (pid, SIGKILL);
          return -1;
        }
      close (c->sync_fd); /* the process reports its own exec, not us */
      relay_until_exit (pid);
    }
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    return ar_error_set (err, errno, "secrets.mainOnly: parent-death signal");
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)
      < 0)
    return ar_error_set (
        err, errno, "secrets.mainOnly: mount /proc of the new pid namespace");
  return ar_mounts_finalize (c->spec, err);
}

/* The container's mount namespace is ours (it has none of its own):
 * setns gave no root, so take the init's, as it chrooted into it. */
static int
enter_init_root (int root_fd, ar_error_t **err)
{
  if (fchdir (root_fd) < 0 || chroot (".") < 0)
    return ar_error_set (err, errno, "enter the container's root");
  close (root_fd);
  return 0;
}

/* runc's words: shims match them */
static int
exec_stopped_error (const char *id, ar_error_t **err)
{
  return ar_error_set (err, 0, "cannot exec in a stopped container: `%s`", id);
}

/* Opened before the fork and checked against the init after it, so a
 * recycled pid cannot hand us someone else's root. */
static int
open_init_root (const ar_state *st, int join_flags, int *root_fd,
                ar_error_t **err)
{
  *root_fd = -1;
  if (join_flags & CLONE_NEWNS)
    return 0;
  cleanup_free char *path = xasprintf ("/proc/%d/root", (int) st->pid);
  cleanup_close int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  if (!ar_state_init_alive (st))
    return exec_stopped_error (st->id, err);
  *root_fd = steal_fd (&fd);
  return 0;
}

static int
child_setup (const exec_child *c, char **exe, char ***envp, ar_error_t **err)
{
  /* Nothing of the parent's (its state dir fd above all) may be reachable
   * through /proc/self/fd from inside, not even as the cwd. */
  ar_cgroup_self_move *self_move = c->cgroup_self_move;
  size_t n_cgroups = self_move ? self_move->n : 0;
  cleanup_free int *keep = xcalloc (3 + n_cgroups, sizeof *keep);
  size_t n_keep = 0;
  keep[n_keep++] = c->sync_fd;
  keep[n_keep++] = c->init_pidfd;
  if (c->root_fd >= 0)
    keep[n_keep++] = c->root_fd;
  for (size_t i = 0; i < n_cgroups; i++)
    if (self_move->fds[i] >= 0)
      keep[n_keep++] = self_move->fds[i];
  ar_close_fds_from (3 + c->preserve_fds, keep, n_keep);
  ar_sync_msg msg;
  if (ar_sync_expect (c->sync_fd, AR_SYNC_GO, &msg, err) < 0)
    return -1;
  if (self_move && ar_cgroup_move_self (self_move, err) < 0)
    return -1;
  /* Before the container's user namespace: once in it, this process's
   * /proc files are out of its mapped root's reach (it is undumpable). */
  if (ar_process_set_oom_score_adj (c->proc, 0, err) < 0)
    return -1;
  if (c->join_flags && setns (c->init_pidfd, c->join_flags) < 0)
    return ar_error_set (err, errno, "join the container's namespaces");
  close (c->init_pidfd);
  if (c->root_fd >= 0 && enter_init_root (c->root_fd, err) < 0)
    return -1;
  if (ar_stage_hide_secrets (c->plan, err) < 0)
    return -1;
  if (ar_stage_secrets_main_only (c->plan) && isolate_from_main (c, err) < 0)
    return -1;
  const char *cwd = c->proc->cwd ? c->proc->cwd : "/";
  if (chdir (cwd) < 0)
    return ar_error_set (err, errno, "chdir to cwd `%s`", cwd);
  if (c->proc->terminal)
    {
      int master = -1;
      cleanup_free char *slave = NULL;
      if (ar_terminal_open_pty ("/dev/ptmx", "/dev/pts", &master, &slave, err)
          < 0)
        return -1;
      int r = ar_sync_send (c->sync_fd, AR_SYNC_PTY, 0, master, NULL, err);
      close (master);
      unsigned rows
          = c->proc->console_height.set ? c->proc->console_height.value : 0;
      unsigned cols
          = c->proc->console_width.set ? c->proc->console_width.value : 0;
      if (r < 0 || ar_terminal_become_stdio (slave, rows, cols, err) < 0)
        return -1;
    }
  else if (setsid () < 0)
    return ar_error_set (err, errno, "setsid");
  if (ar_process_set_rlimits (c->proc, err) < 0
      || ar_process_set_attributes (c->proc, err) < 0)
    return -1;
  *exe = ar_process_find_executable (c->proc, err);
  if (*exe == NULL)
    return -1;
  *envp = ar_process_exec_env (c->proc);
  if (ar_privileges_drop (c->proc, c->seccomp, c->sync_fd, c->die_with_parent,
                          err)
      < 0)
    return -1;
  ar_cloexec_fds_from (3 + c->preserve_fds);
  return 0;
}

static _Noreturn void
child_main (const exec_child *c)
{
  ar_error_t *err = NULL;
  char *exe = NULL;
  char **envp = NULL;
  if (child_setup (c, &exe, &envp, &err) < 0)
    {
      ar_sync_send_error (c->sync_fd, err);
      _exit (1);
    }
  execve (exe, c->proc->args.items, envp);
  cleanup_free char *msg = xasprintf ("exec `%s`: %s", exe, strerror (errno));
  ar_sync_send (c->sync_fd, AR_SYNC_ERROR, 0, -1, msg, NULL);
  _exit (127);
}

/* The child's sync end closes on a successful execve (it is CLOEXEC):
 * EOF means the process runs, an ERROR message means it does not. */
/* What the runtime needs to pass a seccomp listener fd on for the
 * exec'd process. */
typedef struct
{
  const oci_seccomp *seccomp;
  const ar_state *st;
  pid_t pid;
} listener_ctx;

static int
wait_child_ready (const ar_exec_options *opts, int sync_fd,
                  const listener_ctx *l, int *pty, ar_error_t **err)
{
  for (;;)
    {
      ar_sync_msg msg;
      cleanup_error ar_error_t *eof = NULL;
      if (ar_sync_recv (sync_fd, &msg, &eof) < 0)
        return 0;
      if (msg.type == AR_SYNC_ERROR)
        {
          cleanup_free char *text = msg.text;
          return ar_sync_error (&msg, "exec failed", err);
        }
      if (msg.type == AR_SYNC_SECCOMP)
        {
          oci_state state = ar_state_to_oci (l->st, AR_STATUS_RUNNING);
          if (ar_privileges_pass_listener (sync_fd, msg.fd, l->seccomp, l->pid,
                                           &state, err)
              < 0)
            return -1;
          continue;
        }
      if (msg.type != AR_SYNC_PTY)
        continue;
      if (opts->console_socket)
        {
          int r
              = ar_terminal_send_to_socket (opts->console_socket, msg.fd, err);
          close (msg.fd);
          if (r < 0)
            return -1;
        }
      else if (opts->detach)
        {
          close (msg.fd);
          return ar_error_set (err, 0,
                               "exec --tty --detach needs --console-socket");
        }
      else
        *pty = msg.fd;
    }
}

static int
check_runnable (int state_fd, const ar_state *st, const ar_exec_options *opts,
                ar_error_t **err)
{
  ar_status status = ar_state_status (state_fd, st);
  if (status == AR_STATUS_STOPPED)
    return exec_stopped_error (opts->id, err);
  if (status == AR_STATUS_PAUSED && !opts->ignore_paused)
    return ar_error_set (
        err, 0,
        "cannot exec in a paused container (use --ignore-paused to override): `%s`",
        opts->id);
  return 0;
}

/* What the parent still moves: the process was born in the v2 directory
 * or moves itself into the v1 ones when it could (exec_child). */
static int
enter_cgroup (const ar_exec_options *opts, const ar_cgroup *cg,
              const exec_child *c, pid_t pid, ar_error_t **err)
{
  if (cg == NULL)
    return opts->n_cgroups == 0 ? 0
                                : ar_error_set (err, 0,
                                                "--cgroup: the "
                                                "container has no "
                                                "cgroup");
  if (opts->n_cgroups > 0)
    {
      int r
          = ar_cgroup_enter_subs (cg, opts->cgroups, opts->n_cgroups, pid, err);
      if (r < 0)
        ar_error_prefix (err, "--cgroup");
      return r;
    }
  unsigned which = (c->born_in_cgroup_v2 ? 0 : AR_CGROUP_V2)
                   | (c->cgroup_self_move ? 0 : AR_CGROUP_V1);
  return ar_cgroup_enter_only (cg, pid, which, err);
}

/* Without exec --cgroup the process is placed as the init was: born in
 * the v2 directory, moving itself into the v1 ones. */
static int
prepare_placement (const ar_exec_options *opts, const ar_cgroup *cg,
                   exec_child *c, ar_cgroup_self_move *self_move,
                   ar_error_t **err)
{
  c->cgroup_v2_fd = -1;
  if (cg == NULL || opts->n_cgroups > 0)
    return 0;
  if (ar_cgroup_self_move_open (cg, self_move, err) < 0)
    return -1;
  c->cgroup_self_move = self_move->n ? self_move : NULL;
  c->cgroup_v2_fd = ar_cgroup_open_v2_dir (cg);
  return 0;
}

static void
audit_exec (const ar_exec_options *opts, const ar_plan *plan,
            const oci_process *proc, const ar_exec_outcome *outcome)
{
  if (plan == NULL)
    return;
  cleanup_free char *state_dir
      = ar_container_state_path (opts->root, opts->id, NULL);
  if (state_dir)
    ar_stage_audit_exec (plan, state_dir, opts->id, proc, outcome);
}

/* pid and time namespaces take effect for children: the parent enters
 * them before forking, the child joins the rest itself. Without root the
 * parent may join them only from inside the container's user namespace
 * (they belong to it), so it enters that too, first made undumpable: a
 * process of the container could otherwise ptrace it, and it still sees
 * the host's files. */
static int
fork_in_container (exec_child *c, int pidfd_init, pid_t *pid, ar_error_t **err)
{
  int for_children = c->join_flags & (CLONE_NEWPID | CLONE_NEWTIME);
  if (for_children && (c->join_flags & CLONE_NEWUSER)
      && ar_userns_unprivileged ())
    {
      if (prctl (PR_SET_DUMPABLE, 0) < 0)
        return ar_error_set (err, errno, "exec: make the runtime undumpable");
      for_children |= CLONE_NEWUSER;
    }
  if (for_children && setns (pidfd_init, for_children) < 0)
    return ar_error_set (err, errno, "join the container's pid namespace");
  c->join_flags &= ~for_children;
  cleanup_close int pidfd = -1;
  *pid = ar_clone_pidfd (0, &pidfd, c->cgroup_v2_fd, &c->born_in_cgroup_v2);
  if (*pid < 0)
    return ar_error_set (err, errno, "fork");
  ar_prefault_heap_and_stack ();
  if (*pid == 0)
    child_main (c);
  return 0;
}

int
ar_container_exec (const ar_exec_options *opts, oci_process *proc,
                   ar_error_t **err)
{
  cleanup_close int state_fd
      = ar_container_open_dir (opts->root, opts->id, err);
  if (state_fd < 0)
    return -1;
  cleanup_state ar_state *st = NULL;
  if (ar_state_load (state_fd, &st, err) < 0
      || check_runnable (state_fd, st, opts, err) < 0)
    return -1;
  if (ar_process_validate (proc, err) < 0)
    return -1;
  oci_spec *spec = NULL;
  if (ar_container_load_spec (state_fd, &spec, err) < 0)
    return -1;
  ar_timings_mark ("state");

  int r = -1;
  ar_seccomp_program *seccomp = NULL;
  ar_plan *plan = NULL;
  pid_t pid = 0;
  int sync[2] = { -1, -1 };
  cleanup_close int pty = -1;
  cleanup_close int root_fd = -1;
  cleanup_close int init_pidfd = -1;
  ar_cgroup *cg = NULL;
  ar_cgroup_self_move self_move = { 0 };
  if (ar_stage_load_plan (state_fd, &plan, err) < 0
      || (st->cgroup && ar_cgroup_deserialize (st->cgroup, &cg, err) < 0))
    goto out;
  ar_stage_confine_exec (plan, spec, proc);
  /* Before anything can run: a start without an end is evidence too. */
  audit_exec (opts, plan, proc,
              &(ar_exec_outcome){ "exec-start", 0, -1, NULL });
  init_pidfd = ar_pidfd_open (st->pid);
  if (init_pidfd < 0 || !ar_state_init_alive (st))
    {
      exec_stopped_error (opts->id, err);
      goto out;
    }
  if (spec->linux_cfg && spec->linux_cfg->seccomp)
    {
      cleanup_free char *cache
          = xasprintf ("%s/" AR_SECCOMP_CACHE_DIR, opts->root);
      if (ar_seccomp_compile (spec->linux_cfg->seccomp, cache, &seccomp, err)
          < 0)
        goto out;
    }
  ar_timings_mark ("seccomp");
  int join_flags = differing_namespaces (st->pid);
  if (ar_sync_pair (sync, err) < 0
      || open_init_root (st, join_flags, &root_fd, err) < 0)
    goto out;
  exec_child c = {
    .plan = plan,
    .spec = spec,
    .proc = proc,
    .seccomp = seccomp,
    .init_pidfd = init_pidfd,
    .root_fd = root_fd,
    .join_flags = join_flags,
    .sync_fd = sync[1],
    .preserve_fds = opts->preserve_fds,
    .die_with_parent = !opts->detach,
    .cgroup_v2_fd = -1,
  };
  int forked = -1;
  if (prepare_placement (opts, cg, &c, &self_move, err) == 0)
    forked = fork_in_container (&c, init_pidfd, &pid, err);
  ar_closep (&c.cgroup_v2_fd);
  ar_cgroup_self_move_close (&self_move);
  if (forked < 0)
    goto out;
  ar_timings_mark ("fork");
  ar_closep (&sync[1]);
  if (enter_cgroup (opts, cg, &c, pid, err) < 0
      || ar_sync_send (sync[0], AR_SYNC_GO, 0, -1, NULL, err) < 0
      || wait_child_ready (
             opts, sync[0],
             &(listener_ctx){ spec->linux_cfg ? spec->linux_cfg->seccomp : NULL,
                              st, pid },
             &pty, err)
             < 0
      || ar_write_pid_file (opts->pid_file, pid, err) < 0)
    goto out;
  ar_timings_mark ("ready");
  if (opts->detach)
    r = 0;
  else
    {
      ar_foreground_forward_signals (pid);
      ar_foreground_end end;
      r = ar_foreground_wait (pid, pty, -1, 0, &end, err);
      ar_timings_mark ("wait");
    }
  if (r >= 0)
    audit_exec (opts, plan, proc,
                &(ar_exec_outcome){ "exec", pid, opts->detach ? -1 : r, NULL });
  pid = 0;

out:
  if (r < 0 && err && *err)
    audit_exec (opts, plan, proc,
                &(ar_exec_outcome){ "exec", pid, -1, ar_error_text (*err) });
  if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  ar_closep (&sync[0]);
  ar_closep (&sync[1]);
  ar_seccomp_program_free (seccomp);
  ar_cgroup_free (cg);
  ar_stage_free_plan (plan);
  oci_spec_free (spec);
  return r;
}
