/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "internal.h"
#include "../../util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- cpuset: a new v1 cpuset has no CPUs and no memory nodes, and the
 * kernel refuses to attach a task to it until both are filled in. ---- */

static char *
parent_of (const char *dir)
{
  char *parent = xstrdup (dir);
  char *slash = strrchr (parent, '/');
  if (slash && slash != parent)
    *slash = '\0';
  return parent;
}

static int
inherit_cpuset_knob (const char *dir, const char *file, ar_error_t **err)
{
  cleanup_free char *mine = NULL;
  if (ar_cg_read (dir, file, &mine, err) < 0)
    return -1;
  if (mine[0] != '\0')
    return 0;
  cleanup_free char *parent = parent_of (dir);
  cleanup_free char *value = NULL;
  if (ar_cg_read (parent, file, &value, err) < 0)
    return -1;
  return ar_cg_write (dir, file, value, err);
}

/* A level's CPUs must be a subset of its parent's, so an empty level
 * above the new ones (a pod's cgroup made without cpus, as a kubelet
 * makes one) leaves them nothing to copy: fill the existing levels from
 * the top down first, as runc does. Levels that are set stay as they are. */
static int
fill_existing_levels (const ar_cg_hierarchy *h, const char *first_new,
                      ar_error_t **err)
{
  size_t root_len = strlen (h->mount_point);
  cleanup_free char *path = parent_of (first_new);
  size_t len = strlen (path);
  if (len <= root_len || strncmp (path, h->mount_point, root_len) != 0
      || path[root_len] != '/')
    return 0;
  /* Each level below the mount point, from the top: the path cut at each
   * '/' after the root, then the whole of it. */
  for (size_t i = root_len + 1; i <= len; i++)
    {
      if (path[i] != '/' && path[i] != '\0')
        continue;
      char cut = path[i];
      path[i] = '\0';
      int r = inherit_cpuset_knob (path, "cpuset.cpus", err) < 0
                      || inherit_cpuset_knob (path, "cpuset.mems", err) < 0
                  ? -1
                  : 0;
      path[i] = cut;
      if (r < 0)
        return -1;
    }
  return 0;
}

int
ar_cg_v1_prepare (const ar_cg_hierarchy *h, char *const *created,
                  size_t n_created, ar_error_t **err)
{
  if (!ar_cg_has_controller (h, "cpuset"))
    return 0;
  if (n_created > 0 && fill_existing_levels (h, created[0], err) < 0)
    return -1;
  /* Parents first, so each new directory copies a filled-in parent. */
  for (size_t i = 0; i < n_created; i++)
    if (inherit_cpuset_knob (created[i], "cpuset.cpus", err) < 0
        || inherit_cpuset_knob (created[i], "cpuset.mems", err) < 0)
      return -1;
  return 0;
}

/* ---- memory ------------------------------------------------------------ */

/* Docker and runc treat 0 as "not set" for memory values. */
static bool
memory_value_set (const oci_opt_i64 *v)
{
  return v->set && v->value != 0;
}

/* memsw is memory+swap and must never be below the memory limit, so the
 * order of the two writes depends on whether the limit grows or shrinks:
 * try limit first and, if the kernel refuses, memsw first. */
static int
set_limit_and_memsw (const char *dir, const oci_memory *m, bool have_memsw,
                     ar_error_t **err)
{
  oci_memory given = *m;
  /* Unlimited memory with no swap given is unlimited swap too, as runc
   * has it: a memsw limit left below it would refuse the write. */
  if (memory_value_set (&m->limit) && m->limit.value == -1
      && !memory_value_set (&m->swap) && have_memsw)
    given.swap = (oci_opt_i64){ .set = true, .value = -1 };
  m = &given;
  bool set_limit = memory_value_set (&m->limit);
  bool set_swap = memory_value_set (&m->swap) && have_memsw;
  if (!set_swap)
    return set_limit ? ar_cg_writef (dir, "memory.limit_in_bytes", err,
                                     "%" PRId64, m->limit.value)
                     : 0;
  if (set_limit && m->swap.value > 0 && m->swap.value < m->limit.value)
    return ar_error_set (err, 0,
                         "linux.resources.memory.swap (%" PRId64
                         ") is below memory.limit (%" PRId64
                         "): swap is the total of memory and swap",
                         m->swap.value, m->limit.value);

  cleanup_error ar_error_t *first_try = NULL;
  if (!set_limit
      || ar_cg_writef (dir, "memory.limit_in_bytes", &first_try, "%" PRId64,
                       m->limit.value)
             == 0)
    return ar_cg_writef (dir, "memory.memsw.limit_in_bytes", err, "%" PRId64,
                         m->swap.value);
  if (ar_cg_writef (dir, "memory.memsw.limit_in_bytes", err, "%" PRId64,
                    m->swap.value)
      < 0)
    return -1;
  return ar_cg_writef (dir, "memory.limit_in_bytes", err, "%" PRId64,
                       m->limit.value);
}

static int
apply_memory (const char *dir, const oci_memory *m, ar_error_t **err)
{
  if (m == NULL)
    return 0;
  if (set_limit_and_memsw (
          dir, m, ar_cg_exists (dir, "memory.memsw.limit_in_bytes"), err)
      < 0)
    return -1;
  if (memory_value_set (&m->reservation)
      && ar_cg_writef (dir, "memory.soft_limit_in_bytes", err, "%" PRId64,
                       m->reservation.value)
             < 0)
    return -1;
  /* Kernel memory limits are gone from current kernels (runc ignores them
   * too); the TCP buffer limit still exists. */
  if (memory_value_set (&m->kernel_tcp)
      && ar_cg_writef (dir, "memory.kmem.tcp.limit_in_bytes", err, "%" PRId64,
                       m->kernel_tcp.value)
             < 0)
    return -1;
  if (m->swappiness.set)
    {
      if (m->swappiness.value > 100)
        return ar_error_set (err, 0,
                             "linux.resources.memory.swappiness: %" PRIu64
                             " is above 100",
                             m->swappiness.value);
      if (ar_cg_writef (dir, "memory.swappiness", err, "%" PRIu64,
                        m->swappiness.value)
          < 0)
        return -1;
    }
  if (m->disable_oom_killer.set && m->disable_oom_killer.value
      && ar_cg_write (dir, "memory.oom_control", "1", err) < 0)
    return -1;
  return 0;
}

/* ---- cpu, cpuset ------------------------------------------------------- */

/* The kernel checks quota/period against the parent's (a pod's) limit at
 * each write: a shorter period under the old quota, or a larger quota
 * under the old period, can be refused on the way to an allowed pair.
 * Period first, as most changes need; if refused, quota first. */
static int
set_period_and_quota (const char *dir, const oci_cpu *c, ar_error_t **err)
{
  bool set_period = c->period.set && c->period.value != 0;
  bool set_quota = c->quota.set && c->quota.value != 0;
  int64_t quota = set_quota && c->quota.value > 0 ? c->quota.value : -1;
  cleanup_error ar_error_t *first_try = NULL;
  if (!set_period
      || ar_cg_writef (dir, "cpu.cfs_period_us", &first_try, "%" PRIu64,
                       c->period.value)
             == 0)
    return set_quota
               ? ar_cg_writef (dir, "cpu.cfs_quota_us", err, "%" PRId64, quota)
               : 0;
  if (!set_quota)
    return ar_error_pass (err, steal_pointer (&first_try));
  if (ar_cg_writef (dir, "cpu.cfs_quota_us", err, "%" PRId64, quota) < 0)
    return -1;
  return ar_cg_writef (dir, "cpu.cfs_period_us", err, "%" PRIu64,
                       c->period.value);
}

static int
apply_cpu (const char *dir, const oci_cpu *c, ar_error_t **err)
{
  if (c == NULL)
    return 0;
  if (c->shares.set && c->shares.value != 0
      && ar_cg_writef (dir, "cpu.shares", err, "%" PRIu64, c->shares.value) < 0)
    return -1;
  if (set_period_and_quota (dir, c, err) < 0)
    return -1;
  if (c->burst.set
      && ar_cg_writef (dir, "cpu.cfs_burst_us", err, "%" PRIu64, c->burst.value)
             < 0)
    return -1;
  /* Same ordering rule for the realtime budget. */
  if (c->realtime_period.set && c->realtime_period.value != 0
      && ar_cg_writef (dir, "cpu.rt_period_us", err, "%" PRIu64,
                       c->realtime_period.value)
             < 0)
    return -1;
  if (c->realtime_runtime.set && c->realtime_runtime.value != 0
      && ar_cg_writef (dir, "cpu.rt_runtime_us", err, "%" PRId64,
                       c->realtime_runtime.value)
             < 0)
    return -1;
  if (c->idle.set
      && ar_cg_writef (dir, "cpu.idle", err, "%" PRId64, c->idle.value) < 0)
    return -1;
  return 0;
}

/* ---- pids, blkio, hugetlb, net ----------------------------------------- */

/* BFQ replaced CFQ; with BFQ the weight knobs carry a "bfq." prefix. */
static const char *
weight_file (const char *dir, const char *plain, const char *bfq)
{
  return ar_cg_exists (dir, plain) || !ar_cg_exists (dir, bfq) ? plain : bfq;
}

static int
write_device_list (const char *dir, const char *file,
                   const oci_blkio_device *devs, size_t n, bool weights,
                   ar_error_t **err)
{
  for (size_t i = 0; i < n; i++)
    {
      const oci_blkio_device *d = &devs[i];
      if (weights && (!d->weight.set || d->weight.value == 0))
        continue;
      if (ar_cg_writef (dir, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
                        d->major, d->minor,
                        weights ? (uint64_t) d->weight.value : d->rate)
          < 0)
        return -1;
    }
  return 0;
}

static int
apply_blkio (const char *dir, const oci_blkio *b, ar_error_t **err)
{
  if (b == NULL)
    return 0;
  /* Docker always sends "weight": 0 for "not set"; 0 is outside the
     kernel's range, so it means leave the knob alone. */
  if (b->weight.set && b->weight.value != 0
      && ar_cg_writef (dir,
                       weight_file (dir, "blkio.weight", "blkio.bfq.weight"),
                       err, "%u", b->weight.value)
             < 0)
    return -1;
  if (b->leaf_weight.set && b->leaf_weight.value != 0
      && ar_cg_writef (dir, "blkio.leaf_weight", err, "%u",
                       b->leaf_weight.value)
             < 0)
    return -1;
  const char *wd
      = weight_file (dir, "blkio.weight_device", "blkio.bfq.weight_device");
  return write_device_list (dir, wd, b->weight_device, b->n_weight_device, true,
                            err)
                     < 0
                 || write_device_list (dir, "blkio.throttle.read_bps_device",
                                       b->throttle_read_bps,
                                       b->n_throttle_read_bps, false, err)
                        < 0
                 || write_device_list (dir, "blkio.throttle.write_bps_device",
                                       b->throttle_write_bps,
                                       b->n_throttle_write_bps, false, err)
                        < 0
                 || write_device_list (dir, "blkio.throttle.read_iops_device",
                                       b->throttle_read_iops,
                                       b->n_throttle_read_iops, false, err)
                        < 0
                 || write_device_list (dir, "blkio.throttle.write_iops_device",
                                       b->throttle_write_iops,
                                       b->n_throttle_write_iops, false, err)
                        < 0
             ? -1
             : 0;
}

/* pageSize becomes part of a file name: "2MB", "1GB", never a path. */
static int
check_page_size (const char *size, ar_error_t **err)
{
  if (size == NULL || *size == '\0' || strchr (size, '/')
      || strstr (size, ".."))
    return ar_error_set (err, 0,
                         "linux.resources.hugepageLimits: invalid pageSize "
                         "\"%s\"",
                         size ? size : "");
  return 0;
}

static int
apply_hugetlb (const char *dir, const oci_resources *r, ar_error_t **err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      const oci_hugepage_limit *l = &r->hugepage_limits[i];
      if (check_page_size (l->page_size, err) < 0)
        return -1;
      cleanup_free char *file
          = xasprintf ("hugetlb.%s.limit_in_bytes", l->page_size);
      if (ar_cg_writef (dir, file, err, "%" PRIu64, l->limit) < 0)
        return -1;
    }
  return 0;
}

static int
apply_net_cls (const char *dir, const oci_resources *r, ar_error_t **err)
{
  if (!r->net_class_id.set)
    return 0;
  return ar_cg_writef (dir, "net_cls.classid", err, "%u",
                       r->net_class_id.value);
}

static int
apply_net_prio (const char *dir, const oci_resources *r, ar_error_t **err)
{
  for (size_t i = 0; i < r->n_net_priorities; i++)
    {
      const oci_net_priority *p = &r->net_priorities[i];
      if (p->name == NULL || *p->name == '\0' || strchr (p->name, ' '))
        return ar_error_set (err, 0,
                             "linux.resources.network.priorities[%zu]: "
                             "invalid interface name",
                             i);
      if (ar_cg_writef (dir, "net_prio.ifpriomap", err, "%s %u", p->name,
                        p->priority)
          < 0)
        return -1;
    }
  return 0;
}

/* ---- devices ------------------------------------------------------------ */

/* An absent or negative major/minor is the wildcard. */
static void
format_device_id (char *buf, size_t size, const oci_opt_i64 *v)
{
  if (!v->set || v->value < 0)
    snprintf (buf, size, "*");
  else
    snprintf (buf, size, "%" PRId64, v->value);
}

/* The r, w and m of an access string, in the kernel's order, as runc
 * reads it: other characters are ignored ("rwa" is "rw"), none is "rwm".
 * false when nothing is left. */
static bool
access_of (const char *given, char out[4])
{
  const char *s = given && *given ? given : "rwm";
  size_t n = 0;
  for (const char *c = "rwm"; *c; c++)
    if (strchr (s, *c))
      out[n++] = *c;
  out[n] = '\0';
  return n > 0;
}

/* Rules go in document order: each adjusts the list the previous ones
 * left, so "deny all, then allow a few" works as written. Each write() is
 * one rule: the two files are opened once, not once a rule. */
static int
apply_devices (const char *dir, const oci_resources *r, ar_error_t **err)
{
  static const char *const files[2] = { "devices.deny", "devices.allow" };
  cleanup_close int deny_fd = -1;
  cleanup_close int allow_fd = -1;
  for (size_t i = 0; i < r->n_devices; i++)
    {
      const oci_device_rule *d = &r->devices[i];
      const char *type = d->type && *d->type ? d->type : "a";
      char access[4];
      if (strlen (type) != 1 || !strchr ("acb", type[0]))
        return ar_error_set (err, 0,
                             "linux.resources.devices[%zu]: invalid type "
                             "\"%s\"",
                             i, type);
      if (!access_of (d->access, access))
        continue; /* no r, w or m: a rule about nothing */
      char major[32], minor[32];
      format_device_id (major, sizeof major, &d->major);
      format_device_id (minor, sizeof minor, &d->minor);
      int *fd = d->allow ? &allow_fd : &deny_fd;
      const char *file = files[d->allow];
      if (*fd < 0 && (*fd = ar_cg_open_knob (dir, file, O_WRONLY, err)) < 0)
        return -1;
      char rule[128];
      snprintf (rule, sizeof rule, "%s %s:%s %s", type, major, minor, access);
      if (ar_cg_write_fd (*fd, rule, dir, file, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- entry point -------------------------------------------------------- */

int
ar_cg_v1_apply (const ar_cg_hierarchy *h, const char *dir,
                const oci_resources *r, ar_error_t **err)
{
  if (r == NULL)
    return 0;
  static const struct
  {
    const char *controller;
    int (*apply) (const char *, const oci_resources *, ar_error_t **);
  } steps[] = {
    { "pids", ar_cg_apply_pids },   { "hugetlb", apply_hugetlb },
    { "rdma", ar_cg_apply_rdma },   { "net_cls", apply_net_cls },
    { "net_prio", apply_net_prio }, { "devices", apply_devices },
  };

  if (ar_cg_has_controller (h, "memory")
      && apply_memory (dir, r->memory, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "cpu") && apply_cpu (dir, r->cpu, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "cpuset")
      && ar_cg_apply_cpuset (dir, r->cpu, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "blkio")
      && apply_blkio (dir, r->block_io, err) < 0)
    return -1;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    if (ar_cg_has_controller (h, steps[i].controller)
        && steps[i].apply (dir, r, err) < 0)
      return -1;
  return 0;
}
