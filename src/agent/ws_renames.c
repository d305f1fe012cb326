/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "ws_renames.h"
#include "ws_side.h"
#include "../util/cleanup.h"
#include "../util/path.h"
#include "../util/sha1.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A path only one view has: a possible end of a rename. */
typedef struct
{
  size_t index;  /* in the path list */
  unsigned mode; /* AR_GIT_MODE_* */
  off_t size;
  bool hashed, paired;
  char id[AR_SHA1_HEX_SIZE];
} rename_end;

/* The mode git would give the entry, and its size, without reading it;
 * false when it cannot be a rename's end. */
static bool
peek (int view_fd, const char *path, unsigned *mode, off_t *size)
{
  cleanup_close int fd = ar_path_open_entry (view_fd, path);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return false;
  if (S_ISLNK (st.st_mode))
    *mode = AR_GIT_MODE_LINK;
  else if (S_ISREG (st.st_mode))
    *mode = (st.st_mode & S_IXUSR) ? AR_GIT_MODE_EXEC : AR_GIT_MODE_FILE;
  else
    return false;
  *size = st.st_size;
  /* As git: an empty file is nobody's rename (any two would match). */
  return st.st_size > 0;
}

/* Its blob id, read once; false when it cannot be read. */
static bool
hash_end (int view_fd, const char *path, rename_end *e)
{
  if (!e->hashed)
    {
      cleanup_ws_side ar_ws_side s = AR_WS_SIDE_NONE;
      cleanup_error ar_error_t *err = NULL;
      if (ar_ws_side_load (view_fd, path, &s, &err) < 0
          || s.blob.mode != e->mode)
        e->mode = 0; /* unreadable or changed under us: never paired */
      else
        ar_sha1_git_blob_hex (s.blob.data, s.blob.len, e->id);
      e->hashed = true;
    }
  return e->mode != 0;
}

static int
by_kind_and_size (const void *x, const void *y)
{
  const rename_end *a = x, *b = y;
  if (a->mode != b->mode)
    return a->mode < b->mode ? -1 : 1;
  if (a->size != b->size)
    return a->size < b->size ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* The unpaired deleted end with the new one's bytes among gone[lo, hi)
 * (all of its kind and size): one with the same file name first, as git
 * prefers, else the first in path order. */
static rename_end *
match (int a_fd, const ar_path_list *paths, rename_end *gone, size_t lo,
       size_t hi, const rename_end *added, const char *added_path)
{
  rename_end *found = NULL;
  for (size_t i = lo; i < hi; i++)
    {
      rename_end *g = &gone[i];
      const char *path = paths->paths[g->index];
      if (g->paired || !hash_end (a_fd, path, g)
          || strcmp (g->id, added->id) != 0)
        continue;
      if (strcmp (base_name (path), base_name (added_path)) == 0)
        return g;
      if (found == NULL)
        found = g;
    }
  return found;
}

void
ar_ws_find_renames (int a_fd, int b_fd, const ar_path_list *paths,
                    size_t *renamed_from)
{
  cleanup_free rename_end *gone = xcalloc (paths->n + 1, sizeof *gone);
  cleanup_free rename_end *added = xcalloc (paths->n + 1, sizeof *added);
  size_t n_gone = 0, n_added = 0;
  for (size_t i = 0; i < paths->n; i++)
    {
      renamed_from[i] = AR_WS_NOT_RENAMED;
      rename_end a = { .index = i }, b = { .index = i };
      bool in_a = peek (a_fd, paths->paths[i], &a.mode, &a.size);
      bool in_b = peek (b_fd, paths->paths[i], &b.mode, &b.size);
      if (in_a && !in_b)
        gone[n_gone++] = a;
      else if (in_b && !in_a)
        added[n_added++] = b;
    }
  if (n_gone == 0 || n_added == 0)
    return;
  qsort (gone, n_gone, sizeof *gone, by_kind_and_size);
  for (size_t i = 0; i < n_added; i++)
    {
      rename_end key
          = { .mode = added[i].mode, .size = added[i].size, .index = 0 };
      size_t lo = 0, hi = n_gone;
      while (lo < hi) /* the first of the new file's kind and size */
        {
          size_t mid = lo + (hi - lo) / 2;
          if (by_kind_and_size (&gone[mid], &key) < 0)
            lo = mid + 1;
          else
            hi = mid;
        }
      size_t end = lo;
      while (end < n_gone && gone[end].mode == key.mode
             && gone[end].size == key.size)
        end++;
      const char *added_path = paths->paths[added[i].index];
      if (lo == end || !hash_end (b_fd, added_path, &added[i]))
        continue;
      rename_end *g = match (a_fd, paths, gone, lo, end, &added[i], added_path);
      if (g == NULL)
        continue;
      g->paired = true;
      renamed_from[g->index] = AR_WS_RENAMED_AWAY;
      renamed_from[added[i].index] = g->index;
    }
}
