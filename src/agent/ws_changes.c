/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "ws_changes.h"
#include "hostfs.h"
#include "overlay.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_WALK_DEPTH 256

typedef struct
{
  ar_path_list *out;
  int lower_fd;
  ar_error_t **err; /* the first error; the walk goes on past it */
  int status;
} walk;

void
ar_path_list_clear (ar_path_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->paths[i]);
  free (l->paths);
  *l = (ar_path_list){ 0 };
}

void
ar_path_list_add (ar_path_list *l, const char *path)
{
  /* Doubling: n is a power of two whenever the array is full. */
  if ((l->n & (l->n - 1)) == 0)
    l->paths = xrealloc (l->paths, (l->n ? 2 * l->n : 1) * sizeof *l->paths);
  l->paths[l->n++] = xstrdup (path);
}

static int
compare_paths (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
sort_unique (ar_path_list *l)
{
  if (l->n == 0)
    return;
  qsort (l->paths, l->n, sizeof *l->paths, compare_paths);
  size_t kept = 1;
  for (size_t i = 1; i < l->n; i++)
    if (strcmp (l->paths[i], l->paths[kept - 1]) == 0)
      free (l->paths[i]);
    else
      l->paths[kept++] = l->paths[i];
  l->n = kept;
}

static void
failed (walk *w, int errno_value, const char *what, const char *path)
{
  if (w->status == 0)
    ar_error_set (w->err, errno_value, "%s `%s`", what, path);
  w->status = -1;
}

static char *
child_path (const char *dir, const char *name)
{
  return *dir ? xasprintf ("%s/%s", dir, name) : xstrdup (name);
}

/* A directory's names, sorted, without ".git" (*n: 0 when it cannot be
 * listed, which is recorded). */
static char **
walk_names (walk *w, int fd, const char *path, int depth, size_t *n)
{
  *n = 0;
  if (depth > MAX_WALK_DEPTH)
    {
      failed (w, 0, "deeper than 256 levels:", path);
      return NULL;
    }
  char **names = ar_hostfs_sorted_names (fd, n);
  if (names == NULL)
    {
      failed (w, errno, "list", *path ? path : ".");
      return NULL;
    }
  size_t kept = 0;
  for (size_t i = 0; i < *n; i++)
    if (strcmp (names[i], ".git") == 0)
      free (names[i]);
    else
      names[kept++] = names[i];
  names[kept] = NULL;
  *n = kept;
  return names;
}

/* Everything but directories at or below `path` in the original: what a
 * deletion or an opaque directory took away, each file on its own. */
static void
add_original_tree (walk *w, int fd, const char *path, int depth)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      failed (w, errno, "stat", path);
      return;
    }
  if (!S_ISDIR (st.st_mode))
    {
      ar_path_list_add (w->out, path);
      return;
    }
  size_t n;
  cleanup_strv char **names = walk_names (w, fd, path, depth, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *child = child_path (path, names[i]);
      cleanup_close int child_fd
          = openat (fd, names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (child_fd < 0)
        failed (w, errno, "open", child);
      else
        add_original_tree (w, child_fd, child, depth + 1);
    }
}

static bool
is_directory (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 && S_ISDIR (st.st_mode);
}

/* Directory fds all the way down the layer: nothing the agent put there
 * (symlinks included) is followed. */
static void
walk_upper (walk *w, int dir_fd, const char *dir, int depth)
{
  size_t n;
  cleanup_strv char **names = walk_names (w, dir_fd, dir, depth, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *path = child_path (dir, names[i]);
      struct stat st;
      if (fstatat (dir_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          failed (w, errno, "stat the change", path);
          continue;
        }
      cleanup_close int original = ar_path_open_entry (w->lower_fd, path);
      if (!S_ISDIR (st.st_mode))
        {
          if (!ar_overlay_is_whiteout (&st))
            ar_path_list_add (w->out, path);
          if (original >= 0)
            add_original_tree (w, original, path, depth);
          continue;
        }
      cleanup_close int child = openat (
          dir_fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0)
        {
          failed (w, errno, "open the change", path);
          continue;
        }
      /* A directory over a file, or one that hides the original's. */
      if (original >= 0
          && (!is_directory (original) || ar_overlay_is_opaque_dir (child)))
        add_original_tree (w, original, path, depth);
      walk_upper (w, child, path, depth + 1);
    }
}

int
ar_ws_changed_paths (int upper_fd, int lower_fd, ar_path_list *out,
                     ar_error_t **err)
{
  walk w = { .out = out, .lower_fd = lower_fd, .err = err };
  walk_upper (&w, upper_fd, "", 0);
  sort_unique (out);
  return w.status;
}
