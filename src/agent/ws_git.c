/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "ws_git.h"
#include "hostfs.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/spawn.h"
#include "../util/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_COPY_BYTES (512u << 20) /* an index of a very large repository */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define SHADOW_CONFIG "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"

bool
ar_ws_git_is_repo (int view_fd)
{
  struct stat st;
  return fstatat (view_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0
         && S_ISDIR (st.st_mode);
}

bool
ar_ws_git_available (void)
{
  const char *path = getenv ("PATH");
  cleanup_free char *dirs = xstrdup (path && *path ? path : DEFAULT_PATH);
  char *save = NULL;
  for (char *d = strtok_r (dirs, ":", &save); d;
       d = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *exe = xasprintf ("%s/git", d);
      if (access (exe, X_OK) == 0)
        return true;
    }
  return false;
}

/* ---- the shadow git dir ----------------------------------------------- */

/* `rel` below the view's .git, read without following a symlink on the
 * way, into `data` (caller frees). 1 when it is not there (or not a
 * regular file). */
static int
read_from_view (int view_fd, const char *rel, char **data, size_t *len,
                ar_error_t **err)
{
  cleanup_free char *path = xasprintf (".git/%s", rel);
  cleanup_close int fd
      = ar_openat2 (view_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
                    RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return 1;
  if ((size_t) st.st_size > MAX_COPY_BYTES)
    return ar_error_set (err, EFBIG, "git: `%s`", path);
  *data = xmalloc ((size_t) st.st_size + 1);
  ssize_t n = ar_read_all (fd, *data, (size_t) st.st_size);
  if (n < 0)
    return ar_error_set (err, errno, "git: read `%s`", path);
  (*data)[n] = '\0';
  *len = (size_t) n;
  return 0;
}

static int
copy_from_view (const ar_git_shadow *g, int view_fd, const char *rel,
                ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  int r = read_from_view (view_fd, rel, &data, &len, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  cleanup_free char *dest = xasprintf ("%s/%s", g->dir, rel);
  cleanup_free char *parent = xstrdup (dest);
  *strrchr (parent, '/') = '\0';
  if (ar_mkdir_p (parent, 0700, err) < 0)
    return -1;
  return ar_write_file_atomic_at (AT_FDCWD, dest, data, len, 0600, err);
}

/* A branch HEAD may name, as a path below the git dir: nothing that
 * leads out of it. */
static bool
ref_name_ok (const char *ref)
{
  return strncmp (ref, "refs/", 5) == 0 && strstr (ref, "..") == NULL
         && strstr (ref, "//") == NULL && ref[strlen (ref) - 1] != '/'
         && strcspn (ref, "\n\r\\") == strlen (ref);
}

/* HEAD, and the loose ref it names when there is one. */
static int
copy_head (const ar_git_shadow *g, int view_fd, ar_error_t **err)
{
  cleanup_free char *head = NULL;
  size_t len = 0;
  int r = read_from_view (view_fd, "HEAD", &head, &len, err);
  if (r != 0)
    return r < 0 ? -1 : ar_error_set (err, 0, "git: no .git/HEAD");
  head[strcspn (head, "\n")] = '\0';
  if (strncmp (head, "ref: ", 5) != 0)
    return copy_from_view (g, view_fd, "HEAD", err); /* a detached commit */
  if (!ref_name_ok (head + 5))
    return ar_error_set (err, 0, "git: HEAD names `%s`", head + 5);
  if (copy_from_view (g, view_fd, "HEAD", err) < 0)
    return -1;
  return copy_from_view (g, view_fd, head + 5, err);
}

int
ar_git_shadow_make (const char *dir, const char *view, int view_fd,
                    ar_git_shadow *out, ar_error_t **err)
{
  *out = (ar_git_shadow){ 0 };
  if (mkdir (dir, 0700) < 0)
    return ar_error_set (err, errno, "git: mkdir `%s`", dir);
  out->dir = xstrdup (dir);
  out->work_tree = xstrdup (view);
  cleanup_free char *config = xasprintf ("%s/config", dir);
  cleanup_free char *alternates = xasprintf ("%s/objects/info/alternates", dir);
  cleanup_free char *objects = xasprintf ("%s/objects/info", dir);
  cleanup_free char *refs = xasprintf ("%s/refs/heads", dir);
  cleanup_free char *alternate = xasprintf ("%s/.git/objects\n", view);
  if (ar_write_file_atomic_at (AT_FDCWD, config, SHADOW_CONFIG,
                               strlen (SHADOW_CONFIG), 0600, err)
          < 0
      || ar_mkdir_p (objects, 0700, err) < 0 || ar_mkdir_p (refs, 0700, err) < 0
      || ar_write_file_atomic_at (AT_FDCWD, alternates, alternate,
                                  strlen (alternate), 0600, err)
             < 0
      || copy_head (out, view_fd, err) < 0
      || copy_from_view (out, view_fd, "packed-refs", err) < 0
      || copy_from_view (out, view_fd, "index", err) < 0
      || copy_from_view (out, view_fd, "info/exclude", err) < 0)
    return -1;
  return 0;
}

void
ar_git_shadow_clear (ar_git_shadow *g)
{
  if (g->dir)
    ar_tree_remove_at (AT_FDCWD, g->dir);
  free (g->dir);
  free (g->work_tree);
  *g = (ar_git_shadow){ 0 };
}

/* ---- running git ------------------------------------------------------ */

static char **
git_environment (const ar_git_shadow *g)
{
  const char *path = getenv ("PATH");
  char **env = xcalloc (10, sizeof *env);
  size_t n = 0;
  env[n++] = xasprintf ("PATH=%s", path && *path ? path : DEFAULT_PATH);
  env[n++] = xasprintf ("GIT_DIR=%s", g->dir);
  env[n++] = xasprintf ("GIT_WORK_TREE=%s", g->work_tree);
  env[n++] = xasprintf ("HOME=%s", g->dir);
  env[n++] = xstrdup ("GIT_CONFIG_NOSYSTEM=1");
  env[n++] = xstrdup ("GIT_CONFIG_GLOBAL=/dev/null");
  env[n++] = xstrdup ("GIT_TERMINAL_PROMPT=0");
  env[n++] = xstrdup ("LC_ALL=C");
  return env;
}

/* What a memfd holds, from its start (NUL-terminated; caller frees). */
static char *
memfd_contents (int fd, size_t *len)
{
  struct stat st;
  *len = 0;
  if (fstat (fd, &st) < 0 || lseek (fd, 0, SEEK_SET) < 0)
    return xstrdup ("");
  char *buf = xmalloc ((size_t) st.st_size + 1);
  ssize_t n = ar_read_all (fd, buf, (size_t) st.st_size);
  *len = n > 0 ? (size_t) n : 0;
  buf[*len] = '\0';
  return buf;
}

/* Start `git ARGS...` on the shadow, stdin from `in_fd` (-1: /dev/null),
 * stdout to `out_fd`, stderr to a memory file (*err_fd, for finish_git)
 * that no amount of output fills. A pipe as `out_fd` is the caller's to
 * drain before finish_git. */
static int
start_git (const ar_git_shadow *g, const char *const args[], int in_fd,
           int out_fd, int *err_fd, pid_t *pid, ar_error_t **err)
{
  cleanup_close int null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  *err_fd = memfd_create ("git-err", MFD_CLOEXEC);
  if (*err_fd < 0 || null_fd < 0)
    return ar_error_set (err, errno, "git: memfd");
  cleanup_strv char **env = git_environment (g);
  const ar_spawn_request req = { .argv = (char *const *) args,
                                 .envp = env,
                                 .in_fd = in_fd >= 0 ? in_fd : null_fd,
                                 .out_fd = out_fd,
                                 .err_fd = *err_fd };
  return ar_spawn (&req, pid, err);
}

/* Wait for a started git: its exit status. A status other than 0 or
 * `ok_status` is an error naming git's last line on stderr. */
static int
finish_git (pid_t pid, const char *const args[], int err_fd, int ok_status,
            ar_error_t **err)
{
  int code = ar_spawn_reap (pid, "git", err);
  if (code < 0 || code == 0 || code == ok_status)
    return code;
  size_t len;
  cleanup_free char *msg = memfd_contents (err_fd, &len);
  while (len > 0 && msg[len - 1] == '\n')
    msg[--len] = '\0';
  const char *last = strrchr (msg, '\n');
  return ar_error_set (err, 0, "git %s: %s", args[1],
                       last   ? last + 1
                       : *msg ? msg
                              : "failed");
}

/* Run `git ARGS...` (start_git) and wait for it (finish_git); *out what
 * it wrote (caller frees, may be NULL), kept in a memory file. */
static int
run_git (const ar_git_shadow *g, const char *const args[], int in_fd,
         int ok_status, char **out, size_t *out_len, ar_error_t **err)
{
  cleanup_close int out_fd = memfd_create ("git-out", MFD_CLOEXEC);
  cleanup_close int err_fd = -1;
  pid_t pid;
  if (out_fd < 0)
    return ar_error_set (err, errno, "git: memfd");
  if (start_git (g, args, in_fd, out_fd, &err_fd, &pid, err) < 0)
    return -1;
  int code = finish_git (pid, args, err_fd, ok_status, err);
  size_t len;
  if (out && code >= 0)
    *out = memfd_contents (out_fd, out_len ? out_len : &len);
  return code;
}

/* ---- what git is asked ------------------------------------------------ */

int
ar_git_drop_ignored (const ar_git_shadow *g, ar_path_list *paths,
                     const bool *ask, ar_error_t **err)
{
  cleanup_close int in_fd = memfd_create ("git-in", MFD_CLOEXEC);
  if (in_fd < 0)
    return ar_error_set (err, errno, "git: memfd");
  size_t asked = 0;
  for (size_t i = 0; i < paths->n; i++)
    if (ask[i] && ++asked
        && ar_write_all (in_fd, paths->paths[i], strlen (paths->paths[i]) + 1)
               < 0)
      return ar_error_set (err, errno, "git: write the paths");
  if (asked == 0)
    return 0;
  if (lseek (in_fd, 0, SEEK_SET) < 0)
    return ar_error_set (err, errno, "git: rewind");
  static const char *const args[]
      = { "git", "check-ignore", "--stdin", "-z", NULL };
  cleanup_free char *out = NULL;
  size_t len = 0;
  int status = run_git (g, args, in_fd, 1, &out, &len, err);
  if (status < 0)
    return -1;
  /* The ignored ones come back in the order asked: one pass drops them. */
  const char *next = out, *end = out + len;
  size_t kept = 0;
  for (size_t i = 0; i < paths->n; i++)
    {
      if (ask[i] && next < end && strcmp (next, paths->paths[i]) == 0)
        {
          next += strlen (next) + 1;
          free (paths->paths[i]);
          continue;
        }
      paths->paths[kept++] = paths->paths[i];
    }
  paths->n = kept;
  return 0;
}

int
ar_git_head (const ar_git_shadow *g, char id[AR_GIT_ID_SIZE], ar_error_t **err)
{
  static const char *const args[]
      = { "git", "rev-parse", "--verify", "-q", "HEAD^{commit}", NULL };
  cleanup_free char *out = NULL;
  int status = run_git (g, args, -1, 1, &out, NULL, err);
  if (status < 0)
    return -1;
  snprintf (id, AR_GIT_ID_SIZE, "%s", status == 0 ? out : "");
  id[strcspn (id, "\n")] = '\0';
  return 0;
}

/* HEAD is `commit` or one of its ancestors. */
static int
head_behind (const ar_git_shadow *g, const char *commit, bool *yes,
             ar_error_t **err)
{
  const char *const args[]
      = { "git", "merge-base", "--is-ancestor", "HEAD", commit, NULL };
  int status = run_git (g, args, -1, 1, NULL, NULL, err);
  *yes = status == 0;
  return status < 0 ? -1 : 0;
}

int
ar_git_moved_ahead (const ar_git_shadow *g, const char *since, bool *ahead,
                    ar_error_t **err)
{
  *ahead = false;
  char head[AR_GIT_ID_SIZE];
  if (ar_git_head (g, head, err) < 0)
    return -1;
  if (*head == '\0')
    return 0; /* no commit at all */
  bool behind = false;
  if (*since && head_behind (g, since, &behind, err) < 0)
    return -1;
  *ahead = !behind; /* behind: HEAD did not move, or went back */
  return 0;
}

/* "^since" for git's revision arguments; NULL when there is none. */
static char *
exclude_arg (const char *since)
{
  return *since ? xasprintf ("^%s", since) : NULL;
}

/* The ids of the objects HEAD reaches and `since` does not, a line each,
 * in a memory file read from its start. */
static int
new_object_ids (const ar_git_shadow *g, const char *since, int *ids,
                ar_error_t **err)
{
  cleanup_free char *exclude = exclude_arg (since);
  const char *const args[]
      = { "git",  "rev-list", "--objects", "--no-object-names",
          "HEAD", exclude,    NULL };
  cleanup_close int err_fd = -1;
  pid_t pid;
  *ids = memfd_create ("git-ids", MFD_CLOEXEC);
  if (*ids < 0)
    return ar_error_set (err, errno, "git: memfd");
  if (start_git (g, args, -1, *ids, &err_fd, &pid, err) < 0
      || finish_git (pid, args, err_fd, 0, err) < 0)
    return -1;
  if (lseek (*ids, 0, SEEK_SET) < 0)
    return ar_error_set (err, errno, "git: rewind");
  return 0;
}

/* The branch HEAD names ("" for a detached HEAD; caller frees). */
static int
head_branch (const ar_git_shadow *g, char **branch, ar_error_t **err)
{
  static const char *const args[]
      = { "git", "symbolic-ref", "-q", "HEAD", NULL };
  if (run_git (g, args, -1, 1, branch, NULL, err) < 0)
    return -1;
  (*branch)[strcspn (*branch, "\n")] = '\0';
  return 0;
}

/* The objects' raw contents (cat-file --batch: a header line each, then
 * the bytes) go through a pipe to the streaming search, so a large blob
 * is never held whole. The read end is closed before the wait: git is
 * never left blocked on a full pipe. */
static int
scan_new_objects (const ar_git_shadow *g, const char *since,
                  const ar_secret_set *secrets, const char **found,
                  ar_error_t **err)
{
  cleanup_close int ids = -1;
  if (new_object_ids (g, since, &ids, err) < 0)
    return -1;
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "git: pipe");
  cleanup_close int rd = fds[0];
  cleanup_close int err_fd = -1;
  static const char *const args[] = { "git", "cat-file", "--batch", NULL };
  pid_t pid;
  int r = start_git (g, args, ids, fds[1], &err_fd, &pid, err);
  close (fds[1]);
  if (r < 0)
    return -1;
  r = ar_secret_scan_fd (secrets, rd, found, err);
  close (steal_fd (&rd));
  return finish_git (pid, args, err_fd, 0, err) < 0 || r < 0 ? -1 : 0;
}

int
ar_git_find_secret (const ar_git_shadow *g, const char *since,
                    const ar_secret_set *secrets, const char **found,
                    ar_error_t **err)
{
  *found = NULL;
  if (secrets == NULL || secrets->n == 0)
    return 0;
  cleanup_free char *branch = NULL;
  if (head_branch (g, &branch, err) < 0)
    return -1;
  *found = ar_secret_set_find (secrets, branch, strlen (branch));
  return *found ? 0 : scan_new_objects (g, since, secrets, found, err);
}

int
ar_git_bundle (const ar_git_shadow *g, const char *since, const char *path,
               ar_error_t **err)
{
  /* HEAD, and its branch (bundled under its name) when it has one. */
  cleanup_free char *branch = NULL;
  if (head_branch (g, &branch, err) < 0)
    return -1;
  cleanup_free char *exclude = exclude_arg (since);
  const char *args[9]
      = { "git", "bundle", "create", "-q", path, "HEAD" }; /* NULL-ended */
  size_t n = 6;
  if (*branch)
    args[n++] = branch;
  if (exclude)
    args[n++] = exclude;
  return run_git (g, args, -1, 0, NULL, NULL, err) < 0 ? -1 : 0;
}
