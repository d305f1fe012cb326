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

int
ar_rootless_unshare_self (ar_error_t **err)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
    return ar_error_set (err, errno, "sandbox without root: a user namespace of its own (is kernel.unprivileged_userns_clone or user.max_user_namespaces 0?)");
  if (map_own_id ("uid_map", uid, err) < 0
      || ar_proc_write (AT_FDCWD, "/proc/self/setgroups", "deny", 4, err) < 0
      || map_own_id ("gid_map", gid, err) < 0)
    return -1;
  /* Nothing made here may reach the host's mount namespace. */
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return ar_error_set (err, errno, "sandbox without root: make / a slave");
  return 0;
}
