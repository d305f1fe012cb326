/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "idmount.h"
#include "cleanup.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A user namespace holding `map`, for mount_setattr: a child unshares it
 * and waits until its namespace has been opened. */
static int
open_map_namespace (const ar_idmount_map *map, ar_error_t **err)
{
  int ready[2], done[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "idmapped mount: pipe");
  if (pipe2 (done, O_CLOEXEC) < 0)
    {
      close (ready[0]);
      close (ready[1]);
      return ar_error_set (err, errno, "idmapped mount: pipe");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (ready[0]);
      close (done[1]);
      char c = unshare (CLONE_NEWUSER) == 0 ? 'u' : 'e';
      if (write (ready[1], &c, 1) == 1)
        (void) !read (done[0], &c, 1);
      _exit (0);
    }
  close (ready[1]);
  close (done[0]);
  char c = 'e';
  int ns = -1;
  if (pid < 0)
    ar_error_set (err, errno, "idmapped mount: fork");
  else if (read (ready[0], &c, 1) != 1 || c != 'u')
    ar_error_set (err, EPERM, "idmapped mount: make a user namespace");
  else
    {
      cleanup_free char *uids
          = xasprintf ("%u %u %u\n", map->uid_from, map->uid_to, map->count);
      cleanup_free char *gids
          = xasprintf ("%u %u %u\n", map->gid_from, map->gid_to, map->count);
      cleanup_free char *uid_map = xasprintf ("/proc/%d/uid_map", (int) pid);
      cleanup_free char *gid_map = xasprintf ("/proc/%d/gid_map", (int) pid);
      cleanup_free char *ns_path = xasprintf ("/proc/%d/ns/user", (int) pid);
      if (ar_proc_write (AT_FDCWD, uid_map, uids, strlen (uids), err) == 0
          && ar_proc_write (AT_FDCWD, gid_map, gids, strlen (gids), err) == 0)
        {
          ns = open (ns_path, O_RDONLY | O_CLOEXEC);
          if (ns < 0)
            ar_error_set (err, errno, "idmapped mount: open `%s`", ns_path);
        }
    }
  close (done[1]);
  close (ready[0]);
  if (pid > 0)
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return ns;
}

int
ar_idmount_clone (const char *path, const ar_idmount_map *map, ar_error_t **err)
{
  cleanup_close int ns = open_map_namespace (map, err);
  if (ns < 0)
    return ar_error_prefix (err, "`%s`", path);
  int tree = (int) syscall (SYS_open_tree, AT_FDCWD, path,
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return ar_error_set (err, errno, "idmapped mount: clone `%s`", path);
  struct mount_attr attr
      = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) ns };
  if (syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr)
      < 0)
    {
      int saved = errno;
      close (tree);
      return ar_error_set (
          err, saved, "idmapped mount of `%s`: %s", path,
          saved == EINVAL || saved == ENOSYS || saved == EPERM
              ? "its filesystem or this kernel cannot idmap (Linux 5.12 or later; tmpfs from 6.3; not an overlayfs mount)"
              : "refused");
    }
  return tree;
}

int
ar_idmount_attach (int mount_fd, const char *target, ar_error_t **err)
{
  if (syscall (SYS_move_mount, mount_fd, "", AT_FDCWD, target,
               MOVE_MOUNT_F_EMPTY_PATH)
      < 0)
    return ar_error_set (err, errno, "attach an idmapped mount on `%s`",
                         target);
  return 0;
}
