/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "hostfs.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* A mount that stays busy after this many plain unmounts is detached. */
#define MAX_STACKED_MOUNTS 16

int
ar_hostfs_mount_tmpfs (const char *path, unsigned long flags, const char *data,
                       ar_error_t **err)
{
  if (mkdir (path, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "mkdir `%s`", path);
  if (mount ("tmpfs", path, "tmpfs", flags, data) < 0)
    return ar_error_set (err, errno, "mount tmpfs on `%s`", path);
  if (mount (NULL, path, NULL, MS_PRIVATE, NULL) < 0)
    {
      int saved = errno;
      umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW);
      return ar_error_set (err, saved, "make `%s` private", path);
    }
  return 0;
}

bool
ar_hostfs_is_mountpoint (const char *path)
{
  struct statx stx;
  if (statx (AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_INO, &stx) < 0)
    return false;
  if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
    return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;

  /* Kernels before 5.8: a mount root sits on another device than its
   * parent (true for the tmpfs and overlay mounts made here). */
  cleanup_free char *parent = xasprintf ("%s/..", path);
  struct stat self, up;
  if (lstat (path, &self) < 0 || stat (parent, &up) < 0)
    return false;
  return self.st_dev != up.st_dev;
}

int
ar_hostfs_detach_and_remove (const char *path, ar_error_t **err)
{
  while (ar_hostfs_is_mountpoint (path))
    if (umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
      return ar_error_set (err, errno, "unmount `%s`", path);
  if (rmdir (path) < 0 && errno != ENOENT)
    return ar_error_set (err, errno, "remove `%s`", path);
  return 0;
}

int
ar_hostfs_unmount_and_remove (const char *path, ar_error_t **err)
{
  for (int i = 0; ar_hostfs_is_mountpoint (path); i++)
    {
      int flags = UMOUNT_NOFOLLOW | (i >= MAX_STACKED_MOUNTS ? MNT_DETACH : 0);
      if (umount2 (path, flags) == 0)
        continue;
      if (errno == EBUSY && umount2 (path, flags | MNT_DETACH) == 0)
        continue;
      if (errno != EINVAL) /* EINVAL: not a mount point (any more) */
        return ar_error_set (err, errno, "unmount `%s`", path);
      break;
    }
  /* Removing the directory also detaches copies of the mount that
   * propagated into other mount namespaces (Linux >= 3.18). */
  if (rmdir (path) < 0 && errno != ENOENT)
    return ar_error_set (err, errno, "remove `%s`", path);
  return 0;
}

int
ar_hostfs_open_dir (const char *path, ar_error_t **err)
{
  int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  return fd;
}

char *
ar_hostfs_json_members (yajl_gen gen)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (gen, &buf, &len);
  char *s = xasprintf ("%.*s", (int) (len - 2), (const char *) buf + 1);
  yajl_gen_free (gen);
  return s;
}

char *
ar_hostfs_join (const char *dir, const char *name)
{
  return xasprintf ("%s/%s", dir, name);
}

int
ar_hostfs_map_id (const oci_id_mapping *mappings, size_t n, uint32_t id,
                  uint32_t *host_id, ar_error_t **err)
{
  if (n == 0)
    {
      *host_id = id;
      return 0;
    }
  for (size_t i = 0; i < n; i++)
    if (id >= mappings[i].container_id
        && id - mappings[i].container_id < mappings[i].size)
      {
        *host_id = mappings[i].host_id + (id - mappings[i].container_id);
        return 0;
      }
  return ar_error_set (err, 0, "id %u is not mapped to the host", id);
}

static bool
is_file_bind (const oci_mount *m)
{
  struct stat st;
  return m->type && strcmp (m->type, "bind") == 0 && m->source
         && stat (m->source, &st) == 0 && !S_ISDIR (st.st_mode);
}

/* Below an earlier mount (/dev/pts, /sys/fs/cgroup/...) a mount point is
 * made in that mount, by the container, whose it is. */
static bool
below_earlier_mount (const oci_spec *spec, size_t i)
{
  const char *dest = spec->mounts[i].destination;
  for (size_t j = 0; j < i; j++)
    {
      const char *earlier = spec->mounts[j].destination;
      if (strcmp (earlier, "/") != 0 && strcmp (dest, earlier) != 0
          && ar_path_at_or_under (dest, earlier))
        return true;
    }
  return false;
}

int
ar_hostfs_make_mount_points (const char *root, const oci_spec *spec,
                             ar_error_t **err)
{
  cleanup_close int root_fd = ar_hostfs_open_dir (root, err);
  if (root_fd < 0)
    return -1;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      /* One stat for the usual case, a mount point the image has; a
       * path through a symlink only makes the container do the walk. */
      struct stat st;
      if (below_earlier_mount (spec, i)
          || fstatat (root_fd, m->destination + strspn (m->destination, "/"),
                      &st, AT_SYMLINK_NOFOLLOW)
                 == 0)
        continue;
      cleanup_close int fd = ar_path_create_in_root (root_fd, m->destination,
                                                     !is_file_bind (m), err);
      if (fd < 0)
        return ar_error_prefix (err, "mount point `%s`", m->destination);
    }
  return 0;
}

int
ar_hostfs_process_owner (const oci_spec *spec, uid_t *uid, gid_t *gid,
                         ar_error_t **err)
{
  uint32_t container_uid = spec->process ? spec->process->user.uid : 0;
  uint32_t container_gid = spec->process ? spec->process->user.gid : 0;
  const oci_linux *l = spec->linux_cfg;
  uint32_t host_uid, host_gid;
  if (ar_hostfs_map_id (l ? l->uid_mappings : NULL, l ? l->n_uid_mappings : 0,
                        container_uid, &host_uid, err)
          < 0
      || ar_hostfs_map_id (l ? l->gid_mappings : NULL,
                           l ? l->n_gid_mappings : 0, container_gid, &host_gid,
                           err)
             < 0)
    return ar_error_prefix (err, "process user");
  *uid = host_uid;
  *gid = host_gid;
  return 0;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0 when it is not valid. */
static size_t
utf8_sequence_length (const unsigned char *s)
{
  if (s[0] < 0x80)
    return 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xbf;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4;
  else
    return 0;
  if (s[0] == 0xe0)
    lo = 0xa0;
  else if (s[0] == 0xed)
    hi = 0x9f;
  else if (s[0] == 0xf0)
    lo = 0x90;
  else if (s[0] == 0xf4)
    hi = 0x8f;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return len;
}

void
ar_hostfs_gen_name (yajl_gen gen, const char *s)
{
  static const char replacement[] = "\xef\xbf\xbd";
  size_t n = strlen (s);
  cleanup_free char *clean = xmalloc (3 * n + 1);
  size_t used = 0;
  const unsigned char *p = (const unsigned char *) s;
  while (*p)
    {
      size_t len = utf8_sequence_length (p);
      if (len == 0)
        {
          memcpy (clean + used, replacement, 3);
          used += 3;
          p++;
          continue;
        }
      memcpy (clean + used, p, len);
      used += len;
      p += len;
    }
  yajl_gen_string (gen, (const unsigned char *) clean, used);
}

bool
ar_hostfs_name_is_clean (const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  while (*p)
    {
      if (*p < 0x20 || *p == 0x7f)
        return false;
      size_t len = utf8_sequence_length (p);
      if (len == 0)
        return false;
      p += len;
    }
  return true;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
ar_hostfs_sorted_names (int dirfd, size_t *n)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  cleanup_dir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return NULL;
    }
  size_t used = 0, cap = 16;
  char **names = xmalloc (cap * sizeof *names);
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      if (used + 1 == cap)
        names = xrealloc (names, (cap *= 2) * sizeof *names);
      names[used++] = xstrdup (e->d_name);
    }
  names[used] = NULL;
  qsort (names, used, sizeof *names, compare_names);
  *n = used;
  return names;
}
