/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "snapshot.h"
#include "hostfs.h"
#include "overlay.h"
#include "../../oci/json.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SNAPSHOTS_DIR "snapshots" /* in the overlay's tmpfs */
#define INFO_FILE "info.json"
#define INFO_MAX_BYTES (64 * 1024)
#define UNFINISHED_PREFIX ".new-" /* a snapshot being made */

void
ar_snapshot_info_clear (ar_snapshot_info *info)
{
  free (info->name);
  free (info->created);
  free (info->rootfs);
  free (info->workspace);
  *info = (ar_snapshot_info){ 0 };
}

/* <state>/overlay/snapshots, open and locked (LOCK_EX or LOCK_SH); made
 * when `make`. -1 with *err when the container has no overlay, or no
 * snapshot yet and !make. */
static int
open_snapshots (const char *state_dir, bool make, int lock, ar_error_t **err)
{
  cleanup_free char *overlay = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  if (!ar_hostfs_is_mountpoint (overlay))
    return ar_error_set (err, 0,
                         "the container has no ephemeral overlay (profile "
                         "agent) to take snapshots of");
  cleanup_free char *dir = ar_hostfs_join (overlay, SNAPSHOTS_DIR);
  if (make && mkdir (dir, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "mkdir `%s`", dir);
  cleanup_close int fd
      = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", dir);
  if (flock (fd, lock) < 0)
    return ar_error_set (err, errno, "lock `%s`", dir);
  return steal_fd (&fd);
}

/* Copy the upper layer `upper` (below the overlay dir) into `layer` below
 * the snapshot being made; an upper layer that is not there is no layer. */
static int
copy_layer (const char *overlay, const char *upper, int new_fd,
            const char *layer, ar_snapshot_info *info, ar_error_t **err)
{
  cleanup_free char *path = ar_hostfs_join (overlay, upper);
  cleanup_close int src
      = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return errno == ENOENT ? 0 : ar_error_set (err, errno, "open `%s`", path);
  if (mkdirat (new_fd, layer, 0700) < 0)
    return ar_error_set (err, errno, "mkdir `%s`", layer);
  cleanup_close int dst
      = openat (new_fd, layer, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dst < 0)
    return ar_error_set (err, errno, "open `%s`", layer);
  ar_tree_copy_stats stats = { .root_metadata = true };
  if (ar_tree_copy (src, dst, &stats, err) < 0)
    return ar_error_prefix (err, "%s layer", layer);
  info->entries += stats.entries;
  info->bytes += stats.bytes;
  return 0;
}

void
ar_snapshot_info_gen (yajl_gen g, const ar_snapshot_info *info)
{
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "name", info->name);
  oj_gen_kv_string (g, "created", info->created);
  oj_gen_kv_string (g, "rootfs", info->rootfs);
  oj_gen_kv_string (g, "workspace", info->workspace);
  oj_gen_kv_u64 (g, "entries", info->entries);
  oj_gen_kv_u64 (g, "bytes", info->bytes);
  if (info->ids.size)
    {
      oj_gen_key (g, "ids");
      yajl_gen_map_open (g);
      oj_gen_kv_u64 (g, "uid", info->ids.uid);
      oj_gen_kv_u64 (g, "gid", info->ids.gid);
      oj_gen_kv_u64 (g, "count", info->ids.size);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static int
write_info (int new_fd, const ar_snapshot_info *info, ar_error_t **err)
{
  yajl_gen g = oj_gen_new (true, "  ");
  ar_snapshot_info_gen (g, info);
  cleanup_free char *json = oj_gen_finish (g);
  return ar_write_file_atomic_at (new_fd, INFO_FILE, json, strlen (json), 0400,
                                  err);
}

static int
fill_snapshot (const char *state_dir, int new_fd, ar_snapshot_info *info,
               ar_error_t **err)
{
  cleanup_free char *overlay = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  info->rootfs = ar_overlay_lower_path (overlay);
  if (info->rootfs == NULL)
    return ar_error_set (err, 0, "the overlay's lower layer is not recorded");
  if (!ar_agent_userns_recorded (state_dir, &info->ids))
    info->ids = (ar_userns_lease){ 0 };
  if (copy_layer (overlay, "upper", new_fd, AR_SNAPSHOT_ROOT_LAYER, info, err)
          < 0
      || (info->workspace
          && copy_layer (overlay, AR_OVERLAY_WS_UPPER, new_fd,
                         AR_SNAPSHOT_WORKSPACE_LAYER, info, err)
                 < 0))
    return -1;
  /* Nothing in it is written again: the layers are read-only records. */
  if (fchmod (new_fd, 0500) < 0)
    return ar_error_set (err, errno, "chmod");
  return write_info (new_fd, info, err);
}

/* What a take killed half-way left: with the lock held, no take is on. */
static void
remove_unfinished (int dir_fd)
{
  size_t n = 0;
  cleanup_strv char **names = ar_hostfs_sorted_names (dir_fd, &n);
  for (size_t i = 0; names && i < n; i++)
    if (strncmp (names[i], UNFINISHED_PREFIX, strlen (UNFINISHED_PREFIX)) == 0)
      ar_tree_remove_at (dir_fd, names[i]);
}

int
ar_snapshot_take (const char *state_dir, const char *name,
                  const char *workspace, const char *created,
                  ar_snapshot_info *out, ar_error_t **err)
{
  *out = (ar_snapshot_info){ 0 };
  if (ar_check_plain_name ("snapshot", name, err) < 0)
    return -1;
  cleanup_close int dir_fd = open_snapshots (state_dir, true, LOCK_EX, err);
  if (dir_fd < 0)
    return -1;
  if (faccessat (dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return ar_error_set (err, 0, "snapshot `%s` exists", name);

  /* Made aside and renamed into place: a snapshot is whole or absent,
   * even when this process is killed half-way. */
  remove_unfinished (dir_fd);
  cleanup_free char *tmp = xasprintf (UNFINISHED_PREFIX "%s", name);
  if (mkdirat (dir_fd, tmp, 0700) < 0)
    return ar_error_set (err, errno, "snapshot `%s`: mkdir", name);
  cleanup_close int new_fd
      = openat (dir_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  *out = (ar_snapshot_info){ .name = xstrdup (name),
                             .created = xstrdup (created),
                             .workspace
                             = workspace ? xstrdup (workspace) : NULL };
  int r = new_fd < 0 ? ar_error_set (err, errno, "open `%s`", tmp)
                     : fill_snapshot (state_dir, new_fd, out, err);
  if (r == 0 && renameat (dir_fd, tmp, dir_fd, name) < 0)
    r = ar_error_set (err, errno, "rename `%s`", tmp);
  if (r < 0)
    {
      ar_error_prefix (err, "snapshot `%s`", name);
      ar_tree_remove_at (dir_fd, tmp);
      ar_snapshot_info_clear (out);
    }
  return r;
}

static int
read_ids (oj_ctx *c, const oj_value *v, void *out)
{
  ar_snapshot_info *info = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "uid", oj_read_u32, &info->ids.uid) < 0
      || oj_required (c, v, "gid", oj_read_u32, &info->ids.gid) < 0
      || oj_required (c, v, "count", oj_read_u32, &info->ids.size) < 0)
    return -1;
  return 0;
}

static int
read_info (int dir_fd, const char *name, ar_snapshot_info *info,
           ar_error_t **err)
{
  cleanup_free char *file = xasprintf ("%s/%s", name, INFO_FILE);
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (ar_read_file_at (dir_fd, file, INFO_MAX_BYTES, &data, &len, err) < 0)
    return -1;
  oj_value v = { 0 };
  if (oj_parse (data, len, INFO_FILE, &v, err) < 0)
    return -1;
  oj_ctx c = { .file = INFO_FILE, .err = err };
  *info = (ar_snapshot_info){ 0 };
  int r
      = oj_expect_object (&c, &v) < 0
                || oj_required (&c, &v, "name", oj_read_string, &info->name) < 0
                || oj_field (&c, &v, "created", oj_read_string, &info->created)
                       < 0
                || oj_field (&c, &v, "rootfs", oj_read_string, &info->rootfs)
                       < 0
                || oj_field (&c, &v, "workspace", oj_read_string,
                             &info->workspace)
                       < 0
                || oj_field (&c, &v, "entries", oj_read_u64, &info->entries) < 0
                || oj_field (&c, &v, "bytes", oj_read_u64, &info->bytes) < 0
                || oj_field (&c, &v, "ids", read_ids, info) < 0
            ? -1
            : 0;
  oj_value_clear (&v);
  if (r < 0)
    ar_snapshot_info_clear (info);
  return r;
}

static int
by_created (const void *a, const void *b)
{
  const ar_snapshot_info *x = a, *y = b;
  int c = strcmp (x->created ? x->created : "", y->created ? y->created : "");
  return c ? c : strcmp (x->name, y->name);
}

void
ar_snapshot_list_free (ar_snapshot_info *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ar_snapshot_info_clear (&list[i]);
  free (list);
}

int
ar_snapshot_list (const char *state_dir, ar_snapshot_info **out, size_t *n,
                  ar_error_t **err)
{
  *out = NULL;
  *n = 0;
  cleanup_free char *overlay = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  cleanup_free char *dir = ar_hostfs_join (overlay, SNAPSHOTS_DIR);
  if (ar_hostfs_is_mountpoint (overlay) && access (dir, F_OK) < 0)
    return 0; /* none taken yet */
  cleanup_close int dir_fd = open_snapshots (state_dir, false, LOCK_SH, err);
  if (dir_fd < 0)
    return -1;
  size_t count = 0;
  cleanup_strv char **names = ar_hostfs_sorted_names (dir_fd, &count);
  ar_snapshot_info *list = xcalloc (count + 1, sizeof *list);
  size_t used = 0;
  for (size_t i = 0; names && i < count; i++)
    {
      if (names[i][0] == '.') /* one being made */
        continue;
      if (read_info (dir_fd, names[i], &list[used], err) < 0)
        {
          ar_snapshot_list_free (list, used);
          return ar_error_prefix (err, "snapshot `%s`", names[i]);
        }
      used++;
    }
  qsort (list, used, sizeof *list, by_created);
  *out = list;
  *n = used;
  return 0;
}

int
ar_snapshot_remove (const char *state_dir, const char *name, ar_error_t **err)
{
  if (ar_check_plain_name ("snapshot", name, err) < 0)
    return -1;
  cleanup_close int dir_fd = open_snapshots (state_dir, true, LOCK_EX, err);
  if (dir_fd < 0)
    return -1;
  if (faccessat (dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, 0, "snapshot `%s`: no such snapshot", name);
  /* Read-only as made: the owner (root) gets write back to empty it. */
  if (fchmodat (dir_fd, name, 0700, 0) < 0)
    return ar_error_set (err, errno, "snapshot `%s`: chmod", name);
  ar_tree_remove_at (dir_fd, name);
  if (faccessat (dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return ar_error_set (err, 0,
                         "snapshot `%s`: not all of it could be removed", name);
  return 0;
}

int
ar_snapshot_find (const char *state_dir, const char *id, const char *name,
                  char **dir, ar_snapshot_info *info, ar_error_t **err)
{
  *dir = NULL;
  if (ar_check_plain_name ("snapshot", name, err) < 0)
    return -1;
  cleanup_free char *overlay = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  cleanup_free char *snapshots = ar_hostfs_join (overlay, SNAPSHOTS_DIR);
  if (ar_hostfs_is_mountpoint (overlay) && access (snapshots, F_OK) < 0)
    return ar_error_set (err, 0, "container `%s` has no snapshot `%s`", id,
                         name);
  cleanup_close int dir_fd = open_snapshots (state_dir, false, LOCK_SH, err);
  if (dir_fd < 0)
    return -1;
  if (faccessat (dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, 0, "container `%s` has no snapshot `%s`", id,
                         name);
  if (read_info (dir_fd, name, info, err) < 0)
    return ar_error_prefix (err, "snapshot `%s`", name);
  *dir = ar_hostfs_join (snapshots, name);
  return 0;
}

/* From the snapshot's container's ids to the seeded one's (`to` NULL or
 * of size 0: host ids). */
static bool
seed_shift (const ar_userns_lease *from, const ar_userns_lease *to,
            ar_id_shift *shift)
{
  bool into = to && to->size;
  uint32_t count = into ? to->size : from->size;
  *shift = (ar_id_shift){ .uid_from = from->size ? from->uid : 0,
                          .gid_from = from->size ? from->gid : 0,
                          .uid_to = into ? to->uid : 0,
                          .gid_to = into ? to->gid : 0,
                          .count = count };
  return count > 0
         && (shift->uid_from != shift->uid_to
             || shift->gid_from != shift->gid_to);
}

int
ar_snapshot_seed (const char *snapshot_dir, const char *layer,
                  const char *upper, bool top_metadata,
                  const ar_userns_lease *lease, ar_error_t **err)
{
  cleanup_free char *parent = xasprintf ("%s/..", snapshot_dir);
  cleanup_close int lock_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd < 0 || flock (lock_fd, LOCK_SH) < 0)
    return ar_error_set (err, errno, "open `%s`", snapshot_dir);
  cleanup_free char *path = ar_hostfs_join (snapshot_dir, layer);
  cleanup_close int src
      = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return errno == ENOENT ? 0 : ar_error_set (err, errno, "open `%s`", path);
  cleanup_close int dst
      = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst < 0)
    return ar_error_set (err, errno, "open `%s`", upper);
  ar_snapshot_info info = { 0 };
  if (read_info (AT_FDCWD, snapshot_dir, &info, err) < 0)
    return -1;
  ar_id_shift shift;
  bool moved = seed_shift (&info.ids, lease, &shift);
  ar_snapshot_info_clear (&info);
  ar_tree_copy_stats stats
      = { .root_metadata = top_metadata, .shift = moved ? &shift : NULL };
  if (ar_tree_copy (src, dst, &stats, err) < 0)
    return ar_error_prefix (err, "snapshot's %s layer", layer);
  return 0;
}
