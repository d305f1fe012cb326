/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "proc.h"
#include "cleanup.h"
#include "fs.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>

static int
check_procfs (int fd, const char *path, ar_error_t **err)
{
  struct statfs fs;
  if (fstatfs (fd, &fs) < 0)
    return ar_error_set (err, errno, "statfs `%s`", path);
  if (fs.f_type != PROC_SUPER_MAGIC)
    return ar_error_set (err, 0, "`%s`: not on procfs", path);
  return 0;
}

int
ar_proc_open_dir (const char *path, ar_error_t **err)
{
  cleanup_close int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  if (check_procfs (fd, path, err) < 0)
    return -1;
  return steal_fd (&fd);
}

int
ar_proc_write (int dirfd, const char *path, const char *data, size_t len,
               ar_error_t **err)
{
  /* Relative to a verified procfs directory, nothing in the walk may
   * leave that mount, follow a link or climb above the directory. */
  int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
  cleanup_close int fd = dirfd == AT_FDCWD
                             ? open (path, flags)
                             : ar_openat2 (dirfd, path, flags,
                                           RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                               | RESOLVE_NO_XDEV);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  /* RESOLVE_NO_XDEV kept the walk on the directory's procfs mount. */
  if (dirfd == AT_FDCWD && check_procfs (fd, path, err) < 0)
    return -1;
  if (ar_write_all (fd, data, len) < 0)
    return ar_error_set (err, errno, "write `%s`", path);
  return 0;
}
