/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "overlay.h"
#include "hostfs.h"
#include "layers.h"
#include "snapshot.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/mountinfo.h"
#include "../util/tree.h"
#include "../util/userns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define LOWER_PATH_FILE "lower.path" /* in the tmpfs, beside upper/ */
#define MAX_WALK_DEPTH 256

/* Overlay options, most wanted first. index/xino/metacopy/redirect_dir
 * off: the upper layer then holds whole copies only, which keeps it
 * self-describing for the change list, and nothing is recorded about
 * the lower layer that a later mount of the same rootfs could trip on.
 * Older kernels reject some of these; fall back to fewer. */
static const char *const overlay_option_sets[] = {
  ",index=off,xino=off,redirect_dir=off,metacopy=off",
  ",index=off,redirect_dir=off",
  "",
};

/* In a user namespace overlayfs keeps its own attributes in user.*
 * xattrs (trusted.* are out of reach) and refuses redirect_dir, which
 * it cannot follow there anyway. */
static const char *const userns_option_sets[] = {
  ",userxattr,index=off,xino=off,metacopy=off",
  ",userxattr",
};

static int
make_layer_dirs (const char *dir, const struct stat *root_st, ar_error_t **err)
{
  static const char *const names[] = { "upper", "work", "merged" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      cleanup_free char *path = ar_hostfs_join (dir, names[i]);
      if (mkdir (path, 0700) < 0 && errno != EEXIST)
        return ar_error_set (err, errno, "mkdir `%s`", path);
    }
  /* The merged root takes its owner and mode from the upper root: give it
   * the rootfs root's, so "/" looks as the image says. */
  cleanup_free char *upper = ar_hostfs_join (dir, "upper");
  /* Without root an owner outside the user namespace's map (the host's
   * root, seen as the overflow id) cannot be given (EINVAL): the runtime's
   * mapped root keeps it. */
  if ((chown (upper, root_st->st_uid, root_st->st_gid) < 0 && errno != EINVAL)
      || chmod (upper, root_st->st_mode & 07777) < 0)
    return ar_error_set (err, errno, "set owner and mode of `%s`", upper);
  return 0;
}

/* Layers are passed as /proc/self/fd/N (ar_layers_lowerdir): no escaping
 * of ',' ':' or '\' in the rootfs path, and nothing swapped in between
 * the checks and the mount. */
static int
mount_layers (const char *lowerdir, const char *upper, const char *work,
              const char *merged, ar_error_t **err)
{
  cleanup_close int upper_fd = ar_hostfs_open_dir (upper, err);
  cleanup_close int work_fd
      = upper_fd < 0 ? -1 : ar_hostfs_open_dir (work, err);
  if (upper_fd < 0 || work_fd < 0)
    return -1;

  bool userns = ar_userns_unprivileged ();
  const char *const *sets = userns ? userns_option_sets : overlay_option_sets;
  size_t n_sets
      = userns ? sizeof userns_option_sets / sizeof *userns_option_sets
               : sizeof overlay_option_sets / sizeof *overlay_option_sets;
  int saved = 0;
  for (size_t i = 0; i < n_sets; i++)
    {
      cleanup_free char *data
          = xasprintf ("lowerdir=%s,upperdir=/proc/self/fd/%d,"
                       "workdir=/proc/self/fd/%d%s",
                       lowerdir, upper_fd, work_fd, sets[i]);
      if (mount ("overlay", merged, "overlay", 0, data) == 0)
        {
          if (mount (NULL, merged, NULL, MS_PRIVATE, NULL) < 0)
            return ar_error_set (err, errno, "make `%s` private", merged);
          return 0;
        }
      saved = errno;
      if (saved != EINVAL)
        break;
    }
  return ar_error_set (err, saved, "mount overlay on `%s`", merged);
}

/* Top-level names of the mount points below "/" (malloc'd, NULL-ended). */
static char **
mounted_top_level_names (void)
{
  cleanup_file FILE *f = fopen ("/proc/self/mountinfo", "re");
  char **names = xcalloc (1, sizeof *names);
  size_t n = 0;
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (f && getline (&line, &cap, f) > 0)
    {
      ar_mountinfo_entry e;
      if (!ar_mountinfo_parse (line, &e))
        continue;
      const char *top = e.mount_point + 1;
      size_t len = strcspn (top, "/");
      if (e.mount_point[0] == '/' && len > 0)
        {
          names = xrealloc (names, (n + 2) * sizeof *names);
          names[n++] = xasprintf ("%.*s", (int) len, top);
          names[n] = NULL;
        }
      ar_mountinfo_entry_clear (&e);
    }
  return names;
}

static bool
strv_has (char *const *v, const char *s)
{
  for (; *v; v++)
    if (strcmp (*v, s) == 0)
      return true;
  return false;
}

/* One top-level entry of the split root: its own overlay, or, with mounts
 * at or below it, an empty directory. Those mounts are not part of the
 * root file system, which is all a root sandbox shows either; what is
 * under them cannot be reached from here, and they would bring the host's
 * sockets in /run along (a read-only mount does not stop a connect). The
 * container mounts its own /proc, /sys and /dev there; /tmp and /run are
 * then empty and writable, inside the overlay's tmpfs. */
static int
split_entry (const char *dir, int lower_fd, const char *name,
             char *const *mounted, ar_error_t **err)
{
  struct stat st;
  if (fstatat (lower_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0; /* gone meanwhile */
  cleanup_free char *merged = xasprintf ("%s/merged/%s", dir, name);
  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t len = readlinkat (lower_fd, name, target, sizeof target - 1);
      if (len < 0)
        return ar_error_set (err, errno, "read link `/%s`", name);
      target[len] = '\0';
      return symlink (target, merged) < 0
                 ? ar_error_set (err, errno, "symlink `%s`", merged)
                 : 0;
    }
  if (!S_ISDIR (st.st_mode))
    return 0; /* a file at the top of / is no place a command looks */
  if (mkdir (merged, st.st_mode & 07777) < 0)
    return ar_error_set (err, errno, "mkdir `%s`", merged);
  if (strv_has (mounted, name))
    return 0;
  cleanup_close int sub_fd
      = openat (lower_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub_fd < 0)
    return ar_error_set (err, errno, "open `/%s`", name);
  cleanup_free char *upper = xasprintf ("%s/upper/%s", dir, name);
  cleanup_free char *work = xasprintf ("%s/work/%s", dir, name);
  if (mkdir (upper, st.st_mode & 07777) < 0 || mkdir (work, 0700) < 0)
    return ar_error_set (err, errno, "mkdir `%s`", upper);
  cleanup_free char *lowerdir = xasprintf ("/proc/self/fd/%d", sub_fd);
  return mount_layers (lowerdir, upper, work, merged, err);
}

/* Without root a lower layer may have no mounts below it (the kernel
 * keeps a user namespace from looking under mounts it inherited), and the
 * host's / always has some. Its root is then assembled from one overlay
 * per top-level directory, whose upper and work dirs sit side by side in
 * the same tmpfs: upper/ still reads as one layer for the change list. */
static int
mount_split_overlay (const char *dir, int lower_fd, ar_error_t **err)
{
  cleanup_strv char **mounted = mounted_top_level_names ();
  cleanup_dir DIR *d
      = fdopendir (openat (lower_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d == NULL)
    return ar_error_set (err, errno, "list `/`");
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0
        && split_entry (dir, lower_fd, e->d_name, mounted, err) < 0)
      return -1;
  return 0;
}

static int
mount_overlay (const char *dir, const ar_layers *lower, bool split,
               ar_error_t **err)
{
  if (split)
    return mount_split_overlay (dir, lower->fds[0], err);
  cleanup_free char *upper = ar_hostfs_join (dir, "upper");
  cleanup_free char *work = ar_hostfs_join (dir, "work");
  cleanup_free char *merged = ar_hostfs_join (dir, "merged");
  cleanup_free char *lowerdir = ar_layers_lowerdir (lower);
  return mount_layers (lowerdir, upper, work, merged, err);
}

static int
overlay_prepare_in (const char *dir, const char *rootfs,
                    const ar_userns_lease *lease, uint64_t size_bytes,
                    uint64_t inodes, const char *from, ar_error_t **err)
{
  struct stat root_st;
  if (stat (rootfs, &root_st) < 0)
    return ar_error_set (err, errno, "stat `%s`", rootfs);
  /* Seen through idmapped layers, "/" is owned as they show it. */
  if (ar_layers_idmapped (rootfs, lease))
    {
      ar_id_shift shift = ar_agent_userns_shift (lease);
      root_st.st_uid = ar_id_shift_uid (&shift, root_st.st_uid);
      root_st.st_gid = ar_id_shift_gid (&shift, root_st.st_gid);
    }

  cleanup_free char *data = xasprintf ("mode=0700");
  if (size_bytes > 0)
    {
      char *more
          = xasprintf ("%s,size=%llu", data, (unsigned long long) size_bytes);
      free (data);
      data = more;
    }
  if (inodes > 0)
    {
      char *more
          = xasprintf ("%s,nr_inodes=%llu", data, (unsigned long long) inodes);
      free (data);
      data = more;
    }
  if (ar_hostfs_mount_tmpfs (dir, MS_NOSUID | MS_NODEV, data, err) < 0)
    return -1;

  /* Kept for the change list at delete: "modified" vs "created". */
  cleanup_free char *lower_file = ar_hostfs_join (dir, LOWER_PATH_FILE);
  if (ar_write_file_atomic_at (AT_FDCWD, lower_file, rootfs, strlen (rootfs),
                               0600, err)
          < 0
      || make_layer_dirs (dir, &root_st, err) < 0)
    return -1;
  cleanup_layers ar_layers lower = { 0 };
  if (ar_layers_open (dir, rootfs, lease, &lower, err) < 0)
    return -1;
  bool split = strcmp (rootfs, "/") == 0 && ar_userns_unprivileged ();
  if (from && split)
    return ar_error_set (err, 0,
                         "a snapshot cannot seed a root made without root");
  if (from)
    {
      cleanup_free char *upper = ar_hostfs_join (dir, "upper");
      if (ar_snapshot_seed (from, AR_SNAPSHOT_ROOT_LAYER, upper, true, lease,
                            err)
          < 0)
        return -1;
    }
  return mount_overlay (dir, &lower, split, err);
}

int
ar_overlay_prepare (const char *state_dir, const char *rootfs,
                    const ar_userns_lease *lease, uint64_t size_bytes,
                    uint64_t inodes, const char *from, char **merged,
                    ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  if (overlay_prepare_in (dir, rootfs, lease, size_bytes, inodes, from, err)
      < 0)
    {
      ar_overlay_teardown (state_dir, NULL);
      return ar_error_prefix (err, "ephemeral overlay");
    }
  *merged = ar_hostfs_join (dir, "merged");
  return 0;
}

char *
ar_overlay_lower_path (const char *overlay_dir)
{
  cleanup_free char *file = ar_hostfs_join (overlay_dir, LOWER_PATH_FILE);
  char *rootfs = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_read_file_at (AT_FDCWD, file, PATH_MAX, &rootfs, NULL, &ignored) < 0)
    return NULL;
  return rootfs;
}

int
ar_overlay_remount (const char *state_dir, const char *from, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  cleanup_free char *merged = ar_hostfs_join (dir, "merged");
  cleanup_free char *upper = ar_hostfs_join (dir, "upper");
  cleanup_free char *work = ar_hostfs_join (dir, "work");
  ar_userns_lease lease;
  bool leased = ar_agent_userns_recorded (state_dir, &lease);
  cleanup_free char *rootfs = ar_overlay_lower_path (dir);
  if (rootfs == NULL)
    return ar_error_set (err, errno, "the overlay's lower layer");
  cleanup_layers ar_layers lower = { 0 };
  if (ar_layers_reopen (dir, rootfs, leased ? &lease : NULL, &lower, err) < 0)
    return -1;
  if (ar_hostfs_unmount_and_remove (merged, err) < 0)
    return -1;
  cleanup_close int top_fd
      = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top_fd < 0)
    return ar_error_set (err, errno, "open `%s`", dir);
  ar_tree_remove_at (top_fd, "upper");
  ar_tree_remove_at (top_fd, "work");
  if (mkdir (merged, 0700) < 0 || mkdir (upper, 0700) < 0
      || mkdir (work, 0700) < 0)
    return ar_error_set (err, errno, "mkdir under `%s`", dir);
  if (ar_snapshot_seed (from, AR_SNAPSHOT_ROOT_LAYER, upper, true,
                        leased ? &lease : NULL, err)
      < 0)
    return -1;
  cleanup_free char *lowerdir = ar_layers_lowerdir (&lower);
  return mount_layers (lowerdir, upper, work, merged, err);
}

int
ar_overlay_teardown (const char *state_dir, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  /* Everything is mounted in the overlay's tmpfs: detached with it in one
   * call, the kernel waits for one RCU grace period, not one per mount. */
  if (ar_hostfs_is_mountpoint (dir))
    return ar_hostfs_detach_and_remove (dir, err) < 0
               ? ar_error_prefix (err, "ephemeral overlay")
               : 0;
  /* A create that failed before the tmpfs: whatever it did mount. The
   * overlays before the idmapped copies they sit on. A split root
   * (mount_split_overlay) is no mount itself: its overlays go with the
   * tmpfs below them. */
  static const char *const mounts[]
      = { "merged", AR_OVERLAY_WS_MERGED, AR_OVERLAY_WS_LOWER };
  for (size_t i = 0; i < sizeof mounts / sizeof *mounts; i++)
    {
      cleanup_free char *path = ar_hostfs_join (dir, mounts[i]);
      if (ar_hostfs_is_mountpoint (path)
          && ar_hostfs_unmount_and_remove (path, err) < 0)
        return ar_error_prefix (err, "ephemeral overlay");
    }
  if (ar_layers_teardown (dir, err) < 0)
    return ar_error_prefix (err, "ephemeral overlay");
  if (ar_hostfs_unmount_and_remove (dir, err) < 0)
    return ar_error_prefix (err, "ephemeral overlay");
  return 0;
}

/* ---- the change list -------------------------------------------------- */

typedef enum
{
  CHANGE_CREATED,
  CHANGE_MODIFIED,
  CHANGE_DELETED,
  CHANGE_REPLACED,
  CHANGE_KINDS
} change_kind;

static const char *const change_keys[CHANGE_KINDS]
    = { "created", "modified", "deleted", "replaced" };

typedef struct
{
  char **paths[CHANGE_KINDS];
  size_t n[CHANGE_KINDS];
  size_t total;
  size_t bytes;
  bool truncated;
  const ar_secret_set *secrets;
  const char *const *mount_points;
} change_list;

static void
change_list_clear (change_list *c)
{
  for (int k = 0; k < CHANGE_KINDS; k++)
    {
      for (size_t i = 0; i < c->n[k]; i++)
        free (c->paths[k][i]);
      free (c->paths[k]);
    }
}

static void
record (change_list *c, change_kind kind, const char *path)
{
  size_t len = strlen (path);
  if (c->total >= AR_OVERLAY_MAX_CHANGES
      || c->bytes + len > AR_OVERLAY_MAX_CHANGE_BYTES)
    {
      c->truncated = true;
      return;
    }
  c->paths[kind]
      = xrealloc (c->paths[kind], (c->n[kind] + 1) * sizeof *c->paths[kind]);
  c->paths[kind][c->n[kind]++] = xstrdup (path);
  c->total++;
  c->bytes += len;
}

bool
ar_overlay_is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

/* Without root the layers are mounted with userxattr (see
 * userns_option_sets): overlayfs then marks them in user.* xattrs. */
bool
ar_overlay_is_opaque_dir (int dirfd)
{
  char value[2];
  const char *name = ar_userns_unprivileged () ? "user.overlay.opaque"
                                               : "trusted.overlay.opaque";
  ssize_t n = fgetxattr (dirfd, name, value, sizeof value);
  return n == 1 && value[0] == 'y';
}

static void walk_upper (change_list *c, int upper_fd, int lower_fd, char *path,
                        size_t path_len, int depth);

/* An empty directory the runtime created to mount on. */
static bool
is_own_mount_point (const change_list *c, const char *path, int dirfd)
{
  bool listed = false;
  for (const char *const *m = c->mount_points; m && *m && !listed; m++)
    listed = strcmp (*m, path) == 0;
  if (!listed)
    return false;
  size_t n;
  cleanup_strv char **names = ar_hostfs_sorted_names (dirfd, &n);
  return names != NULL && n == 0;
}

static void
walk_dir_entry (change_list *c, int upper_fd, int lower_fd, const char *name,
                bool in_lower, char *path, size_t path_len, int depth)
{
  cleanup_close int child = openat (
      upper_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (child < 0)
    return;
  cleanup_close int lower_child = -1;
  if (in_lower && !ar_overlay_is_opaque_dir (child))
    lower_child = openat (lower_fd, name,
                          O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (!in_lower)
    {
      if (!is_own_mount_point (c, path, child))
        record (c, CHANGE_CREATED, path);
    }
  else if (lower_child < 0)
    record (c, CHANGE_REPLACED, path); /* opaque, or over a non-directory */
  walk_upper (c, child, lower_child, path, path_len, depth + 1);
}

static void
walk_entry (change_list *c, int upper_fd, int lower_fd, const char *name,
            char *path, size_t path_len, int depth)
{
  /* The container named this entry: it may spell a secret. */
  const char *shown = ar_secret_set_find (c->secrets, name, strlen (name))
                          ? "[redacted]"
                          : name;
  size_t len = path_len + 1 + strlen (shown);
  if (len >= PATH_MAX)
    {
      c->truncated = true;
      return;
    }
  path[path_len] = '/';
  strcpy (path + path_len + 1, shown);

  struct stat st, lower_st;
  if (fstatat (upper_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  bool in_lower
      = lower_fd >= 0
        && fstatat (lower_fd, name, &lower_st, AT_SYMLINK_NOFOLLOW) == 0;
  if (ar_overlay_is_whiteout (&st))
    record (c, CHANGE_DELETED, path);
  else if (S_ISDIR (st.st_mode))
    walk_dir_entry (c, upper_fd, lower_fd, name, in_lower, path, len, depth);
  else
    record (c, in_lower ? CHANGE_MODIFIED : CHANGE_CREATED, path);
  path[path_len] = '\0';
}

/* Directory fds all the way down: nothing the container put in the layer
 * (symlinks included) is followed. */
static void
walk_upper (change_list *c, int upper_fd, int lower_fd, char *path,
            size_t path_len, int depth)
{
  if (depth > MAX_WALK_DEPTH)
    {
      c->truncated = true;
      return;
    }
  size_t n;
  cleanup_strv char **names = ar_hostfs_sorted_names (upper_fd, &n);
  for (size_t i = 0; names && i < n && !c->truncated; i++)
    walk_entry (c, upper_fd, lower_fd, names[i], path, path_len, depth);
}

static char *
change_list_json (const change_list *c)
{
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  for (int k = 0; k < CHANGE_KINDS; k++)
    {
      yajl_gen_string (gen, (const unsigned char *) change_keys[k],
                       strlen (change_keys[k]));
      yajl_gen_array_open (gen);
      for (size_t i = 0; i < c->n[k]; i++)
        ar_hostfs_gen_name (gen, c->paths[k][i]);
      yajl_gen_array_close (gen);
    }
  yajl_gen_string (gen, (const unsigned char *) "truncated", 9);
  yajl_gen_bool (gen, c->truncated);
  yajl_gen_map_close (gen);

  return ar_hostfs_json_members (gen);
}

/* Walk one upper layer into `c`; its paths start with `prefix` ("" for
 * the root). A layer that is not there adds nothing. */
static int
walk_layer (change_list *c, const char *upper, int lower_fd, const char *prefix,
            ar_error_t **err)
{
  cleanup_close int upper_fd
      = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upper_fd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return ar_error_set (err, errno, "open `%s`", upper);
    }
  char path[PATH_MAX];
  size_t len = strlen (prefix);
  if (len >= sizeof path)
    return 0;
  memcpy (path, prefix, len + 1);
  walk_upper (c, upper_fd, lower_fd, path, len, 0);
  return 0;
}

int
ar_overlay_changes_json (const char *state_dir, const char *workspace_host_dir,
                         const ar_secret_set *secrets,
                         const char *const *mount_points, char **fields_json,
                         ar_error_t **err)
{
  *fields_json = NULL;
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  if (!ar_hostfs_is_mountpoint (dir))
    return 0;
  cleanup_free char *upper = ar_hostfs_join (dir, "upper");
  /* Without the lower layer every change reads as "created". */
  cleanup_free char *rootfs = ar_overlay_lower_path (dir);
  cleanup_close int lower_fd
      = rootfs ? open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  change_list c = { .secrets = secrets, .mount_points = mount_points };
  int r = walk_layer (&c, upper, lower_fd, "", err);
  if (r == 0 && workspace_host_dir)
    {
      cleanup_free char *ws_upper = ar_hostfs_join (dir, AR_OVERLAY_WS_UPPER);
      cleanup_close int ws_lower
          = open (workspace_host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
      r = walk_layer (&c, ws_upper, ws_lower, workspace_host_dir, err);
    }
  if (r == 0)
    *fields_json = change_list_json (&c);
  change_list_clear (&c);
  return r;
}
