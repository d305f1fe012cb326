/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "hide.h"
#include "policy_internal.h"
#include "../../oci/json.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "~/X" stands for X below every home. */
static const char *const home_patterns[] = { "/root", "/home/*" };

void
ar_hide_list_clear (ar_hide_list *list)
{
  for (size_t i = 0; i < list->n; i++)
    free (list->items[i].path);
  free (list->items);
  list->items = NULL;
  list->n = 0;
}

/* The container's path of `rel` (below the rootfs), every symlink
 * followed inside the rootfs; NULL when it does not exist. */
static char *
resolve_in_root (int root_fd, const char *root_real, const char *rel,
                 ar_error_t **err)
{
  cleanup_error ar_error_t *open_err = NULL;
  cleanup_close int fd = ar_path_open_in_root (root_fd, rel, O_PATH, &open_err);
  if (fd < 0)
    {
      int e = open_err->errno_value;
      if (e == ENOENT || e == ENOTDIR || e == ELOOP)
        return NULL;
      *err = steal_pointer (&open_err);
      return NULL;
    }
  cleanup_free char *real = ar_fd_real_path (fd);
  if (real == NULL)
    {
      ar_error_set (err, errno, "hide: resolve `%s`", rel);
      return NULL;
    }
  size_t root_len = strcmp (root_real, "/") == 0 ? 0 : strlen (root_real);
  if (strncmp (real, root_real, root_len) != 0
      || (real[root_len] != '/' && real[root_len] != '\0'))
    return NULL; /* not below the rootfs: nothing the container sees */
  return xstrdup (real[root_len] ? real + root_len : "/");
}

static bool
unhidden (const ar_agent_plan *plan, const char *path)
{
  for (size_t i = 0; i < plan->unhide.len; i++)
    if (strcmp (plan->unhide.items[i], path) == 0)
      return true;
  return false;
}

static const char path_closed_pattern[] = "(on the way to the workspace)";
static const char path_closed_reason[]
    = "closed to others: the container's root could not enter it";

static void
push_target (ar_hide_list *l, ar_hide_target t)
{
  l->items = xrealloc (l->items, (l->n + 1) * sizeof *l->items);
  l->items[l->n++] = t;
}

static bool
listed (const ar_hide_list *list, const char *path)
{
  for (size_t i = 0; i < list->n; i++)
    if (strcmp (list->items[i].path, path) == 0)
      return true;
  return false;
}

static bool
is_home_pattern (const char *pattern)
{
  for (size_t i = 0; i < sizeof home_patterns / sizeof *home_patterns; i++)
    if (strcmp (pattern, home_patterns[i]) == 0)
      return true;
  return false;
}

/* A home is emptied but stays writable: the command's own $HOME (caches,
 * ~/.config of the tools it runs) works, and goes with the sandbox. */
static ar_hide_how
how_to_hide (const char *path, const char *pattern, const char *workspace)
{
  if (workspace && strcmp (path, workspace) == 0)
    return AR_HIDE_KEEP;
  if (workspace && ar_path_is_within (workspace, path))
    return AR_HIDE_COVER;
  return is_home_pattern (pattern) ? AR_HIDE_EMPTY : AR_HIDE_MASK;
}

typedef struct
{
  const ar_agent_plan *plan;
  const oci_kv *entry; /* pattern -> reason */
  int root_fd;
  const char *root_real;
  const oci_strv *homes; /* home_patterns' matches, as glob patterns */
  ar_hide_list *out;
} expand_ctx;

/* Unhidden by the name the caller gave, or by what it resolves to. */
static int
add_match (expand_ctx *x, const char *match, ar_error_t **err)
{
  size_t root_len = strcmp (x->root_real, "/") == 0 ? 0 : strlen (x->root_real);
  const char *rel = match + root_len;
  if (unhidden (x->plan, rel))
    return 0;
  cleanup_error ar_error_t *resolve_err = NULL;
  cleanup_free char *path
      = resolve_in_root (x->root_fd, x->root_real, rel, &resolve_err);
  if (path == NULL && resolve_err)
    {
      *err = steal_pointer (&resolve_err);
      return -1;
    }
  if (path == NULL || strcmp (path, "/") == 0 || unhidden (x->plan, path)
      || listed (x->out, path))
    return 0;
  ar_hide_how how
      = how_to_hide (path, x->entry->key, x->plan->workspace_host_dir);
  push_target (x->out, (ar_hide_target){
                           .how = how,
                           .path = steal_pointer (&path),
                           .pattern = x->entry->key,
                           .reason = x->entry->value,
                       });
  return 0;
}

static int
expand_pattern (expand_ctx *x, const char *pattern, ar_error_t **err)
{
  cleanup_free char *full = xasprintf (
      "%s%s", strcmp (x->root_real, "/") == 0 ? "" : x->root_real, pattern);
  glob_t g = { 0 };
  int r = glob (full, GLOB_NOSORT, NULL, &g);
  if (r == GLOB_NOMATCH || r == GLOB_ABORTED)
    {
      globfree (&g);
      return 0;
    }
  if (r != 0)
    {
      globfree (&g);
      return ar_error_set (err, ENOMEM, "hide: expand `%s`", pattern);
    }
  int ret = 0;
  for (size_t i = 0; i < g.gl_pathc && ret == 0; i++)
    ret = add_match (x, g.gl_pathv[i], err);
  globfree (&g);
  return ret;
}

static int
expand_entry (expand_ctx *x, ar_error_t **err)
{
  const char *path = x->entry->key;
  if (strncmp (path, "~/", 2) != 0)
    return expand_pattern (x, path, err);
  for (size_t i = 0; i < x->homes->len; i++)
    {
      cleanup_free char *below
          = xasprintf ("%s%s", x->homes->items[i], path + 1);
      if (expand_pattern (x, below, err) < 0)
        return -1;
    }
  return 0;
}

/* `name` as a glob pattern that matches only itself. */
static char *
glob_literal (const char *name)
{
  char *out = xcalloc (2 * strlen (name) + 1, 1);
  char *o = out;
  for (const char *p = name; *p; p++)
    {
      if (strchr ("*?[]\\", *p))
        *o++ = '\\';
      *o++ = *p;
    }
  return out;
}

/* The homes "~/X" stands for, listed once for all such entries rather
 * than once per entry (a dozen reads of /home). */
static void
find_homes (const char *root_real, oci_strv *homes)
{
  size_t root_len = strcmp (root_real, "/") == 0 ? 0 : strlen (root_real);
  for (size_t i = 0; i < sizeof home_patterns / sizeof *home_patterns; i++)
    {
      cleanup_free char *full
          = xasprintf ("%s%s", root_len ? root_real : "", home_patterns[i]);
      glob_t g = { 0 };
      if (glob (full, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t k = 0; k < g.gl_pathc; k++)
          {
            cleanup_free char *home = glob_literal (g.gl_pathv[k] + root_len);
            oci_strv_push (homes, home);
          }
      globfree (&g);
    }
}

int
ar_hide_resolve (const ar_agent_plan *plan, const char *rootfs,
                 ar_hide_list *out, ar_error_t **err)
{
  *out = (ar_hide_list){ 0 };
  if (plan == NULL || plan->hide.len == 0)
    return 0;
  char root_real[PATH_MAX];
  if (realpath (rootfs, root_real) == NULL)
    return ar_error_set (err, errno, "hide: rootfs `%s`", rootfs);
  cleanup_close int root_fd
      = open (root_real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return ar_error_set (err, errno, "hide: open rootfs `%s`", root_real);
  oci_strv homes = { 0 };
  find_homes (root_real, &homes);
  cleanup_strv char **home_items = homes.items;
  expand_ctx x = { .plan = plan,
                   .root_fd = root_fd,
                   .root_real = root_real,
                   .homes = &homes,
                   .out = out };
  for (size_t i = 0; i < plan->hide.len; i++)
    {
      x.entry = &plan->hide.items[i];
      if (expand_entry (&x, err) < 0)
        {
          ar_hide_list_clear (out);
          return -1;
        }
    }
  return 0;
}

void
ar_hide_cover_closed_parents (const ar_agent_plan *plan, ar_hide_list *list)
{
  const char *ws = plan->workspace_host_dir;
  if (ws == NULL)
    return;
  cleanup_free char *path = xstrdup (ws);
  for (char *slash = strchr (path + 1, '/'); slash;
       slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      struct stat st;
      bool closed = stat (path, &st) == 0 && (st.st_mode & S_IXOTH) == 0;
      bool hidden = listed (list, path);
      *slash = '/';
      if (hidden)
        return; /* emptied already, and all below it */
      if (!closed)
        continue;
      *slash = '\0';
      push_target (list, (ar_hide_target){
                             .how = AR_HIDE_COVER,
                             .path = xstrdup (path),
                             .pattern = path_closed_pattern,
                             .reason = path_closed_reason,
                         });
      return;
    }
}

/* Writable until the final read-only remount (linux.readonlyPaths, after
 * every mount): the workspace's mount point has to be made in it first. */
static void
append_cover (oci_spec *spec, const char *path)
{
  static const char *const options[]
      = { "nosuid", "nodev", "noexec", "mode=0755", "size=64k", NULL };
  oci_spec_append_mount (spec, "tmpfs", "tmpfs", path, options);
  ar_strv_append_unique (&ar_spec_ensure_linux (spec)->readonly_paths, path);
}

/* Its pages count against the container's memory limit. */
static void
append_empty_home (oci_spec *spec, const char *path)
{
  static const char *const options[] = { "nosuid", "nodev", "mode=0700", NULL };
  oci_spec_append_mount (spec, "tmpfs", "tmpfs", path, options);
}

void
ar_hide_apply (const ar_hide_list *list, oci_spec *spec)
{
  for (size_t i = 0; i < list->n; i++)
    if (list->items[i].how == AR_HIDE_MASK)
      ar_strv_append_unique (&ar_spec_ensure_linux (spec)->masked_paths,
                             list->items[i].path);
    else if (list->items[i].how == AR_HIDE_COVER)
      append_cover (spec, list->items[i].path);
    else if (list->items[i].how == AR_HIDE_EMPTY)
      append_empty_home (spec, list->items[i].path);
}

void
ar_hide_gen_json (yajl_gen g, const ar_hide_list *list)
{
  static const char *const how_names[] = {
    [AR_HIDE_MASK] = "masked",
    [AR_HIDE_COVER] = "emptied (read-only tmpfs; the workspace inside stays)",
    [AR_HIDE_KEEP] = "visible (it is the workspace)",
    [AR_HIDE_EMPTY] = "emptied (writable tmpfs, gone with the sandbox)",
  };
  yajl_gen_array_open (g);
  for (size_t i = 0; i < list->n; i++)
    {
      const ar_hide_target *t = &list->items[i];
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "path", t->path);
      oj_gen_kv_string (g, "pattern", t->pattern);
      oj_gen_kv_string (g, "reason", t->reason);
      oj_gen_kv_string (g, "how", how_names[t->how]);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}
