/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"
#include "../src/util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

/* Each reader below turns one JSON value into one C object (see oj_reader
 * in json.h). Unknown fields are ignored, as the runtime-spec requires. */

#define ARRAY_FIELD(c, obj, key, read, items, n)                               \
  array_field ((c), (obj), (key), sizeof **(items), (read), (void **) (items), \
               (n))

/* obj[key] as an array of C objects, when present. */
static int
array_field (oj_ctx *c, const oj_value *obj, const char *key, size_t elem_size,
             oj_reader read, void **items, size_t *n)
{
  const oj_value *v = oj_get (obj, key);
  if (v == NULL)
    return 0;
  size_t mark = oj_path_push_key (&c->path, key, strlen (key));
  int r = oj_read_array (c, v, elem_size, read, items, n);
  oj_path_pop (&c->path, mark);
  return r;
}

/* Allocate the zeroed struct behind a pointer field before reading into
 * it, so a failure part way leaves it to the free functions. */
#define NEW_BOX(out, type) (*(type **) (out) = xcalloc (1, sizeof (type)))

/* ------------------------------------------------------------------ */
/* process                                                             */

static int
read_console_size (oj_ctx *c, const oj_value *v, void *out)
{
  oci_process *p = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "height", oj_read_opt_u32, &p->console_height) < 0
      || oj_required (c, v, "width", oj_read_opt_u32, &p->console_width) < 0)
    return -1;
  return 0;
}

static int
read_user (oj_ctx *c, const oj_value *v, void *out)
{
  oci_user *u = out;
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "uid", oj_read_u32, &u->uid) < 0
      || oj_field (c, v, "gid", oj_read_u32, &u->gid) < 0
      || oj_field (c, v, "umask", oj_read_opt_u32, &u->umask) < 0
      || ARRAY_FIELD (c, v, "additionalGids", oj_read_u32, &u->additional_gids,
                      &u->n_additional_gids)
             < 0
      || oj_field (c, v, "username", oj_read_string, &u->username) < 0)
    return -1;
  return 0;
}

static int
read_capability_sets (oj_ctx *c, const oj_value *v, oci_capabilities *caps)
{
  if (oj_field (c, v, "bounding", oj_read_strv, &caps->bounding) < 0
      || oj_field (c, v, "effective", oj_read_strv, &caps->effective) < 0
      || oj_field (c, v, "inheritable", oj_read_strv, &caps->inheritable) < 0
      || oj_field (c, v, "permitted", oj_read_strv, &caps->permitted) < 0
      || oj_field (c, v, "ambient", oj_read_strv, &caps->ambient) < 0)
    return -1;
  return 0;
}

static int
read_capabilities (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_capability_sets (c, v, NEW_BOX (out, oci_capabilities));
}

static int
read_rlimit (oj_ctx *c, const oj_value *v, void *out)
{
  oci_rlimit *r = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "type", oj_read_string, &r->type) < 0
      || oj_required (c, v, "hard", oj_read_u64, &r->hard) < 0
      || oj_required (c, v, "soft", oj_read_u64, &r->soft) < 0)
    return -1;
  return 0;
}

static int
read_scheduler_fields (oj_ctx *c, const oj_value *v, oci_scheduler *s)
{
  if (oj_required (c, v, "policy", oj_read_string, &s->policy) < 0
      || oj_field (c, v, "nice", oj_read_opt_i64, &s->nice) < 0
      || oj_field (c, v, "priority", oj_read_opt_i64, &s->priority) < 0
      || oj_field (c, v, "flags", oj_read_strv, &s->flags) < 0
      || oj_field (c, v, "runtime", oj_read_opt_u64, &s->runtime) < 0
      || oj_field (c, v, "deadline", oj_read_opt_u64, &s->deadline) < 0
      || oj_field (c, v, "period", oj_read_opt_u64, &s->period) < 0)
    return -1;
  return 0;
}

static int
read_scheduler (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_scheduler_fields (c, v, NEW_BOX (out, oci_scheduler));
}

static int
read_io_priority_fields (oj_ctx *c, const oj_value *v, oci_io_priority *io)
{
  if (oj_required (c, v, "class", oj_read_string, &io->class) < 0
      || oj_field (c, v, "priority", oj_read_i64, &io->priority) < 0)
    return -1;
  return 0;
}

static int
read_io_priority (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_io_priority_fields (c, v, NEW_BOX (out, oci_io_priority));
}

static int
read_process_fields (oj_ctx *c, const oj_value *v, oci_process *p)
{
  if (oj_field (c, v, "terminal", oj_read_bool, &p->terminal) < 0
      || oj_field (c, v, "consoleSize", read_console_size, p) < 0
      || oj_field (c, v, "user", read_user, &p->user) < 0
      || oj_field (c, v, "args", oj_read_strv, &p->args) < 0
      || oj_field (c, v, "commandLine", oj_read_string, &p->command_line) < 0
      || oj_field (c, v, "env", oj_read_strv, &p->env) < 0
      || oj_field (c, v, "cwd", oj_read_string, &p->cwd) < 0
      || oj_field (c, v, "capabilities", read_capabilities, &p->capabilities)
             < 0
      || ARRAY_FIELD (c, v, "rlimits", read_rlimit, &p->rlimits, &p->n_rlimits)
             < 0
      || oj_field (c, v, "noNewPrivileges", oj_read_bool, &p->no_new_privileges)
             < 0
      || oj_field (c, v, "apparmorProfile", oj_read_string,
                   &p->apparmor_profile)
             < 0
      || oj_field (c, v, "oomScoreAdj", oj_read_opt_i64, &p->oom_score_adj) < 0
      || oj_field (c, v, "selinuxLabel", oj_read_string, &p->selinux_label) < 0
      || oj_field (c, v, "scheduler", read_scheduler, &p->scheduler) < 0
      || oj_field (c, v, "ioPriority", read_io_priority, &p->io_priority) < 0)
    return -1;
  return 0;
}

static int
read_process (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_process_fields (c, v, NEW_BOX (out, oci_process));
}

/* ------------------------------------------------------------------ */
/* root, mounts, hooks                                                 */

static int
read_root (oj_ctx *c, const oj_value *v, void *out)
{
  oci_spec *s = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "path", oj_read_string, &s->root_path) < 0
      || oj_field (c, v, "readonly", oj_read_bool, &s->root_readonly) < 0)
    return -1;
  return 0;
}

static int
read_id_mapping (oj_ctx *c, const oj_value *v, void *out)
{
  oci_id_mapping *m = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "containerID", oj_read_u32, &m->container_id) < 0
      || oj_required (c, v, "hostID", oj_read_u32, &m->host_id) < 0
      || oj_required (c, v, "size", oj_read_u32, &m->size) < 0)
    return -1;
  return 0;
}

static int
read_mount (oj_ctx *c, const oj_value *v, void *out)
{
  oci_mount *m = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "destination", oj_read_string, &m->destination) < 0
      || oj_field (c, v, "source", oj_read_string, &m->source) < 0
      || oj_field (c, v, "type", oj_read_string, &m->type) < 0
      || oj_field (c, v, "options", oj_read_strv, &m->options) < 0
      || ARRAY_FIELD (c, v, "uidMappings", read_id_mapping, &m->uid_mappings,
                      &m->n_uid_mappings)
             < 0
      || ARRAY_FIELD (c, v, "gidMappings", read_id_mapping, &m->gid_mappings,
                      &m->n_gid_mappings)
             < 0)
    return -1;
  return 0;
}

static int
read_hook_timeout (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_i64 *t = out;
  if (oj_read_opt_i64 (c, v, t) < 0)
    return -1;
  if (t->value <= 0)
    return oj_fail (c, "must be greater than zero, got %" PRId64, t->value);
  return 0;
}

static int
read_hook (oj_ctx *c, const oj_value *v, void *out)
{
  oci_hook *h = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "path", oj_read_string, &h->path) < 0
      || oj_field (c, v, "args", oj_read_strv, &h->args) < 0
      || oj_field (c, v, "env", oj_read_strv, &h->env) < 0
      || oj_field (c, v, "timeout", read_hook_timeout, &h->timeout) < 0)
    return -1;
  return 0;
}

static int
read_hook_list (oj_ctx *c, const oj_value *obj, const char *key,
                oci_hook_list *list)
{
  return ARRAY_FIELD (c, obj, key, read_hook, &list->items, &list->len);
}

static int
read_hooks (oj_ctx *c, const oj_value *v, void *out)
{
  oci_hooks *h = out;
  if (oj_expect_object (c, v) < 0
      || read_hook_list (c, v, "prestart", &h->prestart) < 0
      || read_hook_list (c, v, "createRuntime", &h->create_runtime) < 0
      || read_hook_list (c, v, "createContainer", &h->create_container) < 0
      || read_hook_list (c, v, "startContainer", &h->start_container) < 0
      || read_hook_list (c, v, "poststart", &h->poststart) < 0
      || read_hook_list (c, v, "poststop", &h->poststop) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* linux.resources                                                     */

static int
read_device_rule (oj_ctx *c, const oj_value *v, void *out)
{
  oci_device_rule *d = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "allow", oj_read_bool, &d->allow) < 0
      || oj_field (c, v, "type", oj_read_string, &d->type) < 0
      || oj_field (c, v, "major", oj_read_opt_i64, &d->major) < 0
      || oj_field (c, v, "minor", oj_read_opt_i64, &d->minor) < 0
      || oj_field (c, v, "access", oj_read_string, &d->access) < 0)
    return -1;
  return 0;
}

static int
read_memory_fields (oj_ctx *c, const oj_value *v, oci_memory *m)
{
  if (oj_field (c, v, "limit", oj_read_opt_i64, &m->limit) < 0
      || oj_field (c, v, "reservation", oj_read_opt_i64, &m->reservation) < 0
      || oj_field (c, v, "swap", oj_read_opt_i64, &m->swap) < 0
      || oj_field (c, v, "kernel", oj_read_opt_i64, &m->kernel) < 0
      || oj_field (c, v, "kernelTCP", oj_read_opt_i64, &m->kernel_tcp) < 0
      || oj_field (c, v, "swappiness", oj_read_opt_u64, &m->swappiness) < 0
      || oj_field (c, v, "disableOOMKiller", oj_read_opt_bool,
                   &m->disable_oom_killer)
             < 0
      || oj_field (c, v, "useHierarchy", oj_read_opt_bool, &m->use_hierarchy)
             < 0
      || oj_field (c, v, "checkBeforeUpdate", oj_read_opt_bool,
                   &m->check_before_update)
             < 0)
    return -1;
  return 0;
}

static int
read_memory (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_memory_fields (c, v, NEW_BOX (out, oci_memory));
}

static int
read_cpu_fields (oj_ctx *c, const oj_value *v, oci_cpu *cpu)
{
  if (oj_field (c, v, "shares", oj_read_opt_u64, &cpu->shares) < 0
      || oj_field (c, v, "quota", oj_read_opt_i64, &cpu->quota) < 0
      || oj_field (c, v, "burst", oj_read_opt_u64, &cpu->burst) < 0
      || oj_field (c, v, "period", oj_read_opt_u64, &cpu->period) < 0
      || oj_field (c, v, "realtimeRuntime", oj_read_opt_i64,
                   &cpu->realtime_runtime)
             < 0
      || oj_field (c, v, "realtimePeriod", oj_read_opt_u64,
                   &cpu->realtime_period)
             < 0
      || oj_field (c, v, "cpus", oj_read_string, &cpu->cpus) < 0
      || oj_field (c, v, "mems", oj_read_string, &cpu->mems) < 0
      || oj_field (c, v, "idle", oj_read_opt_i64, &cpu->idle) < 0)
    return -1;
  return 0;
}

static int
read_cpu (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_cpu_fields (c, v, NEW_BOX (out, oci_cpu));
}

static int
read_pids (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "limit", oj_read_opt_i64, out) < 0)
    return -1;
  return 0;
}

static int
read_blkio_major_minor (oj_ctx *c, const oj_value *v, oci_blkio_device *d)
{
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "major", oj_read_i64, &d->major) < 0
      || oj_required (c, v, "minor", oj_read_i64, &d->minor) < 0)
    return -1;
  return 0;
}

static int
read_blkio_weight_device (oj_ctx *c, const oj_value *v, void *out)
{
  oci_blkio_device *d = out;
  if (read_blkio_major_minor (c, v, d) < 0
      || oj_field (c, v, "weight", oj_read_opt_u16, &d->weight) < 0
      || oj_field (c, v, "leafWeight", oj_read_opt_u16, &d->leaf_weight) < 0)
    return -1;
  return 0;
}

static int
read_blkio_throttle_device (oj_ctx *c, const oj_value *v, void *out)
{
  oci_blkio_device *d = out;
  if (read_blkio_major_minor (c, v, d) < 0
      || oj_required (c, v, "rate", oj_read_u64, &d->rate) < 0)
    return -1;
  return 0;
}

static int
read_blkio_fields (oj_ctx *c, const oj_value *v, oci_blkio *b)
{
  if (oj_field (c, v, "weight", oj_read_opt_u16, &b->weight) < 0
      || oj_field (c, v, "leafWeight", oj_read_opt_u16, &b->leaf_weight) < 0
      || ARRAY_FIELD (c, v, "weightDevice", read_blkio_weight_device,
                      &b->weight_device, &b->n_weight_device)
             < 0
      || ARRAY_FIELD (c, v, "throttleReadBpsDevice", read_blkio_throttle_device,
                      &b->throttle_read_bps, &b->n_throttle_read_bps)
             < 0
      || ARRAY_FIELD (c, v, "throttleWriteBpsDevice",
                      read_blkio_throttle_device, &b->throttle_write_bps,
                      &b->n_throttle_write_bps)
             < 0
      || ARRAY_FIELD (c, v, "throttleReadIOPSDevice",
                      read_blkio_throttle_device, &b->throttle_read_iops,
                      &b->n_throttle_read_iops)
             < 0
      || ARRAY_FIELD (c, v, "throttleWriteIOPSDevice",
                      read_blkio_throttle_device, &b->throttle_write_iops,
                      &b->n_throttle_write_iops)
             < 0)
    return -1;
  return 0;
}

static int
read_blkio (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_blkio_fields (c, v, NEW_BOX (out, oci_blkio));
}

static int
read_hugepage_limit (oj_ctx *c, const oj_value *v, void *out)
{
  oci_hugepage_limit *h = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "pageSize", oj_read_string, &h->page_size) < 0
      || oj_required (c, v, "limit", oj_read_u64, &h->limit) < 0)
    return -1;
  return 0;
}

static int
read_net_priority (oj_ctx *c, const oj_value *v, void *out)
{
  oci_net_priority *p = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "name", oj_read_string, &p->name) < 0
      || oj_required (c, v, "priority", oj_read_u32, &p->priority) < 0)
    return -1;
  return 0;
}

static int
read_network (oj_ctx *c, const oj_value *v, void *out)
{
  oci_resources *r = out;
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "classID", oj_read_opt_u32, &r->net_class_id) < 0
      || ARRAY_FIELD (c, v, "priorities", read_net_priority, &r->net_priorities,
                      &r->n_net_priorities)
             < 0)
    return -1;
  return 0;
}

static int
read_rdma_limit (oj_ctx *c, const oj_member *m, oci_rdma_limit *l)
{
  if (memchr (m->key, '\0', m->key_len) != NULL || m->key_len == 0)
    return oj_fail (c, "expected a device name");
  l->device = xstrdup (m->key);
  if (oj_expect_object (c, &m->value) < 0
      || oj_field (c, &m->value, "hcaHandles", oj_read_opt_u32, &l->hca_handles)
             < 0
      || oj_field (c, &m->value, "hcaObjects", oj_read_opt_u32, &l->hca_objects)
             < 0)
    return -1;
  return 0;
}

/* An object keyed by device name: {"mlx5_1": {"hcaHandles": 3}}. */
static int
read_rdma (oj_ctx *c, const oj_value *v, void *out)
{
  oci_resources *r = out;
  if (oj_expect_object (c, v) < 0)
    return -1;
  r->rdma = xcalloc (v->len ? v->len : 1, sizeof *r->rdma);
  for (size_t i = 0; i < v->len; i++)
    {
      size_t mark = oj_path_push_key (&c->path, v->members[i].key,
                                      v->members[i].key_len);
      int ret = read_rdma_limit (c, &v->members[i], &r->rdma[r->n_rdma++]);
      oj_path_pop (&c->path, mark);
      if (ret < 0)
        return -1;
    }
  return 0;
}

static int
read_resources_fields (oj_ctx *c, const oj_value *v, oci_resources *r)
{
  if (ARRAY_FIELD (c, v, "devices", read_device_rule, &r->devices,
                   &r->n_devices)
          < 0
      || oj_field (c, v, "memory", read_memory, &r->memory) < 0
      || oj_field (c, v, "cpu", read_cpu, &r->cpu) < 0
      || oj_field (c, v, "pids", read_pids, &r->pids_limit) < 0
      || oj_field (c, v, "blockIO", read_blkio, &r->block_io) < 0
      || ARRAY_FIELD (c, v, "hugepageLimits", read_hugepage_limit,
                      &r->hugepage_limits, &r->n_hugepage_limits)
             < 0
      || oj_field (c, v, "network", read_network, r) < 0
      || oj_field (c, v, "rdma", read_rdma, r) < 0
      || oj_field (c, v, "unified", oj_read_map, &r->unified) < 0)
    return -1;
  return 0;
}

static int
read_resources (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_resources_fields (c, v, NEW_BOX (out, oci_resources));
}

/* ------------------------------------------------------------------ */
/* linux: namespaces, devices, seccomp, the rest                       */

static int
read_ns_type (oj_ctx *c, const oj_value *v, void *out)
{
  cleanup_free char *name = NULL;
  if (oj_read_string (c, v, &name) < 0)
    return -1;
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (strcmp (name, oci_ns_type_name ((oci_ns_type) t)) == 0)
      {
        *(oci_ns_type *) out = (oci_ns_type) t;
        return 0;
      }
  cleanup_free char *shown = oj_quote (v->text, v->len);
  return oj_fail (c, "unknown namespace type %s", shown);
}

static int
read_namespace (oj_ctx *c, const oj_value *v, void *out)
{
  oci_namespace *ns = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "type", read_ns_type, &ns->type) < 0
      || oj_field (c, v, "path", oj_read_string, &ns->path) < 0)
    return -1;
  return 0;
}

static int
check_unique_namespaces (oj_ctx *c, const oci_linux *l)
{
  bool seen[OCI_NS_COUNT] = { false };
  for (size_t i = 0; i < l->n_namespaces; i++)
    {
      oci_ns_type t = l->namespaces[i].type;
      if (!seen[t])
        {
          seen[t] = true;
          continue;
        }
      size_t mark
          = oj_path_push_key (&c->path, "namespaces", strlen ("namespaces"));
      oj_path_push_index (&c->path, i);
      oj_path_push_key (&c->path, "type", strlen ("type"));
      oj_fail (c, "duplicate namespace type \"%s\"", oci_ns_type_name (t));
      oj_path_pop (&c->path, mark);
      return -1;
    }
  return 0;
}

static int
read_namespaces (oj_ctx *c, const oj_value *v, oci_linux *l)
{
  if (ARRAY_FIELD (c, v, "namespaces", read_namespace, &l->namespaces,
                   &l->n_namespaces)
          < 0
      || check_unique_namespaces (c, l) < 0)
    return -1;
  return 0;
}

static int
read_device (oj_ctx *c, const oj_value *v, void *out)
{
  oci_device *d = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "type", oj_read_string, &d->type) < 0
      || oj_required (c, v, "path", oj_read_string, &d->path) < 0
      || oj_field (c, v, "major", oj_read_i64, &d->major) < 0
      || oj_field (c, v, "minor", oj_read_i64, &d->minor) < 0
      || oj_field (c, v, "fileMode", oj_read_opt_u32, &d->file_mode) < 0
      || oj_field (c, v, "uid", oj_read_opt_u32, &d->uid) < 0
      || oj_field (c, v, "gid", oj_read_opt_u32, &d->gid) < 0)
    return -1;
  return 0;
}

static int
read_seccomp_arg (oj_ctx *c, const oj_value *v, void *out)
{
  oci_seccomp_arg *a = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "index", oj_read_u32, &a->index) < 0
      || oj_required (c, v, "value", oj_read_u64, &a->value) < 0
      || oj_field (c, v, "valueTwo", oj_read_u64, &a->value_two) < 0
      || oj_required (c, v, "op", oj_read_string, &a->op) < 0)
    return -1;
  return 0;
}

static int
read_syscall (oj_ctx *c, const oj_value *v, void *out)
{
  oci_syscall *s = out;
  if (oj_expect_object (c, v) < 0
      || oj_required (c, v, "names", oj_read_strv, &s->names) < 0
      || oj_required (c, v, "action", oj_read_string, &s->action) < 0
      || oj_field (c, v, "errnoRet", oj_read_opt_u32, &s->errno_ret) < 0
      || ARRAY_FIELD (c, v, "args", read_seccomp_arg, &s->args, &s->n_args) < 0)
    return -1;
  return 0;
}

static int
read_seccomp_fields (oj_ctx *c, const oj_value *v, oci_seccomp *s)
{
  if (oj_required (c, v, "defaultAction", oj_read_string, &s->default_action)
          < 0
      || oj_field (c, v, "defaultErrnoRet", oj_read_opt_u32,
                   &s->default_errno_ret)
             < 0
      || oj_field (c, v, "architectures", oj_read_strv, &s->architectures) < 0
      || oj_field (c, v, "flags", oj_read_strv, &s->flags) < 0
      || oj_field (c, v, "listenerPath", oj_read_string, &s->listener_path) < 0
      || oj_field (c, v, "listenerMetadata", oj_read_string,
                   &s->listener_metadata)
             < 0
      || ARRAY_FIELD (c, v, "syscalls", read_syscall, &s->syscalls,
                      &s->n_syscalls)
             < 0)
    return -1;
  return 0;
}

static int
read_seccomp (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_seccomp_fields (c, v, NEW_BOX (out, oci_seccomp));
}

static int
read_personality_fields (oj_ctx *c, const oj_value *v, oci_personality *p)
{
  if (oj_required (c, v, "domain", oj_read_string, &p->domain) < 0
      || oj_field (c, v, "flags", oj_read_strv, &p->flags) < 0)
    return -1;
  return 0;
}

static int
read_personality (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_personality_fields (c, v, NEW_BOX (out, oci_personality));
}

static int
read_time_offset (oj_ctx *c, const oj_value *v, void *out)
{
  oci_time_offset *t = out;
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "secs", oj_read_opt_i64, &t->secs) < 0
      || oj_field (c, v, "nanosecs", oj_read_opt_u32, &t->nanosecs) < 0)
    return -1;
  return 0;
}

static int
read_time_offsets (oj_ctx *c, const oj_value *v, void *out)
{
  oci_linux *l = out;
  if (oj_expect_object (c, v) < 0
      || oj_field (c, v, "monotonic", read_time_offset, &l->time_monotonic) < 0
      || oj_field (c, v, "boottime", read_time_offset, &l->time_boottime) < 0)
    return -1;
  return 0;
}

static int
read_linux_fields (oj_ctx *c, const oj_value *v, oci_linux *l)
{
  if (ARRAY_FIELD (c, v, "uidMappings", read_id_mapping, &l->uid_mappings,
                   &l->n_uid_mappings)
          < 0
      || ARRAY_FIELD (c, v, "gidMappings", read_id_mapping, &l->gid_mappings,
                      &l->n_gid_mappings)
             < 0
      || oj_field (c, v, "sysctl", oj_read_map, &l->sysctl) < 0
      || oj_field (c, v, "resources", read_resources, &l->resources) < 0
      || oj_field (c, v, "cgroupsPath", oj_read_string, &l->cgroups_path) < 0
      || read_namespaces (c, v, l) < 0
      || ARRAY_FIELD (c, v, "devices", read_device, &l->devices, &l->n_devices)
             < 0
      || oj_field (c, v, "seccomp", read_seccomp, &l->seccomp) < 0
      || oj_field (c, v, "rootfsPropagation", oj_read_string,
                   &l->rootfs_propagation)
             < 0
      || oj_field (c, v, "maskedPaths", oj_read_strv, &l->masked_paths) < 0
      || oj_field (c, v, "readonlyPaths", oj_read_strv, &l->readonly_paths) < 0
      || oj_field (c, v, "mountLabel", oj_read_string, &l->mount_label) < 0
      || oj_field (c, v, "personality", read_personality, &l->personality) < 0
      || oj_field (c, v, "timeOffsets", read_time_offsets, l) < 0)
    return -1;
  return 0;
}

static int
read_linux (oj_ctx *c, const oj_value *v, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return read_linux_fields (c, v, NEW_BOX (out, oci_linux));
}

/* ------------------------------------------------------------------ */
/* The whole document                                                  */

static int
read_spec (oj_ctx *c, const oj_value *v, void *out)
{
  oci_spec *s = out;
  if (v->type != OJ_OBJECT)
    return oj_fail_type (c, v, "a JSON object at the top level");
  if (oj_required (c, v, "ociVersion", oj_read_string, &s->oci_version) < 0
      || oj_field (c, v, "process", read_process, &s->process) < 0
      || oj_field (c, v, "root", read_root, s) < 0
      || oj_field (c, v, "hostname", oj_read_string, &s->hostname) < 0
      || oj_field (c, v, "domainname", oj_read_string, &s->domainname) < 0
      || ARRAY_FIELD (c, v, "mounts", read_mount, &s->mounts, &s->n_mounts) < 0
      || oj_field (c, v, "hooks", read_hooks, &s->hooks) < 0
      || oj_field (c, v, "annotations", oj_read_map, &s->annotations) < 0
      || oj_field (c, v, "linux", read_linux, &s->linux_cfg) < 0)
    return -1;
  return 0;
}

/* Parse `data` into a tree and hand it to `read`, which fills `out`. */
static int
parse_document (const char *data, size_t len, const char *file, oj_reader read,
                void *out, ar_error_t **err)
{
  if (len > OCI_MAX_FILE_SIZE)
    return ar_error_set (err, 0, "%s: larger than %u bytes", file,
                         OCI_MAX_FILE_SIZE);
  oj_value root = { 0 };
  if (oj_parse (data, len, file, &root, err) < 0)
    return -1;
  oj_ctx c = { .file = file, .err = err };
  int r = read (&c, &root, out);
  oj_value_clear (&root);
  return r;
}

int
oci_spec_parse (const char *data, size_t len, const char *display_name,
                oci_spec **out, ar_error_t **err)
{
  const char *file = display_name ? display_name : "config.json";
  oci_spec *spec = xcalloc (1, sizeof *spec);
  if (parse_document (data, len, file, read_spec, spec, err) < 0)
    {
      oci_spec_free (spec);
      return -1;
    }
  *out = spec;
  return 0;
}

static int
read_top_process (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type != OJ_OBJECT)
    return oj_fail_type (c, v, "a JSON object at the top level");
  return read_process_fields (c, v, out);
}

int
oci_process_parse (const char *data, size_t len, const char *display_name,
                   oci_process **out, ar_error_t **err)
{
  const char *file = display_name ? display_name : "process.json";
  oci_process *process = xcalloc (1, sizeof *process);
  if (parse_document (data, len, file, read_top_process, process, err) < 0)
    {
      oci_process_free (process);
      return -1;
    }
  *out = process;
  return 0;
}

static int
read_top_resources (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type != OJ_OBJECT)
    return oj_fail_type (c, v, "a JSON object at the top level");
  return read_resources_fields (c, v, out);
}

int
oci_resources_parse (const char *data, size_t len, const char *display_name,
                     oci_resources **out, ar_error_t **err)
{
  const char *file = display_name ? display_name : "resources.json";
  oci_resources *resources = xcalloc (1, sizeof *resources);
  if (parse_document (data, len, file, read_top_resources, resources, err) < 0)
    {
      oci_resources_free (resources);
      return -1;
    }
  *out = resources;
  return 0;
}
