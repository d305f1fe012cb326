/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "tree.h"
#include "cleanup.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Deeper than this is refused rather than risking the stack. */
#define MAX_DEPTH 512
#define XATTR_LIST_MAX_BYTES 65536
#define XATTR_VALUE_MAX_BYTES 65536

/* An inode met with more than one name, and where its first copy is. */
typedef struct
{
  dev_t dev;
  ino_t ino;
  char *copy; /* relative to the destination's top */
} linked_inode;

typedef struct
{
  int dst_top;
  ar_tree_copy_stats *stats;
  linked_inode *links;
  size_t n_links;
} tree_copy;

static const char *
linked_copy (const tree_copy *t, const struct stat *st)
{
  for (size_t i = 0; i < t->n_links; i++)
    if (t->links[i].dev == st->st_dev && t->links[i].ino == st->st_ino)
      return t->links[i].copy;
  return NULL;
}

static void
remember_link (tree_copy *t, const struct stat *st, const char *rel)
{
  t->links = xrealloc (t->links, (t->n_links + 1) * sizeof *t->links);
  t->links[t->n_links++] = (linked_inode){ .dev = st->st_dev,
                                           .ino = st->st_ino,
                                           .copy = xstrdup (rel) };
}

/* "/proc/self/fd/D/NAME": the l*xattr calls take a path, and this one
 * reaches NAME itself (a symlink included) through an open directory. */
static char *
fd_path (int dir_fd, const char *name)
{
  return xasprintf ("/proc/self/fd/%d/%s", dir_fd, name);
}

static int
copy_xattrs (int src_dir, int dst_dir, const char *name, const char *rel,
             ar_error_t **err)
{
  cleanup_free char *src = fd_path (src_dir, name);
  cleanup_free char *dst = fd_path (dst_dir, name);
  cleanup_free char *list = xmalloc (XATTR_LIST_MAX_BYTES);
  ssize_t len = llistxattr (src, list, XATTR_LIST_MAX_BYTES);
  if (len < 0)
    return errno == ENOTSUP
               ? 0
               : ar_error_set (err, errno, "list extended attributes of `%s`",
                               rel);
  cleanup_free char *value = xmalloc (XATTR_VALUE_MAX_BYTES);
  for (char *key = list; key < list + len; key += strlen (key) + 1)
    {
      ssize_t n = lgetxattr (src, key, value, XATTR_VALUE_MAX_BYTES);
      if (n < 0 || lsetxattr (dst, key, value, (size_t) n, 0) < 0)
        return ar_error_set (err, errno, "copy extended attribute %s of `%s`",
                             key, rel);
    }
  return 0;
}

/* Owner before mode (a chown clears set-id bits), then the attributes
 * (it drops security.capability too), then the times. */
static int
copy_metadata (int src_dir, int dst_dir, const char *name,
               const struct stat *st, const ar_id_shift *shift, const char *rel,
               ar_error_t **err)
{
  uid_t uid = st->st_uid;
  gid_t gid = st->st_gid;
  if (shift)
    {
      uid = ar_id_shift_uid (shift, uid);
      gid = ar_id_shift_gid (shift, gid);
    }
  if (fchownat (dst_dir, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, errno, "set the owner of `%s`", rel);
  if (!S_ISLNK (st->st_mode)
      && fchmodat (dst_dir, name, st->st_mode & 07777, 0) < 0)
    return ar_error_set (err, errno, "set the mode of `%s`", rel);
  if (copy_xattrs (src_dir, dst_dir, name, rel, err) < 0)
    return -1;
  const struct timespec times[2] = { st->st_atim, st->st_mtim };
  if (utimensat (dst_dir, name, times, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, errno, "set the times of `%s`", rel);
  return 0;
}

static int
copy_bytes (int in, int out)
{
  for (;;)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, 1 << 30, 0);
      if (n == 0)
        return 0;
      if (n > 0)
        continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EINVAL
          && errno != EOPNOTSUPP)
        return -1;
      break;
    }
  char buf[65536];
  for (ssize_t n; (n = read (in, buf, sizeof buf)) != 0;)
    {
      if (n < 0 || ar_write_all (out, buf, (size_t) n) < 0)
        return -1;
    }
  return 0;
}

static int
copy_file (int src_dir, int dst_dir, const char *name, const char *rel,
           ar_error_t **err)
{
  cleanup_close int in
      = openat (src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    return ar_error_set (err, errno, "open `%s`", rel);
  cleanup_close int out
      = openat (dst_dir, name,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return ar_error_set (err, errno, "create `%s`", rel);
  if (copy_bytes (in, out) < 0)
    return ar_error_set (err, errno, "copy `%s`", rel);
  return 0;
}

static int
copy_symlink (int src_dir, int dst_dir, const char *name, const char *rel,
              ar_error_t **err)
{
  char target[PATH_MAX];
  ssize_t len = readlinkat (src_dir, name, target, sizeof target - 1);
  if (len < 0)
    return ar_error_set (err, errno, "read link `%s`", rel);
  target[len] = '\0';
  if (symlinkat (target, dst_dir, name) < 0)
    return ar_error_set (err, errno, "create link `%s`", rel);
  return 0;
}

static int copy_children (tree_copy *t, int src_dir, int dst_dir,
                          const char *rel, int depth, ar_error_t **err);

static int
copy_dir (tree_copy *t, int src_dir, int dst_dir, const char *name,
          const struct stat *st, const char *rel, int depth, ar_error_t **err)
{
  if (depth >= MAX_DEPTH)
    return ar_error_set (err, 0, "`%s`: deeper than %d directories", rel,
                         MAX_DEPTH);
  if (mkdirat (dst_dir, name, 0700) < 0)
    return ar_error_set (err, errno, "create directory `%s`", rel);
  cleanup_close int src_sub
      = openat (src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int dst_sub
      = openat (dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src_sub < 0 || dst_sub < 0)
    return ar_error_set (err, errno, "open directory `%s`", rel);
  if (copy_children (t, src_sub, dst_sub, rel, depth + 1, err) < 0)
    return -1;
  return copy_metadata (src_dir, dst_dir, name, st, t->stats->shift, rel, err);
}

static int
copy_entry (tree_copy *t, int src_dir, int dst_dir, const char *name,
            const char *rel, int depth, ar_error_t **err)
{
  struct stat st;
  if (fstatat (src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error_set (err, errno, "stat `%s`", rel);
  t->stats->entries++;
  if (S_ISDIR (st.st_mode))
    return copy_dir (t, src_dir, dst_dir, name, &st, rel, depth, err);

  const char *first = st.st_nlink > 1 ? linked_copy (t, &st) : NULL;
  if (first)
    return linkat (t->dst_top, first, dst_dir, name, 0) < 0
               ? ar_error_set (err, errno, "link `%s`", rel)
               : 0;
  int r;
  if (S_ISREG (st.st_mode))
    {
      r = copy_file (src_dir, dst_dir, name, rel, err);
      t->stats->bytes += (uint64_t) st.st_size;
    }
  else if (S_ISLNK (st.st_mode))
    r = copy_symlink (src_dir, dst_dir, name, rel, err);
  else if (mknodat (dst_dir, name, st.st_mode & (S_IFMT | 0600), st.st_rdev)
           < 0)
    r = ar_error_set (err, errno, "create `%s`", rel);
  else
    r = 0;
  if (r < 0
      || copy_metadata (src_dir, dst_dir, name, &st, t->stats->shift, rel, err)
             < 0)
    return -1;
  if (st.st_nlink > 1)
    remember_link (t, &st, rel);
  return 0;
}

static int
copy_children (tree_copy *t, int src_dir, int dst_dir, const char *rel,
               int depth, ar_error_t **err)
{
  int fd = openat (src_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return ar_error_set (err, errno, "list `%s`", *rel ? rel : ".");
    }
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      cleanup_free char *sub
          = *rel ? xasprintf ("%s/%s", rel, e->d_name) : xstrdup (e->d_name);
      if (copy_entry (t, src_dir, dst_dir, e->d_name, sub, depth, err) < 0)
        return -1;
    }
  return 0;
}

int
ar_tree_copy (int src_fd, int dst_fd, ar_tree_copy_stats *stats,
              ar_error_t **err)
{
  tree_copy t = { .dst_top = dst_fd, .stats = stats };
  int r = copy_children (&t, src_fd, dst_fd, "", 0, err);
  for (size_t i = 0; i < t.n_links; i++)
    free (t.links[i].copy);
  free (t.links);
  if (r < 0 || !stats->root_metadata)
    return r;
  struct stat st;
  if (fstat (src_fd, &st) < 0)
    return ar_error_set (err, errno, "stat `.`");
  return copy_metadata (src_fd, dst_fd, ".", &st, stats->shift, ".", err);
}

void
ar_tree_remove_at (int dir_fd, const char *name)
{
  int fd
      = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      unlinkat (dir_fd, name, 0);
      return;
    }
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      unlinkat (dir_fd, name, AT_REMOVEDIR);
      return;
    }
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
      ar_tree_remove_at (fd, e->d_name);
  closedir (d);
  unlinkat (dir_fd, name, AT_REMOVEDIR);
}
