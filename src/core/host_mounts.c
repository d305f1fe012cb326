/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "host_mounts.h"
#include "../util/mountinfo.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define RECORD_MAX_SIZE (4u << 20)
/* A pass unmounts what path lookup reaches; one hidden under another
 * mount of the container's is reached in the next pass. */
#define MAX_PASSES 8

typedef struct
{
  uint64_t id;
  char *path;
} mount_entry;

typedef struct
{
  mount_entry *items;
  size_t len;
} mount_list;

static void
mount_list_free (mount_list *l)
{
  for (size_t i = 0; i < l->len; i++)
    free (l->items[i].path);
  free (l->items);
  *l = (mount_list){ 0 };
}
#define cleanup_mount_list __attribute__ ((cleanup (mount_list_free)))

/* What create noted: the rootfs and the mounts already under it. */
typedef struct
{
  char *rootfs;
  uint64_t *ids;
  size_t n_ids;
} record;

static void
record_free (record *r)
{
  free (r->rootfs);
  free (r->ids);
  *r = (record){ 0 };
}
#define cleanup_record __attribute__ ((cleanup (record_free)))

/* The record stores the rootfs as mountinfo writes paths (\ooo for space,
 * tab, newline and backslash), so it stays one line. */
static char *
encode_octal (const char *s)
{
  char *out = xmalloc (4 * strlen (s) + 1), *o = out;
  for (; *s; s++)
    if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
      o += sprintf (o, "\\%03o", (unsigned) (unsigned char) *s);
    else
      *o++ = *s;
  *o = '\0';
  return out;
}

/* "id parent major:minor root mountpoint ...": the id and mount point. */
static bool
parse_mountinfo_line (char *line, uint64_t *id, char **mountpoint)
{
  char *save = NULL, *field[5];
  for (int i = 0; i < 5; i++)
    if ((field[i] = strtok_r (i == 0 ? line : NULL, " ", &save)) == NULL)
      return false;
  char *end;
  *id = strtoull (field[0], &end, 10);
  if (*end != '\0')
    return false;
  *mountpoint = ar_mountinfo_decode (field[4]);
  return true;
}

static int
read_mounts_under (const char *rootfs, mount_list *out, ar_error_t **err)
{
  cleanup_file FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return ar_error_set (err, errno, "open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      mount_entry e;
      if (!parse_mountinfo_line (line, &e.id, &e.path))
        continue;
      if (!ar_path_at_or_under (e.path, rootfs))
        {
          free (e.path);
          continue;
        }
      out->items = xrealloc (out->items, (out->len + 1) * sizeof *out->items);
      out->items[out->len++] = e;
    }
  return 0;
}

int
ar_host_mounts_record (int state_fd, const char *rootfs, ar_error_t **err)
{
  cleanup_mount_list mount_list before = { 0 };
  if (read_mounts_under (rootfs, &before, err) < 0)
    return -1;
  cleanup_free char *path = encode_octal (rootfs);
  size_t cap = strlen (path) + 2 + before.len * 21; /* 20 digits + \n */
  cleanup_free char *text = xmalloc (cap);
  size_t used = (size_t) snprintf (text, cap, "%s\n", path);
  for (size_t i = 0; i < before.len; i++)
    used += (size_t) snprintf (text + used, cap - used, "%" PRIu64 "\n",
                               before.items[i].id);
  return ar_write_file_atomic_at (state_fd, AR_HOST_MOUNTS_FILE, text, used,
                                  0600, err);
}

static int
parse_record (char *data, record *r, ar_error_t **err)
{
  char *save = NULL;
  char *line = strtok_r (data, "\n", &save);
  if (line == NULL || line[0] != '/')
    return ar_error_set (err, 0, "`%s`: no rootfs", AR_HOST_MOUNTS_FILE);
  r->rootfs = ar_mountinfo_decode (line);
  while ((line = strtok_r (NULL, "\n", &save)) != NULL)
    {
      char *end;
      uint64_t id = strtoull (line, &end, 10);
      if (*end != '\0')
        return ar_error_set (err, 0, "`%s`: bad mount id `%s`",
                             AR_HOST_MOUNTS_FILE, line);
      r->ids = xrealloc (r->ids, (r->n_ids + 1) * sizeof *r->ids);
      r->ids[r->n_ids++] = id;
    }
  return 0;
}

/* r->rootfs stays NULL when there is no record. */
static int
load_record (int state_fd, record *r, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  cleanup_error ar_error_t *read_err = NULL;
  if (ar_read_file_at (state_fd, AR_HOST_MOUNTS_FILE, RECORD_MAX_SIZE, &data,
                       &len, &read_err)
      < 0)
    {
      if (read_err->errno_value == ENOENT)
        return 0;
      *err = steal_pointer (&read_err);
      return -1;
    }
  return parse_record (data, r, err);
}

static bool
noted (const record *r, uint64_t id)
{
  for (size_t i = 0; i < r->n_ids; i++)
    if (r->ids[i] == id)
      return true;
  return false;
}

static int
new_mounts (const record *r, mount_list *out, ar_error_t **err)
{
  if (read_mounts_under (r->rootfs, out, err) < 0)
    return -1;
  size_t kept = 0;
  for (size_t i = 0; i < out->len; i++)
    if (noted (r, out->items[i].id))
      free (out->items[i].path);
    else
      out->items[kept++] = out->items[i];
  out->len = kept;
  return 0;
}

/* Longest path first: a mount goes before the one it sits on. */
static int
deeper_first (const void *a, const void *b)
{
  size_t la = strlen (((const mount_entry *) a)->path);
  size_t lb = strlen (((const mount_entry *) b)->path);
  return la < lb ? 1 : la > lb ? -1 : 0;
}

/* The mount on top at `path`, looked up without leaving the rootfs: the
 * container may have put a symlink where a directory was. */
static int
open_mount_point (const char *rootfs, const char *path)
{
  cleanup_close int root_fd
      = open (rootfs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const char *inner = path + strlen (rootfs);
  if (root_fd < 0 || *inner == '\0')
    return steal_fd (&root_fd);
  cleanup_error ar_error_t *ignored = NULL;
  return ar_path_open_in_root (root_fd, inner, O_PATH | O_NOFOLLOW, &ignored);
}

/* Through the fd, so the unmount hits exactly the mount whose id was
 * checked, never one that pre-existed. */
static bool
unmount_if_new (const record *r, const mount_entry *e)
{
  cleanup_close int fd = open_mount_point (r->rootfs, e->path);
  struct statx sx;
  if (fd < 0
      || statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx)
             < 0
      || !(sx.stx_mask & STATX_MNT_ID) || noted (r, sx.stx_mnt_id))
    return false;
  char path[AR_FD_PATH_MAX];
  ar_fd_path (fd, path);
  return umount2 (path, MNT_DETACH) == 0;
}

int
ar_host_mounts_undo (int state_fd, ar_error_t **err)
{
  cleanup_record record r = { 0 };
  if (load_record (state_fd, &r, err) < 0)
    return -1;
  if (r.rootfs == NULL)
    return 0;
  for (int pass = 0;; pass++)
    {
      cleanup_mount_list mount_list left = { 0 };
      if (new_mounts (&r, &left, err) < 0)
        return -1;
      if (left.len == 0)
        return 0;
      qsort (left.items, left.len, sizeof *left.items, deeper_first);
      size_t gone = 0;
      for (size_t i = 0; pass < MAX_PASSES && i < left.len; i++)
        gone += unmount_if_new (&r, &left.items[i]);
      if (gone == 0)
        return ar_error_set (
            err, 0, "rootfs `%s`: cannot unmount `%s` (%zu mounts left)",
            r.rootfs, left.items[0].path, left.len);
    }
}
