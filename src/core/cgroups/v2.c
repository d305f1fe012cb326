/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "internal.h"
#include "devices_bpf.h"
#include "../../util/userns.h"
#include "../../util/cleanup.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* ---- controllers ------------------------------------------------------- */

/* v2 controllers that linux.resources can ask for, in the order the kernel
 * lists them. */
static const char *const resource_controllers[]
    = { "cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma" };
#define N_RESOURCE_CONTROLLERS                                                 \
  (sizeof resource_controllers / sizeof resource_controllers[0])

/* "memory.high" -> "memory"; NULL for core files such as "cgroup.freeze". */
static char *
controller_of_key (const char *key)
{
  const char *dot = strchr (key, '.');
  if (dot == NULL || (dot - key == 6 && strncmp (key, "cgroup", 6) == 0))
    return NULL;
  return xasprintf ("%.*s", (int) (dot - key), key);
}

static bool
in_list (const char *word, const char *list)
{
  size_t n = strlen (word);
  for (const char *p = list; (p = strstr (p, word)); p += n)
    if ((p == list || p[-1] == ' ' || p[-1] == '+')
        && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

/* Add "+controller" to a "+cpu +memory" list, once. */
static void
add_controller (char **list, const char *controller)
{
  if (in_list (controller, *list))
    return;
  char *longer = xasprintf ("%s%s+%s", *list, **list ? " " : "", controller);
  free (*list);
  *list = longer;
}

/* The controllers `r` needs from `h`, as "+cpu +memory" for
 * cgroup.subtree_control; empty when none. */
static char *
needed_controllers (const ar_cg_hierarchy *h, const oci_resources *r)
{
  char *list = xstrdup ("");
  for (size_t i = 0; i < N_RESOURCE_CONTROLLERS; i++)
    {
      const char *c = resource_controllers[i];
      if (ar_cg_wants (r, c) && ar_cg_has_controller (h, c))
        add_controller (&list, c);
    }
  for (size_t i = 0; r && i < r->unified.len; i++)
    {
      cleanup_free char *c = controller_of_key (r->unified.items[i].key);
      if (c && ar_cg_has_controller (h, c))
        add_controller (&list, c);
    }
  return list;
}

/* Each controller must already reach our topmost new directory: enabling
 * it higher up would mean writing to a cgroup agentrun did not create. */
static int
check_delegated (const char *top, const char *needed, ar_error_t **err)
{
  cleanup_free char *available = NULL;
  if (ar_cg_read (top, "cgroup.controllers", &available, err) < 0)
    return -1;
  cleanup_free char *copy = xstrdup (needed);
  for (char *save = NULL, *w = strtok_r (copy, " ", &save); w;
       w = strtok_r (NULL, " ", &save))
    if (!in_list (w + 1, available))
      return ar_error_set (err, 0,
                           "the %s controller is not available in `%s`: its "
                           "parent, which agentrun did not create, does not "
                           "enable it in cgroup.subtree_control",
                           w + 1, top);
  return 0;
}

/* Every resource controller our topmost new directory has, as
 * "+cpu +memory": passed down whether the spec asks for it or not, so
 * that `update` can set a limit create did not (runc and crun do the
 * same). */
static char *
available_controllers (const char *top)
{
  cleanup_free char *available = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  char *list = xstrdup ("");
  if (ar_cg_read (top, "cgroup.controllers", &available, &ignored) < 0)
    return list;
  for (size_t i = 0; i < N_RESOURCE_CONTROLLERS; i++)
    if (in_list (resource_controllers[i], available))
      add_controller (&list, resource_controllers[i]);
  return list;
}

int
ar_cg_v2_check_available (const ar_cg_hierarchy *h, const char *dir,
                          const oci_resources *r, ar_error_t **err)
{
  cleanup_free char *needed = needed_controllers (h, r);
  return *needed ? check_delegated (dir, needed, err) : 0;
}

int
ar_cg_v2_prepare (const ar_cg_hierarchy *h, char *const *created,
                  size_t n_created, const oci_resources *r, ar_error_t **err)
{
  cleanup_free char *needed = needed_controllers (h, r);
  if (*needed && check_delegated (created[0], needed, err) < 0)
    return -1;
  if (n_created < 2)
    return 0;
  /* What the spec needs is available (checked above); unified keys may
   * name controllers beyond the resource ones. */
  cleanup_free char *list = available_controllers (created[0]);
  cleanup_free char *copy = xstrdup (needed);
  for (char *save = NULL, *w = strtok_r (copy, " ", &save); w;
       w = strtok_r (NULL, " ", &save))
    add_controller (&list, w + 1);
  if (*list == '\0')
    return 0;
  /* Every new directory but the leaf passes the controllers down. */
  for (size_t i = 0; i + 1 < n_created; i++)
    if (ar_cg_write (created[i], "cgroup.subtree_control", list, err) < 0)
      return -1;
  return 0;
}

/* ---- memory ------------------------------------------------------------ */

static void
format_limit (char *buf, size_t size, int64_t v)
{
  if (v < 0)
    snprintf (buf, size, "max");
  else
    snprintf (buf, size, "%" PRId64, v);
}

/* The spec's swap is memory+swap (v1's memsw); v2's memory.swap.max is
 * swap alone. */
static int
swap_max_value (const oci_memory *m, char *buf, size_t size, ar_error_t **err)
{
  if (m->swap.value < 0)
    {
      snprintf (buf, size, "max");
      return 0;
    }
  if (!m->limit.set || m->limit.value <= 0)
    return ar_error_set (err, 0,
                         "linux.resources.memory.swap needs a "
                         "memory.limit on cgroup v2");
  if (m->swap.value < m->limit.value)
    return ar_error_set (err, 0,
                         "linux.resources.memory.swap (%" PRId64
                         ") is below memory.limit (%" PRId64
                         "): swap is the total of memory and swap",
                         m->swap.value, m->limit.value);
  snprintf (buf, size, "%" PRId64, m->swap.value - m->limit.value);
  return 0;
}

static int
apply_memory (const char *dir, const oci_memory *m, ar_error_t **err)
{
  char value[32];
  if (m == NULL)
    return 0;
  /* 0 means "not set", as in runc and Docker. */
  if (m->limit.set && m->limit.value != 0)
    {
      format_limit (value, sizeof value, m->limit.value);
      if (ar_cg_write (dir, "memory.max", value, err) < 0)
        return -1;
    }
  if (m->reservation.set && m->reservation.value != 0)
    {
      format_limit (value, sizeof value, m->reservation.value);
      if (ar_cg_write (dir, "memory.low", value, err) < 0)
        return -1;
    }
  /* Without swap accounting there is no memory.swap.max to set. */
  if (m->swap.set && m->swap.value != 0
      && ar_cg_exists (dir, "memory.swap.max"))
    {
      if (swap_max_value (m, value, sizeof value, err) < 0
          || ar_cg_write (dir, "memory.swap.max", value, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- cpu, cpuset ------------------------------------------------------- */

uint64_t
ar_cg_shares_to_weight (uint64_t shares)
{
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

static int
apply_cpu_max (const char *dir, const oci_cpu *c, ar_error_t **err)
{
  bool quota = c->quota.set && c->quota.value != 0;
  bool period = c->period.set && c->period.value != 0;
  if (!quota && !period)
    return 0;
  char q[32];
  if (quota && c->quota.value > 0)
    snprintf (q, sizeof q, "%" PRId64, c->quota.value);
  else
    snprintf (q, sizeof q, "max");
  if (!period)
    return ar_cg_write (dir, "cpu.max", q, err);
  return ar_cg_writef (dir, "cpu.max", err, "%s %" PRIu64, q, c->period.value);
}

static int
apply_cpu (const char *dir, const oci_cpu *c, ar_error_t **err)
{
  if (c == NULL)
    return 0;
  if ((c->realtime_runtime.set && c->realtime_runtime.value != 0)
      || (c->realtime_period.set && c->realtime_period.value != 0))
    return ar_error_set (err, 0,
                         "linux.resources.cpu.realtimeRuntime and "
                         "realtimePeriod are not supported on "
                         "cgroup v2");
  if (c->shares.set && c->shares.value != 0
      && ar_cg_writef (dir, "cpu.weight", err, "%" PRIu64,
                       ar_cg_shares_to_weight (c->shares.value))
             < 0)
    return -1;
  if (apply_cpu_max (dir, c, err) < 0)
    return -1;
  if (c->burst.set
      && ar_cg_writef (dir, "cpu.max.burst", err, "%" PRIu64, c->burst.value)
             < 0)
    return -1;
  if (c->idle.set
      && ar_cg_writef (dir, "cpu.idle", err, "%" PRId64, c->idle.value) < 0)
    return -1;
  return 0;
}

/* ---- pids, io, hugetlb ------------------------------------------------- */

/* blkio weight (10..1000) onto io.weight (1..10000); BFQ's io.bfq.weight
 * keeps the blkio scale. */
static uint64_t
blkio_to_io_weight (uint64_t w)
{
  if (w < 10)
    w = 10;
  if (w > 1000)
    w = 1000;
  return 1 + (w - 10) * 9999 / 990;
}

static int
write_io_weight (const char *dir, const char *device, uint32_t weight,
                 ar_error_t **err)
{
  bool plain
      = ar_cg_exists (dir, "io.weight") || !ar_cg_exists (dir, "io.bfq.weight");
  uint64_t value = plain ? blkio_to_io_weight (weight) : weight;
  return ar_cg_writef (dir, plain ? "io.weight" : "io.bfq.weight", err,
                       "%s%s%" PRIu64, device ? device : "", device ? " " : "",
                       value);
}

static int
write_io_max (const char *dir, const char *key, const oci_blkio_device *devs,
              size_t n, ar_error_t **err)
{
  for (size_t i = 0; i < n; i++)
    if (ar_cg_writef (dir, "io.max", err, "%" PRId64 ":%" PRId64 " %s=%" PRIu64,
                      devs[i].major, devs[i].minor, key, devs[i].rate)
        < 0)
      return -1;
  return 0;
}

static int
apply_io (const char *dir, const oci_blkio *b, ar_error_t **err)
{
  if (b == NULL)
    return 0;
  /* 0 is Docker's "not set" (see v1.c). */
  if (b->weight.set && b->weight.value != 0
      && write_io_weight (dir, NULL, b->weight.value, err) < 0)
    return -1;
  for (size_t i = 0; i < b->n_weight_device; i++)
    {
      const oci_blkio_device *d = &b->weight_device[i];
      char device[48];
      snprintf (device, sizeof device, "%" PRId64 ":%" PRId64, d->major,
                d->minor);
      if (d->weight.set && d->weight.value != 0
          && write_io_weight (dir, device, d->weight.value, err) < 0)
        return -1;
    }
  return write_io_max (dir, "rbps", b->throttle_read_bps,
                       b->n_throttle_read_bps, err)
                     < 0
                 || write_io_max (dir, "wbps", b->throttle_write_bps,
                                  b->n_throttle_write_bps, err)
                        < 0
                 || write_io_max (dir, "riops", b->throttle_read_iops,
                                  b->n_throttle_read_iops, err)
                        < 0
                 || write_io_max (dir, "wiops", b->throttle_write_iops,
                                  b->n_throttle_write_iops, err)
                        < 0
             ? -1
             : 0;
}

static int
apply_hugetlb (const char *dir, const oci_resources *r, ar_error_t **err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      const oci_hugepage_limit *l = &r->hugepage_limits[i];
      /* pageSize becomes part of a file name. */
      if (l->page_size == NULL || *l->page_size == '\0'
          || strchr (l->page_size, '/') || strstr (l->page_size, ".."))
        return ar_error_set (err, 0,
                             "linux.resources.hugepageLimits[%zu]: invalid "
                             "pageSize",
                             i);
      cleanup_free char *file = xasprintf ("hugetlb.%s.max", l->page_size);
      if (ar_cg_writef (dir, file, err, "%" PRIu64, l->limit) < 0)
        return -1;
    }
  return 0;
}

/* ---- unified ------------------------------------------------------------ */

/* Keys are file names inside the container's own cgroup, nothing else. */
static bool
valid_unified_key (const char *key)
{
  return key && *key && strchr (key, '/') == NULL && strstr (key, "..") == NULL
         && strcmp (key, ".") != 0;
}

static int
apply_unified (const char *dir, const oci_map *unified, ar_error_t **err)
{
  for (size_t i = 0; i < unified->len; i++)
    {
      const oci_kv *kv = &unified->items[i];
      if (!valid_unified_key (kv->key))
        return ar_error_set (err, 0,
                             "linux.resources.unified: invalid key \"%s\"",
                             kv->key ? kv->key : "");
      if (ar_cg_write (dir, kv->key, kv->value ? kv->value : "", err) < 0)
        return ar_error_prefix (err, "linux.resources.unified[\"%s\"]",
                                kv->key);
    }
  return 0;
}

/* ---- devices ------------------------------------------------------------ */

/* Device rules belong to a v1 devices hierarchy when one is mounted (a
 * hybrid host); only without one does the v2 cgroup take them, as an eBPF
 * program. */
static bool
devices_on_v1 (ar_error_t **err, bool *on_v1)
{
  ar_cg_hierarchies all __attribute__ ((cleanup (ar_cg_hierarchies_clear)))
  = { 0 };
  if (ar_cg_discover (&all, err) < 0)
    return false;
  const ar_cg_hierarchy *h = ar_cg_find_controller (&all, "devices");
  *on_v1 = h != NULL && h->version == AR_CG_V1;
  return true;
}

static int
apply_devices (const char *dir, const oci_resources *r, ar_error_t **err)
{
  bool on_v1 = false;
  /* Attaching a device program takes CAP_SYS_ADMIN in the initial user
     namespace; without root the kernel keeps device nodes out of reach
     anyway (no mknod, only nodes the user may open), as runc and crun
     rely on too.  */
  if (r->n_devices == 0 || ar_userns_unprivileged ())
    return 0;
  if (!devices_on_v1 (err, &on_v1))
    return -1;
  if (on_v1)
    return 0;
  if (ar_devices_bpf_apply (dir, r->devices, r->n_devices, err) < 0)
    return ar_error_prefix (err, "linux.resources.devices");
  return 0;
}

/* ---- entry point -------------------------------------------------------- */

int
ar_cg_v2_apply (const ar_cg_hierarchy *h, const char *dir,
                const oci_resources *r, ar_error_t **err)
{
  if (r == NULL)
    return 0;
  if (ar_cg_has_controller (h, "memory")
      && apply_memory (dir, r->memory, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "cpu") && apply_cpu (dir, r->cpu, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "cpuset")
      && ar_cg_apply_cpuset (dir, r->cpu, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "pids") && ar_cg_apply_pids (dir, r, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "io") && apply_io (dir, r->block_io, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "hugetlb") && apply_hugetlb (dir, r, err) < 0)
    return -1;
  if (ar_cg_has_controller (h, "rdma") && ar_cg_apply_rdma (dir, r, err) < 0)
    return -1;
  if (apply_devices (dir, r, err) < 0)
    return -1;
  /* Written last so they can refine anything above. */
  return apply_unified (dir, &r->unified, err);
}
