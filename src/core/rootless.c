/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "rootless.h"
#include "../util/cleanup.h"
#include "../util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

static int
map_own_id (const char *file, unsigned id, ar_error_t **err)
{
  char line[64];
  int len = snprintf (line, sizeof line, "0 %u 1\n", id);
  cleanup_free char *path = xasprintf ("/proc/self/%s", file);
  if (ar_proc_write (AT_FDCWD, path, line, (size_t) len, err) < 0)
    return ar_error_prefix (err, "sandbox without root: write %s", file);
  return 0;
}

/* What the administrator can change when the kernel refuses the user
 * namespace, by the errno it refused with. */
static const char *
userns_refused_why (int errno_value)
{
  switch (errno_value)
    {
    case ENOSPC:
      return "user.max_user_namespaces is 0 or used up (root can raise it: sysctl -w user.max_user_namespaces=15000)";
    case EPERM:
      return "unprivileged user namespaces are off (root can allow them: kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or a seccomp filter forbids unshare";
    case EINVAL:
      return "this kernel has no user namespaces (CONFIG_USER_NS)";
    default:
      return "the kernel refused one";
    }
}

int
ar_rootless_unshare_self (ar_error_t **err)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
    return ar_error_set (
        err, errno,
        "sandbox without root needs a user namespace of its own: %s; or run it as root",
        userns_refused_why (errno));
  if (map_own_id ("uid_map", uid, err) < 0
      || ar_proc_write (AT_FDCWD, "/proc/self/setgroups", "deny", 4, err) < 0
      || map_own_id ("gid_map", gid, err) < 0)
    return -1;
  /* Nothing made here may reach the host's mount namespace. */
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return ar_error_set (err, errno, "sandbox without root: make / a slave");
  return 0;
}
