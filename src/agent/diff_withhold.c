#include "config.h"
#include "diff_withhold.h"
#include "hostfs.h"
#include "overlay.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#define MAX_WALK_DEPTH 256

/* How diff -urN --no-dereference starts what it says about one pair of
 * files; hunk lines start with ' ', '+', '-', '@' or '\\' instead. */
#define DIFF_HEADER "diff -urN --no-dereference "
static const char *const section_starts[]
    = { DIFF_HEADER "a/", "Binary files a/", "Symbolic links a/", "File a/" };

typedef struct
{
  const ar_secret_set *secrets;
  int a_fd, b_fd;
  ar_diff_withheld_list *out;
} find_ctx;

void
ar_diff_withheld_list_clear (ar_diff_withheld_list *list)
{
  for (size_t i = 0; i < list->n; i++)
    {
      free (list->paths[i]);
      free (list->withheld[i].path);
      free (list->withheld[i].reason);
    }
  free (list->paths);
  free (list->withheld);
  *list = (ar_diff_withheld_list){ 0 };
}

static void
withhold (find_ctx *x, const char *path, bool name_shown, char *reason)
{
  ar_diff_withheld_list *l = x->out;
  l->paths = xrealloc (l->paths, (l->n + 1) * sizeof *l->paths);
  l->withheld = xrealloc (l->withheld, (l->n + 1) * sizeof *l->withheld);
  l->paths[l->n] = xstrdup (path);
  l->withheld[l->n++] = (ar_output_withheld){
    .path = xstrdup (name_shown ? path : "[withheld name]"),
    .reason = reason,
  };
}

/* The secret in one side's file or symlink target; NULL when it holds
 * none or is not there. Resolved inside the view: nothing leads out. */
static char *
entry_secret (const find_ctx *x, int view_fd, const char *path)
{
  cleanup_error ar_error_t *ignored = NULL;
  cleanup_close int fd
      = ar_path_open_in_root (view_fd, path, O_PATH | O_NOFOLLOW, &ignored);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return NULL;
  const char *found = NULL;
  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (fd, "", target, sizeof target);
      found = n > 0 ? ar_secret_set_find (x->secrets, target, (size_t) n) : NULL;
      return found ? xasprintf ("link target contains secret %s", found) : NULL;
    }
  if (!S_ISREG (st.st_mode))
    return NULL;
  char proc[AR_FD_PATH_MAX];
  ar_fd_path (fd, proc);
  cleanup_close int in = open (proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (in < 0 || ar_secret_scan_fd (x->secrets, in, &found, &ignored) < 0)
    return xstrdup ("could not be read to look for secrets");
  return found ? xasprintf ("contains secret %s", found) : NULL;
}

static void
check_path (find_ctx *x, const char *path)
{
  char *reason = ar_secret_name_problem (x->secrets, path);
  if (reason)
    {
      withhold (x, path, false, reason);
      return;
    }
  if ((reason = entry_secret (x, x->b_fd, path)) != NULL
      || (reason = entry_secret (x, x->a_fd, path)) != NULL)
    withhold (x, path, true, reason);
}

static char *
child_path (const char *dir, const char *name)
{
  return *dir ? xasprintf ("%s/%s", dir, name) : xstrdup (name);
}

/* Everything below `path` in the original view: what a deletion or an
 * opaque directory takes away shows in the diff as removed lines. */
static void
check_original_tree (find_ctx *x, const char *path, int depth)
{
  cleanup_error ar_error_t *ignored = NULL;
  cleanup_close int fd = ar_path_open_in_root (x->a_fd, path, O_PATH | O_NOFOLLOW, &ignored);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return;
  if (!S_ISDIR (st.st_mode) || depth > MAX_WALK_DEPTH)
    {
      check_path (x, path);
      return;
    }
  size_t n;
  cleanup_strv char **names = ar_hostfs_sorted_names (fd, &n);
  for (size_t i = 0; names && i < n; i++)
    {
      cleanup_free char *child = child_path (path, names[i]);
      check_original_tree (x, child, depth + 1);
    }
}

/* Directory fds all the way down the upper layer: nothing the container
 * put there (symlinks included) is followed. */
static void
walk_upper (find_ctx *x, int dir_fd, const char *dir, int depth)
{
  size_t n;
  cleanup_strv char **names = ar_hostfs_sorted_names (dir_fd, &n);
  for (size_t i = 0; names && i < n; i++)
    {
      cleanup_free char *path = child_path (dir, names[i]);
      struct stat st;
      if (fstatat (dir_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (ar_overlay_is_whiteout (&st))
        check_original_tree (x, path, depth);
      else if (!S_ISDIR (st.st_mode) || depth > MAX_WALK_DEPTH)
        check_path (x, path);
      else
        {
          cleanup_close int child = openat (dir_fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (child < 0)
            continue;
          if (ar_overlay_is_opaque_dir (child))
            check_original_tree (x, path, depth);
          walk_upper (x, child, path, depth + 1);
        }
    }
}

void
ar_diff_find_withheld (const ar_secret_set *secrets, int upper_fd, int a_fd,
                       int b_fd, ar_diff_withheld_list *out)
{
  *out = (ar_diff_withheld_list){ 0 };
  if (secrets->n == 0)
    return;
  find_ctx x = { .secrets = secrets, .a_fd = a_fd, .b_fd = b_fd, .out = out };
  walk_upper (&x, upper_fd, "", 0);
}

/* ---- the diff's output ------------------------------------------------ */

static bool
starts_with (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

static bool
is_section_start (const char *line)
{
  for (size_t i = 0; i < sizeof section_starts / sizeof *section_starts; i++)
    if (starts_with (line, section_starts[i]))
      return true;
  return false;
}

/* Does `line` begin what diff says about `path`? A name with a newline
 * is matched by its first line: at worst more is withheld. */
static bool
begins_section_of (const char *line, const char *path)
{
  static const char *const forms[] = {
    DIFF_HEADER "a/%s b/%s\n", "Binary files a/%s and b/%s differ\n",
    "Symbolic links a/%s and b/%s differ\n", "File a/%s is a %.0s",
  };
  bool match = false;
  for (size_t i = 0; i < sizeof forms / sizeof *forms && !match; i++)
    {
      cleanup_free char *form = xasprintf (forms[i], path, path);
      char *nl = strchr (form, '\n');
      size_t len = nl ? (size_t) (nl - form) + 1 : strlen (form);
      match = strncmp (line, form, len) == 0;
    }
  return match;
}

static const ar_output_withheld *
withheld_section (const ar_diff_withheld_list *list, const char *line)
{
  for (size_t i = 0; i < list->n; i++)
    if (begins_section_of (line, list->paths[i]))
      return &list->withheld[i];
  return NULL;
}

int
ar_diff_filter (int in, int out, const ar_secret_set *secrets,
                const ar_diff_withheld_list *list, ar_error_t **err)
{
  FILE *f = fdopen (in, "r");
  if (f == NULL)
    return ar_error_set (err, errno, "--diff: read diff(1)'s output");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  bool skipping = false;
  int ret = 0;
  while ((len = getline (&line, &cap, f)) >= 0 && ret == 0)
    {
      cleanup_free char *replaced = NULL;
      const ar_output_withheld *w = NULL;
      if (is_section_start (line))
        {
          w = withheld_section (list, line);
          skipping = w != NULL;
          if (w)
            replaced = xasprintf ("agentrun: withheld b/%s (%s)\n", w->path, w->reason);
        }
      else if (skipping)
        continue;
      const char *secret = w ? NULL : ar_secret_set_find (secrets, line, (size_t) len);
      if (secret)
        replaced = xasprintf ("agentrun: withheld a line (contains secret %s)\n", secret);
      const char *text = replaced ? replaced : line;
      size_t n = replaced ? strlen (replaced) : (size_t) len;
      if (ar_write_all (out, text, n) < 0)
        ret = ar_error_set (err, errno, "--diff: write");
    }
  fclose (f);
  return ret;
}

char *
ar_diff_withheld_fields_json (const ar_diff_withheld_list *list)
{
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  ar_output_gen_withheld (gen, list->withheld, list->n);
  yajl_gen_map_close (gen);
  return ar_hostfs_json_members (gen);
}
