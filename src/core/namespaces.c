/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "namespaces.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/pidfd.h"
#include "../util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int
ar_ns_clone_flag (oci_ns_type type)
{
  switch (type)
    {
    case OCI_NS_PID:
      return CLONE_NEWPID;
    case OCI_NS_NETWORK:
      return CLONE_NEWNET;
    case OCI_NS_MOUNT:
      return CLONE_NEWNS;
    case OCI_NS_IPC:
      return CLONE_NEWIPC;
    case OCI_NS_UTS:
      return CLONE_NEWUTS;
    case OCI_NS_USER:
      return CLONE_NEWUSER;
    case OCI_NS_CGROUP:
      return CLONE_NEWCGROUP;
    case OCI_NS_TIME:
      return CLONE_NEWTIME;
    case OCI_NS_COUNT:
      break;
    }
  return 0;
}

const char *
ar_ns_proc_name (oci_ns_type type)
{
  static const char *const names[OCI_NS_COUNT] = {
    [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "net",
    [OCI_NS_MOUNT] = "mnt",     [OCI_NS_IPC] = "ipc",
    [OCI_NS_UTS] = "uts",       [OCI_NS_USER] = "user",
    [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
  };
  return type < OCI_NS_COUNT ? names[type] : NULL;
}

bool
ar_ns_host_mounts (const oci_spec *spec)
{
  return oci_spec_find_namespace (spec, OCI_NS_MOUNT) == NULL;
}

int
ar_ns_new_flags (const oci_spec *spec)
{
  int flags = 0;
  if (spec->linux_cfg == NULL)
    return 0;
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    if (spec->linux_cfg->namespaces[i].path == NULL)
      flags |= ar_ns_clone_flag (spec->linux_cfg->namespaces[i].type);
  return flags;
}

int
ar_ns_open_joins (const oci_spec *spec, ar_ns_joins *joins, ar_error_t **err)
{
  for (int t = 0; t < OCI_NS_COUNT; t++)
    joins->fd[t] = -1;
  if (spec->linux_cfg == NULL)
    return 0;
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    {
      const oci_namespace *ns = &spec->linux_cfg->namespaces[i];
      if (ns->path == NULL)
        continue;
      int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        {
          ar_error_set (err, errno,
                        "config.json: .linux.namespaces[%zu].path: open `%s`",
                        i, ns->path);
          ar_ns_close_joins (joins);
          return -1;
        }
      joins->fd[ns->type] = fd;
      int actual = ioctl (fd, NS_GET_NSTYPE);
      if (actual < 0 || actual != ar_ns_clone_flag (ns->type))
        {
          ar_error_set (
              err, 0,
              "config.json: .linux.namespaces[%zu].path: `%s` is not a %s namespace",
              i, ns->path, oci_ns_type_name (ns->type));
          ar_ns_close_joins (joins);
          return -1;
        }
    }
  return 0;
}

void
ar_ns_close_joins (ar_ns_joins *joins)
{
  for (int t = 0; t < OCI_NS_COUNT; t++)
    ar_closep (&joins->fd[t]);
}

int
ar_ns_join_in_child (ar_ns_joins *joins, ar_error_t **err)
{
  /* User first: the others may be owned by it. Mount last: joining it
   * changes our root and cwd. */
  static const oci_ns_type order[]
      = { OCI_NS_USER,    OCI_NS_IPC,    OCI_NS_UTS,
          OCI_NS_NETWORK, OCI_NS_CGROUP, OCI_NS_MOUNT };
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    {
      oci_ns_type t = order[i];
      if (joins->fd[t] < 0)
        continue;
      if (setns (joins->fd[t], ar_ns_clone_flag (t)) < 0)
        return ar_error_set (err, errno, "join %s namespace",
                             oci_ns_type_name (t));
      ar_closep (&joins->fd[t]);
    }
  return 0;
}

/* Where the helper leaves what its clone gave: memory both see. */
typedef struct
{
  pid_t pid;
  int pidfd;
  int error;
  bool in_cgroup;
} clone_result;

pid_t
ar_ns_clone_in_user_pid (ar_ns_joins *joins, uint64_t flags, int *pidfd,
                         int cgroup_fd, bool *in_cgroup)
{
  clone_result *r = mmap (NULL, sizeof *r, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED)
    return -1;
  *r = (clone_result){ .pid = -1, .pidfd = -1, .error = ECHILD };
  /* Our fd table, so the pidfd is ours; not our memory: setns refuses a
   * user namespace to a task that shares it. */
  pid_t helper = (pid_t) syscall (SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL,
                                  NULL, NULL);
  if (helper == 0)
    {
      if (setns (joins->fd[OCI_NS_USER], CLONE_NEWUSER) < 0
          || unshare (CLONE_NEWPID) < 0)
        {
          r->error = errno;
          _exit (1);
        }
      joins->fd[OCI_NS_USER] = -1; /* the init is in it already */
      pid_t pid = ar_clone_pidfd (flags | CLONE_PARENT, pidfd, cgroup_fd,
                                  &r->in_cgroup);
      if (pid == 0)
        return 0;
      r->error = pid < 0 ? errno : 0;
      r->pid = pid;
      r->pidfd = *pidfd;
      _exit (0);
    }
  int status;
  if (helper > 0)
    TEMP_FAILURE_RETRY (waitpid (helper, &status, 0));
  pid_t pid = r->pid;
  int error = helper < 0 ? errno : r->error;
  *pidfd = r->pidfd;
  *in_cgroup = r->in_cgroup;
  munmap (r, sizeof *r);
  errno = error;
  return pid;
}

int
ar_ns_write_time_offsets (const oci_linux *lnx, ar_error_t **err)
{
  char buf[128];
  int len = 0;
  if (lnx->time_monotonic.secs.set || lnx->time_monotonic.nanosecs.set)
    len += snprintf (buf + len, sizeof buf - (size_t) len,
                     "monotonic %lld %u\n",
                     (long long) lnx->time_monotonic.secs.value,
                     lnx->time_monotonic.nanosecs.value);
  if (lnx->time_boottime.secs.set || lnx->time_boottime.nanosecs.set)
    len += snprintf (buf + len, sizeof buf - (size_t) len, "boottime %lld %u\n",
                     (long long) lnx->time_boottime.secs.value,
                     lnx->time_boottime.nanosecs.value);
  if (len == 0)
    return 0;
  if (ar_proc_write (AT_FDCWD, "/proc/self/timens_offsets", buf, (size_t) len,
                     err)
      < 0)
    return ar_error_prefix (err, "config.json: .linux.timeOffsets");
  return 0;
}

int
ar_ns_loopback_up (ar_error_t **err)
{
  cleanup_close int sock = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ar_error_set (err, errno, "loopback: socket");
  struct ifreq ifr = { 0 };
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (sock, SIOCGIFFLAGS, &ifr) < 0)
    return ar_error_set (err, errno, "loopback: get flags");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (sock, SIOCSIFFLAGS, &ifr) < 0)
    return ar_error_set (err, errno, "loopback: bring up");
  return 0;
}
