/* SPDX-License-Identifier: Apache-2.0 */
/* Safe path resolution: a hostile rootfs full of symlinks must not make
 * ar_path_open_in_root or ar_path_create_in_root touch anything outside
 * the root. Runs unprivileged in a temporary directory. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/path.h"
#include "../../src/util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];    /* the hostile rootfs */
static char outside[80]; /* a directory next to it that must stay empty */
static int root_fd = -1;

static int
remove_entry (const char *path, const struct stat *st, int type,
              struct FTW *ftw)
{
  (void) st, (void) type, (void) ftw;
  return remove (path);
}

static void
make_symlink (const char *target, const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", root, name);
  if (symlink (target, path) < 0)
    {
      perror (path);
      exit (2);
    }
}

static bool
exists_outside (const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", outside, name);
  struct stat st;
  return lstat (path, &st) == 0;
}

static bool
exists_in_root (const char *name)
{
  struct stat st;
  return fstatat (root_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool
same_file (int fd, int dirfd, const char *name)
{
  struct stat a, b;
  if (fstat (fd, &a) < 0 || fstatat (dirfd, name, &b, 0) < 0)
    return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void
setup (void)
{
  strcpy (root, "/tmp/ar-test-path-XXXXXX");
  if (mkdtemp (root) == NULL)
    {
      perror ("mkdtemp");
      exit (2);
    }
  snprintf (outside, sizeof outside, "%s-outside", root);
  if (mkdir (outside, 0755) < 0)
    {
      perror (outside);
      exit (2);
    }
  root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);

  cleanup_free char *outside_abs = xasprintf ("%s/escape", outside);
  cleanup_free char *etc = xasprintf ("%s/etc", root);
  mkdir (etc, 0755);
  cleanup_free char *marker = xasprintf ("%s/etc/marker", root);
  close (open (marker, O_CREAT | O_WRONLY, 0644));

  make_symlink ("/etc", "abs_etc");          /* must mean <root>/etc */
  make_symlink ("../../../../..", "dotdot"); /* must mean <root> */
  make_symlink (outside_abs, "host_abs");    /* host path: dangling */
  cleanup_free char *rel = xasprintf ("../../../../../..%s/rel", outside);
  make_symlink (rel, "rel_escape");
  make_symlink ("loop_b", "loop_a");
  make_symlink ("loop_a", "loop_b");
  make_symlink ("/proc/self/root", "magic");
  make_symlink ("etc/marker", "file_link");
}

static void
teardown (void)
{
  close (root_fd);
  nftw (root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  nftw (outside, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
test_clean (void)
{
  char *s;
  CHECK_STR (s = ar_path_clean ("a/./b/../c"), "a/c"), free (s);
  CHECK_STR (s = ar_path_clean ("/../../etc//passwd/"), "/etc/passwd"),
      free (s);
  CHECK_STR (s = ar_path_clean ("/"), "/"), free (s);
  CHECK_STR (s = ar_path_clean (""), "."), free (s);
  CHECK_STR (s = ar_path_clean ("../x"), "x"), free (s);
  CHECK_STR (s = ar_path_clean ("/a/b/../../.."), "/"), free (s);
  CHECK_STR (s = ar_path_clean ("a/.."), "."), free (s);
  CHECK_STR (s = ar_path_clean ("/proc/./sys/.."), "/proc"), free (s);
  CHECK_STR (s = ar_path_clean ("..."), "..."), free (s);
}

static void
test_fd_path (void)
{
  char buf[AR_FD_PATH_MAX];
  ar_fd_path (42, buf);
  CHECK_STR (buf, "/proc/self/fd/42");
}

static void
test_open_absolute_symlink_stays_in_root (void)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd
      = ar_path_open_in_root (root_fd, "/abs_etc/marker", O_PATH, &err);
  CHECK (fd >= 0);
  CHECK (same_file (fd, root_fd, "etc/marker"));

  /* The host's /etc/passwd exists; the root's does not. */
  cleanup_error ar_error_t *err2 = NULL;
  CHECK_INT (ar_path_open_in_root (root_fd, "abs_etc/passwd", O_RDONLY, &err2),
             -1);
  CHECK (err2 && err2->errno_value == ENOENT);
}

static void
test_open_dotdot_stays_in_root (void)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd = ar_path_open_in_root (root_fd, "dotdot", O_PATH, &err);
  CHECK (fd >= 0);
  CHECK (same_file (fd, root_fd, "."));

  cleanup_close int fd2 = ar_path_open_in_root (
      root_fd, "../../../../etc/marker", O_RDONLY, &err);
  CHECK (fd2 >= 0);
  CHECK (same_file (fd2, root_fd, "etc/marker"));

  cleanup_error ar_error_t *err2 = NULL;
  CHECK_INT (
      ar_path_open_in_root (root_fd, "dotdot/../etc/passwd", O_RDONLY, &err2),
      -1);
}

static void
test_open_loop_and_magic (void)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_path_open_in_root (root_fd, "loop_a", O_PATH, &err), -1);
  CHECK (err && err->errno_value == ELOOP);

  /* /proc/self/root does not exist in the root; even if it did, magic
   * links are refused. */
  cleanup_error ar_error_t *err2 = NULL;
  CHECK_INT (ar_path_open_in_root (root_fd, "magic/etc/passwd", O_PATH, &err2),
             -1);
}

static void
test_open_magic_link_refused (void)
{
  /* Even when the root is "/", a magic link must not be followed. */
  cleanup_close int slash = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_path_open_in_root (slash, "/proc/self/root/etc", O_PATH, &err),
             -1);
  CHECK (err && err->errno_value == ELOOP);
}

static void
test_create_plain (void)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd
      = ar_path_create_in_root (root_fd, "/new/a/b/c", true, &err);
  CHECK (fd >= 0);
  CHECK (same_file (fd, root_fd, "new/a/b/c"));
  CHECK (fd >= 0 && (fcntl (fd, F_GETFL) & O_PATH));
  struct stat st;
  CHECK (fstatat (root_fd, "new/a/b/c", &st, 0) == 0 && S_ISDIR (st.st_mode));

  /* mkdir -p semantics: "dir" is made, then ".." leads back to "new". */
  cleanup_close int ffd
      = ar_path_create_in_root (root_fd, "new/dir/..//f", false, &err);
  CHECK (ffd >= 0 && same_file (ffd, root_fd, "new/f"));
  CHECK (exists_in_root ("new/dir"));

  cleanup_close int f2
      = ar_path_create_in_root (root_fd, "new/a/leaf", false, &err);
  CHECK (f2 >= 0);
  CHECK (fstatat (root_fd, "new/a/leaf", &st, 0) == 0 && S_ISREG (st.st_mode)
         && st.st_size == 0);

  /* Existing entries are reused, not recreated. */
  cleanup_close int again
      = ar_path_create_in_root (root_fd, "new/a/leaf", false, &err);
  CHECK (again >= 0 && same_file (again, root_fd, "new/a/leaf"));

  cleanup_close int r = ar_path_create_in_root (root_fd, "///", true, &err);
  CHECK (r >= 0 && same_file (r, root_fd, "."));
}

static void
test_create_through_dangling_absolute_symlink (void)
{
  /* host_abs -> <outside>/escape: must create <root><outside>/escape. */
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd
      = ar_path_create_in_root (root_fd, "host_abs/sub", true, &err);
  CHECK (fd >= 0);
  CHECK (!exists_outside ("escape"));
  cleanup_free char *inside = xasprintf ("%s/escape/sub", outside + 1);
  CHECK (exists_in_root (inside));
  CHECK (same_file (fd, root_fd, inside));
}

static void
test_create_through_dangling_relative_symlink (void)
{
  /* rel_escape -> ../../../../../..<outside>/rel: the ".." stop at the
   * root, so it must land in <root><outside>/rel. */
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd
      = ar_path_create_in_root (root_fd, "rel_escape", false, &err);
  CHECK (fd >= 0);
  CHECK (!exists_outside ("rel"));
  cleanup_free char *inside = xasprintf ("%s/rel", outside + 1);
  CHECK (exists_in_root (inside));
  CHECK (same_file (fd, root_fd, inside));
  struct stat st;
  CHECK (fstat (fd, &st) == 0 && S_ISREG (st.st_mode));
}

static void
test_create_symlink_loop (void)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_path_create_in_root (root_fd, "loop_a/x", true, &err), -1);
  CHECK (err && err->errno_value == ELOOP);
}

static void
test_create_under_file_fails (void)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_path_create_in_root (root_fd, "file_link/x", true, &err), -1);
  CHECK (err && err->errno_value == ENOTDIR);
}

static void
test_create_via_dotdot_symlink (void)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int fd
      = ar_path_create_in_root (root_fd, "dotdot/../../made", true, &err);
  CHECK (fd >= 0);
  CHECK (exists_in_root ("made"));
  CHECK (same_file (fd, root_fd, "made"));
}

/* ar_proc_write: a procfs file is written; a file that is not on procfs
 * (what a bind mount over /proc/... would put there) is refused before a
 * byte is written. */
static void
test_proc_write_checks_procfs (void)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_proc_write (AT_FDCWD, "/proc/self/comm", "ar-unit", 7, &err),
             0);
  char comm[32] = "";
  cleanup_close int fd = open ("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  CHECK (fd >= 0 && read (fd, comm, sizeof comm - 1) > 0);
  CHECK (strncmp (comm, "ar-unit", 7) == 0);

  cleanup_free char *plain = xasprintf ("%s/etc/marker", root);
  cleanup_error ar_error_t *err2 = NULL;
  CHECK_INT (ar_proc_write (AT_FDCWD, plain, "1", 1, &err2), -1);
  CHECK (err2 && strstr (ar_error_text (err2), "not on procfs") != NULL);
  struct stat st;
  CHECK (stat (plain, &st) == 0 && st.st_size == 0);

  /* A symlink as the last component is not followed. */
  cleanup_free char *link = xasprintf ("%s/file_link", root);
  cleanup_error ar_error_t *err3 = NULL;
  CHECK_INT (ar_proc_write (AT_FDCWD, link, "1", 1, &err3), -1);
  CHECK (err3 && err3->errno_value == ELOOP);
}

/* Beneath a verified procfs directory: no symlink (not even /proc's own
 * magic ones), no "..", and a directory elsewhere is refused up front. */
static void
test_proc_write_beneath_dir (void)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int self = ar_proc_open_dir ("/proc/self", &err);
  CHECK (self >= 0);
  cleanup_error ar_error_t *err1 = NULL;
  CHECK_INT (ar_proc_write (self, "comm", "ar-unit2", 8, &err1), 0);
  cleanup_error ar_error_t *err2 = NULL;
  CHECK_INT (ar_proc_write (self, "../self/comm", "x", 1, &err2), -1);
  CHECK (err2 && err2->errno_value == EXDEV);
  cleanup_error ar_error_t *err3 = NULL;
  CHECK_INT (ar_proc_write (self, "cwd/x", "x", 1, &err3), -1);
  CHECK (err3 && err3->errno_value == ELOOP);
  cleanup_error ar_error_t *err4 = NULL;
  CHECK_INT (ar_proc_open_dir (root, &err4), -1);
  CHECK (err4 && strstr (ar_error_text (err4), "not on procfs") != NULL);
}

static bool
plain (const char *name)
{
  cleanup_error ar_error_t *err = NULL;
  int r = ar_check_plain_name ("pool", name, &err);
  CHECK ((r == 0) == (err == NULL));
  if (err)
    CHECK (strncmp (ar_error_text (err), "pool: name `", 12) == 0);
  return r == 0;
}

static void
test_plain_names (void)
{
  CHECK (plain ("a") && plain ("agents-1.x_2"));
  CHECK (plain (
      "0123456789012345678901234567890123456789012345678901234567890123"));
  CHECK (!plain (
      "01234567890123456789012345678901234567890123456789012345678901234"));
  CHECK (!plain ("") && !plain (".hidden") && !plain ("-flag"));
  CHECK (!plain ("a/b") && !plain ("..") && !plain ("a b") && !plain ("a:b"));
}

int
main (void)
{
  setup ();
  RUN (test_clean);
  RUN (test_fd_path);
  RUN (test_open_absolute_symlink_stays_in_root);
  RUN (test_open_dotdot_stays_in_root);
  RUN (test_open_loop_and_magic);
  RUN (test_open_magic_link_refused);
  RUN (test_create_plain);
  RUN (test_create_through_dangling_absolute_symlink);
  RUN (test_create_through_dangling_relative_symlink);
  RUN (test_create_symlink_loop);
  RUN (test_create_under_file_fails);
  RUN (test_create_via_dotdot_symlink);
  RUN (test_proc_write_checks_procfs);
  RUN (test_proc_write_beneath_dir);
  RUN (test_plain_names);
  /* Whatever happened above, nothing may have appeared next to the root:
   * the outside directory must still be empty. */
  CHECK (rmdir (outside) == 0);
  teardown ();
  return unit_finish ();
}
