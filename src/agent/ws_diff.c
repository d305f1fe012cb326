/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "ws_diff.h"
#include "ws_renames.h"
#include "ws_side.h"
#include "../util/cleanup.h"
#include "../util/path.h"
#include "../util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* diff(1)'s unified hunks, without its two header lines (git_patch.c
 * writes git's). -a: a NUL would have made the file binary already. It
 * opens the two files through /dev/fd, which it gets under the same
 * numbers. */
static int
diff_hunks (ar_patch_sink *s, const ar_git_blob *a, const ar_git_blob *b,
            ar_error_t **err)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "pipe");
  cleanup_close int rd = fds[0];
  char pa[32], pb[32];
  snprintf (pa, sizeof pa, "/dev/fd/%d", a->fd);
  snprintf (pb, sizeof pb, "/dev/fd/%d", b->fd);
  char *const argv[]
      = { (char *) "diff", (char *) "-u", (char *) "-a", pa, pb, NULL };
  char *const envp[] = { (char *) "LC_ALL=C", NULL };
  const int pass[] = { a->fd, b->fd };
  const ar_spawn_request req = { .argv = argv,
                                 .envp = envp,
                                 .in_fd = -1,
                                 .out_fd = fds[1],
                                 .err_fd = -1,
                                 .pass_fds = pass,
                                 .n_pass_fds = 2 };
  pid_t pid;
  int r = ar_spawn (&req, &pid, err);
  close (fds[1]);
  if (r < 0)
    return ar_error_prefix (err, "diff(1)");
  cleanup_file FILE *in = fdopen (rd, "r");
  if (in)
    steal_fd (&rd);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  for (int n = 0; in && (len = getline (&line, &cap, in)) >= 0; n++)
    if (n >= 2)
      ar_patch_line (s, line, (size_t) len);
  int status = ar_spawn_reap (pid, "diff(1)", err);
  if (status < 0)
    return -1;
  if (in == NULL || status != 1)
    return ar_error_set (err, 0, "diff(1) failed (status %d)", status);
  return 0;
}

/* A line in the diff in place of a path's patch; the error is kept when
 * it is the first. */
static void
path_missing (ar_ws_diff *d, const char *path, ar_error_t **err)
{
  ar_patch_printf (&d->sink, "agentrun: missing b/%s (%s)\n", path,
                   ar_error_text (*err));
  d->failed++;
  ar_error_free (ar_error_keep_first (&d->first_error, err));
}

/* The patch goes to memory first: one that fails half-way leaves no
 * broken section in the diff, only a line saying it is missing. */
static void
write_patch (ar_ws_diff *d, const char *path, const ar_ws_side *a,
             const ar_ws_side *b)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&buf, &len);
  if (mem == NULL)
    abort (); /* out of memory, as xmalloc */
  ar_patch_sink sink = { .out = mem, .secrets = d->secrets };
  cleanup_error ar_error_t *err = NULL;
  int r
      = ar_git_patch_write (&sink, path, &a->blob, &b->blob, diff_hunks, &err);
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
  cleanup_ws_side ar_ws_side a = AR_WS_SIDE_NONE, b = AR_WS_SIDE_NONE;
  cleanup_error ar_error_t *err = NULL;
  if (ar_ws_side_load (d->a_fd, path, &a, &err) < 0
      || ar_ws_side_load (d->b_fd, path, &b, &err) < 0)
    {
      path_missing (d, path, &err);
      return;
    }
  if (!ar_git_blob_differs (&a.blob, &b.blob))
    return;
  d->changed++;
  const ar_output_withheld *w = ar_diff_withhold_path (
      d->secrets, path, a.entry_fd, b.entry_fd, &d->withheld);
  if (w)
    ar_patch_printf (&d->sink, "agentrun: withheld b/%s (%s)\n", w->path,
                     w->reason);
  else
    write_patch (d, path, &a, &b);
}

/* A rename found by ar_ws_find_renames: its four header lines, unless
 * either name must be withheld; then the end that may be shown is
 * written as the deletion or creation it also is. */
static void
diff_rename (ar_ws_diff *d, const char *from, const char *to)
{
  cleanup_close int from_fd = ar_path_open_entry (d->a_fd, from);
  cleanup_close int to_fd = ar_path_open_entry (d->b_fd, to);
  const ar_output_withheld *w
      = ar_diff_withhold_path (d->secrets, from, from_fd, -1, &d->withheld);
  const char *other = to;
  if (w == NULL)
    {
      w = ar_diff_withhold_path (d->secrets, to, -1, to_fd, &d->withheld);
      other = from;
    }
  d->changed++;
  if (w == NULL)
    {
      ar_git_rename_write (&d->sink, from, to);
      return;
    }
  ar_patch_printf (&d->sink, "agentrun: withheld b/%s (%s)\n", w->path,
                   w->reason);
  ar_ws_diff_path (d, other);
}

void
ar_ws_diff_paths (ar_ws_diff *d, const ar_path_list *paths)
{
  cleanup_free size_t *renamed_from
      = xcalloc (paths->n + 1, sizeof *renamed_from);
  ar_ws_find_renames (d->a_fd, d->b_fd, paths, renamed_from);
  for (size_t i = 0; i < paths->n; i++)
    {
      size_t from = renamed_from[i];
      if (from == AR_WS_NOT_RENAMED)
        ar_ws_diff_path (d, paths->paths[i]);
      else if (from != AR_WS_RENAMED_AWAY)
        diff_rename (d, paths->paths[from], paths->paths[i]);
    }
}

void
ar_ws_diff_clear (ar_ws_diff *d)
{
  ar_diff_withheld_list_clear (&d->withheld);
  ar_error_free (d->first_error);
  d->first_error = NULL;
}
