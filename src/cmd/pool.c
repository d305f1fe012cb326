/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun pool create|fill|list|rm, and the claim of `sandbox --pool`
 * (pool.h has the layout). */
#include "config.h"
#include "pool.h"
#include "../core/container.h"
#include "../core/rootless.h"
#include "../core/state.h"
#include "../core/launcher_wire.h"
#include "../util/cleanup.h"
#include "../util/path.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/pidfd.h"
#include "../util/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POOL_SIZE_DEFAULT 2
#define POOL_SIZE_MAX 256
/* A list file (options, globals) is a command line: bounded like one. */
#define POOL_LIST_MAX (1u << 20)
/* How long a take waits for the filler when no sandbox is ready. */
#define POOL_EMPTY_WAIT_MS 60000
/* A claim this old whose sandbox never started was a taker's that died. */
#define POOL_CLAIM_STALE_SECONDS 30
/* fill.log is cut past this; read back whole (twice this at most). */
#define POOL_LOG_MAX (32 * 1024)

static const ar_option options[]
    = { { "size", 0, true,
          "create: how many sandboxes to keep ready (default 2, at most 256)" },
        { 0 } };
AR_OPTIONS_FIT (options);
enum
{
  OPT_SIZE
};

static const ar_command_doc doc = {
  "pool",
  "create NAME [--size N] [SANDBOX OPTIONS] | fill NAME | list | rm NAME",
  "Keep agent sandboxes made ahead, for `agentrun sandbox --pool NAME`.\n"
  "\n"
  "create  make the pool and fill it: N sandboxes, each made with the\n"
  "        SANDBOX OPTIONS (those of `agentrun sandbox`, without a command\n"
  "        and without --diff, --json-status, --tty or --no-init, which\n"
  "        are each call's)\n"
  "fill    make sandboxes until N are ready (each take starts one in the\n"
  "        background; its errors are in <root>/.pool/NAME/fill.log)\n"
  "list    NAME, SIZE and READY of each pool\n"
  "rm      delete the ready sandboxes and the pool\n"
  "\n"
  "Each sandbox is made in full (namespaces, cgroup, overlay, seccomp,\n"
  "egress) and waits; `sandbox --pool` gives it the command, -e, --env-file\n"
  "and --workdir, and the caller's stdin, stdout and stderr. Without\n"
  "root, as `agentrun sandbox` without root: the pool is the user's, and\n"
  "each sandbox's namespaces wait with it.",
  false
};

void
ar_pool_member_clear (ar_pool_member *m)
{
  free (m->id);
  ar_closep (&m->taken_fd);
  *m = (ar_pool_member){ .taken_fd = -1 };
}

/* <root>/.pool/NAME, open; a missing one is named as such. */
static int
open_pool (const char *root, const char *name, ar_error_t **err)
{
  if (ar_check_plain_name ("pool", name, err) < 0)
    return -1;
  cleanup_free char *path = xasprintf ("%s/" AR_POOLS_DIR "/%s", root, name);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return ar_error_set (err, 0,
                         "pool `%s` does not exist (agentrun pool create %s)",
                         name, name);
  if (fd < 0)
    return ar_error_set (err, errno, "pool: open `%s`", path);
  return fd;
}

static int
open_subdir (int pool_fd, const char *sub, ar_error_t **err)
{
  int fd = openat (pool_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "pool: open `%s`", sub);
  return fd;
}

static int
write_list (int pool_fd, const char *file, char *const *items, size_t n,
            ar_error_t **err)
{
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += strlen (items[i]) + 1;
  cleanup_free char *buf = xmalloc (len + 1);
  char *at = buf;
  for (size_t i = 0; i < n; i++)
    at = stpcpy (at, items[i]) + 1;
  return ar_write_file_atomic_at (pool_fd, file, buf, len, 0600, err);
}

/* A NUL-separated list file as a NULL-terminated vector. */
static int
read_list (int pool_fd, const char *file, char ***items, size_t *n,
           ar_error_t **err)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (ar_read_file_at (pool_fd, file, POOL_LIST_MAX, &buf, &len, err) < 0)
    return ar_error_prefix (err, "pool");
  *n = 0;
  for (size_t at = 0; at < len; at += strlen (buf + at) + 1)
    (*n)++;
  *items = xcalloc (*n + 1, sizeof **items);
  size_t i = 0;
  for (size_t at = 0; at < len; at += strlen (buf + at) + 1)
    (*items)[i++] = xstrdup (buf + at);
  return 0;
}

static int
read_size (int pool_fd, unsigned *size, ar_error_t **err)
{
  cleanup_free char *text = NULL;
  if (ar_read_file_at (pool_fd, "size", 32, &text, NULL, err) < 0)
    return ar_error_prefix (err, "pool");
  *size = (unsigned) strtoul (text, NULL, 10);
  return 0;
}

/* A fresh listing of `dir_fd` (a dup shares the offset: rewound). */
static DIR *
open_listing (int dir_fd)
{
  int fd = dup (dir_fd);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  if (dir == NULL && fd >= 0)
    close (fd);
  if (dir)
    rewinddir (dir);
  return dir;
}

static unsigned
count_ready (int ready_fd)
{
  DIR *dir = open_listing (ready_fd);
  if (dir == NULL)
    return 0;
  unsigned n = 0;
  for (struct dirent *e; (e = readdir (dir));)
    if (e->d_name[0] != '.')
      n++;
  closedir (dir);
  return n;
}

static char *
new_member_id (const char *name)
{
  unsigned char r[6] = { 0 };
  if (getrandom (r, sizeof r, 0) != (ssize_t) sizeof r)
    r[0] = (unsigned char) getpid ();
  return xasprintf ("%s-%02x%02x%02x%02x%02x%02x", name, r[0], r[1], r[2], r[3],
                    r[4], r[5]);
}

/* fn(arg) in a child process, for work in namespaces this one must not
 * enter (a user namespace, once joined, cannot be left); its error comes
 * back as text. */
static int
in_child (int (*fn) (void *arg, ar_error_t **err), void *arg, ar_error_t **err)
{
  int pipe_fds[2];
  if (pipe2 (pipe_fds, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "pool: pipe");
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (pipe_fds[0]);
      cleanup_error ar_error_t *e = NULL;
      if (fn (arg, &e) == 0)
        _exit (0);
      const char *text = ar_error_text (e);
      ar_write_all (pipe_fds[1], text, strlen (text));
      _exit (1);
    }
  close (pipe_fds[1]);
  cleanup_close int from_child = pipe_fds[0];
  if (pid < 0)
    return ar_error_set (err, errno, "pool: fork");
  char text[4096];
  ssize_t n = ar_read_all (from_child, text, sizeof text - 1);
  text[n > 0 ? n : 0] = '\0';
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  return ar_error_set (err, 0, "%s", text[0] ? text : "pool: a child died");
}

typedef struct
{
  const ar_globals *g;
  const char *id;
} member_ref;

static int
delete_in_held_namespaces (void *arg, ar_error_t **err)
{
  const member_ref *ref = arg;
  cleanup_close int state_fd
      = ar_container_open_dir (ref->g->root, ref->id, err);
  if (state_fd < 0)
    return -1;
  /* A holder gone took the namespaces and their mounts with it: the
   * rest is deleted from here. */
  cleanup_error ar_error_t *ignored = NULL;
  ar_rootless_join_held (state_fd, &ignored);
  return ar_container_delete (ref->g->root, ref->id, true, err);
}

/* A pool's sandbox: one made without root from within the namespaces
 * its holder keeps (core/rootless.h). */
static int
delete_member (const ar_globals *g, const char *id, ar_error_t **err)
{
  cleanup_close int state_fd = ar_container_open_dir (g->root, id, err);
  if (state_fd < 0)
    return ar_error_is (*err, AR_ERR_NO_CONTAINER) ? (ar_error_freep (err), 0)
                                                   : -1;
  if (!ar_rootless_held (state_fd))
    return ar_container_delete (g->root, id, true, err);
  member_ref ref = { g, id };
  return in_child (delete_in_held_namespaces, &ref, err);
}

/* A claimed sandbox whose taker never started it (killed between the
 * claim and the start) would wait forever: one still marked waiting whose
 * claim is older than `min_age` seconds is deleted, its socket too. A
 * take connects within milliseconds of its claim (the rename set the
 * socket's ctime). */
static void
sweep_taken (const ar_globals *g, int taken_fd, time_t min_age)
{
  DIR *dir = open_listing (taken_fd);
  time_t now = time (NULL);
  for (struct dirent *e; dir && (e = readdir (dir));)
    {
      struct stat sock;
      cleanup_free char *marker
          = xasprintf ("%s/%s/" AR_AWAIT_TAKE_FILE, g->root, e->d_name);
      if (e->d_name[0] == '.'
          || fstatat (taken_fd, e->d_name, &sock, AT_SYMLINK_NOFOLLOW) < 0
          || now - sock.st_ctime < min_age || access (marker, F_OK) < 0)
        continue;
      cleanup_error ar_error_t *ignored = NULL;
      delete_member (g, e->d_name, &ignored);
      unlinkat (taken_fd, e->d_name, 0);
    }
  if (dir)
    closedir (dir);
}

typedef struct
{
  const ar_globals *g;
  const char *name;
  char **opts;
  size_t n_opts;
  unsigned size;
  int ready_fd;
} fill_job;

/* Bounded: sandboxes that go as fast as they come are the next take's
 * to replace. */
static int
make_members (const fill_job *job, bool in_own_namespaces, ar_error_t **err)
{
  for (unsigned made = 0;
       made < job->size && count_ready (job->ready_fd) < job->size; made++)
    {
      cleanup_free char *id = new_member_id (job->name);
      if (ar_sandbox_make_ready (job->g, job->opts, job->n_opts, id,
                                 job->ready_fd, in_own_namespaces, err)
          < 0)
        return -1;
    }
  return 0;
}

static int
make_in_own_namespaces (void *arg, ar_error_t **err)
{
  if (ar_rootless_unshare_self (err) < 0)
    return -1;
  return make_members (arg, true, err);
}

/* Make sandboxes until `size` are ready, one filler at a time (the lock);
 * a pool removed meanwhile (no `size` any more) gets none. */
static int
fill (const ar_globals *g, const char *name, int pool_fd, ar_error_t **err)
{
  cleanup_close int lock
      = openat (pool_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock (lock, LOCK_EX) < 0)
    return ar_error_set (err, errno, "pool: lock");
  if (faccessat (pool_fd, "size", F_OK, 0) < 0)
    return 0;
  unsigned size = 0;
  cleanup_strv char **opts = NULL;
  size_t n_opts = 0;
  cleanup_close int ready_fd = -1;
  cleanup_close int taken_fd = -1;
  if (read_size (pool_fd, &size, err) < 0
      || read_list (pool_fd, "options", &opts, &n_opts, err) < 0
      || (ready_fd = open_subdir (pool_fd, AR_POOL_READY_DIR, err)) < 0
      || (taken_fd = open_subdir (pool_fd, AR_POOL_TAKEN_DIR, err)) < 0)
    return -1;
  sweep_taken (g, taken_fd, POOL_CLAIM_STALE_SECONDS);
  const fill_job job = { g, name, opts, n_opts, size, ready_fd };
  /* Without root, as a fresh sandbox, in a user namespace of its own:
   * a child's, so that this process stays in the caller's to delete. */
  if (g->rootless && geteuid () != 0)
    return in_child (make_in_own_namespaces, (void *) &job, err);
  return make_members (&job, false, err);
}

/* The ready sandboxes are deleted, then the pool's files and dirs. Under
 * the lock, and `size` first: a filler waiting for the lock then makes
 * nothing. A sandbox taken and started is its taker's to delete. */
static int
remove_pool (const ar_globals *g, const char *name, int pool_fd,
             ar_error_t **err)
{
  cleanup_close int lock
      = openat (pool_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock (lock, LOCK_EX) < 0)
    return ar_error_set (err, errno, "pool: lock");
  unlinkat (pool_fd, "size", 0);
  int r = 0;
  cleanup_close int ready_fd
      = openat (pool_fd, AR_POOL_READY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int taken_fd
      = openat (pool_fd, AR_POOL_TAKEN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *ready = ready_fd >= 0 ? open_listing (ready_fd) : NULL;
  for (struct dirent *e; ready && taken_fd >= 0 && (e = readdir (ready));)
    {
      if (e->d_name[0] == '.'
          || renameat (ready_fd, e->d_name, taken_fd, e->d_name) < 0)
        continue;
      cleanup_error ar_error_t *e_delete = NULL;
      if (delete_member (g, e->d_name, &e_delete) < 0 && r == 0)
        r = ar_error_pass (err, steal_pointer (&e_delete));
      unlinkat (taken_fd, e->d_name, 0);
    }
  /* Claimed and never started: gone with the pool (a take under way
   * fails, by name). */
  if (taken_fd >= 0)
    sweep_taken (g, taken_fd, 0);
  if (ready_fd >= 0)
    ar_unlink_files_at (ready_fd);
  if (taken_fd >= 0)
    ar_unlink_files_at (taken_fd);
  unlinkat (pool_fd, AR_POOL_READY_DIR, AT_REMOVEDIR);
  unlinkat (pool_fd, AR_POOL_TAKEN_DIR, AT_REMOVEDIR);
  ar_unlink_files_at (pool_fd);
  cleanup_free char *path = xasprintf ("%s/" AR_POOLS_DIR "/%s", g->root, name);
  if (rmdir (path) < 0 && r == 0)
    r = ar_error_set (err, errno, "pool: remove `%s`", path);
  /* The last pool takes the pools' dir with it. */
  cleanup_free char *pools = xasprintf ("%s/" AR_POOLS_DIR, g->root);
  rmdir (pools);
  return r;
}

/* The global flags the pool's sandboxes are made with, for a filler
 * started in the background (`agentrun GLOBALS pool fill NAME`). */
static char **
globals_argv (const ar_globals *g, size_t *n)
{
  char **v = xcalloc (8, sizeof *v);
  *n = 0;
  v[(*n)++] = xasprintf ("--root=%s", g->root);
  if (g->profile)
    v[(*n)++] = xasprintf ("--profile=%s", g->profile);
  if (g->systemd_cgroup)
    v[(*n)++] = xstrdup ("--systemd-cgroup");
  if (g->ignore_unenforced_limits)
    v[(*n)++] = xstrdup ("--rootless-limits=ignore");
  return v;
}

static int
parse_size (const char *text, unsigned *size, ar_error_t **err)
{
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul (text, &end, 10);
  if (errno || end == text || *end || v < 1 || v > POOL_SIZE_MAX
      || text[0] == '-' || text[0] == '+')
    return ar_error_set (err, 0, "pool create: --size `%s`: expected 1 to %d",
                         text, POOL_SIZE_MAX);
  *size = (unsigned) v;
  return 0;
}

/* `create NAME [--size N] [SANDBOX OPTIONS]`: --size comes out, the rest
 * is the sandboxes' options. */
static int
split_create_args (int argc, char **argv, const char **name, unsigned *size,
                   char ***opts, size_t *n_opts, ar_error_t **err)
{
  *size = POOL_SIZE_DEFAULT;
  *opts = xcalloc ((size_t) argc + 1, sizeof **opts);
  *n_opts = 0;
  *name = NULL;
  for (int i = 2; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--size") == 0 || strcmp (a, "-size") == 0)
        {
          if (i + 1 >= argc)
            return ar_error_set (err, 0, "pool create: --size: expected N");
          if (parse_size (argv[++i], size, err) < 0)
            return -1;
        }
      else if (strncmp (a, "--size=", 7) == 0)
        {
          if (parse_size (a + 7, size, err) < 0)
            return -1;
        }
      else if (*name == NULL && a[0] != '-')
        *name = a;
      else
        (*opts)[(*n_opts)++] = xstrdup (a);
    }
  if (*name == NULL)
    return ar_error_set (err, 0, "pool create: expected a NAME");
  return 0;
}

static int
make_pool_dirs (const ar_globals *g, const char *name, int *pool_fd,
                ar_error_t **err)
{
  if (ar_check_plain_name ("pool", name, err) < 0
      || ar_container_make_root (g->root, err) < 0)
    return -1;
  cleanup_free char *pools = xasprintf ("%s/" AR_POOLS_DIR, g->root);
  if (mkdir (pools, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "pool: mkdir `%s`", pools);
  cleanup_free char *path = xasprintf ("%s/%s", pools, name);
  if (mkdir (path, 0700) < 0)
    return errno == EEXIST
               ? ar_error_set (err, 0,
                               "pool `%s` exists (agentrun pool rm %s first)",
                               name, name)
               : ar_error_set (err, errno, "pool: mkdir `%s`", path);
  *pool_fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*pool_fd < 0 || mkdirat (*pool_fd, AR_POOL_READY_DIR, 0700) < 0
      || mkdirat (*pool_fd, AR_POOL_TAKEN_DIR, 0700) < 0)
    return ar_error_set (err, errno, "pool: make `%s`", path);
  return 0;
}

static int
pool_create (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  const char *name = NULL;
  unsigned size = 0;
  cleanup_strv char **opts = NULL;
  size_t n_opts = 0;
  if (split_create_args (argc, argv, &name, &size, &opts, &n_opts, err) < 0)
    return -1;
  cleanup_close int pool_fd = -1;
  if (make_pool_dirs (g, name, &pool_fd, err) < 0)
    return -1;
  size_t n_globals = 0;
  cleanup_strv char **globals = globals_argv (g, &n_globals);
  cleanup_free char *size_text = xasprintf ("%u\n", size);
  int r = write_list (pool_fd, "options", opts, n_opts, err);
  if (r == 0)
    r = write_list (pool_fd, "globals", globals, n_globals, err);
  if (r == 0)
    r = ar_write_file_atomic_at (pool_fd, "size", size_text, strlen (size_text),
                                 0600, err);
  if (r == 0)
    r = fill (g, name, pool_fd, err);
  if (r < 0)
    {
      cleanup_error ar_error_t *ignored = NULL;
      remove_pool (g, name, pool_fd, &ignored);
    }
  return r;
}

static int
pool_list (const ar_globals *g)
{
  cleanup_free char *pools = xasprintf ("%s/" AR_POOLS_DIR, g->root);
  cleanup_dir DIR *dir = opendir (pools);
  printf ("NAME\tSIZE\tREADY\n");
  for (struct dirent *e; dir && (e = readdir (dir));)
    {
      if (e->d_name[0] == '.')
        continue;
      cleanup_close int pool_fd
          = openat (dirfd (dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      cleanup_close int ready_fd
          = pool_fd < 0 ? -1
                        : openat (pool_fd, AR_POOL_READY_DIR,
                                  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      unsigned size = 0;
      cleanup_error ar_error_t *ignored = NULL;
      if (ready_fd < 0 || read_size (pool_fd, &size, &ignored) < 0)
        continue;
      printf ("%s\t%u\t%u\n", e->d_name, size, count_ready (ready_fd));
    }
  return 0;
}

/* -------------------------------------------------------------------- */
/* sandbox --pool                                                        */

/* A filler in the background, in its own session, its errors in
 * fill.log: `agentrun GLOBALS pool fill NAME` as the pool was made. Its
 * argv[0] is this process's: the egress hook is found beside it. */
static pid_t
start_filler (const ar_globals *g, int pool_fd, const char *name)
{
  cleanup_strv char **globals = NULL;
  size_t n = 0;
  cleanup_error ar_error_t *ignored = NULL;
  if (read_list (pool_fd, "globals", &globals, &n, &ignored) < 0)
    return 0;
  cleanup_free char **argv = xcalloc (n + 5, sizeof *argv);
  argv[0] = g->argv[0];
  for (size_t i = 0; i < n; i++)
    argv[1 + i] = globals[i];
  argv[n + 1] = (char *) "pool";
  argv[n + 2] = (char *) "fill";
  argv[n + 3] = (char *) name;
  /* Appended to, so one filler does not wipe another's last words;
   * cut when it grows past POOL_LOG_MAX (filler_error reads it whole). */
  cleanup_close int log = openat (
      pool_fd, "fill.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  struct stat st;
  if (log >= 0 && fstat (log, &st) == 0 && st.st_size > POOL_LOG_MAX
      && ftruncate (log, 0) < 0)
    fprintf (stderr, "agentrun: warning: pool `%s`: cut fill.log: %s\n", name,
             strerror (errno));
  cleanup_close int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  const ar_spawn_request req = { .argv = argv,
                                 .file = "/proc/self/exe",
                                 .in_fd = null_fd,
                                 .out_fd = null_fd,
                                 .err_fd = log,
                                 .new_session = true };
  pid_t pid = 0;
  if (log < 0 || null_fd < 0 || ar_spawn (&req, &pid, &ignored) < 0)
    return 0;
  return pid;
}

/* Rename the first ready socket into taken/: it is ours. */
static bool
claim_ready (int ready_fd, ar_pool_member *m)
{
  DIR *dir = open_listing (ready_fd);
  if (dir == NULL)
    return false;
  bool claimed = false;
  for (struct dirent *e; !claimed && (e = readdir (dir));)
    if (e->d_name[0] != '.'
        && renameat (ready_fd, e->d_name, m->taken_fd, e->d_name) == 0)
      {
        m->id = xstrdup (e->d_name);
        claimed = true;
      }
  closedir (dir);
  return claimed;
}

/* The filler's last words, for the error of a take that waited on it. */
static char *
filler_error (int pool_fd)
{
  cleanup_free char *log = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_read_file_at (pool_fd, "fill.log", 2 * POOL_LOG_MAX, &log, NULL,
                       &ignored)
      < 0)
    return xstrdup ("no fill.log");
  char *end = log + strlen (log);
  while (end > log && end[-1] == '\n')
    *--end = '\0';
  char *line = strrchr (log, '\n');
  return xstrdup (line ? line + 1 : *log ? log : "it exited without a word");
}

/* None ready: wait for the filler's next one (inotify on ready/), or its
 * end, within POOL_EMPTY_WAIT_MS. */
static int
wait_for_ready (int pool_fd, int ready_fd, const char *name, ar_pool_member *m,
                ar_error_t **err)
{
  cleanup_close int in = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", ready_fd);
  if (in < 0 || inotify_add_watch (in, path, IN_CREATE | IN_MOVED_TO) < 0)
    return ar_error_set (err, errno, "pool `%s`: inotify", name);
  cleanup_close int filler = m->filler > 0 ? ar_pidfd_open (m->filler) : -1;
  int64_t deadline = ar_now_ms () + POOL_EMPTY_WAIT_MS;
  for (;;)
    {
      if (claim_ready (ready_fd, m))
        return 0;
      int64_t left = deadline - ar_now_ms ();
      if (left <= 0)
        return ar_error_set (err, ETIMEDOUT,
                             "pool `%s`: no sandbox became ready", name);
      struct pollfd p[2] = { { .fd = in, .events = POLLIN },
                             { .fd = filler, .events = POLLIN } };
      int r = poll (p, filler >= 0 ? 2 : 1, (int) left);
      char buf[4096];
      while (read (in, buf, sizeof buf) > 0)
        ;
      if (r > 0 && filler >= 0 && (p[1].revents & POLLIN))
        {
          if (claim_ready (ready_fd, m))
            return 0;
          cleanup_free char *why = filler_error (pool_fd);
          return ar_error_set (
              err, 0,
              "pool `%s`: no sandbox is ready, and making one failed: %s", name,
              why);
        }
    }
}

int
ar_pool_claim (const ar_globals *g, const char *name, ar_pool_member *m,
               ar_error_t **err)
{
  *m = (ar_pool_member){ .taken_fd = -1 };
  cleanup_close int pool_fd = open_pool (g->root, name, err);
  if (pool_fd < 0)
    return -1;
  cleanup_close int ready_fd = open_subdir (pool_fd, AR_POOL_READY_DIR, err);
  if (ready_fd < 0
      || (m->taken_fd = open_subdir (pool_fd, AR_POOL_TAKEN_DIR, err)) < 0)
    return -1;
  if (claim_ready (ready_fd, m))
    return 0;
  m->filler = start_filler (g, pool_fd, name);
  return wait_for_ready (pool_fd, ready_fd, name, m, err);
}

int
ar_pool_adopt_claim (const ar_globals *g, const char *name, const char *id,
                     ar_pool_member *m, ar_error_t **err)
{
  *m = (ar_pool_member){ .taken_fd = -1 };
  cleanup_close int pool_fd = open_pool (g->root, name, err);
  if (pool_fd < 0
      || (m->taken_fd = open_subdir (pool_fd, AR_POOL_TAKEN_DIR, err)) < 0)
    return -1;
  struct stat st;
  if (fstatat (m->taken_fd, id, &st, AT_SYMLINK_NOFOLLOW) < 0
      || !S_ISSOCK (st.st_mode))
    return ar_error_set (err, 0, "pool `%s`: `%s` was claimed by no one", name,
                         id);
  m->id = xstrdup (id);
  return 0;
}

void
ar_pool_refill (const ar_globals *g, const char *name, ar_pool_member *m)
{
  if (m->refilled)
    return;
  m->refilled = true;
  cleanup_error ar_error_t *ignored = NULL;
  cleanup_close int pool_fd = open_pool (g->root, name, &ignored);
  if (pool_fd >= 0)
    start_filler (g, pool_fd, name);
}

void
ar_pool_release_socket (ar_pool_member *m)
{
  if (m->id && m->taken_fd >= 0)
    unlinkat (m->taken_fd, m->id, 0);
}

int
ar_cmd_pool (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  const char *verb = argc > 1 ? argv[1] : "";
  if (strcmp (verb, "create") == 0)
    return pool_create (g, argc, argv, err);
  if (strcmp (verb, "list") == 0 && argc == 2)
    return pool_list (g);
  if ((strcmp (verb, "fill") == 0 || strcmp (verb, "rm") == 0) && argc == 3)
    {
      cleanup_close int pool_fd = open_pool (g->root, argv[2], err);
      if (pool_fd < 0)
        return -1;
      return verb[0] == 'f' ? fill (g, argv[2], pool_fd, err)
                            : remove_pool (g, argv[2], pool_fd, err);
    }
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  return ar_error_set (
      err, 0,
      "pool: expected create NAME, fill NAME, list or rm NAME (agentrun pool --help)");
}
