/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "layers.h"
#include "hostfs.h"
#include "../util/cleanup.h"
#include "../util/idmount.h"
#include "../util/mountinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* More than any image has (overlayfs itself stops at 500). */
#define MAX_LAYERS 500

static void
push_fd (ar_layers *l, int fd)
{
  l->fds = xrealloc (l->fds, (l->n + 1) * sizeof *l->fds);
  l->fds[l->n++] = fd;
}

void
ar_layers_clear (ar_layers *l)
{
  for (size_t i = 0; i < l->n; i++)
    close (l->fds[i]);
  free (l->fds);
  *l = (ar_layers){ 0 };
}

char *
ar_layers_lowerdir (const ar_layers *l)
{
  char *s = xstrdup ("");
  for (size_t i = 0; i < l->n; i++)
    {
      char *next
          = xasprintf ("%s%s/proc/self/fd/%d", s, i ? ":" : "", l->fds[i]);
      free (s);
      s = next;
    }
  return s;
}

/* A value of overlay's mount options: mountinfo writes ',' ':' and '\'
 * of a path as \ooo, so a plain ',' ends an option and ':' a layer. */
static void
add_paths (char *value, char ***paths, size_t *n)
{
  char *save = NULL;
  for (char *p = strtok_r (value, ":", &save); p && *n < MAX_LAYERS;
       p = strtok_r (NULL, ":", &save))
    {
      *paths = xrealloc (*paths, (*n + 2) * sizeof **paths);
      (*paths)[(*n)++] = ar_mountinfo_decode (p);
      (*paths)[*n] = NULL;
    }
}

/* The layers of the overlay mounted at `path`, upper first; none when it
 * is no overlay mount. */
static char **
overlay_layers (const char *path, size_t *n)
{
  *n = 0;
  char **paths = xcalloc (1, sizeof *paths);
  cleanup_file FILE *f = fopen ("/proc/self/mountinfo", "re");
  cleanup_free char *line = NULL, *opts = NULL;
  size_t cap = 0;
  while (f && getline (&line, &cap, f) > 0)
    {
      ar_mountinfo_entry e;
      if (!ar_mountinfo_parse (line, &e))
        continue;
      /* The last mount on the path is the one seen there. */
      if (strcmp (e.mount_point, path) == 0)
        {
          free (opts);
          opts = strcmp (e.fstype, "overlay") == 0 ? xstrdup (e.super_opts)
                                                   : NULL;
        }
      ar_mountinfo_entry_clear (&e);
    }
  if (opts == NULL)
    return paths;
  cleanup_free char *upper = NULL;
  char *save = NULL;
  for (char *o = strtok_r (opts, ",", &save); o;
       o = strtok_r (NULL, ",", &save))
    if (strncmp (o, "upperdir=", 9) == 0)
      upper = xstrdup (o + 9);
    else if (strncmp (o, "lowerdir=", 9) == 0)
      add_paths (o + 9, &paths, n);
    else if (strncmp (o, "lowerdir+=", 10) == 0)
      add_paths (o + 10, &paths, n);
  if (upper && *n > 0)
    {
      size_t before = *n;
      char **tops = xcalloc (1, sizeof *tops);
      size_t n_tops = 0;
      add_paths (upper, &tops, &n_tops);
      paths = xrealloc (paths, (before + n_tops + 1) * sizeof *paths);
      memmove (paths + n_tops, paths, (before + 1) * sizeof *paths);
      memcpy (paths, tops, n_tops * sizeof *paths);
      *n = before + n_tops;
      free (tops);
    }
  return paths;
}

static int
attach_copy (const char *overlay_dir, size_t index, const char *source,
             const ar_id_shift *map, ar_layers *out, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (overlay_dir, AR_LAYERS_DIR);
  cleanup_free char *at = xasprintf ("%s/%zu", dir, index);
  if ((mkdir (dir, 0700) < 0 && errno != EEXIST)
      || (mkdir (at, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "mkdir `%s`", at);
  if (ar_idmount_attach_copy (source, map, at, err) < 0)
    return -1;
  int fd = ar_hostfs_open_dir (at, err);
  if (fd < 0)
    return -1;
  push_fd (out, fd);
  return 0;
}

bool
ar_layers_idmapped (const char *rootfs, const ar_userns_lease *lease)
{
  return lease != NULL && strcmp (rootfs, "/") != 0;
}

int
ar_layers_open (const char *overlay_dir, const char *rootfs,
                const ar_userns_lease *lease, ar_layers *out, ar_error_t **err)
{
  *out = (ar_layers){ 0 };
  if (!ar_layers_idmapped (rootfs, lease))
    {
      int fd = ar_hostfs_open_dir (rootfs, err);
      if (fd < 0)
        return -1;
      push_fd (out, fd);
      return 0;
    }
  const ar_id_shift map = ar_agent_userns_shift (lease);
  char real[PATH_MAX];
  if (realpath (rootfs, real) == NULL)
    return ar_error_set (err, errno, "rootfs `%s`", rootfs);
  size_t n = 0;
  cleanup_strv char **layers = overlay_layers (real, &n);
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    if (layers[i][0] != '/')
      r = ar_error_set (
          err, 0,
          "an overlay whose layer `%s` is a relative path cannot be idmapped",
          layers[i]);
  if (n == 0)
    r = attach_copy (overlay_dir, 0, real, &map, out, err);
  for (size_t i = 0; i < n && r == 0; i++)
    r = attach_copy (overlay_dir, i, layers[i], &map, out, err);
  if (r < 0)
    {
      ar_layers_clear (out);
      return ar_error_prefix (err, "rootfs `%s`", rootfs);
    }
  return 0;
}

int
ar_layers_reopen (const char *overlay_dir, const char *rootfs,
                  const ar_userns_lease *lease, ar_layers *out,
                  ar_error_t **err)
{
  *out = (ar_layers){ 0 };
  if (!ar_layers_idmapped (rootfs, lease))
    return ar_layers_open (overlay_dir, rootfs, lease, out, err);
  cleanup_free char *dir = ar_hostfs_join (overlay_dir, AR_LAYERS_DIR);
  for (size_t i = 0;; i++)
    {
      cleanup_free char *at = xasprintf ("%s/%zu", dir, i);
      if (!ar_hostfs_is_mountpoint (at))
        break;
      int fd = ar_hostfs_open_dir (at, err);
      if (fd < 0)
        {
          ar_layers_clear (out);
          return -1;
        }
      push_fd (out, fd);
    }
  if (out->n == 0)
    return ar_error_set (err, 0, "the overlay's idmapped layers are gone");
  return 0;
}

int
ar_layers_teardown (const char *overlay_dir, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (overlay_dir, AR_LAYERS_DIR);
  for (size_t i = 0;; i++)
    {
      cleanup_free char *at = xasprintf ("%s/%zu", dir, i);
      if (access (at, F_OK) < 0)
        break;
      if (ar_hostfs_unmount_and_remove (at, err) < 0)
        return -1;
    }
  if (rmdir (dir) < 0 && errno != ENOENT)
    return ar_error_set (err, errno, "remove `%s`", dir);
  return 0;
}
