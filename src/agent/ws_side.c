/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "ws_side.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void
ar_ws_side_clear (ar_ws_side *s)
{
  if (s->map)
    munmap (s->map, s->blob.len);
  if (s->blob.fd >= 0)
    close (s->blob.fd);
  if (s->entry_fd >= 0)
    close (s->entry_fd);
  s->map = NULL;
  s->blob.fd = s->entry_fd = -1;
}

static int
load_link (ar_ws_side *s, const char *path, ar_error_t **err)
{
  ssize_t n = readlinkat (s->entry_fd, "", s->target, sizeof s->target);
  if (n < 0 || (size_t) n >= sizeof s->target)
    return ar_error_set (err, n < 0 ? errno : ENAMETOOLONG, "read link `%s`",
                         path);
  s->blob = (ar_git_blob){ .mode = AR_GIT_MODE_LINK,
                           .data = (uint8_t *) s->target,
                           .len = (size_t) n,
                           .fd = -1 };
  return 0;
}

static int
load_file (ar_ws_side *s, const struct stat *st, const char *path,
           ar_error_t **err)
{
  char proc[AR_FD_PATH_MAX];
  ar_fd_path (s->entry_fd, proc);
  s->blob.fd = open (proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (s->blob.fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);
  /* git keeps one permission bit: the owner's x. */
  s->blob.mode = (st->st_mode & S_IXUSR) ? AR_GIT_MODE_EXEC : AR_GIT_MODE_FILE;
  s->blob.len = (size_t) st->st_size;
  if (s->blob.len == 0)
    return 0;
  s->map = mmap (NULL, s->blob.len, PROT_READ, MAP_PRIVATE, s->blob.fd, 0);
  if (s->map == MAP_FAILED)
    {
      s->map = NULL;
      return ar_error_set (err, errno, "read `%s`", path);
    }
  s->blob.data = s->map;
  return 0;
}

int
ar_ws_side_load (int view_fd, const char *path, ar_ws_side *s, ar_error_t **err)
{
  s->entry_fd = ar_path_open_entry (view_fd, path);
  if (s->entry_fd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return 0;
      return ar_error_set (err, errno, "open `%s`", path);
    }
  struct stat st;
  if (fstat (s->entry_fd, &st) < 0)
    return ar_error_set (err, errno, "stat `%s`", path);
  if (S_ISLNK (st.st_mode))
    return load_link (s, path, err);
  if (S_ISREG (st.st_mode))
    return load_file (s, &st, path, err);
  return 0;
}
