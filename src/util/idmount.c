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

static int
write_maps (pid_t pid, const char *uid_map, const char *gid_map,
            ar_error_t **err)
{
  cleanup_free char *uid_file = xasprintf ("/proc/%d/uid_map", (int) pid);
  cleanup_free char *gid_file = xasprintf ("/proc/%d/gid_map", (int) pid);
  if (ar_proc_write (AT_FDCWD, uid_file, uid_map, strlen (uid_map), err) < 0
      || ar_proc_write (AT_FDCWD, gid_file, gid_map, strlen (gid_map), err) < 0)
    return -1;
  return 0;
}

/* The child that holds the namespace until it has been opened. It shares
 * the runtime's memory (no page tables copied: a fork of the runtime
 * cost more than the rest of the idmapped mount) and so does nothing but
 * wait for the pipe to close. */
typedef struct
{
  int wait_fd, other_fd;
} holder;

/* Raw calls and no sanitizer: the child runs on the parent's thread-local
 * state, which a sanitizer's interceptors would share with it. */
__attribute__ ((no_sanitize_address)) static int
hold (void *arg)
{
  const holder *h = arg;
  char c;
  syscall (SYS_close, h->other_fd);
  syscall (SYS_read, h->wait_fd, &c, 1);
  return 0;
}

#define HOLDER_STACK (16 * 1024)

static void
reap (pid_t pid)
{
  while (pid > 0 && waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

void
ar_idmap_ns_release (ar_idmap_ns *ns)
{
  if (ns->fd >= 0)
    close (ns->fd);
  reap (ns->holder);
  free (ns->holder_stack);
  *ns = (ar_idmap_ns){ .fd = -1, .holder = 0, .holder_stack = NULL };
}

int
ar_idmount_userns (const char *uid_map, const char *gid_map, ar_idmap_ns *ns,
                   ar_error_t **err)
{
  *ns = (ar_idmap_ns){ .fd = -1, .holder = 0, .holder_stack = NULL };
  int done[2];
  if (pipe2 (done, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "idmapped mount: pipe");
  /* What the child reads lives in its stack's memory, as long as it. */
  ns->holder_stack = xmalloc (HOLDER_STACK);
  holder *h = (holder *) ns->holder_stack;
  *h = (holder){ .wait_fd = done[0], .other_fd = done[1] };
  ns->holder = clone (hold, ns->holder_stack + HOLDER_STACK,
                      CLONE_VM | CLONE_NEWUSER | SIGCHLD, h);
  if (ns->holder < 0)
    ar_error_set (err, errno, "idmapped mount: make a user namespace");
  else if (write_maps (ns->holder, uid_map, gid_map, err) == 0)
    {
      cleanup_free char *ns_path
          = xasprintf ("/proc/%d/ns/user", (int) ns->holder);
      ns->fd = open (ns_path, O_RDONLY | O_CLOEXEC);
      if (ns->fd < 0)
        ar_error_set (err, errno, "idmapped mount: open `%s`", ns_path);
    }
  /* The child ends once no write end is open (its own copy it closes). */
  close (done[1]);
  close (done[0]);
  if (ns->fd >= 0)
    return 0;
  ar_idmap_ns_release (ns);
  return -1;
}

int
ar_idmount_set (int tree_fd, int userns_fd, bool recursive, const char *path,
                ar_error_t **err)
{
  struct mount_attr attr
      = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) userns_fd };
  int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  if (syscall (SYS_mount_setattr, tree_fd, "", flags, &attr, sizeof attr) == 0)
    return 0;
  int saved = errno;
  return ar_error_set (
      err, saved, "idmapped mount of `%s`: %s", path,
      saved == EINVAL || saved == ENOSYS || saved == EPERM
          ? "its filesystem or this kernel cannot idmap (Linux 5.12 or later as root; tmpfs from 6.3; not an overlayfs mount)"
          : "refused");
}

int
ar_idmount_attach_copy (const char *source, const ar_id_shift *map,
                        const char *target, ar_error_t **err)
{
  cleanup_free char *uids
      = xasprintf ("%u %u %u\n", map->uid_from, map->uid_to, map->count);
  cleanup_free char *gids
      = xasprintf ("%u %u %u\n", map->gid_from, map->gid_to, map->count);
  cleanup_idmap_ns ar_idmap_ns ns = { .fd = -1 };
  if (ar_idmount_userns (uids, gids, &ns, err) < 0)
    return ar_error_prefix (err, "`%s`", source);
  cleanup_close int tree = (int) syscall (SYS_open_tree, AT_FDCWD, source,
                                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return ar_error_set (err, errno, "idmapped mount: clone `%s`", source);
  if (ar_idmount_set (tree, ns.fd, false, source, err) < 0)
    return -1;
  if (syscall (SYS_move_mount, tree, "", AT_FDCWD, target,
               MOVE_MOUNT_F_EMPTY_PATH)
      < 0)
    return ar_error_set (err, errno, "attach an idmapped mount on `%s`",
                         target);
  return 0;
}
