/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "rootless.h"
#include "process.h"
#include "state.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/fs.h"
#include "../util/pidfd.h"
#include "../util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
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

/* The holder: out of the maker's session, nothing of its fds but the
 * init's pidfd, until the init ends or a taker ends it. */
static _Noreturn void
hold (int init_pidfd)
{
  setsid ();
  prctl (PR_SET_NAME, "agentrun-hold");
  int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null_fd >= 0; fd++)
    dup2 (null_fd, fd);
  int keep = init_pidfd;
  ar_close_fds_from (3, &keep, 1);
  struct pollfd p = { .fd = init_pidfd, .events = POLLIN };
  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
  _exit (0);
}

int
ar_rootless_hold_namespaces (int state_fd, int init_pidfd, ar_error_t **err)
{
  pid_t pid = fork ();
  if (pid < 0)
    return ar_error_set (err, errno, "sandbox without root: fork the holder");
  if (pid == 0)
    hold (init_pidfd);
  if (ar_pid_record_write (state_fd, AR_NS_HOLDER_FILE, pid, err) < 0)
    {
      kill (pid, SIGKILL);
      return -1;
    }
  return 0;
}

bool
ar_rootless_held (int state_fd)
{
  return faccessat (state_fd, AR_NS_HOLDER_FILE, F_OK, 0) == 0;
}

int
ar_rootless_join_held (int state_fd, ar_error_t **err)
{
  pid_t pid = ar_pid_record_read (state_fd, AR_NS_HOLDER_FILE);
  cleanup_close int holder = pid > 0 ? ar_pidfd_open (pid) : -1;
  /* The pidfd pins the pid: the record still names the same process.
   * One that ends meanwhile fails the setns with ESRCH. */
  bool gone
      = holder < 0 || ar_pid_record_read (state_fd, AR_NS_HOLDER_FILE) != pid;
  if (!gone && setns (holder, CLONE_NEWUSER | CLONE_NEWNS) < 0)
    {
      if (errno != ESRCH)
        return ar_error_set (err, errno, "join the namespaces held by pid %d",
                             (int) pid);
      gone = true;
    }
  if (gone)
    return ar_error_set (
        err, 0, "its namespaces are gone (their holder process ended)");
  ar_pidfd_send_signal (holder, SIGKILL);
  unlinkat (state_fd, AR_NS_HOLDER_FILE, 0);
  return 0;
}
