/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "path.h"
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel follows at most 40 symlinks in one lookup; we apply the same
 * bound to the dangling symlinks ar_path_create_in_root chases by hand. */
#define MAX_SYMLINK_HOPS 40

int
ar_openat2 (int dirfd, const char *path, int flags, uint64_t resolve)
{
  struct open_how how = {
    .flags = (uint64_t) (flags | O_CLOEXEC),
    .resolve = resolve,
  };
  for (;;)
    {
      int fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
      /* EAGAIN: a concurrent rename moved something under us; the kernel
       * asks us to retry rather than risk a wrong answer. */
      if (fd < 0 && (errno == EAGAIN || errno == EINTR))
        continue;
      return fd;
    }
}

static int
openat2_in_root (int root_fd, const char *path, int flags)
{
  return ar_openat2 (root_fd, *path ? path : ".", flags,
                     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

int
ar_path_open_in_root (int root_fd, const char *path, int flags,
                      ar_error_t **err)
{
  int fd = openat2_in_root (root_fd, path, flags);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s` in rootfs", path);
  return fd;
}

void
ar_fd_path (int fd, char buf[AR_FD_PATH_MAX])
{
  snprintf (buf, AR_FD_PATH_MAX, "/proc/self/fd/%d", fd);
}

char *
ar_readlink (const char *link)
{
  char target[PATH_MAX];
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (n < 0)
    return NULL;
  return xstrndup (target, (size_t) n);
}

char *
ar_fd_real_path (int fd)
{
  char link[AR_FD_PATH_MAX];
  ar_fd_path (fd, link);
  return ar_readlink (link);
}

/* Create the missing entry `name` in the directory `parent_fd`: a
 * directory, or an empty file for a bind mount of a file. Neither mkdirat
 * nor O_CREAT|O_EXCL follows a symlink in the last component, so a
 * dangling symlink shows up here as EEXIST instead of being written
 * through. */
static int
create_entry (int parent_fd, const char *name, bool as_dir)
{
  if (as_dir)
    return mkdirat (parent_fd, name, 0755);

  int fd = openat (parent_fd, name,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

/* `prefix` names a missing entry whose parent exists but which could not
 * be created because something (a dangling symlink) is in the way. When it
 * is a symlink, build the path to try next: its target followed by the
 * rest of the walk. Returns the new path or NULL (errno set). */
static char *
redirect_through_symlink (int parent_fd, const char *name, const char *parent,
                          const char *rest)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (parent_fd, name, target, sizeof target - 1);
  if (n < 0)
    return NULL;
  target[n] = '\0';
  /* A relative target is relative to the symlink's directory; an absolute
   * one is absolute inside the root, which openat2 enforces for us. */
  if (target[0] == '/')
    return xasprintf ("%s%s%s", target, *rest ? "/" : "", rest);
  return xasprintf ("%s/%s%s%s", *parent ? parent : ".", target,
                    *rest ? "/" : "", rest);
}

/* One walk over `path`, creating what is missing. Returns an O_PATH fd, or
 * -1 with *err set, or -2 with *next set when a dangling symlink has to be
 * followed by a new walk. */
static int
create_walk (int root_fd, const char *path, bool is_dir, char **next,
             ar_error_t **err)
{
  size_t len = strlen (path);
  cleanup_free char *prefix = xmalloc (len + 2);
  size_t used = 0;
  prefix[0] = '\0';

  const char *p = path;
  for (;;)
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      const char *end = strchrnul (p, '/');
      const char *rest = end;
      while (*rest == '/')
        rest++;
      bool last = *rest == '\0';

      size_t parent_len = used;
      if (used > 0)
        prefix[used++] = '/';
      memcpy (prefix + used, p, (size_t) (end - p));
      used += (size_t) (end - p);
      prefix[used] = '\0';

      cleanup_close int fd = openat2_in_root (root_fd, prefix, O_PATH);
      if (fd < 0 && errno != ENOENT)
        return ar_error_set (err, errno, "open `%s` in rootfs", prefix);
      if (fd < 0)
        {
          /* The parent resolved a moment ago (or is the root itself). */
          cleanup_free char *parent = xstrndup (prefix, parent_len);
          cleanup_free char *name = xstrndup (p, (size_t) (end - p));
          cleanup_close int parent_fd
              = openat2_in_root (root_fd, parent, O_PATH | O_DIRECTORY);
          if (parent_fd < 0)
            return ar_error_set (err, errno, "open `/%s` in rootfs", parent);
          if (create_entry (parent_fd, name, last ? is_dir : true) < 0)
            {
              /* EOVERFLOW: the parent's owner has no id in the user
               * namespace, so overlayfs cannot copy it up to add to it. */
              if (errno == EOVERFLOW)
                return ar_error_set (err, errno,
                                     "create `/%s` in rootfs (`/%s` is owned "
                                     "by an id outside the user namespace)",
                                     prefix, parent);
              if (errno != EEXIST)
                return ar_error_set (err, errno, "create `/%s` in rootfs",
                                     prefix);
              *next = redirect_through_symlink (parent_fd, name, parent, rest);
              /* Not a symlink: something raced us into existence; a new
               * walk of the same path sorts it out. */
              if (*next == NULL && errno == EINVAL)
                *next = xstrdup (path);
              if (*next == NULL)
                return ar_error_set (err, errno, "readlink `/%s`", prefix);
              return -2;
            }
          fd = openat2_in_root (root_fd, prefix, O_PATH);
          if (fd < 0)
            return ar_error_set (err, errno, "open `%s` in rootfs", prefix);
        }
      if (last)
        return steal_fd (&fd);
      p = end;
    }

  /* Nothing but slashes: the root itself. */
  int fd = openat2_in_root (root_fd, ".", O_PATH);
  if (fd < 0)
    return ar_error_set (err, errno, "open rootfs");
  return fd;
}

int
ar_path_create_in_root (int root_fd, const char *path, bool is_dir,
                        ar_error_t **err)
{
  cleanup_free char *current = xstrdup (path);
  for (int hop = 0; hop <= MAX_SYMLINK_HOPS; hop++)
    {
      cleanup_free char *next = NULL;
      int fd = create_walk (root_fd, current, is_dir, &next, err);
      if (fd != -2)
        return fd;
      free (current);
      current = steal_pointer (&next);
    }
  return ar_error_set (err, ELOOP, "create `%s` in rootfs", path);
}

char *
ar_path_clean (const char *path)
{
  bool absolute = path[0] == '/';
  size_t len = strlen (path);
  char *out = xmalloc (len + 2);
  size_t used = 0;
  if (absolute)
    out[used++] = '/';
  size_t base = used; /* never pop below this */

  const char *p = path;
  while (*p)
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      const char *end = strchrnul (p, '/');
      size_t n = (size_t) (end - p);
      if (n == 1 && p[0] == '.')
        ;
      else if (n == 2 && p[0] == '.' && p[1] == '.')
        {
          /* Pop the last component; at the root ".." stays at the root. */
          while (used > base && out[used - 1] != '/')
            used--;
          if (used > base)
            used--;
        }
      else
        {
          if (used > base)
            out[used++] = '/';
          memcpy (out + used, p, n);
          used += n;
        }
      p = end;
    }
  if (used == 0)
    out[used++] = '.';
  out[used] = '\0';
  return out;
}

bool
ar_path_at_or_under (const char *path, const char *dir)
{
  size_t len = strlen (dir);
  if (len == 1 && dir[0] == '/')
    return path[0] == '/';
  return strncmp (path, dir, len) == 0
         && (path[len] == '\0' || path[len] == '/');
}

int
ar_path_open_entry (int dir_fd, const char *path)
{
  return ar_openat2 (dir_fd, path, O_PATH | O_NOFOLLOW,
                     RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
}

int
ar_check_plain_name (const char *what, const char *name, ar_error_t **err)
{
  size_t len = strlen (name);
  if (len == 0 || len > 64 || name[0] == '.' || name[0] == '-'
      || strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789_.-")
             != len)
    return ar_error_set (
        err, 0,
        "%s: name `%s`: expected 1 to 64 letters, digits, '_', '.' and '-', not first '.' or '-'",
        what, name);
  return 0;
}
