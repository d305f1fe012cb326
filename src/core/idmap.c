/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "idmap.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/proc.h"
#include "../util/spawn.h"
#include "../util/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct
{
  const char *file;   /* "uid_map" */
  const char *helper; /* "newuidmap" */
  const char *json;   /* "uidMappings" */
  const char *ranges; /* "/etc/subuid" */
} id_kind;

static const id_kind uid_kind
    = { "uid_map", "newuidmap", "uidMappings", "/etc/subuid" };
static const id_kind gid_kind
    = { "gid_map", "newgidmap", "gidMappings", "/etc/subgid" };

char *
ar_idmap_text (const oci_id_mapping *m, size_t n)
{
  size_t cap = n * 40 + 1, used = 0;
  char *buf = xmalloc (cap);
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++)
    used += (size_t) snprintf (buf + used, cap - used, "%u %u %u\n",
                               m[i].container_id, m[i].host_id, m[i].size);
  return buf;
}

static int
write_map_file (pid_t pid, const id_kind *k, const oci_id_mapping *m, size_t n,
                ar_error_t **err)
{
  cleanup_free char *buf = ar_idmap_text (m, n);
  cleanup_free char *path = xasprintf ("/proc/%d/%s", (int) pid, k->file);
  if (ar_proc_write (AT_FDCWD, path, buf, strlen (buf), err) < 0)
    return ar_error_prefix (err, "write %s", k->file);
  return 0;
}

static int
run_helper (pid_t pid, const id_kind *k, const oci_id_mapping *m, size_t n,
            ar_error_t **err)
{
  size_t argc = 2 + 3 * n + 1;
  cleanup_free char **argv = xcalloc (argc, sizeof *argv);
  cleanup_free char *numbers = xmalloc ((1 + 3 * n) * 12);
  char *o = numbers;
  argv[0] = (char *) k->helper;
  argv[1] = o;
  o += sprintf (o, "%d", (int) pid) + 1;
  for (size_t i = 0; i < n; i++)
    {
      uint32_t v[3] = { m[i].container_id, m[i].host_id, m[i].size };
      for (int j = 0; j < 3; j++)
        {
          argv[2 + 3 * i + (size_t) j] = o;
          o += sprintf (o, "%u", v[j]) + 1;
        }
    }
  cleanup_free char *msg = NULL;
  cleanup_error ar_error_t *not_run = NULL;
  int r = ar_spawn_wait (argv, &msg, &not_run);
  if (r < 0)
    return ar_error_set (
        err, not_run->errno_value,
        "config.json: .linux.%s: mapping more than your own id needs %s (Debian: apt-get install uidmap) and a range in %s",
        k->json, k->helper, k->ranges);
  if (r == 0)
    return 0;
  return ar_error_set (
      err, 0,
      "config.json: .linux.%s: %s refused the mapping (%s): is it within your range in %s?",
      k->json, k->helper, msg[0] ? msg : "no message", k->ranges);
}

/* The one mapping the kernel lets an unprivileged process write itself. */
static bool
is_own_id_only (const oci_id_mapping *m, size_t n, unsigned own)
{
  return n == 1 && m[0].size == 1 && m[0].host_id == own;
}

static int
map_ids (pid_t pid, const id_kind *k, const oci_id_mapping *m, size_t n,
         unsigned own, ar_error_t **err)
{
  if (!ar_userns_unprivileged ())
    return write_map_file (pid, k, m, n, err);
  if (!is_own_id_only (m, n, own))
    return run_helper (pid, k, m, n, err);
  if (k == &gid_kind)
    {
      /* Else a process that dropped a group could setgroups it back. */
      cleanup_free char *path = xasprintf ("/proc/%d/setgroups", (int) pid);
      if (ar_proc_write (AT_FDCWD, path, "deny", 4, err) < 0)
        return ar_error_prefix (err, "write setgroups");
    }
  return write_map_file (pid, k, m, n, err);
}

int
ar_idmap_write (pid_t pid, const oci_linux *lnx, ar_error_t **err)
{
  if (lnx->n_uid_mappings == 0 || lnx->n_gid_mappings == 0)
    return ar_error_set (
        err, 0,
        "config.json: .linux: a new user namespace needs uidMappings and gidMappings");
  if (map_ids (pid, &uid_kind, lnx->uid_mappings, lnx->n_uid_mappings,
               geteuid (), err)
      < 0)
    return -1;
  return map_ids (pid, &gid_kind, lnx->gid_mappings, lnx->n_gid_mappings,
                  getegid (), err);
}

/* Container id 0 on the host; false when it is not mapped. */
static bool
host_id_of_root (const oci_id_mapping *m, size_t n, uint32_t *host)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].container_id == 0 && m[i].size > 0)
      {
        *host = m[i].host_id;
        return true;
      }
  return false;
}

/* A change of effective ids makes the process not dumpable, and the
 * child would inherit that: its own /proc files would then belong to
 * host root, which its mapped root may not write (oom_score_adj). As
 * before the switch: the flag is its own again at exec. */
static void
keep_dumpable (void)
{
  prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The raw calls change this thread only; glibc's would change them all.
 * The filesystem ids stay root's: clone3 checks the cgroup it puts the
 * child in (CLONE_INTO_CGROUP) with them, and a move by pid afterwards
 * would wait for an RCU grace period on cgroup v2. */
static bool
set_effective_ids (uint32_t uid, uint32_t gid)
{
  if (syscall (SYS_setresgid, -1, gid, -1) < 0)
    return false;
  if (syscall (SYS_setresuid, -1, uid, -1) < 0)
    {
      syscall (SYS_setresgid, -1, 0, -1);
      return false;
    }
  syscall (SYS_setfsuid, 0);
  syscall (SYS_setfsgid, 0);
  keep_dumpable ();
  return true;
}

void
ar_idmap_owner_set (const oci_linux *lnx, ar_idmap_owner *owner)
{
  owner->active = false;
  uint32_t uid, gid;
  if (lnx == NULL || ar_userns_unprivileged () || geteuid () != 0
      || !host_id_of_root (lnx->uid_mappings, lnx->n_uid_mappings, &uid)
      || !host_id_of_root (lnx->gid_mappings, lnx->n_gid_mappings, &gid)
      || uid == 0 || gid == 0)
    return;
  owner->active = set_effective_ids (uid, gid);
}

void
ar_idmap_owner_reset (ar_idmap_owner *owner)
{
  if (!owner->active)
    return;
  /* uid first: back at euid 0 the permitted capabilities are effective
   * again, and setting the gid needs them. */
  syscall (SYS_setresuid, -1, 0, -1);
  syscall (SYS_setresgid, -1, 0, -1);
  keep_dumpable ();
  owner->active = false;
}
