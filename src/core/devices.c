/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "mounts.h"
#include "mounts_internal.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The devices every container gets (runtime-spec "Default Devices"). */
static const oci_device default_devices[] = {
  { .type = "c", .path = "/dev/null", .major = 1, .minor = 3 },
  { .type = "c", .path = "/dev/zero", .major = 1, .minor = 5 },
  { .type = "c", .path = "/dev/full", .major = 1, .minor = 7 },
  { .type = "c", .path = "/dev/random", .major = 1, .minor = 8 },
  { .type = "c", .path = "/dev/urandom", .major = 1, .minor = 9 },
  { .type = "c", .path = "/dev/tty", .major = 5, .minor = 0 },
};

#define DEFAULT_DEVICE_MODE 0666

static const struct
{
  const char *name;
  const char *target;
} dev_symlinks[] = {
  { "fd", "/proc/self/fd" },
  { "stdin", "/proc/self/fd/0" },
  { "stdout", "/proc/self/fd/1" },
  { "stderr", "/proc/self/fd/2" },
};

static int
device_file_type (const oci_device *d, mode_t *type, ar_error_t **err)
{
  const char *t = d->type ? d->type : "";
  if (strcmp (t, "c") == 0 || strcmp (t, "u") == 0)
    *type = S_IFCHR;
  else if (strcmp (t, "b") == 0)
    *type = S_IFBLK;
  else if (strcmp (t, "p") == 0)
    *type = S_IFIFO;
  else
    return ar_error_set (err, 0, "unknown device type `%s`", t);
  return 0;
}

/* Split "/dev/x/y" into an O_PATH fd of "/dev/x" (created inside the
 * rootfs when missing) and the name "y". */
static int
open_device_parent (int rootfs_fd, const char *path, char **name,
                    ar_error_t **err)
{
  cleanup_free char *clean = ar_path_clean (path);
  char *slash = strrchr (clean, '/');
  if (slash == NULL || slash[1] == '\0')
    return ar_error_set (err, 0, "invalid device path `%s`", path);
  *name = xstrdup (slash + 1);
  *slash = '\0';
  return ar_path_create_in_root (rootfs_fd, *clean ? clean : "/", true, err);
}

/* A device node already there (a /dev that is part of the rootfs image):
 * keep it when it is the same device, else replace it. */
static int
clear_existing (int dir_fd, const char *name, mode_t type, dev_t rdev,
                bool *keep, ar_error_t **err)
{
  struct stat st;
  *keep = false;
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : ar_error_set (err, errno, "stat `%s`", name);
  if ((st.st_mode & S_IFMT) == type && st.st_rdev == rdev)
    {
      *keep = true;
      return 0;
    }
  if (unlinkat (dir_fd, name, S_ISDIR (st.st_mode) ? AT_REMOVEDIR : 0) < 0)
    return ar_error_set (err, errno, "remove `%s`", name);
  return 0;
}

/* Without CAP_MKNOD (a user namespace) the host's node is bound onto an
 * empty file instead; its owner and mode are then the host's. */
static int
bind_host_device (int dir_fd, const char *name, const oci_device *d,
                  ar_error_t **err)
{
  cleanup_close int fd = openat (
      dir_fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return ar_error_set (err, errno, "create `%s`", d->path);
  cleanup_close int target
      = openat (dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return ar_error_set (err, errno, "open `%s`", d->path);
  return ar_mounts_bind_device_fd (d->path, target, err);
}

static int
create_device (int rootfs_fd, const oci_device *d, ar_error_t **err)
{
  mode_t type = 0;
  if (d->path == NULL)
    return ar_error_set (err, 0, "device without a path");
  if (device_file_type (d, &type, err) < 0)
    return -1;
  cleanup_free char *name = NULL;
  cleanup_close int dir_fd
      = open_device_parent (rootfs_fd, d->path, &name, err);
  if (dir_fd < 0 || name == NULL)
    return -1;

  dev_t rdev = type == S_IFIFO
                   ? 0
                   : makedev ((unsigned) d->major, (unsigned) d->minor);
  bool keep;
  if (clear_existing (dir_fd, name, type, rdev, &keep, err) < 0)
    return -1;
  mode_t mode
      = d->file_mode.set ? (d->file_mode.value & 07777) : DEFAULT_DEVICE_MODE;
  if (!keep && mknodat (dir_fd, name, type | mode, rdev) < 0)
    {
      if (errno == EPERM && type != S_IFIFO)
        return bind_host_device (dir_fd, name, d, err);
      return ar_error_set (err, errno, "mknod `%s`", d->path);
    }
  /* mknod applied our umask; set the mode the spec asked for. */
  if (fchmodat (dir_fd, name, mode, 0) < 0)
    return ar_error_set (err, errno, "chmod `%s`", d->path);
  uid_t uid = d->uid.set ? d->uid.value : 0;
  gid_t gid = d->gid.set ? d->gid.value : 0;
  if (fchownat (dir_fd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, errno, "chown `%s`", d->path);
  return 0;
}

static bool
listed_in_spec (const oci_spec *spec, const char *path)
{
  const oci_linux *l = spec->linux_cfg;
  for (size_t i = 0; l && i < l->n_devices; i++)
    if (l->devices[i].path && strcmp (l->devices[i].path, path) == 0)
      return true;
  return false;
}

static int
create_devices (const oci_spec *spec, int rootfs_fd, ar_error_t **err)
{
  /* A device the spec lists itself wins over the default of that path. */
  for (size_t i = 0; i < sizeof default_devices / sizeof *default_devices; i++)
    if (!listed_in_spec (spec, default_devices[i].path)
        && create_device (rootfs_fd, &default_devices[i], err) < 0)
      return ar_error_prefix (err, "device `%s`", default_devices[i].path);

  const oci_linux *l = spec->linux_cfg;
  for (size_t i = 0; l && i < l->n_devices; i++)
    if (create_device (rootfs_fd, &l->devices[i], err) < 0)
      return ar_error_prefix (err, ".linux.devices[%zu]", i);
  return 0;
}

static int
make_symlink (int dev_fd, const char *name, const char *target,
              ar_error_t **err)
{
  if (symlinkat (target, dev_fd, name) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "symlink /dev/%s -> %s", name, target);
  return 0;
}

static int
create_dev_links (int dev_fd, ar_error_t **err)
{
  for (size_t i = 0; i < sizeof dev_symlinks / sizeof *dev_symlinks; i++)
    if (make_symlink (dev_fd, dev_symlinks[i].name, dev_symlinks[i].target, err)
        < 0)
      return -1;
  if (access ("/proc/kcore", F_OK) == 0
      && make_symlink (dev_fd, "core", "/proc/kcore", err) < 0)
    return -1;

  /* /dev/ptmx must be the devpts instance's, whatever the image has. */
  if (unlinkat (dev_fd, "ptmx", 0) < 0 && errno != ENOENT)
    return ar_error_set (err, errno, "remove /dev/ptmx");
  if (make_symlink (dev_fd, "ptmx", "pts/ptmx", err) < 0)
    return -1;

  if (mkdirat (dev_fd, "shm", 01777) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "mkdir /dev/shm");
  return 0;
}

int
ar_devices_setup (const oci_spec *spec, int rootfs_fd, ar_error_t **err)
{
  /* Without a /dev mount in the config, the nodes go into the image's own
   * /dev: a symlink there would aim them elsewhere in the rootfs. */
  if (ar_mounts_check_real_directory (rootfs_fd, "/dev", err) < 0)
    return -1;
  if (create_devices (spec, rootfs_fd, err) < 0)
    return -1;
  cleanup_close int dev_fd
      = ar_path_create_in_root (rootfs_fd, "/dev", true, err);
  if (dev_fd < 0)
    return -1;
  return create_dev_links (dev_fd, err);
}
