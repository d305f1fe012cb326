/* SPDX-License-Identifier: Apache-2.0 */
/* util/tree: a tree copied keeps what an overlay layer is made of, and
 * one removed is gone. In a temporary directory; the whiteout (a
 * character device 0:0) only when run as root. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"
#include "../../src/util/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static char top[] = "/tmp/agentrun-unit-tree.XXXXXX";

static int
open_dir (const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", top, name);
  return open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void
write_file (int dir, const char *name, const char *text, mode_t mode)
{
  int fd = openat (dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  CHECK (fd >= 0);
  CHECK (ar_write_all (fd, text, strlen (text)) == 0);
  CHECK (fchmod (fd, mode) == 0);
  close (fd);
}

static bool
same_text (int dir, const char *name, const char *want)
{
  cleanup_free char *got = NULL;
  cleanup_error ar_error_t *err = NULL;
  return ar_read_file_at (dir, name, 1 << 20, &got, NULL, &err) == 0
         && strcmp (got, want) == 0;
}

/* src: f (0640, mtime 1000000000, an xattr), d/ (0751), d/hard (a second
 * name of f), d/link -> ../f, d/fifo, deep/er/x; as root a whiteout. */
static void
make_source (int src)
{
  write_file (src, "f", "file\n", 0640);
  const struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
  CHECK (utimensat (src, "f", t, 0) == 0);
  cleanup_free char *f = xasprintf ("%s/src/f", top);
  /* Not every /tmp takes user xattrs; the copy must then do without. */
  bool xattrs = setxattr (f, "user.k", "v", 1, 0) == 0;
  CHECK (xattrs || errno == ENOTSUP || errno == EOPNOTSUPP);
  CHECK (mkdirat (src, "d", 0751) == 0 && fchmodat (src, "d", 0751, 0) == 0);
  CHECK (linkat (src, "f", src, "d/hard", 0) == 0);
  CHECK (symlinkat ("../f", src, "d/link") == 0);
  CHECK (mkfifoat (src, "d/fifo", 0600) == 0);
  CHECK (mkdirat (src, "deep", 0755) == 0
         && mkdirat (src, "deep/er", 0700) == 0);
  write_file (src, "deep/er/x", "x", 0600);
  if (unit_real_root ())
    CHECK (mknodat (src, "gone", S_IFCHR | 0, makedev (0, 0)) == 0);
}

static void
test_copy_keeps_the_layer (void)
{
  int src = open_dir ("src"), dst = open_dir ("dst");
  CHECK (src >= 0 && dst >= 0);
  make_source (src);
  cleanup_error ar_error_t *err = NULL;
  ar_tree_copy_stats stats = { .root_metadata = false };
  CHECK (ar_tree_copy (src, dst, &stats, &err) == 0);
  CHECK (err == NULL);
  /* f, d, d/hard, d/link, d/fifo, deep, deep/er, deep/er/x (+ gone) */
  CHECK_INT (stats.entries, unit_real_root () ? 9 : 8);
  CHECK_INT (stats.bytes, 6); /* "file\n" once, "x"; the link is free */

  struct stat a, b, h;
  CHECK (fstatat (dst, "f", &a, 0) == 0 && fstatat (dst, "d/hard", &h, 0) == 0);
  CHECK ((a.st_mode & 07777) == 0640 && a.st_mtim.tv_sec == 1000000000);
  CHECK (a.st_ino == h.st_ino && a.st_nlink == 2);
  CHECK (same_text (dst, "f", "file\n") && same_text (dst, "deep/er/x", "x"));
  CHECK (fstatat (dst, "d", &b, 0) == 0 && (b.st_mode & 07777) == 0751);
  char target[16] = { 0 };
  CHECK (readlinkat (dst, "d/link", target, sizeof target - 1) == 4
         && strcmp (target, "../f") == 0);
  CHECK (fstatat (dst, "d/fifo", &b, AT_SYMLINK_NOFOLLOW) == 0
         && S_ISFIFO (b.st_mode));
  cleanup_free char *f = xasprintf ("%s/dst/f", top);
  char value[4] = { 0 };
  cleanup_free char *sf = xasprintf ("%s/src/f", top);
  if (getxattr (sf, "user.k", value, sizeof value) == 1)
    CHECK (getxattr (f, "user.k", value, sizeof value) == 1 && value[0] == 'v');
  if (unit_real_root ())
    CHECK (fstatat (dst, "gone", &b, AT_SYMLINK_NOFOLLOW) == 0
           && S_ISCHR (b.st_mode) && b.st_rdev == makedev (0, 0));
  close (src);
  close (dst);
}

static void
test_copy_error_names_the_entry (void)
{
  int src = open_dir ("src"), dst = open_dir ("dst");
  cleanup_error ar_error_t *err = NULL;
  ar_tree_copy_stats stats = { 0 };
  /* dst holds everything already: the first entry made again fails. */
  CHECK (ar_tree_copy (src, dst, &stats, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), "`") != NULL
         && strstr (ar_error_text (err), "File exists") != NULL);
  close (src);
  close (dst);
}

/* A shift moves the owners in its range, and only those (root only:
 * chown to other ids). */
static void
test_copy_shifts_owners (void)
{
  if (!unit_real_root ())
    return;
  int top_fd = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK (mkdirat (top_fd, "shift-src", 0755) == 0
         && mkdirat (top_fd, "shift-dst", 0755) == 0);
  int src = open_dir ("shift-src"), dst = open_dir ("shift-dst");
  write_file (src, "root", "r\n", 0644);
  write_file (src, "five", "5\n", 0644);
  write_file (src, "far", "f\n", 0644);
  CHECK (fchownat (src, "five", 5, 7, 0) == 0);
  CHECK (fchownat (src, "far", 20, 20, 0) == 0);
  const ar_id_shift shift = { .uid_from = 0,
                              .uid_to = 100000,
                              .gid_from = 0,
                              .gid_to = 200000,
                              .count = 10 };
  ar_tree_copy_stats stats = { .shift = &shift };
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_tree_copy (src, dst, &stats, &err) == 0);
  struct stat st;
  CHECK (fstatat (dst, "root", &st, 0) == 0 && st.st_uid == 100000
         && st.st_gid == 200000);
  CHECK (fstatat (dst, "five", &st, 0) == 0 && st.st_uid == 100005
         && st.st_gid == 200007);
  CHECK (fstatat (dst, "far", &st, 0) == 0 && st.st_uid == 20
         && st.st_gid == 20);
  close (src);
  close (dst);
  ar_tree_remove_at (top_fd, "shift-src");
  ar_tree_remove_at (top_fd, "shift-dst");
  close (top_fd);
}

static void
test_remove (void)
{
  int top_fd = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ar_tree_remove_at (top_fd, "dst");
  ar_tree_remove_at (top_fd, "src");
  CHECK (faccessat (top_fd, "dst", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
  CHECK (faccessat (top_fd, "src", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
  close (top_fd);
}

int
main (void)
{
  if (mkdtemp (top) == NULL)
    return 1;
  cleanup_free char *src = xasprintf ("%s/src", top);
  cleanup_free char *dst = xasprintf ("%s/dst", top);
  if (mkdir (src, 0755) < 0 || mkdir (dst, 0755) < 0)
    return 1;
  RUN (test_copy_keeps_the_layer);
  RUN (test_copy_error_names_the_entry);
  RUN (test_copy_shifts_owners);
  RUN (test_remove);
  rmdir (top);
  return unit_finish ();
}
