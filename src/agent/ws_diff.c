#include "config.h"
#include "ws_diff.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* One side of a path: the entry (O_PATH, not followed) and what git
 * sees of it. Directories, devices, fifos and sockets are not there for
 * git. */
typedef struct
{
  int entry_fd;
  ar_git_blob blob;
  void *map;
  char target[PATH_MAX];
} side;

static void
side_clear (side *s)
{
  if (s->map)
    munmap (s->map, s->blob.len);
  if (s->blob.fd >= 0)
    close (s->blob.fd);
  if (s->entry_fd >= 0)
    close (s->entry_fd);
}
#define cleanup_side __attribute__ ((cleanup (side_clear)))
#define SIDE_NONE { .entry_fd = -1, .blob = { .fd = -1 } }

static int
load_link (side *s, const char *path, ar_error_t **err)
{
  ssize_t n = readlinkat (s->entry_fd, "", s->target, sizeof s->target);
  if (n < 0 || (size_t) n >= sizeof s->target)
    return ar_error_set (err, n < 0 ? errno : ENAMETOOLONG, "read link `%s`", path);
  s->blob = (ar_git_blob){ .mode = AR_GIT_MODE_LINK, .data = (uint8_t *) s->target,
                           .len = (size_t) n, .fd = -1 };
  return 0;
}

static int
load_file (side *s, const struct stat *st, const char *path, ar_error_t **err)
{
  char proc[AR_FD_PATH_MAX];
  ar_fd_path (s->entry_fd, proc);
  s->blob.fd = open (proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (s->blob.fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  /* git keeps one permission bit: the owner's x. */
  s->blob.mode = (st->st_mode & S_IXUSR) ? AR_GIT_MODE_EXEC : AR_GIT_MODE_FILE;
  s->blob.len = (size_t) st->st_size;
  if (s->blob.len == 0)
    return 0;
  s->map = mmap (NULL, s->blob.len, PROT_READ, MAP_PRIVATE, s->blob.fd, 0);
  if (s->map == MAP_FAILED)
    {
      s->map = NULL;
      return ar_error_set (err, errno, "read `%s`", path);
    }
  s->blob.data = s->map;
  return 0;
}

static int
load_side (int view_fd, const char *path, side *s, ar_error_t **err)
{
  s->entry_fd = ar_path_open_entry (view_fd, path);
  if (s->entry_fd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return 0;
      return ar_error_set (err, errno, "open `%s`", path);
    }
  struct stat st;
  if (fstat (s->entry_fd, &st) < 0)
    return ar_error_set (err, errno, "stat `%s`", path);
  if (S_ISLNK (st.st_mode))
    return load_link (s, path, err);
  if (S_ISREG (st.st_mode))
    return load_file (s, &st, path, err);
  return 0;
}

/* diff(1)'s unified hunks, without its two header lines (git_patch.c
 * writes git's). -a: a NUL would have made the file binary already. */
static int
diff_hunks (ar_patch_sink *s, const ar_git_blob *a, const ar_git_blob *b,
            ar_error_t **err)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (fds[0]);
      close (fds[1]);
      return ar_error_set (err, errno, "fork diff(1)");
    }
  if (pid == 0)
    {
      /* dup: the copies lose O_CLOEXEC, so diff(1) can open them. */
      int fa = dup (a->fd), fb = dup (b->fd);
      char pa[32], pb[32];
      snprintf (pa, sizeof pa, "/dev/fd/%d", fa);
      snprintf (pb, sizeof pb, "/dev/fd/%d", fb);
      if (fa < 0 || fb < 0 || dup2 (fds[1], STDOUT_FILENO) < 0 || setenv ("LC_ALL", "C", 1) < 0)
        _exit (2);
      execlp ("diff", "diff", "-u", "-a", pa, pb, (char *) NULL);
      _exit (127);
    }
  close (fds[1]);
  cleanup_file FILE *in = fdopen (fds[0], "r");
  if (in == NULL)
    close (fds[0]);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  for (int n = 0; in && (len = getline (&line, &cap, in)) >= 0; n++)
    if (n >= 2)
      ar_patch_line (s, line, (size_t) len);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "wait for diff(1)");
  if (in == NULL || !WIFEXITED (status) || WEXITSTATUS (status) != 1)
    return ar_error_set (err, 0, "diff(1) failed (status %d)",
                         WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return 0;
}

/* A line in the diff in place of a path's patch; the error is kept when
 * it is the first. */
static void
path_missing (ar_ws_diff *d, const char *path, ar_error_t **err)
{
  ar_patch_printf (&d->sink, "agentrun: missing b/%s (%s)\n", path, (*err)->msg);
  d->failed++;
  ar_error_free (ar_error_keep_first (&d->first_error, err));
}

/* The patch goes to memory first: one that fails half-way leaves no
 * broken section in the diff, only a line saying it is missing. */
static void
write_patch (ar_ws_diff *d, const char *path, const side *a, const side *b)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&buf, &len);
  if (mem == NULL)
    abort (); /* out of memory, as xmalloc */
  ar_patch_sink sink = { .out = mem, .secrets = d->secrets };
  cleanup_error ar_error_t *err = NULL;
  int r = ar_git_patch_write (&sink, path, &a->blob, &b->blob, diff_hunks, &err);
  if (fclose (mem) != 0)
    abort ();
  if (r == 0)
    {
      fwrite (buf, 1, len, d->sink.out);
      return;
    }
  path_missing (d, path, &err);
}

void
ar_ws_diff_path (ar_ws_diff *d, const char *path)
{
  cleanup_side side a = SIDE_NONE, b = SIDE_NONE;
  cleanup_error ar_error_t *err = NULL;
  if (load_side (d->a_fd, path, &a, &err) < 0 || load_side (d->b_fd, path, &b, &err) < 0)
    {
      path_missing (d, path, &err);
      return;
    }
  if (!ar_git_blob_differs (&a.blob, &b.blob))
    return;
  d->changed++;
  const ar_output_withheld *w = ar_diff_withhold_path (d->secrets, path, a.entry_fd,
                                                       b.entry_fd, &d->withheld);
  if (w)
    ar_patch_printf (&d->sink, "agentrun: withheld b/%s (%s)\n", w->path, w->reason);
  else
    write_patch (d, path, &a, &b);
}

void
ar_ws_diff_clear (ar_ws_diff *d)
{
  ar_diff_withheld_list_clear (&d->withheld);
  ar_error_free (d->first_error);
  d->first_error = NULL;
}
