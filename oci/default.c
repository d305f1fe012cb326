/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"
#include "../src/util/cleanup.h"

#include <string.h>

/* The spec `agentrun spec` writes: the same shape as runc's template (a
 * busybox `sh` on a terminal, the usual pseudo-filesystems, devices denied
 * by default, the kernel interfaces a container should not see masked or
 * read-only). It is built as a struct and emitted, so it always parses. */

static oci_strv
strv_from (const char *const *list)
{
  size_t n = 0;
  while (list[n])
    n++;
  oci_strv v = { .items = xcalloc (n + 1, sizeof (char *)), .len = n };
  for (size_t i = 0; i < n; i++)
    v.items[i] = xstrdup (list[i]);
  return v;
}

#define STRV(...) strv_from ((const char *const[]){ __VA_ARGS__, NULL })

static const char *const default_caps[]
    = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

static oci_process *
default_process (void)
{
  oci_process *p = xcalloc (1, sizeof *p);
  p->terminal = true;
  p->args = STRV ("sh");
  p->env = STRV ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                 "/sbin:/bin",
                 "TERM=xterm");
  p->cwd = xstrdup ("/");
  p->capabilities = xcalloc (1, sizeof *p->capabilities);
  p->capabilities->bounding = strv_from (default_caps);
  p->capabilities->effective = strv_from (default_caps);
  p->capabilities->permitted = strv_from (default_caps);
  p->capabilities->ambient = strv_from (default_caps);
  p->rlimits = xcalloc (1, sizeof *p->rlimits);
  p->n_rlimits = 1;
  p->rlimits[0] = (oci_rlimit){ .type = xstrdup ("RLIMIT_NOFILE"),
                                .hard = 1024,
                                .soft = 1024 };
  p->no_new_privileges = true;
  return p;
}

typedef struct
{
  const char *destination, *type, *source;
  const char *const *options;
} mount_template;

static const mount_template default_mounts[] = {
  { "/proc", "proc", "proc", NULL },
  { "/dev", "tmpfs", "tmpfs",
    (const char *const[]){ "nosuid", "strictatime", "mode=755", "size=65536k",
                           NULL } },
  { "/dev/pts", "devpts", "devpts",
    (const char *const[]){ "nosuid", "noexec", "newinstance", "ptmxmode=0666",
                           "mode=0620", "gid=5", NULL } },
  { "/dev/shm", "tmpfs", "shm",
    (const char *const[]){ "nosuid", "noexec", "nodev", "mode=1777",
                           "size=65536k", NULL } },
  { "/dev/mqueue", "mqueue", "mqueue",
    (const char *const[]){ "nosuid", "noexec", "nodev", NULL } },
  { "/sys", "sysfs", "sysfs",
    (const char *const[]){ "nosuid", "noexec", "nodev", "ro", NULL } },
  { "/sys/fs/cgroup", "cgroup", "cgroup",
    (const char *const[]){ "nosuid", "noexec", "nodev", "relatime", "ro",
                           NULL } },
};

/* A user namespace cannot mount a fresh sysfs (it needs a network
 * namespace it owns), so rootless containers get the host's /sys. */
static const mount_template rootless_sys
    = { "/sys", "none", "/sys",
        (const char *const[]){ "rbind", "nosuid", "noexec", "nodev", "ro",
                               NULL } };

/* Options, minus "gid=N" when rootless: only our own gid is mapped. */
static oci_strv
mount_options (const char *const *options, bool rootless)
{
  if (options == NULL)
    return (oci_strv){ NULL, 0 };
  oci_strv v = strv_from (options);
  if (!rootless)
    return v;
  size_t kept = 0;
  for (size_t i = 0; i < v.len; i++)
    {
      if (strncmp (v.items[i], "gid=", 4) == 0)
        free (v.items[i]);
      else
        v.items[kept++] = v.items[i];
    }
  v.items[kept] = NULL;
  v.len = kept;
  return v;
}

static void
default_mounts_into (oci_spec *s, bool rootless)
{
  size_t n = sizeof default_mounts / sizeof default_mounts[0];
  s->mounts = xcalloc (n, sizeof *s->mounts);
  s->n_mounts = n;
  for (size_t i = 0; i < n; i++)
    {
      const mount_template *t = &default_mounts[i];
      if (rootless && strcmp (t->destination, "/sys") == 0)
        t = &rootless_sys;
      s->mounts[i].destination = xstrdup (t->destination);
      s->mounts[i].type = xstrdup (t->type);
      s->mounts[i].source = xstrdup (t->source);
      s->mounts[i].options = mount_options (t->options, rootless);
    }
}

static void
add_namespace (oci_linux *l, oci_ns_type type)
{
  l->namespaces[l->n_namespaces++] = (oci_namespace){ .type = type };
}

static oci_id_mapping *
single_mapping (uint32_t host_id)
{
  oci_id_mapping *m = xcalloc (1, sizeof *m);
  *m = (oci_id_mapping){ .container_id = 0, .host_id = host_id, .size = 1 };
  return m;
}

static oci_linux *
default_linux (bool rootless, uid_t uid, gid_t gid)
{
  oci_linux *l = xcalloc (1, sizeof *l);
  l->namespaces = xcalloc (OCI_NS_COUNT, sizeof *l->namespaces);
  add_namespace (l, OCI_NS_PID);
  if (!rootless)
    add_namespace (l, OCI_NS_NETWORK);
  add_namespace (l, OCI_NS_IPC);
  add_namespace (l, OCI_NS_UTS);
  add_namespace (l, OCI_NS_MOUNT);
  /* Not in runc's spec, kept (docs/runc-compat.md): without it, on cgroup
   * v2 the container sees the host's cgroup path and CRIU cannot dump it. */
  add_namespace (l, OCI_NS_CGROUP);

  if (rootless)
    {
      add_namespace (l, OCI_NS_USER);
      l->uid_mappings = single_mapping (uid);
      l->n_uid_mappings = 1;
      l->gid_mappings = single_mapping (gid);
      l->n_gid_mappings = 1;
    }
  else
    {
      /* Cgroup limits need a cgroup we may write to: not when rootless. */
      l->resources = xcalloc (1, sizeof *l->resources);
      l->resources->devices = xcalloc (1, sizeof *l->resources->devices);
      l->resources->n_devices = 1;
      l->resources->devices[0]
          = (oci_device_rule){ .allow = false, .access = xstrdup ("rwm") };
    }

  l->masked_paths
      = STRV ("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
              "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
              "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
              "/sys/devices/virtual/powercap");
  l->readonly_paths = STRV ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                            "/proc/sysrq-trigger");
  return l;
}

char *
oci_spec_default_json (bool rootless, uid_t uid, gid_t gid)
{
  oci_spec *s = xcalloc (1, sizeof *s);
  s->oci_version = xstrdup (AR_OCI_VERSION);
  s->process = default_process ();
  s->root_path = xstrdup ("rootfs");
  s->root_readonly = true;
  s->hostname = xstrdup ("agentrun");
  default_mounts_into (s, rootless);
  s->linux_cfg = default_linux (rootless, uid, gid);

  char *json = oci_spec_to_json (s, true);
  oci_spec_free (s);
  return json;
}
