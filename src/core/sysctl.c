/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sysctl.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/proc.h"
#include "namespaces.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static const struct
{
  const char *prefix; /* a whole key when it does not end in '.' or '*' */
  bool whole_key;
  oci_ns_type ns;
} owners[] = {
  { "kernel.msg", false, OCI_NS_IPC },
  { "kernel.sem", true, OCI_NS_IPC },
  { "kernel.shm", false, OCI_NS_IPC },
  { "fs.mqueue.", false, OCI_NS_IPC },
  { "net.", false, OCI_NS_NETWORK },
  { "kernel.hostname", true, OCI_NS_UTS },
  { "kernel.domainname", true, OCI_NS_UTS },
  /* /proc/sys/user: the counts of the writer's user namespace */
  { "user.", false, OCI_NS_USER },
};

/* The namespace a key belongs to; OCI_NS_COUNT when none does. */
static oci_ns_type
owner_of (const char *key)
{
  for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++)
    if (owners[i].whole_key
            ? strcmp (key, owners[i].prefix) == 0
            : strncmp (key, owners[i].prefix, strlen (owners[i].prefix)) == 0)
      return owners[i].ns;
  return OCI_NS_COUNT;
}

static bool
same_as_ours (const char *path, const char *proc_name)
{
  cleanup_free char *ours = xasprintf ("/proc/self/ns/%s", proc_name);
  struct stat a, b;
  return stat (path, &a) == 0 && stat (ours, &b) == 0 && a.st_dev == b.st_dev
         && a.st_ino == b.st_ino;
}

static bool
has_own_namespace (const oci_spec *spec, oci_ns_type type)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, type);
  if (ns == NULL)
    return false;
  return ns->path == NULL || !same_as_ours (ns->path, ar_ns_proc_name (type));
}

/* Both set the same name, and which one wins would be an accident of the
 * order they are applied in: runc refuses such a config too. */
static bool
conflicts_with_name (const oci_spec *spec, const char *key, const char *value)
{
  const char *name = strcmp (key, "kernel.hostname") == 0     ? spec->hostname
                     : strcmp (key, "kernel.domainname") == 0 ? spec->domainname
                                                              : NULL;
  return name && value && strcmp (name, value) != 0;
}

int
ar_sysctl_validate (const oci_spec *spec, ar_error_t **err)
{
  const oci_linux *lnx = spec->linux_cfg;
  for (size_t i = 0; lnx && i < lnx->sysctl.len; i++)
    {
      const char *key = lnx->sysctl.items[i].key;
      oci_ns_type ns = owner_of (key);
      if (ns == OCI_NS_COUNT || strstr (key, "..") || strchr (key, '/'))
        return ar_error_set (
            err, 0,
            "config.json: .linux.sysctl[\"%s\"]: not a namespaced sysctl", key);
      if (!has_own_namespace (spec, ns))
        return ar_error_set (
            err, 0,
            "config.json: .linux.sysctl[\"%s\"]: needs a %s namespace of the container's own, not the host's",
            key, oci_ns_type_name (ns));
      if (conflicts_with_name (spec, key, lnx->sysctl.items[i].value))
        return ar_error_set (
            err, 0,
            "config.json: .linux.sysctl[\"%s\"]: \"%s\" conflicts with the %s set in config.json",
            key, lnx->sysctl.items[i].value, strchr (key, '.') + 1);
    }
  return 0;
}

/* A sysctl of the net, ipc and uts namespaces is picked by the namespaces
 * of the process that opens and writes /proc/sys/..., not by the procfs
 * instance the file is found through (the kernel looks the table set up
 * in current's nsproxy). So the runtime's own /proc, opened in the init
 * once it is in the container's namespaces and before any mount of the
 * container exists, reaches exactly the container's sysctls, and nothing
 * config.json mounts (or the container races in) over /proc/sys can take
 * the write: a file bound over a sysctl is left as it is and the real
 * sysctl is set. */
int
ar_sysctl_open_proc (const oci_linux *lnx, int *proc_sys_fd, ar_error_t **err)
{
  *proc_sys_fd = -1;
  if (lnx == NULL || lnx->sysctl.len == 0)
    return 0;
  *proc_sys_fd = ar_proc_open_dir ("/proc/sys", err);
  return *proc_sys_fd < 0 ? ar_error_prefix (err, "config.json: .linux.sysctl")
                          : 0;
}

int
ar_sysctl_apply (int proc_sys_fd, const oci_linux *lnx, ar_error_t **err)
{
  for (size_t i = 0; lnx && i < lnx->sysctl.len; i++)
    {
      const oci_kv *kv = &lnx->sysctl.items[i];
      cleanup_free char *path = xstrdup (kv->key);
      for (char *p = path; *p; p++)
        if (*p == '.')
          *p = '/';
      if (ar_proc_write (proc_sys_fd, path, kv->value, strlen (kv->value), err)
          < 0)
        return ar_error_prefix (err, "config.json: .linux.sysctl[\"%s\"]",
                                kv->key);
    }
  return 0;
}
