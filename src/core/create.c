#include "config.h"
#include "container.h"
#include "container_internal.h"
#include "../../oci/oci.h"
#include "cgroups/cgroups.h"
#include "device_rules.h"
#include "hooks.h"
#include "init.h"
#include "namespaces.h"
#include "process.h"
#include "seccomp.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif


/* Our own copy: glibc has no clone3 wrapper and <linux/sched.h> clashes
 * with <sched.h>. Layout of the kernel's struct clone_args (v0). */
struct ar_clone_args
{
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
      stack_size, tls;
};

static pid_t
clone3_fork (uint64_t flags, int *pidfd)
{
  struct ar_clone_args args = { .flags = flags | CLONE_PIDFD,
                                .pidfd = (uint64_t) (uintptr_t) pidfd,
                                .exit_signal = SIGCHLD };
  return (pid_t) syscall (SYS_clone3, &args, sizeof args);
}

/* Everything a create made so far, undone in reverse on failure. */
typedef struct
{
  int root_fd;
  char *id;
  int state_fd;
  pid_t pid;
  int pidfd;
  ar_cgroup *cgroup;
} create_undo;

static void
undo_create (create_undo *u)
{
  if (u->pid > 0)
    {
      if (u->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, u->pidfd, SIGKILL, NULL, 0);
      else
        kill (u->pid, SIGKILL);
      waitpid (u->pid, NULL, 0);
    }
  if (u->cgroup)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_cgroup_destroy (u->cgroup, &ignored);
      ar_cgroup_free (u->cgroup);
      u->cgroup = NULL;
    }
  if (u->state_fd >= 0)
    ar_container_remove_state_dir (u->root_fd, u->id, u->state_fd);
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
  cleanup_free char *joined = spec->root_path[0] == '/'
                                  ? xstrdup (spec->root_path)
                                  : xasprintf ("%s/%s", bundle, spec->root_path);
  char buf[PATH_MAX];
  if (realpath (joined, buf) == NULL)
    return ar_error_set (err, errno, "config.json: .root.path: rootfs `%s`", joined);
  struct stat st;
  if (stat (buf, &st) < 0 || !S_ISDIR (st.st_mode))
    return ar_error_set (err, 0, "config.json: .root.path: rootfs `%s` is not a directory", joined);
  *out = xstrdup (buf);
  return 0;
}

static int
validate_spec (const oci_spec *spec, ar_error_t **err)
{
  if (spec->process == NULL)
    return ar_error_set (err, 0, "config.json: .process: missing");
  if (ar_process_validate (spec->process, err) < 0)
    return -1;
  if (spec->linux_cfg && spec->linux_cfg->seccomp
      && ar_seccomp_validate (spec->linux_cfg->seccomp, err) < 0)
    return -1;
  if (oci_spec_find_namespace (spec, OCI_NS_MOUNT) == NULL)
    return ar_error_set (err, 0, "config.json: .linux.namespaces: a mount namespace is required");
  const oci_namespace *uts = oci_spec_find_namespace (spec, OCI_NS_UTS);
  if (spec->hostname && spec->hostname[0] && (uts == NULL || uts->path))
    return ar_error_set (err, 0, "config.json: .hostname: setting the hostname needs a new uts namespace");
  const oci_namespace *user = oci_spec_find_namespace (spec, OCI_NS_USER);
  if (user && user->path == NULL
      && (spec->linux_cfg->n_uid_mappings == 0 || spec->linux_cfg->n_gid_mappings == 0))
    return ar_error_set (err, 0, "config.json: .linux: a new user namespace needs uidMappings and gidMappings");
  return 0;
}

static int
make_state_dir (const char *root, const char *id, create_undo *u,
                ar_error_t **err)
{
  if (ar_mkdir_p (root, 0700, err) < 0)
    return -1;
  u->root_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (u->root_fd < 0)
    return ar_error_set (err, errno, "open state root `%s`", root);
  if (mkdirat (u->root_fd, id, 0700) < 0)
    {
      if (errno == EEXIST)
        return ar_error_set (err, 0, "container `%s` already exists", id);
      return ar_error_set (err, errno, "create state dir `%s/%s`", root, id);
    }
  u->id = xstrdup (id);
  u->state_fd = openat (u->root_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (u->state_fd < 0)
    return ar_error_set (err, errno, "open state dir `%s/%s`", root, id);
  return 0;
}

/* pid and time namespaces apply to children only: the parent enters them
 * around clone and steps back out afterwards. */
typedef struct
{
  int own_pid;
  int own_time;
} ns_restore;

static int
enter_child_namespaces (const oci_spec *spec, ar_ns_joins *joins,
                        ns_restore *saved, ar_error_t **err)
{
  saved->own_pid = saved->own_time = -1;
  const oci_namespace *time_ns = oci_spec_find_namespace (spec, OCI_NS_TIME);
  if (joins->fd[OCI_NS_PID] >= 0)
    {
      saved->own_pid = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
      if (saved->own_pid < 0 || setns (joins->fd[OCI_NS_PID], CLONE_NEWPID) < 0)
        return ar_error_set (err, errno, "join pid namespace");
    }
  if (time_ns)
    {
      saved->own_time = open ("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
      if (saved->own_time < 0)
        return ar_error_set (err, errno, "open own time namespace");
      if (time_ns->path)
        {
          if (setns (joins->fd[OCI_NS_TIME], CLONE_NEWTIME) < 0)
            return ar_error_set (err, errno, "join time namespace");
        }
      else
        {
          if (unshare (CLONE_NEWTIME) < 0)
            return ar_error_set (err, errno, "unshare time namespace");
          if (ar_ns_write_time_offsets (spec->linux_cfg, err) < 0)
            return -1;
        }
    }
  return 0;
}

static void
leave_child_namespaces (ns_restore *saved)
{
  if (saved->own_pid >= 0)
    setns (saved->own_pid, CLONE_NEWPID);
  if (saved->own_time >= 0)
    setns (saved->own_time, CLONE_NEWTIME);
  ar_closep (&saved->own_pid);
  ar_closep (&saved->own_time);
}

static int
run_parent_hooks (const oci_spec *spec, const ar_state *st, ar_error_t **err)
{
  if (spec->hooks.prestart.len == 0 && spec->hooks.create_runtime.len == 0)
    return 0;
  cleanup_free char *json = ar_state_to_oci_json (st, AR_STATUS_CREATING, false);
  if (ar_hooks_run (&spec->hooks.prestart, "prestart", json, err) < 0)
    return -1;
  return ar_hooks_run (&spec->hooks.create_runtime, "createRuntime", json, err);
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
  if (opts->started_by_parent)
    {
      out->pty_master = master;
      return 0;
    }
  close (master);
  return ar_error_set (err, 0, "process.terminal is true: --console-socket is required");
}

/* Talk the init through its set-up until it is ready to be started. */
static int
drive_init (const ar_create_options *opts, const oci_spec *spec,
            const ar_state *st, int sync_fd, ar_created *out,
            ar_error_t **err)
{
  if (ar_sync_send (sync_fd, AR_SYNC_GO, st->pid, -1, NULL, err) < 0)
    return -1;
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
          if (run_parent_hooks (spec, st, err) < 0)
            return -1;
          if (ar_sync_send (sync_fd, AR_SYNC_HOOKS_DONE, 0, -1, NULL, err) < 0)
            return -1;
          break;
        case AR_SYNC_READY:
          return 0;
        case AR_SYNC_ERROR:
          {
            cleanup_free char *text = msg.text;
            return ar_error_set (err, 0, "%s", text ? text : "container init failed");
          }
        default:
          free (msg.text);
          return ar_error_set (err, 0, "sync: unexpected message %d", (int) msg.type);
        }
    }
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
       * unshares them after setns. Only the pid one has to come from clone. */
      cfg->unshare_flags = clone_flags & ~CLONE_NEWPID;
      clone_flags &= CLONE_NEWPID;
    }
  cfg->new_userns = (new_flags & CLONE_NEWUSER) != 0;
  (void) opts;

  ns_restore saved;
  int r = enter_child_namespaces (spec, joins, &saved, err);
  if (r == 0)
    {
      u->pid = clone3_fork ((uint64_t) clone_flags, &u->pidfd);
      if (u->pid == 0)
        ar_init_main (cfg);
      if (u->pid < 0)
        {
          u->pid = 0;
          r = ar_error_set (err, errno, "clone container init");
        }
    }
  leave_child_namespaces (&saved);
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
read_config (const char *bundle, char **data, size_t *len, oci_spec **spec,
             ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  if (ar_read_file_at (AT_FDCWD, path, AR_CONFIG_MAX_SIZE, data, len, err) < 0)
    return -1;
  return oci_spec_parse (*data, *len, "config.json", spec, err);
}

int
ar_container_create (const ar_create_options *opts, ar_created *out,
                     ar_error_t **err)
{
  *out = (ar_created){ .pid = 0, .pidfd = -1, .sync_fd = -1, .pty_master = -1 };
  if (ar_state_validate_id (opts->id, err) < 0)
    return -1;

  cleanup_free char *bundle = NULL;
  cleanup_free char *rootfs = NULL;
  cleanup_free char *config_data = NULL;
  size_t config_len = 0;
  oci_spec *spec = NULL;
  if (resolve_bundle (opts->bundle, &bundle, err) < 0
      || read_config (bundle, &config_data, &config_len, &spec, err) < 0)
    return -1;

  create_undo u = { .root_fd = -1, .state_fd = -1, .pidfd = -1 };
  ar_ns_joins joins;
  for (int t = 0; t < OCI_NS_COUNT; t++)
    joins.fd[t] = -1;
  int sync[2] = { -1, -1 };
  int fifo_fd = -1;
  ar_state st = { 0 };
  ar_seccomp_program *seccomp = NULL;
  int r = -1;

  if (validate_spec (spec, err) < 0
      || resolve_rootfs (bundle, spec, &rootfs, err) < 0
      || ar_ns_open_joins (spec, &joins, err) < 0
      || make_state_dir (opts->root, opts->id, &u, err) < 0
      || compile_seccomp (opts->root, spec, &seccomp, err) < 0)
    goto out;
  ar_device_rules_add_defaults (spec);
  if (ar_write_file_atomic_at (u.state_fd, AR_CONFIG_FILE, config_data,
                               config_len, 0600, err) < 0)
    goto out;
  if (!opts->started_by_parent)
    {
      if (mkfifoat (u.state_fd, AR_EXEC_FIFO, 0622) < 0)
        {
          ar_error_set (err, errno, "create exec fifo");
          goto out;
        }
      /* Past the umask: init opens it for writing after it became the
         container's user (docker run -u 1000). */
      if (fchmodat (u.state_fd, AR_EXEC_FIFO, 0622, 0) < 0)
        {
          ar_error_set (err, errno, "chmod exec fifo");
          goto out;
        }
      fifo_fd = openat (u.state_fd, AR_EXEC_FIFO, O_PATH | O_CLOEXEC);
      if (fifo_fd < 0)
        {
          ar_error_set (err, errno, "open exec fifo");
          goto out;
        }
    }
  if (ar_sync_pair (sync, err) < 0)
    goto out;

  ar_init_config cfg = {
    .spec = spec,
    .id = opts->id,
    .bundle = bundle,
    .rootfs = rootfs,
    .sync_fd = sync[1],
    .fifo_fd = fifo_fd,
    .joins = &joins,
    .seccomp = seccomp,
    .no_pivot = opts->no_pivot,
    .no_new_keyring = opts->no_new_keyring,
    .preserve_fds = opts->preserve_fds,
  };
  r = spawn_init (opts, spec, &cfg, &joins, &u, sync[1], err);
  sync[1] = -1;
  ar_ns_close_joins (&joins);
  if (r < 0)
    goto out;
  r = -1;

  if (cfg.new_userns && ar_ns_write_id_mappings (u.pid, spec->linux_cfg, err) < 0)
    goto out;
  if (ar_cgroup_create (opts->id, spec, u.pid, &u.cgroup, err) < 0)
    goto out;

  st = (ar_state){
    .id = (char *) opts->id,
    .pid = u.pid,
    .start_time = ar_pid_start_time (u.pid),
    .bundle = bundle,
    .rootfs = rootfs,
    .created = ar_now_rfc3339 (),
    .owner = geteuid (),
    .cgroup = u.cgroup ? ar_cgroup_serialize (u.cgroup) : NULL,
    .annotations = spec->annotations,
  };
  if (ar_state_save (u.state_fd, &st, err) < 0)
    goto out;
  if (drive_init (opts, spec, &st, sync[0], out, err) < 0)
    goto out;
  if (ar_write_pid_file (opts->pid_file, u.pid, err) < 0)
    goto out;

  out->pid = u.pid;
  out->pidfd = steal_fd (&u.pidfd);
  if (opts->started_by_parent)
    out->sync_fd = steal_fd (&sync[0]);
  u.pid = 0; /* the container now outlives this function */
  ar_cgroup_free (u.cgroup);
  u.cgroup = NULL;
  ar_closep (&u.state_fd);
  r = 0;

out:
  if (r < 0)
    {
      ar_closep (&out->pty_master);
      undo_create (&u);
    }
  ar_closep (&u.root_fd);
  free (u.id);
  free (st.created);
  free (st.cgroup);
  ar_ns_close_joins (&joins);
  ar_closep (&sync[0]);
  ar_closep (&sync[1]);
  ar_closep (&fifo_fd);
  ar_seccomp_program_free (seccomp);
  oci_spec_free (spec);
  return r;
}

