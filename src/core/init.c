/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "init.h"
#include "../../oci/oci.h"
#include "hooks.h"
#include "mounts.h"
#include "process.h"
#include "privileges.h"
#include "reaper.h"
#include "sync.h"
#include "sysctl.h"
#include "take.h"
#include "terminal.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/fs.h"
#include "../util/timings.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Host pid of this init, as the parent told us: the state hooks see. */
static pid_t host_pid;

static char *
state_json (const ar_init_config *cfg, const char *status)
{
  oci_state st = {
    .oci_version = AR_OCI_VERSION,
    .id = cfg->id,
    .status = status,
    .pid = host_pid,
    .bundle = cfg->bundle,
    .annotations = &cfg->spec->annotations,
  };
  return oci_state_to_json (&st, false);
}

static int
set_identity_names (const oci_spec *spec, ar_error_t **err)
{
  if (spec->hostname
      && sethostname (spec->hostname, strlen (spec->hostname)) < 0)
    return ar_error_set (err, errno, "sethostname `%s`", spec->hostname);
  if (spec->domainname
      && setdomainname (spec->domainname, strlen (spec->domainname)) < 0)
    return ar_error_set (err, errno, "setdomainname `%s`", spec->domainname);
  return 0;
}

static int
join_session_keyring (const ar_init_config *cfg, ar_error_t **err)
{
  if (cfg->no_new_keyring)
    return 0;
  cleanup_free char *name = xasprintf ("_ses.%s", cfg->id);
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0
      && errno != ENOSYS && errno != EDQUOT)
    return ar_error_set (err, errno, "join session keyring");
  return 0;
}

static int
set_personality (const oci_linux *lnx, ar_error_t **err)
{
  if (lnx == NULL || lnx->personality == NULL
      || lnx->personality->domain == NULL)
    return 0;
  unsigned long domain;
  if (strcmp (lnx->personality->domain, "LINUX") == 0)
    domain = PER_LINUX;
  else if (strcmp (lnx->personality->domain, "LINUX32") == 0)
    domain = PER_LINUX32;
  else
    return ar_error_set (
        err, 0, "config.json: .linux.personality.domain: unknown domain `%s`",
        lnx->personality->domain);
  if (personality (domain) < 0)
    return ar_error_set (err, errno, "personality");
  return 0;
}

/* The container's root mount before pivot_root, and the path the init
 * reaches it by: its own, or /proc/self/fd/N when its user namespace's
 * ids may not walk there. */
typedef struct
{
  int fd;
  char *path;
} root_view;

/* Before pivot_root: namespaces joined, names set, the filesystem built. */
static int
prepare_root (const ar_init_config *cfg, int *pty_master, char **pty_slave,
              int *proc_sys, root_view *root, ar_error_t **err)
{
  const oci_spec *spec = cfg->spec;
  /* First, while "/proc" is still the runtime's: no namespace joined by
   * path and no mount of the container can have covered it yet. */
  if (ar_sysctl_open_proc (spec->linux_cfg, proc_sys, err) < 0)
    return -1;
  if (ar_ns_join_in_child (cfg->joins, err) < 0)
    return -1;
  if (cfg->unshare_flags && unshare (cfg->unshare_flags) < 0)
    return ar_error_set (err, errno, "unshare namespaces");
  /* Still with the runtime's filesystem ids: the mapped root may not
   * enter a directory above the bundle that they can. */
  if (chdir (cfg->bundle) < 0)
    return ar_error_set (err, errno, "chdir to bundle `%s`", cfg->bundle);
  /* So the rootfs, which may lie below a directory only they may enter
   * (a state root under Docker's 0700 exec root). */
  cleanup_free char *real = realpath (cfg->rootfs, NULL);
  if (real == NULL)
    return ar_error_set (err, errno, "rootfs `%s`", cfg->rootfs);
  bool other_userns = cfg->new_userns || cfg->joined_userns;
  cleanup_close int dir_fd
      = other_userns ? open (real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (other_userns && dir_fd < 0)
    return ar_error_set (err, errno, "open rootfs `%s`", real);
  if (other_userns && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    return ar_error_set (err, errno, "become root in the user namespace");
  /* After the parent moved us into the cgroup, so its root is ours. */
  const oci_namespace *cgns = oci_spec_find_namespace (spec, OCI_NS_CGROUP);
  if (cgns && cgns->path == NULL)
    {
      ar_mounts_note_own_cgroups ();
      if (unshare (CLONE_NEWCGROUP) < 0)
        return ar_error_set (err, errno, "unshare cgroup namespace");
    }
  const oci_namespace *netns = oci_spec_find_namespace (spec, OCI_NS_NETWORK);
  if (netns && netns->path == NULL && ar_ns_loopback_up (err) < 0)
    return -1;
  if (set_identity_names (spec, err) < 0)
    return -1;
  int r = ar_mounts_setup_rootfs (spec, real, dir_fd, cfg->bind_source_fds,
                                  &root->fd, err);
  /* Host paths, no longer needed: gone before anything else runs here. */
  for (size_t i = 0; cfg->bind_source_fds && i < spec->n_mounts; i++)
    if (cfg->bind_source_fds[i] >= 0)
      close (cfg->bind_source_fds[i]);
  if (r < 0)
    return -1;
  root->path = dir_fd >= 0 ? xasprintf ("/proc/self/fd/%d", root->fd)
                           : steal_pointer (&real);
  if (spec->process && spec->process->terminal)
    {
      cleanup_free char *ptmx = xasprintf ("%s/dev/ptmx", root->path);
      cleanup_free char *pts = xasprintf ("%s/dev/pts", root->path);
      if (ar_terminal_open_pty (ptmx, pts, pty_master, pty_slave, err) < 0)
        return -1;
      if (ar_mounts_setup_console (root->path, *pty_slave, err) < 0)
        return -1;
    }
  return 0;
}

static int
run_hooks_here (const ar_init_config *cfg, const oci_hook_list *hooks,
                const char *phase, const char *status, ar_error_t **err)
{
  if (hooks->len == 0)
    return 0;
  cleanup_free char *state = state_json (cfg, status);
  return ar_hooks_run (hooks, phase, state, err);
}

/* After pivot_root: the container's own view, then the process itself. */
static int
finish_setup (const ar_init_config *cfg, const char *pty_slave, int *proc_sys,
              const root_view *root, char **exe, ar_error_t **err)
{
  const oci_spec *spec = cfg->spec;
  const oci_process *proc = spec->process;
  if (ar_mounts_enter_rootfs (root->path, cfg->no_pivot,
                              ar_ns_host_mounts (spec), err)
      < 0)
    return -1;
  /* A missing cwd is made while the rootfs is still writable, as runc and
     crun do: containerd's CRI and ctr --cwd leave that to the runtime. */
  if (proc && proc->cwd && access (proc->cwd, F_OK) < 0 && errno == ENOENT
      && ar_mkdir_p (proc->cwd, 0755, err) < 0)
    return ar_error_prefix (err, "create cwd set in config.json");
  /* Before finalize, as runc does (after the createRuntime hooks). */
  int r = ar_sysctl_apply (*proc_sys, spec->linux_cfg, err);
  ar_closep (proc_sys);
  if (r < 0)
    return -1;
  if (ar_mounts_finalize (spec, err) < 0)
    return -1;
  if (join_session_keyring (cfg, err) < 0)
    return -1;
  if (set_personality (spec->linux_cfg, err) < 0)
    return -1;
  if (proc == NULL)
    return ar_error_set (err, 0, "config.json: .process: missing");
  if (ar_process_set_rlimits (proc, err) < 0
      || (!cfg->new_userns && !cfg->joined_userns
          && ar_process_set_oom_score_adj (proc, 0, err) < 0)
      || ar_process_set_attributes (proc, err) < 0)
    return -1;
  if (proc->cwd && chdir (proc->cwd) < 0)
    return ar_error_set (err, errno, "chdir to cwd `%s` set in config.json",
                         proc->cwd);
  /* A pooled init learns its command only when it is taken. */
  if (!cfg->await_take
      && (*exe = ar_process_find_executable (proc, err)) == NULL)
    return -1;
  if (pty_slave)
    {
      /* The slave's path inside the container, now that / moved. */
      const char *inner = pty_slave + strlen (root->path);
      unsigned rows = proc->console_height.set ? proc->console_height.value : 0;
      unsigned cols = proc->console_width.set ? proc->console_width.value : 0;
      if (ar_terminal_become_stdio (inner, rows, cols, err) < 0)
        return -1;
    }
  else if (setsid () < 0)
    return ar_error_set (err, errno, "setsid");
  return 0;
}

static int
drop_privileges (const ar_init_config *cfg, ar_error_t **err)
{
  return ar_privileges_drop (cfg->spec->process, cfg->seccomp, cfg->sync_fd,
                             cfg->die_with_parent, err);
}

static void
exit_on_signal (int sig)
{
  _exit (128 + sig);
}

/* As pid 1 of its namespace the init ignores every signal it has no
 * handler for, so `kill CONTAINER` (SIGTERM) of a created container would
 * do nothing; runc's init dies of it. Until exec the init ends on the
 * signals meant to end a program; execve resets the handlers. */
static void
die_on_termination_signals (void)
{
  static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT };
  struct sigaction sa = { .sa_handler = exit_on_signal };
  sigemptyset (&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    {
      struct sigaction old;
      /* One the runtime was started with ignored stays ignored. */
      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction (sigs[i], &sa, NULL);
    }
}

/* What the init runs once started: the spec's process, or a taker's
 * command, reported on the taker's connection. */
typedef struct
{
  int report_fd;
  char *exe;
  char **envp;
  ar_take_command taken; /* args.items NULL: not taken */
} start_order;

/* A taker's command in place of the spec's: its args, its env entries
 * over the spec's, its cwd (relative: below the spec's); the executable
 * and environment looked up as the spec's would be. */
static int
adopt_command (const ar_init_config *cfg, start_order *o, ar_error_t **err)
{
  const oci_process *spec_proc = cfg->spec->process;
  oci_process proc = *spec_proc;
  proc.args = o->taken.args;
  proc.env = (oci_strv){ 0 };
  for (size_t i = 0; i < spec_proc->env.len; i++)
    oci_strv_push (&proc.env, spec_proc->env.items[i]);
  for (size_t i = 0; i < o->taken.env.len; i++)
    oci_env_set (&proc.env, o->taken.env.items[i]);
  const char *given = o->taken.cwd;
  cleanup_free char *below
      = given && given[0] != '/'
            ? xasprintf ("%s/%s", spec_proc->cwd ? spec_proc->cwd : "", given)
            : NULL;
  const char *cwd = below            ? below
                    : given          ? given
                    : spec_proc->cwd ? spec_proc->cwd
                                     : "/";
  proc.cwd = (char *) cwd;
  /* A missing cwd is made, as a fresh container's is (finish_setup). */
  if (access (cwd, F_OK) < 0 && errno == ENOENT
      && ar_mkdir_p (cwd, 0755, err) < 0)
    return ar_error_prefix (err, "create cwd");
  if (chdir (cwd) < 0)
    return ar_error_set (err, errno, "chdir to cwd `%s`", cwd);
  o->exe = ar_process_find_executable (&proc, err);
  if (o->exe == NULL)
    return -1;
  o->envp = ar_process_exec_env (&proc);
  return 0;
}

static int
become_stdio (const int stdio[3], ar_error_t **err)
{
  for (int i = 0; i < 3; i++)
    if (dup2 (stdio[i], i) < 0)
      return ar_error_set (err, errno, "take: dup2 onto %d", i);
  return 0;
}

/* A pooled init: the filler may go now. Until taken, its stdio is
 * /dev/null (the filler's would keep a pipe or terminal open); then it
 * answers the taker READY, or the error, and waits for the start. */
static int
await_taker (const ar_init_config *cfg, int listener, start_order *o,
             ar_error_t **err)
{
  close (cfg->sync_fd);
  int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  const int nulls[3] = { null_fd, null_fd, null_fd };
  if (null_fd < 0 || become_stdio (nulls, err) < 0)
    _exit (1);
  close (null_fd);
  int stdio[3];
  int r = ar_take_await (listener, &o->taken, stdio, &o->report_fd, err);
  close (listener);
  if (r == 0)
    r = adopt_command (cfg, o, err);
  if (r == 0)
    r = become_stdio (stdio, err);
  for (int i = 0; i < 3; i++)
    if (stdio[i] >= 0)
      close (stdio[i]);
  if (o->report_fd < 0)
    _exit (1);
  if (r < 0)
    {
      ar_sync_send_error (o->report_fd, *err);
      _exit (1);
    }
  /* The taker learns this init's host pid (it waits on a pidfd of it)
   * and how many poststart hooks it is to run after the start. */
  cleanup_free char *n_poststart
      = xasprintf ("%zu", cfg->spec->hooks.poststart.len);
  ar_sync_msg msg;
  if (ar_sync_send (o->report_fd, AR_SYNC_READY, host_pid, -1, n_poststart, err)
          < 0
      || ar_sync_expect (o->report_fd, AR_SYNC_START, &msg, err) < 0)
    _exit (1);
  return 0;
}

/* Block until `start` opens the fifo, the parent says go, or (pooled)
 * a taker does. */
static int
wait_for_start (const ar_init_config *cfg, start_order *o, ar_error_t **err)
{
  if (cfg->fifo_fd < 0)
    {
      ar_sync_msg msg;
      if (ar_sync_recv (cfg->sync_fd, &msg, err) < 0)
        return -1;
      free (msg.text);
      if (msg.type == AR_SYNC_TAKE && cfg->await_take && msg.fd >= 0)
        return await_taker (cfg, msg.fd, o, err);
      if (msg.fd >= 0)
        close (msg.fd);
      if (msg.type != AR_SYNC_START)
        return ar_error_set (err, 0, "sync: expected a start, got %d",
                             (int) msg.type);
      return 0;
    }
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", cfg->fifo_fd);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open exec fifo");
  if (ar_write_all (fd, "0", 1) < 0)
    return ar_error_set (err, errno, "write exec fifo");
  /* fd stays open until exec closes it: `start` reads until EOF. */
  return 0;
}

static _Noreturn void
fail (const ar_init_config *cfg, ar_error_t *err, bool parent_listening)
{
  if (parent_listening)
    ar_sync_send_error (cfg->sync_fd, err);
  else
    dprintf (STDERR_FILENO, "agentrun: %s\n", ar_error_text (err));
  _exit (1);
}

_Noreturn void
ar_init_main (const ar_init_config *cfg)
{
  ar_error_t *err = NULL;
  ar_sync_msg msg;
  int pty_master = -1;
  char *pty_slave = NULL;
  start_order order = { .report_fd = cfg->sync_fd };
  int proc_sys = -1;
  const oci_spec *spec = cfg->spec;

  /* The parent's fds (state dir, state root, ...) must not survive into
   * the container even until exec: a cwd like /proc/self/fd/N would lead
   * straight back to the host. Keep only what the init itself uses. */
  size_t n_mounts = cfg->bind_source_fds ? spec->n_mounts : 0;
  ar_cgroup_self_move *self_move = cfg->cgroup_self_move;
  size_t n_cgroups = self_move ? self_move->n : 0;
  cleanup_free int *keep
      = xcalloc (2 + OCI_NS_COUNT + n_mounts + n_cgroups, sizeof *keep);
  size_t n_keep = 0;
  keep[n_keep++] = cfg->sync_fd;
  if (cfg->fifo_fd >= 0)
    keep[n_keep++] = cfg->fifo_fd;
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (cfg->joins->fd[t] >= 0)
      keep[n_keep++] = cfg->joins->fd[t];
  for (size_t i = 0; i < n_mounts; i++)
    if (cfg->bind_source_fds[i] >= 0)
      keep[n_keep++] = cfg->bind_source_fds[i];
  for (size_t i = 0; i < n_cgroups; i++)
    if (self_move->fds[i] >= 0)
      keep[n_keep++] = self_move->fds[i];
  ar_close_fds_from (3 + cfg->preserve_fds, keep, n_keep);

  /* This fork's own phases (--debug), reported with AR_SYNC_READY. */
  if (ar_timings_on ())
    ar_timings_begin ();
  if (ar_sync_expect (cfg->sync_fd, AR_SYNC_GO, &msg, &err) < 0)
    _exit (1);
  host_pid = msg.value;
  /* Into the container's cgroups before anything is charged there. */
  if (self_move && ar_cgroup_move_self (self_move, &err) < 0)
    fail (cfg, err, true);
  ar_timings_mark ("go");

  root_view root = { .fd = -1, .path = NULL };
  if (prepare_root (cfg, &pty_master, &pty_slave, &proc_sys, &root, &err) < 0)
    fail (cfg, err, true);
  ar_timings_mark ("mounts");
  if (pty_master >= 0)
    {
      if (ar_sync_send (cfg->sync_fd, AR_SYNC_PTY, 0, pty_master, NULL, &err)
          < 0)
        fail (cfg, err, true);
      close (pty_master);
    }
  if (ar_sync_send (cfg->sync_fd, AR_SYNC_HOOKS, 0, -1, NULL, &err) < 0
      || ar_sync_expect (cfg->sync_fd, AR_SYNC_HOOKS_DONE, &msg, &err) < 0)
    _exit (1);
  if (run_hooks_here (cfg, &spec->hooks.create_container, "createContainer",
                      "creating", &err)
      < 0)
    fail (cfg, err, true);
  ar_timings_mark ("hooks");
  if (finish_setup (cfg, pty_slave, &proc_sys, &root, &order.exe, &err) < 0)
    fail (cfg, err, true);
  ar_closep (&root.fd);
  free (root.path);
  ar_timings_mark ("pivot");
  /* Before seccomp and the uid change: it reads the container's passwd.
   * (A pooled init reads it later, as the container's user.) */
  if (!cfg->await_take)
    order.envp = ar_process_exec_env (spec->process);
  die_on_termination_signals ();
  if (drop_privileges (cfg, &err) < 0)
    fail (cfg, err, true);

  /* No host fd beyond the preserved ones survives exec. */
  ar_cloexec_fds_from (3 + cfg->preserve_fds);
  ar_timings_mark ("privileges");
  cleanup_free char *phases = ar_timings_encode ();
  if (ar_sync_send (cfg->sync_fd, AR_SYNC_READY, 0, -1, phases, &err) < 0)
    _exit (1);
  if (wait_for_start (cfg, &order, &err) < 0)
    fail (cfg, err, false);
  /* Only as PID 1: the reaper's kill(-1) must stay inside the namespace.
   * It tells the parent (or taker) how the command ended. */
  bool reaping = cfg->reaper && getpid () == 1;
  if (!reaping)
    close (order.report_fd);

  if (run_hooks_here (cfg, &spec->hooks.start_container, "startContainer",
                      "created", &err)
      < 0)
    fail (cfg, err, false);
  char **envp = order.envp;
  char *const *args = order.taken.args.items ? order.taken.args.items
                                             : spec->process->args.items;
  if (reaping)
    {
      const ar_workload workload
          = { .exe = order.exe, .args = args, .envp = envp };
      ar_reaper_run_workload (order.report_fd, &workload, &err);
      fail (cfg, err, false);
    }
  /* Socket activation is create's and run's, which keep no reaper. */
  if (cfg->listen_fds > 0)
    envp = ar_process_env_add_listen_fds (envp, cfg->listen_fds);
  execve (order.exe, args, envp);
  dprintf (STDERR_FILENO, "agentrun: exec `%s`: %s\n", order.exe,
           strerror (errno));
  _exit (127);
}
