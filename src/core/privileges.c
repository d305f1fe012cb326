/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "privileges.h"
#include "caps.h"
#include "process.h"
#include "sync.h"
#include "../util/cleanup.h"
#include "../util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <selinux/selinux.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Labels apply at the next execve. Asking for one on a host without that
 * LSM is an error: silently running unconfined would be a lie. */
static int
set_exec_labels (const oci_process *proc, ar_error_t **err)
{
  if (proc->selinux_label && proc->selinux_label[0])
    {
      if (is_selinux_enabled () <= 0)
        return ar_error_set (
            err, 0,
            "config.json: .process.selinuxLabel: SELinux is not enabled on this host");
      /* What setexeccon(3) writes, but through ar_proc_write: the file
       * must be procfs, not something mounted over it. The context goes
       * with its NUL, as libselinux sends it. */
      if (ar_proc_write (AT_FDCWD, "/proc/thread-self/attr/exec",
                         proc->selinux_label, strlen (proc->selinux_label) + 1,
                         err)
          < 0)
        return ar_error_prefix (err, "config.json: .process.selinuxLabel: `%s`",
                                proc->selinux_label);
    }
  if (proc->apparmor_profile && proc->apparmor_profile[0])
    {
      cleanup_free char *value = xasprintf ("exec %s", proc->apparmor_profile);
      /* Newer kernels have the AppArmor-specific file; older the shared one. */
      if (ar_proc_write (AT_FDCWD, "/proc/self/attr/apparmor/exec", value,
                         strlen (value), NULL)
              < 0
          && ar_proc_write (AT_FDCWD, "/proc/self/attr/exec", value,
                            strlen (value), NULL)
                 < 0)
        return ar_error_set (
            err, 0,
            "config.json: .process.apparmorProfile: cannot apply `%s` (is AppArmor enabled?)",
            proc->apparmor_profile);
    }
  return 0;
}

/* runc hands the stdio to the process's user, so that a non-root process
 * can reopen /proc/self/fd/N (a pipe or socket is mode 0600 of whoever
 * made it) and own its terminal. Unlike runc, stdio the caller passed in
 * that is neither a pipe nor a socket (its own terminal, a file) is left
 * alone: chowning it would hand a host tty to a container uid. The group
 * stays (devpts makes a terminal the tty group's). */
static void
hand_stdio_to_user (const oci_process *proc)
{
  for (int fd = 0; fd <= 2; fd++)
    {
      struct stat st;
      if (fstat (fd, &st) < 0 || st.st_uid == proc->user.uid)
        continue;
      bool own_terminal = proc->terminal && S_ISCHR (st.st_mode)
                          && st.st_rdev != makedev (1, 3);
      if (!S_ISFIFO (st.st_mode) && !S_ISSOCK (st.st_mode) && !own_terminal)
        continue;
      /* EINVAL or EPERM: an id not mapped in the user namespace. Better
       * to leave the stdio as it is than to fail the container. */
      (void) fchown (fd, proc->user.uid, (gid_t) -1);
    }
}

/* The fd goes to the runtime, which connects to listenerPath: a path of
 * the host's, not of the container's root we are in now. */
static int
load_seccomp (const ar_seccomp_program *seccomp, int sync_fd, ar_error_t **err)
{
  int notify_fd;
  if (ar_seccomp_load_program (seccomp, &notify_fd, err) < 0)
    return -1;
  if (notify_fd < 0)
    return 0;
  int r = ar_sync_send (sync_fd, AR_SYNC_SECCOMP, 0, notify_fd, NULL, err);
  close (notify_fd);
  ar_sync_msg msg;
  if (r < 0 || ar_sync_expect (sync_fd, AR_SYNC_SECCOMP_DONE, &msg, err) < 0)
    return -1;
  return 0;
}

int
ar_privileges_drop (const oci_process *proc, const ar_seccomp_program *seccomp,
                    int sync_fd, bool die_with_parent, ar_error_t **err)
{
  if (set_exec_labels (proc, err) < 0)
    return -1;
  /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: do it
   * while we still have it. With it, load last so the filter need not
   * allow the set-up syscalls. */
  if (seccomp && !proc->no_new_privileges
      && load_seccomp (seccomp, sync_fd, err) < 0)
    return -1;
  hand_stdio_to_user (proc);
  if (ar_process_set_user (proc, err) < 0)
    return -1;
  if (ar_caps_apply (proc->capabilities, err) < 0)
    return -1;
  if (proc->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ar_error_set (err, errno, "set no_new_privs");
  if (die_with_parent && ar_process_die_with_parent (sync_fd, err) < 0)
    return -1;
  if (seccomp && proc->no_new_privileges
      && load_seccomp (seccomp, sync_fd, err) < 0)
    return -1;
  return 0;
}

int
ar_privileges_pass_listener (int sync_fd, int notify_fd,
                             const oci_seccomp *seccomp, pid_t pid,
                             const oci_state *state, ar_error_t **err)
{
  cleanup_close int fd = notify_fd;
  if (seccomp == NULL || seccomp->listener_path == NULL)
    return ar_error_set (
        err, 0, "seccomp: a listener fd, but no .linux.seccomp.listenerPath");
  if (ar_seccomp_send_to_listener (seccomp, fd, pid, state, err) < 0)
    return -1;
  return ar_sync_send (sync_fd, AR_SYNC_SECCOMP_DONE, 0, -1, NULL, err);
}
