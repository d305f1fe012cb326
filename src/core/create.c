/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "container.h"
#include "container_internal.h"
#include "criu.h"
#include "../../oci/oci.h"
#include "cgroups/cgroups.h"
#include "device_rules.h"
#include "hooks.h"
#include "idmap.h"
#include "host_mounts.h"
#include "init.h"
#include "mounts.h"
#include "namespaces.h"
#include "policy_stage.h"
#include "privileges.h"
#include "process.h"
#include "seccomp.h"
#include "state.h"
#include "sync.h"
#include "sysctl.h"
#include "terminal.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/userns.h"
#include "../util/pidfd.h"
#include "../util/prefault.h"
#include "../util/sealed_exe.h"
#include "../util/timings.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* Everything a create made so far, undone in reverse on failure. */
typedef struct
{
  int root_fd;
  char *id;
  int state_fd;
  pid_t pid;
  int pidfd;
  ar_cgroup *cgroup;
  bool in_cgroup_v2;   /* the init was cloned into cgroup's v2 dir */
  bool self_moved_v1;  /* the init moves itself into the v1 ones */
  char *state_dir;     /* absolute */
  const ar_plan *plan; /* host resources to release */
  /* Once the state record exists, hooks may have made things outside the
   * container (createRuntime: the egress hook's veth, lease, pasta): its
   * poststop hooks undo them, as they do at delete (runc too). */
  const oci_spec *spec;
  const ar_state *st;
  /* restart: the state dir, cgroup and resources are the container's,
   * kept whatever happens; only the new init goes. */
  bool keep;
} create_undo;

static void
undo_create (create_undo *u)
{
  if (u->pid > 0)
    {
      if (u->pidfd >= 0)
        ar_pidfd_send_signal (u->pidfd, SIGKILL);
      else
        kill (u->pid, SIGKILL);
      waitpid (u->pid, NULL, 0);
    }
  if (u->st && !u->keep)
    ar_container_run_hooks_of (u->spec, u->plan, u->st, false);
  if (u->keep)
    {
      ar_cgroup_free (u->cgroup);
      u->cgroup = NULL;
      ar_closep (&u->pidfd);
      ar_closep (&u->state_fd);
      return;
    }
  if (u->cgroup)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_cgroup_destroy (u->cgroup, &ignored);
      ar_cgroup_free (u->cgroup);
      u->cgroup = NULL;
    }
  ar_stage_release_unstarted (u->plan, u->state_dir, u->id);
  if (u->state_fd >= 0)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_host_mounts_undo (u->state_fd, &ignored);
      ar_container_remove_state_dir (u->root_fd, u->id, u->state_fd);
    }
  ar_closep (&u->pidfd);
  ar_closep (&u->state_fd);
  ar_closep (&u->root_fd);
}

static int
resolve_bundle (const char *bundle, char **out, ar_error_t **err)
{
  char buf[PATH_MAX];
  if (realpath (bundle ? bundle : ".", buf) == NULL)
    return ar_error_set (err, errno, "bundle `%s`", bundle ? bundle : ".");
  *out = xstrdup (buf);
  return 0;
}

static int
resolve_rootfs (const char *bundle, const oci_spec *spec, char **out,
                ar_error_t **err)
{
  if (spec->root_path == NULL)
    return ar_error_set (err, 0, "config.json: .root.path: missing");
  cleanup_free char *joined
      = spec->root_path[0] == '/'
            ? xstrdup (spec->root_path)
            : xasprintf ("%s/%s", bundle, spec->root_path);
  char buf[PATH_MAX];
  if (realpath (joined, buf) == NULL)
    return ar_error_set (err, errno, "config.json: .root.path: rootfs `%s`",
                         joined);
  struct stat st;
  if (stat (buf, &st) < 0 || !S_ISDIR (st.st_mode))
    return ar_error_set (
        err, 0, "config.json: .root.path: rootfs `%s` is not a directory",
        joined);
  *out = xstrdup (buf);
  return 0;
}

/* Without a mount namespace the init mounts in the host's: only under
 * the rootfs, never changing a host mount (see host_mounts.h). */
static int
validate_host_mounts (const oci_spec *spec, ar_error_t **err)
{
  if (!ar_ns_host_mounts (spec))
    return 0;
  const char *propagation
      = spec->linux_cfg ? spec->linux_cfg->rootfs_propagation : NULL;
  if (propagation && *propagation)
    return ar_error_set (
        err, 0,
        "config.json: .linux.rootfsPropagation: `%s` needs a mount namespace: without one it would change the host's mounts",
        propagation);
  /* The host's mounts belong to the host's user namespace. */
  if (oci_spec_find_namespace (spec, OCI_NS_USER))
    return ar_error_set (
        err, 0,
        "config.json: .linux.namespaces: a user namespace needs a mount namespace too: from it the host's cannot be mounted on");
  return 0;
}

/* Joining our own mount namespace by path is no mount namespace at all,
 * but would be set up as one (its "/" made rslave): refuse it. */
static int
refuse_own_mount_namespace (const oci_spec *spec, const ar_ns_joins *joins,
                            ar_error_t **err)
{
  struct stat theirs, ours;
  if (joins->fd[OCI_NS_MOUNT] < 0
      || fstat (joins->fd[OCI_NS_MOUNT], &theirs) < 0
      || stat ("/proc/self/ns/mnt", &ours) < 0 || theirs.st_ino != ours.st_ino
      || theirs.st_dev != ours.st_dev)
    return 0;
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    if (spec->linux_cfg->namespaces[i].type == OCI_NS_MOUNT)
      return ar_error_set (
          err, 0,
          "config.json: .linux.namespaces[%zu].path: `%s` is the runtime's own mount namespace: leave the mount namespace out instead",
          i, spec->linux_cfg->namespaces[i].path);
  return 0;
}

static int
validate_spec (const oci_spec *spec, ar_error_t **err)
{
  if (spec->process == NULL)
    return ar_error_set (err, 0, "config.json: .process: missing");
  if (ar_process_validate (spec->process, err) < 0)
    return -1;
  const oci_seccomp *seccomp
      = spec->linux_cfg ? spec->linux_cfg->seccomp : NULL;
  if (seccomp && ar_seccomp_validate (seccomp, err) < 0)
    return -1;
  if (seccomp && oci_map_get (&spec->annotations, AR_SECCOMP_FAIL_UNKNOWN)
      && ar_seccomp_check_names_known (seccomp, err) < 0)
    return -1;
  if (ar_sysctl_validate (spec, err) < 0)
    return -1;
  if (validate_host_mounts (spec, err) < 0)
    return -1;
  /* A joined uts namespace (with a path) is the container's own too:
     the hostname is set there, as runc and crun do. Only the host's
     namespace is off limits. */
  if (spec->hostname && spec->hostname[0]
      && oci_spec_find_namespace (spec, OCI_NS_UTS) == NULL)
    return ar_error_set (
        err, 0,
        "config.json: .hostname: setting the hostname needs a uts namespace");
  const oci_namespace *user = oci_spec_find_namespace (spec, OCI_NS_USER);
  if (user && user->path == NULL && spec->linux_cfg
      && (spec->linux_cfg->n_uid_mappings == 0
          || spec->linux_cfg->n_gid_mappings == 0))
    return ar_error_set (
        err, 0,
        "config.json: .linux: a new user namespace needs uidMappings and gidMappings");
  return 0;
}

/* A state root this user may not make or open: where state goes
 * without root, and how to choose. Always -1. */
static int
explain_denied_root (ar_error_t **err)
{
  if (ar_userns_unprivileged ()
      && ((*err)->errno_value == EACCES || (*err)->errno_value == EPERM))
    return ar_error_prefix (
        err,
        "state root (without root, agentrun keeps state in $XDG_RUNTIME_DIR/agentrun: set XDG_RUNTIME_DIR, or pass --root DIR)");
  return -1;
}

int
ar_container_make_root (const char *root, ar_error_t **err)
{
  if (ar_mkdir_p (root, 0700, err) == 0)
    return 0;
  return explain_denied_root (err);
}

static int
make_state_dir (const char *root, const char *id, create_undo *u,
                ar_error_t **err)
{
  if (ar_container_make_root (root, err) < 0)
    return -1;
  u->root_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (u->root_fd < 0)
    {
      ar_error_set (err, errno, "open `%s`", root);
      return explain_denied_root (err);
    }
  if (mkdirat (u->root_fd, id, 0700) < 0)
    {
      if (errno == EEXIST)
        return ar_error_set (
            err, 0, "container with given ID already exists: `%s`", id);
      return ar_error_set (err, errno, "create state dir `%s/%s`", root, id);
    }
  u->id = xstrdup (id);
  u->state_fd = openat (u->root_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (u->state_fd < 0)
    return ar_error_set (err, errno, "open state dir `%s/%s`", root, id);
  /* Held until this create ends, however it ends (a SIGKILL included):
   * delete --force tells a dead half-made container from one being made
   * by it (ar_container_delete). */
  if (flock (u->state_fd, LOCK_EX) < 0)
    return ar_error_set (err, errno, "lock state dir `%s/%s`", root, id);
  u->state_dir = ar_container_state_path (root, id, err);
  return u->state_dir ? 0 : -1;
}

/* The parent enters some namespaces around the clone and steps back out
 * afterwards: pid and time, which apply to children only; and, when the
 * init gets a new user namespace or joins one, the ipc, uts, network and
 * cgroup ones it is to join. From inside that user namespace the init
 * could no longer join those (setns needs CAP_SYS_ADMIN over each one's
 * owner, the host's for a pod's network namespace): runc joins them before
 * it enters the user namespace too. The init inherits them. */
typedef struct
{
  int own[OCI_NS_COUNT]; /* ours to return to; -1 where we did not leave */
} ns_restore;

static int
enter_one (ar_ns_joins *joins, oci_ns_type t, ns_restore *saved,
           ar_error_t **err)
{
  cleanup_free char *self = xasprintf ("/proc/self/ns/%s", ar_ns_proc_name (t));
  saved->own[t] = open (self, O_RDONLY | O_CLOEXEC);
  if (saved->own[t] < 0 || setns (joins->fd[t], ar_ns_clone_flag (t)) < 0)
    return ar_error_set (err, errno, "join %s namespace", oci_ns_type_name (t));
  ar_closep (&joins->fd[t]);
  return 0;
}

static int
enter_new_time_namespace (const oci_spec *spec, ns_restore *saved,
                          ar_error_t **err)
{
  saved->own[OCI_NS_TIME] = open ("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
  if (saved->own[OCI_NS_TIME] < 0)
    return ar_error_set (err, errno, "open own time namespace");
  if (unshare (CLONE_NEWTIME) < 0)
    return ar_error_set (err, errno, "unshare time namespace");
  return ar_ns_write_time_offsets (spec->linux_cfg, err);
}

static int
enter_child_namespaces (const oci_spec *spec, ar_ns_joins *joins,
                        ns_restore *saved, ar_error_t **err)
{
  static const oci_ns_type before_userns[]
      = { OCI_NS_IPC, OCI_NS_UTS, OCI_NS_NETWORK, OCI_NS_CGROUP };
  for (int t = 0; t < OCI_NS_COUNT; t++)
    saved->own[t] = -1;
  const oci_namespace *time_ns = oci_spec_find_namespace (spec, OCI_NS_TIME);
  if (time_ns && time_ns->path == NULL
      && enter_new_time_namespace (spec, saved, err) < 0)
    return -1;
  if (joins->fd[OCI_NS_PID] >= 0
      && enter_one (joins, OCI_NS_PID, saved, err) < 0)
    return -1;
  if (joins->fd[OCI_NS_TIME] >= 0
      && enter_one (joins, OCI_NS_TIME, saved, err) < 0)
    return -1;
  bool other_userns = (ar_ns_new_flags (spec) & CLONE_NEWUSER) != 0
                      || joins->fd[OCI_NS_USER] >= 0;
  for (size_t i = 0;
       other_userns && i < sizeof before_userns / sizeof *before_userns; i++)
    if (joins->fd[before_userns[i]] >= 0
        && enter_one (joins, before_userns[i], saved, err) < 0)
      return -1;
  return 0;
}

static void
leave_child_namespaces (ns_restore *saved)
{
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (saved->own[t] >= 0)
      {
        setns (saved->own[t], ar_ns_clone_flag ((oci_ns_type) t));
        ar_closep (&saved->own[t]);
      }
}

/* `skip` createRuntime hooks already ran (ar_stage_run_egress_early). */
static int
run_parent_hooks (const oci_spec *spec, const ar_plan *plan, const ar_state *st,
                  size_t skip, ar_error_t **err)
{
  const oci_hook_list create_runtime
      = { .items = spec->hooks.create_runtime.items + skip,
          .len = spec->hooks.create_runtime.len - skip };
  if (spec->hooks.prestart.len == 0 && create_runtime.len == 0)
    return 0;
  /* prestart hooks see "created", as the validation suite and crun
     expect: the deprecated hook was specified to run after create
     completed. createRuntime runs while the runtime is still creating. */
  cleanup_free char *prestart
      = ar_state_to_oci_json (st, AR_STATUS_CREATED, false);
  if (ar_stage_run_hooks (plan, st->id, &spec->hooks.prestart, "prestart",
                          prestart, err)
      < 0)
    return -1;
  cleanup_free char *json
      = ar_state_to_oci_json (st, AR_STATUS_CREATING, false);
  return ar_stage_run_hooks (plan, st->id, &create_runtime, "createRuntime",
                             json, err);
}

static int
handle_pty (const ar_create_options *opts, int master, ar_created *out,
            ar_error_t **err)
{
  if (opts->console_socket)
    {
      int r = ar_terminal_send_to_socket (opts->console_socket, master, err);
      close (master);
      return r;
    }
  /* Only a caller that stays (run in the foreground) can serve the pty. */
  if (opts->started_by_parent && opts->caller_waits)
    {
      out->pty_master = master;
      return 0;
    }
  close (master);
  return ar_error_set (
      err, 0, "process.terminal is true: --console-socket is required%s",
      opts->started_by_parent ? " with --detach" : "");
}

/* The early egress step runs beside the init. When it failed because the
 * init had already failed and gone, the init's message is the one that
 * says what is wrong: read on to it (the init always gets as far as
 * asking for the hooks, or reports its error). */
static int
prefer_init_error (int sync_fd, ar_error_t **err)
{
  for (;;)
    {
      ar_sync_msg msg;
      cleanup_error ar_error_t *ignored = NULL;
      if (ar_sync_recv (sync_fd, &msg, &ignored) < 0)
        return -1;
      cleanup_free char *text = msg.text;
      if (msg.fd >= 0)
        close (msg.fd);
      if (msg.type == AR_SYNC_ERROR && text)
        {
          ar_error_free (*err);
          *err = NULL;
          return ar_sync_error (&msg, NULL, err);
        }
      if (msg.type != AR_SYNC_PTY)
        return -1;
    }
}

/* Talk the init through its set-up until it is ready to be started. */
static int
drive_init (const ar_create_options *opts, const oci_spec *spec,
            const ar_plan *plan, const ar_state *st, int sync_fd,
            ar_created *out, ar_error_t **err)
{
  if (ar_sync_send (sync_fd, AR_SYNC_GO, st->pid, -1, NULL, err) < 0)
    return -1;
  bool egress_done = false;
  if (plan && spec->hooks.create_runtime.len > 0)
    {
      cleanup_free char *creating
          = ar_state_to_oci_json (st, AR_STATUS_CREATING, false);
      bool caller_stays = opts->started_by_parent && opts->caller_waits;
      if (ar_stage_run_egress_early (plan, st->id, spec, creating, caller_stays,
                                     &egress_done, err)
          < 0)
        return prefer_init_error (sync_fd, err);
    }
  for (;;)
    {
      ar_sync_msg msg;
      if (ar_sync_recv (sync_fd, &msg, err) < 0)
        return -1;
      switch (msg.type)
        {
        case AR_SYNC_PTY:
          if (handle_pty (opts, msg.fd, out, err) < 0)
            return -1;
          break;
        case AR_SYNC_HOOKS:
          if (run_parent_hooks (spec, plan, st, egress_done ? 1 : 0, err) < 0)
            return -1;
          if (ar_sync_send (sync_fd, AR_SYNC_HOOKS_DONE, 0, -1, NULL, err) < 0)
            return -1;
          break;
        case AR_SYNC_SECCOMP:
          {
            oci_state state = ar_state_to_oci (st, AR_STATUS_CREATING);
            if (ar_privileges_pass_listener (sync_fd, msg.fd,
                                             spec->linux_cfg->seccomp, st->pid,
                                             &state, err)
                < 0)
              return -1;
            break;
          }
        case AR_SYNC_READY:
          ar_timings_attach (msg.text); /* the init's phases, for --debug */
          free (msg.text);
          return 0;
        case AR_SYNC_ERROR:
          {
            cleanup_free char *text = msg.text;
            return ar_sync_error (&msg, "container init failed", err);
          }
        default:
          free (msg.text);
          return ar_error_set (err, 0, "sync: unexpected message %d",
                               (int) msg.type);
        }
    }
}

/* A new user namespace is owned by the host uid its root maps to
 * (ar_idmap_owner_set). Where the host refuses an unprivileged uid a user
 * namespace (a sysctl, an LSM's policy), root makes it, as runc does. */
static pid_t
clone_init (uint64_t clone_flags, const oci_spec *spec, ar_ns_joins *joins,
            create_undo *u, int cgroup_fd)
{
  if (joins->fd[OCI_NS_USER] >= 0 && (clone_flags & CLONE_NEWPID))
    return ar_ns_clone_in_user_pid (joins, clone_flags & ~CLONE_NEWPID,
                                    &u->pidfd, cgroup_fd, &u->in_cgroup_v2);
  ar_idmap_owner owner = { .active = false };
  if (clone_flags & CLONE_NEWUSER)
    ar_idmap_owner_set (spec->linux_cfg, &owner);
  pid_t pid
      = ar_clone_pidfd (clone_flags, &u->pidfd, cgroup_fd, &u->in_cgroup_v2);
  if (pid == 0)
    return 0;
  int saved = errno;
  bool retry = pid < 0 && owner.active && (saved == EPERM || saved == EACCES);
  ar_idmap_owner_reset (&owner);
  if (retry)
    return ar_clone_pidfd (clone_flags, &u->pidfd, cgroup_fd, &u->in_cgroup_v2);
  errno = saved;
  return pid;
}

static int
spawn_init (const ar_create_options *opts, const oci_spec *spec,
            ar_init_config *cfg, ar_ns_joins *joins, create_undo *u,
            int child_sync, ar_error_t **err)
{
  int new_flags = ar_ns_new_flags (spec);
  int clone_flags = new_flags & ~(CLONE_NEWTIME | CLONE_NEWCGROUP);
  if (joins->fd[OCI_NS_USER] >= 0)
    {
      /* New namespaces must belong to the joined user namespace: the init
       * unshares them after setns, and a pid one is made by the clone of
       * ar_ns_clone_in_user_pid. */
      cfg->unshare_flags = clone_flags & ~CLONE_NEWPID;
      clone_flags &= CLONE_NEWPID;
    }
  cfg->new_userns = (new_flags & CLONE_NEWUSER) != 0;
  cfg->joined_userns = joins->fd[OCI_NS_USER] >= 0;

  cleanup_close int cgroup_fd
      = u->cgroup ? ar_cgroup_open_v2_dir (u->cgroup) : -1;
  ar_cgroup_self_move self_move = { 0 };
  if (u->cgroup && !opts->systemd_cgroup
      && ar_cgroup_self_move_open (u->cgroup, &self_move, err) < 0)
    {
      close (child_sync);
      return -1;
    }
  cfg->cgroup_self_move = self_move.n ? &self_move : NULL;
  u->self_moved_v1 = self_move.n > 0;
  ns_restore saved;
  int r = enter_child_namespaces (spec, joins, &saved, err);
  if (r == 0)
    {
      u->pid = clone_init ((uint64_t) clone_flags, spec, joins, u, cgroup_fd);
      if (u->pid >= 0)
        ar_prefault_heap_and_stack ();
      if (u->pid == 0)
        ar_init_main (cfg);
      if (u->pid < 0)
        {
          u->pid = 0;
          r = ar_error_set (err, errno, "clone container init");
        }
    }
  leave_child_namespaces (&saved);
  ar_cgroup_self_move_close (&self_move); /* the init's copies are its own */
  cfg->cgroup_self_move = NULL;
  close (child_sync);
  return r;
}

/* Compiled filters are cached under the state root: libseccomp takes ~10 ms
 * to build a Docker-sized profile, loading a cached one ~0.2 ms. */
static int
compile_seccomp (const char *root, const oci_spec *spec,
                 ar_seccomp_program **out, ar_error_t **err)
{
  *out = NULL;
  if (spec->linux_cfg == NULL || spec->linux_cfg->seccomp == NULL)
    return 0;
  cleanup_free char *cache = xasprintf ("%s/" AR_SECCOMP_CACHE_DIR, root);
  return ar_seccomp_compile (spec->linux_cfg->seccomp, cache, out, err);
}

static int
read_config (const char *bundle, char **data, size_t *len, ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  return ar_read_file_at (AT_FDCWD, path, AR_CONFIG_MAX_SIZE, data, len, err);
}

/* Everything one create holds, released by create_ctx_free whatever
 * step it reached. */
typedef struct
{
  const ar_create_options *opts;
  char *bundle;
  char *rootfs;
  char *state_dir;
  char *config_data;
  size_t config_len;
  oci_spec *spec;
  ar_plan *plan;
  ar_ns_joins joins;
  int sync[2];
  int fifo_fd;
  ar_seccomp_program *seccomp;
  create_undo undo;
  ar_state st;
} create_ctx;

static void
create_ctx_init (create_ctx *c, const ar_create_options *opts)
{
  *c = (create_ctx){ .opts = opts,
                     .sync = { -1, -1 },
                     .fifo_fd = -1,
                     .undo = { .root_fd = -1, .state_fd = -1, .pidfd = -1 } };
  for (int t = 0; t < OCI_NS_COUNT; t++)
    c->joins.fd[t] = -1;
}

static void
create_ctx_free (create_ctx *c)
{
  ar_closep (&c->undo.root_fd);
  free (c->undo.id);
  free (c->undo.state_dir);
  free (c->st.created);
  free (c->st.cgroup);
  ar_ns_close_joins (&c->joins);
  ar_closep (&c->sync[0]);
  ar_closep (&c->sync[1]);
  ar_closep (&c->fifo_fd);
  ar_seccomp_program_free (c->seccomp);
  ar_stage_free_plan (c->plan);
  oci_spec_free (c->spec);
  free (c->bundle);
  free (c->rootfs);
  free (c->state_dir);
  free (c->config_data);
}

/* The bundle's spec, rewritten by the profile, checked before anything
 * is made on the host. */
static int
load_bundle (create_ctx *c, ar_error_t **err)
{
  if (c->opts->config_json)
    {
      /* The bundle is the state dir, named once it is made. */
      c->config_data = xstrdup (c->opts->config_json);
      c->config_len = strlen (c->config_data);
    }
  else if (resolve_bundle (c->opts->bundle, &c->bundle, err) < 0
           || read_config (c->bundle, &c->config_data, &c->config_len, err) < 0)
    return -1;
  if (oci_spec_parse (c->config_data, c->config_len, "config.json", &c->spec,
                      err)
      < 0)
    return -1;
  if (c->bundle == NULL && c->spec->root_path && c->spec->root_path[0] != '/')
    return ar_error_set (
        err, 0,
        "config.json: .root.path: `%s`: a spec given without a bundle needs an absolute rootfs",
        c->spec->root_path);
  ar_timings_mark ("parse");
  if (ar_stage_apply_policy (c->opts->profile, c->opts->trust_caller,
                             c->opts->root, c->spec, &c->plan, err)
      < 0)
    return -1;
  ar_timings_mark ("profile");
  if (validate_spec (c->spec, err) < 0
      || resolve_rootfs (c->bundle, c->spec, &c->rootfs, err) < 0)
    return -1;
  if (c->opts->restore
      && ar_criu_check_spec ("restore", c->spec, c->plan != NULL, err) < 0)
    return -1;
  /* Only the agent overlay can put a container on the host's own root:
   * the root itself can be neither pivoted away nor given to a container. */
  if (strcmp (c->rootfs, "/") == 0 && !ar_stage_has_overlay (c->plan))
    return ar_error_set (
        err, 0,
        "config.json: .root.path: the rootfs is the host's `/`: only a profile with the overlay (e.g. --profile agent) can run on it");
  if (ar_ns_open_joins (c->spec, &c->joins, err) < 0)
    return -1;
  return refuse_own_mount_namespace (c->spec, &c->joins, err);
}

static int make_exec_fifo (create_ctx *c, ar_error_t **err);

/* restart: the stopped container's own spec (as it ran), plan and
 * cgroup, from its state dir, which stays locked until the init is
 * settled. Nothing is made but the exec fifo. */
static int
load_stopped (create_ctx *c, ar_error_t **err)
{
  create_undo *u = &c->undo;
  u->keep = true;
  u->state_fd = ar_container_open_dir (c->opts->root, c->opts->id, err);
  if (u->state_fd < 0)
    return -1;
  if (flock (u->state_fd, LOCK_EX) < 0)
    return ar_error_set (err, errno, "lock state dir of `%s`", c->opts->id);
  u->id = xstrdup (c->opts->id);
  u->state_dir = ar_container_state_path (c->opts->root, c->opts->id, err);
  if (u->state_dir == NULL)
    return -1;
  c->state_dir = xstrdup (u->state_dir);
  cleanup_state ar_state *st = NULL;
  cleanup_free char *cgroup = NULL;
  if (ar_state_load (u->state_fd, &st, err) < 0
      || ar_read_file_at (u->state_fd, AR_CONFIG_FILE, AR_CONFIG_MAX_SIZE,
                          &c->config_data, &c->config_len, err)
             < 0
      || oci_spec_parse (c->config_data, c->config_len, "config.json", &c->spec,
                         err)
             < 0
      || ar_stage_load_plan (u->state_fd, &c->plan, err) < 0)
    return -1;
  c->bundle = xstrdup (st->bundle);
  if (validate_spec (c->spec, err) < 0
      || resolve_rootfs (c->bundle, c->spec, &c->rootfs, err) < 0
      || ar_ns_open_joins (c->spec, &c->joins, err) < 0
      || refuse_own_mount_namespace (c->spec, &c->joins, err) < 0)
    return -1;
  if (ar_read_file_at (u->state_fd, AR_CGROUP_FILE, AR_CONFIG_MAX_SIZE, &cgroup,
                       NULL, NULL)
          == 0
      && ar_cgroup_deserialize (cgroup, &u->cgroup, err) < 0)
    return -1;
  unlinkat (u->state_fd, AR_EXEC_FIFO, 0);
  unlinkat (u->state_fd, AR_PLAIN_START_FILE, 0);
  if (compile_seccomp (c->opts->root, c->spec, &c->seccomp, err) < 0
      || make_exec_fifo (c, err) < 0)
    return -1;
  return ar_sync_pair (c->sync, err);
}

/* The spec the container really runs with: the bundle's bytes when no
 * profile changed it (no re-encoding on the hot path), else the rewrite. */
static int
save_spec (create_ctx *c, ar_error_t **err)
{
  if (c->plan == NULL)
    return ar_write_file_atomic_at (c->undo.state_fd, AR_CONFIG_FILE,
                                    c->config_data, c->config_len, 0600, err);
  cleanup_free char *json = oci_spec_to_json (c->spec, false);
  return ar_write_file_atomic_at (c->undo.state_fd, AR_CONFIG_FILE, json,
                                  strlen (json), 0600, err);
}

static int
make_exec_fifo (create_ctx *c, ar_error_t **err)
{
  if (c->opts->await_take)
    return ar_write_file_atomic_at (c->undo.state_fd, AR_AWAIT_TAKE_FILE, "", 0,
                                    0600, err);
  if (c->opts->started_by_parent || c->opts->restore)
    return 0;
  if (mkfifoat (c->undo.state_fd, AR_EXEC_FIFO, 0622) < 0)
    return ar_error_set (err, errno, "create exec fifo");
  /* Past the umask: init opens it for writing after it became the
     container's user (docker run -u 1000). */
  if (fchmodat (c->undo.state_fd, AR_EXEC_FIFO, 0622, 0) < 0)
    return ar_error_set (err, errno, "chmod exec fifo");
  c->fifo_fd = openat (c->undo.state_fd, AR_EXEC_FIFO, O_PATH | O_CLOEXEC);
  if (c->fifo_fd < 0)
    return ar_error_set (err, errno, "open exec fifo");
  return 0;
}

/* A `start` that is only the fifo's read (no plan to audit in, no
 * poststart hooks) is told so, with the init's identity: the launcher
 * then does it alone, and the runtime loads nothing after it. */
static int
record_plain_start (const create_ctx *c, ar_error_t **err)
{
  if (c->fifo_fd < 0 || c->plan || c->spec->hooks.poststart.len > 0)
    return 0;
  return ar_pid_record_write_as (c->undo.state_fd, AR_PLAIN_START_FILE,
                                 c->st.pid, c->st.start_time, err);
}

/* State dir, agent resources, seccomp program, exec fifo: all undone by
 * undo_create on a later failure. */
static int
prepare_host (create_ctx *c, ar_error_t **err)
{
  if (make_state_dir (c->opts->root, c->opts->id, &c->undo, err) < 0)
    return -1;
  c->state_dir = xstrdup (c->undo.state_dir);
  if (c->bundle == NULL)
    c->bundle = xstrdup (c->state_dir);
  ar_stage_keep_audit_head (c->plan, c->state_dir);
  ar_timings_mark ("state");
  if (c->plan)
    {
      c->undo.plan = c->plan;
      if (ar_stage_prepare (c->plan, c->undo.state_fd, c->state_dir, c->rootfs,
                            c->spec, err)
          < 0)
        return -1;
      /* The overlay's merged view is the root now. */
      free (c->rootfs);
      c->rootfs = xstrdup (c->spec->root_path);
      /* and the container may join a user namespace the policy named. */
      const oci_namespace *user
          = oci_spec_find_namespace (c->spec, OCI_NS_USER);
      if (user && user->path && c->joins.fd[OCI_NS_USER] < 0)
        {
          ar_ns_close_joins (&c->joins);
          if (ar_ns_open_joins (c->spec, &c->joins, err) < 0)
            return -1;
        }
      ar_timings_mark ("policy");
    }
  if (ar_ns_host_mounts (c->spec)
      && ar_host_mounts_record (c->undo.state_fd, c->rootfs, err) < 0)
    return -1;
  if (compile_seccomp (c->opts->root, c->spec, &c->seccomp, err) < 0)
    return -1;
  ar_timings_mark ("seccomp");
  ar_device_rules_add_defaults (c->spec);
  if (save_spec (c, err) < 0 || make_exec_fifo (c, err) < 0)
    return -1;
  ar_timings_mark ("spec");
  return ar_sync_pair (c->sync, err);
}

/* No cgroup this user may make: none writable, or none mounted at all
 * (a user's own mount of /sys, as `ip netns exec` makes). */
static bool
is_no_cgroup_for_user (const ar_error_t *e)
{
  return e->errno_value == EACCES || e->errno_value == EPERM
         || e->errno_value == EROFS || e->errno_value == ENOENT;
}

/* Without root, a host that delegates no cgroup to the user still runs
 * containers, as runc and crun do, but a limit is never dropped unsaid:
 * refused, or with --rootless-limits=ignore warned about by name. */
static int
run_without_cgroup (const create_ctx *c, const ar_error_t *why,
                    ar_error_t **err)
{
  cleanup_free char *limits = ar_cgroup_requested_limits (
      c->spec->linux_cfg ? c->spec->linux_cfg->resources : NULL);
  if (limits == NULL)
    return 0;
  if (!c->opts->ignore_unenforced_limits && c->opts->limits_asked_by)
    return ar_error_set (
        err, 0,
        "%s: no cgroup to enforce it in without root (%s): run it in a systemd user session (loginctl enable-linger $USER lets one start), or as `agentrun --rootless-limits=ignore sandbox ...` to run without it",
        c->opts->limits_asked_by, ar_error_text (why));
  if (!c->opts->ignore_unenforced_limits)
    return ar_error_set (
        err, 0,
        "config.json: .linux.resources (%s): no cgroup to enforce them in without root (%s): use a delegated cgroup (--systemd-cgroup under a systemd user session, or a cgroupsPath you own), or --rootless-limits=ignore to run without them",
        limits, ar_error_text (why));
  fprintf (
      stderr,
      "agentrun: warning: linux.resources (%s) not enforced: no cgroup without root (%s)\n",
      limits, ar_error_text (why));
  return 0;
}

/* cgroupfs: the container's cgroup, limits and all, exists before its
 * init does, so clone3 can put the init straight into it; the record lets
 * a delete --force of a create that died half-way remove it. The systemd
 * driver's scope needs a process: it comes after the clone. */
static int
prepare_cgroup (create_ctx *c, ar_error_t **err)
{
  if (c->opts->systemd_cgroup)
    return 0;
  cleanup_error ar_error_t *refused = NULL;
  if (ar_cgroup_create (c->opts->id, c->spec, AR_CGROUP_CGROUPFS, 0,
                        &c->undo.cgroup, &refused)
      < 0)
    return c->opts->rootless && is_no_cgroup_for_user (refused)
               ? run_without_cgroup (c, refused, err)
               : ar_error_pass (err, steal_pointer (&refused));
  cleanup_free char *text = ar_cgroup_serialize (c->undo.cgroup);
  int r = ar_write_file_atomic_at (c->undo.state_fd, AR_CGROUP_FILE, text,
                                   strlen (text), 0600, err);
  ar_timings_mark ("cgroup");
  return r;
}

/* The init joins the cgroup before it may proceed. */
static int
enter_cgroup (create_ctx *c, ar_error_t **err)
{
  create_undo *u = &c->undo;
  if (c->opts->systemd_cgroup)
    return ar_cgroup_create (c->opts->id, c->spec, AR_CGROUP_SYSTEMD, u->pid,
                             &u->cgroup, err);
  if (u->cgroup == NULL) /* rootless, none delegated */
    return 0;
  unsigned which = (u->in_cgroup_v2 ? 0 : AR_CGROUP_V2)
                   | (u->self_moved_v1 ? 0 : AR_CGROUP_V1);
  return ar_cgroup_enter_only (u->cgroup, u->pid, which, err);
}

/* restore: criu makes the processes from the images, born in the
 * container's cgroup, where its own process was put before it ran. */
static int
restore_init (create_ctx *c, ar_error_t **err)
{
  create_undo *u = &c->undo;
  ar_criu_restore r;
  if (ar_criu_restore_begin (c->opts->restore, c->spec, c->bundle, c->rootfs,
                             &r, err)
      < 0)
    {
      ar_criu_restore_clear (&r);
      return -1;
    }
  u->pid = r.pid;
  int ret = enter_cgroup (c, err);
  u->pid = 0;
  pid_t init = 0;
  if (ret == 0)
    ret = ar_criu_restore_finish (&r, u->cgroup, &init, err);
  ar_criu_restore_clear (&r);
  ar_timings_mark ("criu");
  if (ret < 0)
    return -1;
  u->pid = init;
  u->pidfd = ar_pidfd_open (init);
  return 0;
}

/* The caller chose not to run from a sealed copy of the binary when the
 * container's user namespace holds none of its writers (sandbox): hold
 * that promise against the namespace that is actually made. */
static int
check_exe_out_of_reach (const oci_spec *spec, ar_error_t **err)
{
  const oci_namespace *user = oci_spec_find_namespace (spec, OCI_NS_USER);
  size_t n = user && user->path == NULL ? spec->linux_cfg->n_uid_mappings : 0;
  cleanup_free ar_held_uids *held = xcalloc (n + 1, sizeof *held);
  for (size_t i = 0; i < n; i++)
    held[i] = (ar_held_uids){ .first = spec->linux_cfg->uid_mappings[i].host_id,
                              .count = spec->linux_cfg->uid_mappings[i].size };
  if (ar_exe_reachable (held, n))
    return ar_error_set (
        err, 0,
        "the container could write this runtime's binary through /proc/PID/exe and the runtime does not run from a sealed copy of it");
  return 0;
}

static int
start_init (create_ctx *c, bool *new_userns, ar_error_t **err)
{
  if (c->opts->restore)
    return restore_init (c, err);
  if (check_exe_out_of_reach (c->spec, err) < 0)
    return -1;
  ar_init_config cfg = {
    .spec = c->spec,
    .id = c->opts->id,
    .bundle = c->bundle,
    .rootfs = c->rootfs,
    .sync_fd = c->sync[1],
    .fifo_fd = c->fifo_fd,
    .joins = &c->joins,
    .seccomp = c->seccomp,
    .no_pivot = c->opts->no_pivot,
    .no_new_keyring = c->opts->no_new_keyring,
    .preserve_fds = c->opts->listen_fds + c->opts->preserve_fds,
    .listen_fds = c->opts->listen_fds,
    .die_with_parent = c->opts->started_by_parent && c->opts->caller_waits,
    .reaper = c->opts->init_reaper,
    .await_take = c->opts->await_take,
  };
  /* The mapped root may not reach what host root can: open them now. */
  int *bind_fds = NULL;
  if (oci_spec_find_namespace (c->spec, OCI_NS_USER)
      || ar_mounts_any_idmapped (c->spec))
    {
      cleanup_close int bundle_fd
          = open (c->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (bundle_fd < 0)
        return ar_error_set (err, errno, "open bundle `%s`", c->bundle);
      if (ar_mounts_open_bind_sources (c->spec, bundle_fd, &bind_fds, err) < 0)
        return -1;
    }
  cfg.bind_source_fds = bind_fds;
  int r = spawn_init (c->opts, c->spec, &cfg, &c->joins, &c->undo, c->sync[1],
                      err);
  ar_timings_mark ("clone");
  ar_mounts_close_bind_sources (bind_fds, c->spec->n_mounts);
  c->sync[1] = -1;
  ar_ns_close_joins (&c->joins);
  *new_userns = cfg.new_userns;
  return r;
}

/* Who deletes the container when it ends: before the init may run, so a
 * death of this process from then on leaves a record for
 * ar_container_reap_abandoned. */
static int
record_supervision (const ar_create_options *opts, int state_fd,
                    ar_error_t **err)
{
  if (!opts->delete_when_done)
    return 0;
  return ar_container_record_supervisor (state_fd, err);
}

/* The record's lock lasts as long as this process: the fd is never
 * closed (close-on-exec; the children that outlive a supervisor are
 * executed programs), so a reaper tells a live supervisor by one flock. */
int
ar_container_record_supervisor (int state_fd, ar_error_t **err)
{
  int held = -1;
  return ar_pid_record_write_held (state_fd, AR_SUPERVISOR_FILE, &held, err);
}

/* Maps and cgroup before the init may proceed; the state record before
 * hooks see it; then the init runs its own set-up. */
static int
settle_init (create_ctx *c, bool new_userns, ar_created *out, ar_error_t **err)
{
  create_undo *u = &c->undo;
  /* The init in another user namespace may not lower its own score. */
  const oci_namespace *user = oci_spec_find_namespace (c->spec, OCI_NS_USER);
  if (!c->opts->restore
      && ((new_userns && ar_idmap_write (u->pid, c->spec->linux_cfg, err) < 0)
          || (user
              && ar_process_set_oom_score_adj (c->spec->process, u->pid, err)
                     < 0)
          || enter_cgroup (c, err) < 0))
    return -1;
  ar_timings_mark ("join");
  c->st = (ar_state){
    .id = (char *) c->opts->id,
    .pid = u->pid,
    .start_time = ar_pid_start_time (u->pid),
    .bundle = c->bundle,
    .rootfs = c->rootfs,
    .created = ar_now_rfc3339 (),
    .owner = geteuid (),
    .cgroup = u->cgroup ? ar_cgroup_serialize (u->cgroup) : NULL,
    .annotations = c->spec->annotations,
  };
  u->spec = c->spec;
  u->st = &c->st;
  if (ar_state_save (u->state_fd, &c->st, err) < 0
      || record_supervision (c->opts, u->state_fd, err) < 0
      || record_plain_start (c, err) < 0)
    return -1;
  if (c->opts->restore)
    {
      ar_container_run_hooks_of (c->spec, c->plan, &c->st, true);
      return ar_write_pid_file (c->opts->pid_file, u->pid, err);
    }
  if (drive_init (c->opts, c->spec, c->plan, &c->st, c->sync[0], out, err) < 0)
    return -1;
  ar_timings_mark ("init");
  if (ar_write_pid_file (c->opts->pid_file, u->pid, err) < 0
      || ar_stage_start_gates (c->plan, c->opts->id, u->pid, err) < 0)
    return -1;
  if (c->plan && (c->opts->caller_waits || c->opts->await_take))
    {
      out->wall_clock_seconds = ar_stage_wall_clock_seconds (c->plan);
      return 0;
    }
  return ar_stage_start_watchdog (c->plan, c->opts->id, u->pid, c->st.cgroup,
                                  err);
}

void
ar_created_close (ar_created *created)
{
  ar_closep (&created->pidfd);
  ar_closep (&created->sync_fd);
  ar_closep (&created->pty_master);
}

int
ar_container_create (const ar_create_options *opts, ar_created *out,
                     ar_error_t **err)
{
  *out = (ar_created){ .pid = 0, .pidfd = -1, .sync_fd = -1, .pty_master = -1 };
  if (ar_state_validate_id (opts->id, err) < 0)
    return -1;
  ar_container_reap_abandoned (opts->root);

  create_ctx c;
  create_ctx_init (&c, opts);
  bool new_userns = false;
  int r = -1;
  bool ready = opts->restart
                   ? load_stopped (&c, err) == 0
                   : load_bundle (&c, err) == 0 && prepare_host (&c, err) == 0
                         && prepare_cgroup (&c, err) == 0;
  if (ready && start_init (&c, &new_userns, err) == 0
      && settle_init (&c, new_userns, out, err) == 0)
    r = 0;

  if (r == 0)
    {
      ar_stage_audit_create (c.plan, c.state_dir, opts->id, c.spec->process,
                             opts->command_line);
      out->pid = c.undo.pid;
      out->pidfd = steal_fd (&c.undo.pidfd);
      if (opts->started_by_parent)
        out->sync_fd = steal_fd (&c.sync[0]);
      c.undo.pid = 0; /* the container now outlives this function */
      ar_cgroup_free (c.undo.cgroup);
      c.undo.cgroup = NULL;
      ar_closep (&c.undo.state_fd);
    }
  else
    {
      ar_closep (&out->pty_master);
      if (err && *err)
        ar_stage_audit_error (c.plan, opts->id, "create-failed",
                              ar_error_text (*err));
      undo_create (&c.undo);
    }
  create_ctx_free (&c);
  return r;
}
