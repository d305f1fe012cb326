/* SPDX-License-Identifier: Apache-2.0 */
/* checkpoint and restore with the criu program (see criu.h). */
#include "config.h"
#include "criu.h"
#include "cgroups/cgroups.h"
#include "container.h"
#include "mounts.h"
#include "policy_stage.h"
#include "state.h"
#include "terminal.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The init's stdio as criu names it, one per line for fds 0, 1 and 2
 * ("-" where there is none): written beside the images by a dump, read by
 * the restore, which hands its own fd of that number in its place. */
#define DESCRIPTORS_FILE "descriptors"
#define STDIO_FDS 3
/* The restore's criu gets a joined network namespace as this fd. */
#define NETNS_FD 3
#define NETNS_KEY "extRootNetNS"
/* ... and a new pty's slave, for the init's terminal, as this fd. */
#define TTY_FD 4
#define RESTORE_PID_FILE "restore.pid"
#define CRIU_MISSING                                                           \
  "criu not found in PATH: checkpoint and restore need CRIU (Debian's criu package)"

typedef struct
{
  oci_strv v;
} argv_builder;

static void __attribute__ ((format (printf, 2, 3)))
arg (argv_builder *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *s = xvasprintf (fmt, ap);
  va_end (ap);
  oci_strv_push (&b->v, s);
}

static void
argv_builder_clear (argv_builder *b)
{
  for (size_t i = 0; i < b->v.len; i++)
    free (b->v.items[i]);
  free (b->v.items);
  b->v = (oci_strv){ 0 };
}
#define cleanup_argv __attribute__ ((cleanup (argv_builder_clear)))

static const char *
work_path (const ar_criu_options *o)
{
  return o->work_path ? o->work_path : o->image_path;
}

/* What both verbs say the same way: where, how verbose, what is allowed. */
static void
common_args (argv_builder *b, const ar_criu_options *o, const char *log)
{
  arg (b, "--images-dir=%s", o->image_path);
  arg (b, "--work-dir=%s", work_path (o));
  arg (b, "--log-file=%s", log);
  arg (b, "-v4");
  if (o->tcp_established)
    arg (b, "--tcp-established");
  if (o->ext_unix_sk)
    arg (b, "--ext-unix-sk");
  if (o->shell_job)
    arg (b, "--shell-job");
  if (o->file_locks)
    arg (b, "--file-locks");
  if (o->manage_cgroups_mode)
    arg (b, "--manage-cgroups=%s", o->manage_cgroups_mode);
}

/* What external_mounts names and make_bind_mount_points prepares: a bind
 * mount with both ends given. */
static bool
is_external (const oci_mount *m)
{
  return m->destination && m->source && ar_mounts_is_bind (m);
}

/* Every bind mount of the spec comes from outside the container: at the
 * dump it is named by its destination, at the restore bound again from
 * its source (relative ones from the bundle). */
static void
external_mounts (argv_builder *b, const oci_spec *spec, const char *bundle)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      if (!is_external (m))
        continue;
      if (bundle == NULL)
        arg (b, "--external=mnt[%s]:%s", m->destination, m->destination);
      else if (m->source[0] == '/')
        arg (b, "--external=mnt[%s]:%s", m->destination, m->source);
      else
        arg (b, "--external=mnt[%s]:%s/%s", m->destination, bundle, m->source);
    }
}

/* criu binds each external mount onto a mount point it expects to find,
 * where a create would have made one: made the same way (a file for a
 * file's bind, inside the rootfs, through no symlink out of it). */
static int
make_bind_mount_points (const oci_spec *spec, const char *bundle,
                        const char *rootfs, ar_error_t **err)
{
  cleanup_close int root_fd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int bundle_fd = open (bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0 || bundle_fd < 0)
    return ar_error_set (err, errno, "open `%s`",
                         root_fd < 0 ? rootfs : bundle);
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      struct stat st;
      if (!is_external (m))
        continue;
      if (fstatat (bundle_fd, m->source, &st, 0) < 0)
        return ar_error_set (err, errno, "config.json: .mounts[%zu].source: %s",
                             i, m->source);
      cleanup_close int fd = ar_path_create_in_root (root_fd, m->destination,
                                                     S_ISDIR (st.st_mode), err);
      if (fd < 0)
        return ar_error_prefix (err, "config.json: .mounts[%zu].destination",
                                i);
    }
  return 0;
}

/* The first line criu's log calls an error: the cause, where the last
 * ones only say that the dump or restore failed. */
static char *
first_log_error (const char *log)
{
  cleanup_file FILE *f = fopen (log, "re");
  if (f == NULL)
    return NULL;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) > 0)
    if (strstr (line, "Error (") != NULL)
      {
        if (line[n - 1] == '\n')
          line[n - 1] = '\0';
        return line;
      }
  free (line);
  return NULL;
}

static int
criu_failed (const char *what, int status, const char *message, const char *log,
             ar_error_t **err)
{
  cleanup_free char *why = first_log_error (log);
  if (why == NULL && message && *message)
    why = xstrdup (message);
  return ar_error_set (err, 0, "criu %s failed (status %d): %s (log: %s)", what,
                       status, why ? why : "no error logged", log);
}

static int
run_criu (const char *what, char *const *argv, const char *log,
          ar_error_t **err)
{
  cleanup_free char *message = NULL;
  cleanup_error ar_error_t *spawn_err = NULL;
  int r = ar_spawn_wait (argv, &message, &spawn_err);
  if (r < 0 && spawn_err->errno_value == ENOENT)
    return ar_error_set (err, 0, CRIU_MISSING);
  if (r < 0)
    return ar_error_pass (err, steal_pointer (&spawn_err));
  return r == 0 ? 0 : criu_failed (what, r, message, log, err);
}

int
ar_criu_check_spec (const char *verb, const oci_spec *spec, bool has_plan,
                    ar_error_t **err)
{
  if (has_plan)
    return ar_error_set (
        err, 0,
        "%s: an agent sandbox (a profile's overlay, egress, secrets or gates) cannot be checkpointed: its host state is not in a CRIU image",
        verb);
  const oci_hooks *h = &spec->hooks;
  if (h->prestart.len || h->create_runtime.len || h->create_container.len
      || h->start_container.len)
    return ar_error_set (
        err, 0,
        "config.json: .hooks: %s: hooks run before the process starts (prestart, createRuntime, createContainer, startContainer) have no moment in a restore",
        verb);
  return 0;
}

/* ---------------------------------------------------------------------
 * The init's stdio.
 * --------------------------------------------------------------------- */

static bool
mount_id_in (const char *mountinfo, unsigned long id)
{
  for (const char *line = mountinfo; line && *line;)
    {
      if (strtoul (line, NULL, 10) == id)
        return true;
      line = strchr (line, '\n');
      line = line ? line + 1 : NULL;
    }
  return false;
}

static unsigned long
fd_mount_id (pid_t pid, int fd)
{
  cleanup_free char *path = xasprintf ("/proc/%d/fdinfo/%d", pid, fd);
  cleanup_free char *info = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_read_file_at (AT_FDCWD, path, 4096, &info, NULL, &ignored) < 0)
    return 0;
  const char *m = strstr (info, "mnt_id:");
  return m ? strtoul (m + 7, NULL, 10) : 0;
}

/* UNIX 98 pty slaves: majors 136 to 143. */
static bool
is_pty_slave (dev_t rdev)
{
  return major (rdev) >= 136 && major (rdev) <= 143;
}

/* How criu names the init's fd `fd`, NULL when it is closed. A pipe or a
 * socket is named by its inode; a file on a mount outside the container
 * by mount and inode, and it must be declared external to be dumped. */
static char *
stdio_key (pid_t pid, int fd, const char *mountinfo, bool *external)
{
  *external = false;
  cleanup_free char *link = xasprintf ("/proc/%d/fd/%d", pid, fd);
  cleanup_free char *target = ar_readlink (link);
  struct stat st;
  if (target == NULL || stat (link, &st) < 0)
    return NULL;
  if (strncmp (target, "pipe:", 5) == 0 || strncmp (target, "socket:", 7) == 0)
    return xstrdup (target);
  if (S_ISCHR (st.st_mode) && is_pty_slave (st.st_rdev))
    {
      *external = true;
      return xasprintf ("tty[%" PRIx64 ":%" PRIx64 "]", (uint64_t) st.st_rdev,
                        (uint64_t) st.st_dev);
    }
  unsigned long mnt = fd_mount_id (pid, fd);
  if (mnt == 0 || mount_id_in (mountinfo, mnt))
    return NULL; /* the container's own: criu restores it */
  *external = true;
  return xasprintf ("file[%lx:%" PRIx64 "]", mnt, (uint64_t) st.st_ino);
}

/* Name the init's stdio for the dump, and keep the names for the
 * restore. */
static int
dump_stdio (argv_builder *b, pid_t pid, const char *image_path,
            ar_error_t **err)
{
  cleanup_free char *mountinfo_path = xasprintf ("/proc/%d/mountinfo", pid);
  cleanup_free char *mountinfo = NULL;
  if (ar_read_file_at (AT_FDCWD, mountinfo_path, 1u << 22, &mountinfo, NULL,
                       err)
      < 0)
    return -1;
  cleanup_free char *text = xstrdup ("");
  for (int fd = 0; fd < STDIO_FDS; fd++)
    {
      bool external;
      cleanup_free char *key = stdio_key (pid, fd, mountinfo, &external);
      if (external)
        arg (b, "--external=%s", key);
      char *more = xasprintf ("%s%s\n", text, key ? key : "-");
      free (text);
      text = more;
    }
  cleanup_close int dir = open (image_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return ar_error_set (err, errno, "open `%s`", image_path);
  return ar_write_file_atomic_at (dir, DESCRIPTORS_FILE, text, strlen (text),
                                  0600, err);
}

static const char *
fd_kind (const struct stat *st)
{
  return S_ISFIFO (st->st_mode)                                ? "a pipe"
         : S_ISSOCK (st->st_mode)                              ? "a socket"
         : S_ISCHR (st->st_mode) && is_pty_slave (st->st_rdev) ? "a terminal"
         : S_ISCHR (st->st_mode)                               ? "a device"
                                                               : "a file";
}

static const char *
key_kind (const char *key)
{
  return strncmp (key, "pipe:", 5) == 0     ? "a pipe"
         : strncmp (key, "socket:", 7) == 0 ? "a socket"
         : strncmp (key, "tty[", 4) == 0    ? "a terminal"
                                            : NULL; /* a file or device */
}

/* The init's terminal: a new pty on the host, whose master goes to the
 * console socket once the restore is done, whose slave criu hands over
 * for the init's and binds onto /dev/console. */
static int
restore_terminal (argv_builder *b, const char *key, ar_criu_restore *r,
                  ar_error_t **err)
{
  if (r->pty_slave >= 0)
    return 0; /* stdout and stderr: the same terminal as stdin */
  cleanup_free char *slave_path = NULL;
  if (ar_terminal_open_pty ("/dev/ptmx", "/dev/pts", &r->pty_master,
                            &slave_path, err)
      < 0)
    return -1;
  r->pty_slave = open (slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (r->pty_slave < 0)
    return ar_error_set (err, errno, "open `%s`", slave_path);
  arg (b, "--inherit-fd=fd[%d]:%s", TTY_FD, key);
  arg (b, "--external=mnt[/dev/console]:%s", slave_path);
  return 0;
}

/* Our own fd N stands for what the init had as fd N, and must be of its
 * kind: criu takes a pipe only for a pipe, and checks a file's size. A
 * terminal comes from --console-socket's new pty instead, when given. */
static int
restore_stdio (argv_builder *b, const ar_criu_options *o, ar_criu_restore *r,
               ar_error_t **err)
{
  static const char *const names[STDIO_FDS] = { "stdin", "stdout", "stderr" };
  cleanup_free char *path = xasprintf ("%s/" DESCRIPTORS_FILE, o->image_path);
  cleanup_free char *text = NULL;
  if (ar_read_file_at (AT_FDCWD, path, 4096, &text, NULL, err) < 0)
    return -1;
  char *save = NULL;
  int fd = 0;
  for (char *key = strtok_r (text, "\n", &save); key && fd < STDIO_FDS;
       key = strtok_r (NULL, "\n", &save), fd++)
    {
      struct stat st;
      const char *want = key_kind (key);
      if (strcmp (key, "-") == 0)
        continue;
      if (want && strcmp (want, "a terminal") == 0 && o->console_socket)
        {
          if (restore_terminal (b, key, r, err) < 0)
            return -1;
          continue;
        }
      if (fstat (fd, &st) < 0)
        return ar_error_set (err, 0,
                             "restore: the checkpointed init had a %s (%s), "
                             "this restore has none",
                             names[fd], key);
      const char *have = fd_kind (&st);
      bool file
          = strcmp (have, "a file") == 0 || strcmp (have, "a device") == 0;
      if (want ? strcmp (want, have) != 0 : !file)
        return ar_error_set (
            err, 0,
            "restore: %s is %s, the checkpointed init's was %s (%s): CRIU "
            "hands over only the same kind",
            names[fd], have, want ? want : "a file or device", key);
      arg (b, "--inherit-fd=fd[%d]:%s", fd, key);
    }
  if (o->console_socket && r->pty_master < 0)
    return ar_error_set (err, 0,
                         "--console-socket: the checkpointed init had no "
                         "terminal");
  return 0;
}

/* ---------------------------------------------------------------------
 * checkpoint
 * --------------------------------------------------------------------- */

static const oci_namespace *
joined_namespace (const oci_spec *spec, oci_ns_type type)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, type);
  return ns && ns->path ? ns : NULL;
}

static int
dump_args (argv_builder *b, const ar_criu_options *o, const oci_spec *spec,
           const ar_state *st, const ar_cgroup *cg, const char *log,
           ar_error_t **err)
{
  arg (b, "criu");
  arg (b, o->pre_dump ? "pre-dump" : "dump");
  arg (b, "--tree=%d", st->pid);
  /* criu freezes the processes through the cgroup (none can fork or
   * leave meanwhile), and leaves a paused container paused. */
  const char *file;
  const char *freezer = ar_cgroup_freezer (cg, &file);
  if (freezer)
    arg (b, "--freeze-cgroup=%s", freezer);
  common_args (b, o, log);
  if (o->leave_running && !o->pre_dump)
    arg (b, "--leave-running");
  if (o->auto_dedup)
    arg (b, "--auto-dedup");
  if (o->parent_path)
    arg (b, "--prev-images-dir=%s", o->parent_path);
  if (o->pre_dump || o->parent_path)
    arg (b, "--track-mem");
  for (char *const *ns = o->empty_ns; ns && *ns; ns++)
    arg (b, "--empty-ns=%s", strcmp (*ns, "network") == 0 ? "net" : *ns);
  external_mounts (b, spec, NULL);
  if (spec->process && spec->process->terminal)
    arg (b, "--external=mnt[/dev/console]:/dev/console");
  const oci_namespace *net = joined_namespace (spec, OCI_NS_NETWORK);
  if (net)
    {
      struct stat ns;
      if (stat (net->path, &ns) < 0)
        return ar_error_set (err, errno, "config.json: .linux.namespaces: %s",
                             net->path);
      arg (b, "--external=net[%" PRIu64 "]:" NETNS_KEY, (uint64_t) ns.st_ino);
    }
  return dump_stdio (b, st->pid, o->image_path, err);
}

int
ar_container_checkpoint (const char *root, const char *id,
                         const ar_criu_options *o, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  ar_status status = ar_state_status (state_fd, st);
  if (status != AR_STATUS_RUNNING && status != AR_STATUS_PAUSED)
    return ar_error_set (err, 0,
                         "checkpoint: container `%s` is %s: only a running "
                         "or paused container can be checkpointed",
                         id, ar_status_name (status));
  cleanup_oci_spec oci_spec *spec = NULL;
  ar_plan *plan = NULL;
  if (ar_container_load_spec (state_fd, &spec, err) < 0
      || ar_stage_load_plan (state_fd, &plan, err) < 0)
    return -1;
  bool has_plan = plan != NULL;
  ar_stage_free_plan (plan);
  bool had_images = access (o->image_path, F_OK) == 0;
  bool had_work = access (work_path (o), F_OK) == 0;
  if (ar_criu_check_spec ("checkpoint", spec, has_plan, err) < 0
      || ar_mkdir_p (o->image_path, 0700, err) < 0
      || ar_mkdir_p (work_path (o), 0700, err) < 0)
    return -1;

  cleanup_free char *log = xasprintf ("%s/%s.log", work_path (o),
                                      o->pre_dump ? "pre-dump" : "dump");
  cleanup_argv argv_builder b = { 0 };
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup (st, &cg, err) < 0)
    return -1;
  int r = dump_args (&b, o, spec, st, cg, log, err);
  ar_cgroup_free (cg);
  if (r < 0
      || run_criu (o->pre_dump ? "pre-dump" : "dump", b.v.items, log, err) < 0)
    {
      /* Ours goes; what criu left (its log, partial images) stays for the
       * error to point at, and so does a directory it is in. */
      cleanup_free char *descriptors
          = xasprintf ("%s/" DESCRIPTORS_FILE, o->image_path);
      unlink (descriptors);
      if (!had_work)
        rmdir (work_path (o));
      if (!had_images)
        rmdir (o->image_path);
      return -1;
    }
  ar_container_audit (root, id, "checkpoint", NULL);
  if (o->leave_running || o->pre_dump)
    return 0;
  /* criu ended the processes; the container goes, as under runc. */
  ar_closep (&state_fd);
  return ar_container_delete (root, id, true, err);
}

/* ---------------------------------------------------------------------
 * restore
 * --------------------------------------------------------------------- */

static int
restore_args (argv_builder *b, const ar_criu_options *o, const oci_spec *spec,
              const char *bundle, const char *rootfs, const char *log,
              bool joins_net, ar_criu_restore *r, ar_error_t **err)
{
  if (spec->process && spec->process->terminal && o->console_socket == NULL)
    return ar_error_set (err, 0,
                         "config.json: .process.terminal: restore needs "
                         "--console-socket for the new terminal's master");
  arg (b, "criu");
  arg (b, "restore");
  common_args (b, o, log);
  arg (b, "--restore-detached");
  arg (b, "--restore-sibling");
  arg (b, "--pidfile=%s/" RESTORE_PID_FILE, work_path (o));
  arg (b, "--root=%s", rootfs);
  if (o->lsm_profile)
    arg (b, "--lsm-profile=%s", o->lsm_profile);
  if (o->lsm_mount_context)
    arg (b, "--lsm-mount-context=%s", o->lsm_mount_context);
  external_mounts (b, spec, bundle);
  if (joins_net)
    arg (b, "--inherit-fd=fd[%d]:" NETNS_KEY, NETNS_FD);
  return restore_stdio (b, o, r, err);
}

/* The child: a mount namespace where the rootfs is a mount point (criu's
 * --root needs one), nothing of it seen by the host; then it waits for
 * its cgroup and for the last arguments, and becomes criu. */
static void __attribute__ ((noreturn))
criu_child (argv_builder *b, const char *rootfs, int go_fd, int netns_fd,
            int tty_fd)
{
  if (unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0
      || mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    {
      perror ("agentrun: restore: a mount namespace for criu");
      _exit (125);
    }
  char more[4096];
  ssize_t n = ar_read_all (go_fd, more, sizeof more - 1);
  if (n < 0 || (n > 0 && more[n - 1] != '\0'))
    _exit (125);
  close (go_fd);
  for (char *s = more; s < more + n; s += strlen (s) + 1)
    oci_strv_push (&b->v, s);
  /* Above the fixed numbers first: either may hold the other's. */
  int ns = netns_fd >= 0 ? fcntl (netns_fd, F_DUPFD, 10) : -1;
  int tty = tty_fd >= 0 ? fcntl (tty_fd, F_DUPFD, 10) : -1;
  if ((ns >= 0 && dup2 (ns, NETNS_FD) < 0)
      || (tty >= 0 && dup2 (tty, TTY_FD) < 0))
    _exit (125);
  int keep[] = { ns >= 0 ? NETNS_FD : -1, tty >= 0 ? TTY_FD : -1 };
  ar_close_fds_from (STDIO_FDS, keep, 2);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execvp ("criu", b->v.items);
  fprintf (stderr, "agentrun: restore: criu: %s\n", strerror (errno));
  _exit (errno == ENOENT ? 127 : 126);
}

int
ar_criu_restore_begin (const ar_criu_options *o, const oci_spec *spec,
                       const char *bundle, const char *rootfs,
                       ar_criu_restore *r, ar_error_t **err)
{
  *r = (ar_criu_restore){ .go_fd = -1, .pty_master = -1, .pty_slave = -1 };
  const oci_namespace *net = joined_namespace (spec, OCI_NS_NETWORK);
  cleanup_close int netns_fd = -1;
  if (net && (netns_fd = open (net->path, O_RDONLY | O_CLOEXEC)) < 0)
    return ar_error_set (err, errno, "config.json: .linux.namespaces: %s",
                         net->path);
  if (ar_mkdir_p (work_path (o), 0700, err) < 0
      || make_bind_mount_points (spec, bundle, rootfs, err) < 0)
    return -1;
  r->work_path = xstrdup (work_path (o));
  cleanup_free char *log = xasprintf ("%s/restore.log", r->work_path);
  cleanup_free char *pid_file
      = xasprintf ("%s/" RESTORE_PID_FILE, r->work_path);
  unlink (pid_file);
  cleanup_argv argv_builder b = { 0 };
  if (restore_args (&b, o, spec, bundle, rootfs, log, net != NULL, r, err) < 0)
    return -1;
  r->console_socket = o->console_socket;
  int go[2];
  if (pipe2 (go, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "pipe");
  r->pid = fork ();
  if (r->pid < 0)
    {
      close (go[0]);
      close (go[1]);
      return ar_error_set (err, errno, "fork");
    }
  if (r->pid == 0)
    {
      close (go[1]);
      criu_child (&b, rootfs, go[0], netns_fd, r->pty_slave);
    }
  close (go[0]);
  ar_closep (&r->pty_slave); /* criu's now */
  r->go_fd = go[1];
  return 0;
}

/* criu's --cgroup-root: the container's cgroup, as the root of those in
 * the image, per hierarchy (v2 alone; v1 by controller name). */
static void
cgroup_root_args (argv_builder *b, const ar_cgroup *cg)
{
  struct statfs fs;
  bool unified = statfs (AR_CGROUP_ROOT, &fs) == 0
                 && fs.f_type == (typeof (fs.f_type)) CGROUP2_SUPER_MAGIC;
  size_t root_len = strlen (AR_CGROUP_ROOT);
  for (size_t i = 0; cg && i < cg->n_paths; i++)
    {
      const char *rel = cg->paths[i] + root_len; /* "/memory/x" or "/x" */
      if (unified)
        {
          arg (b, "--cgroup-root=%s", rel);
          continue;
        }
      const char *slash = strchr (rel + 1, '/');
      if (slash == NULL)
        continue;
      cleanup_free char *controller = xstrndup (rel + 1, slash - rel - 1);
      if (strcmp (controller, "unified") == 0)
        continue;
      arg (b, "--cgroup-root=%s%s:%s",
           strcmp (controller, "systemd") == 0 ? "name=" : "", controller,
           slash);
    }
}

int
ar_criu_restore_finish (ar_criu_restore *r, const ar_cgroup *cg, pid_t *init,
                        ar_error_t **err)
{
  cleanup_argv argv_builder more = { 0 };
  cgroup_root_args (&more, cg);
  size_t len = 0;
  char buf[4096];
  for (size_t i = 0; i < more.v.len; i++)
    {
      size_t n = strlen (more.v.items[i]) + 1;
      if (len + n > sizeof buf - 1)
        return ar_error_set (err, 0, "restore: cgroup paths too long");
      memcpy (buf + len, more.v.items[i], n);
      len += n;
    }
  int w = ar_write_all (r->go_fd, buf, len);
  ar_closep (&r->go_fd);
  if (w < 0)
    return ar_error_set (err, errno, "restore: start criu");
  pid_t criu = r->pid;
  int status = ar_spawn_reap (criu, "criu", err);
  r->pid = 0;
  cleanup_free char *log = xasprintf ("%s/restore.log", r->work_path);
  if (status < 0)
    return -1;
  if (status == 127)
    return ar_error_set (err, 0, CRIU_MISSING);
  if (status != 0)
    return criu_failed ("restore", status, NULL, log, err);
  cleanup_free char *pid_file
      = xasprintf ("%s/" RESTORE_PID_FILE, r->work_path);
  cleanup_free char *text = NULL;
  if (ar_read_file_at (AT_FDCWD, pid_file, 64, &text, NULL, err) < 0)
    return -1;
  unlink (pid_file);
  *init = (pid_t) strtol (text, NULL, 10);
  if (*init <= 0)
    return ar_error_set (err, 0, "restore: criu wrote no pid to %s", pid_file);
  if (r->pty_master >= 0
      && ar_terminal_send_to_socket (r->console_socket, r->pty_master, err) < 0)
    return -1;
  return 0;
}

void
ar_criu_restore_clear (ar_criu_restore *r)
{
  ar_closep (&r->go_fd);
  ar_closep (&r->pty_master);
  ar_closep (&r->pty_slave);
  if (r->pid > 0)
    {
      kill (r->pid, SIGKILL);
      waitpid (r->pid, NULL, 0);
      r->pid = 0;
    }
  free (r->work_path);
  r->work_path = NULL;
}
