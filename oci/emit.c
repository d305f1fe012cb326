/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"

/* Keys come out in the order of the runtime-spec's Go types (what runc
 * writes), and absent optional fields are left out, so that parsing the
 * output gives back the same spec. */

static void
emit_id_mappings (yajl_gen g, const char *key, const oci_id_mapping *m,
                  size_t n)
{
  if (m == NULL)
    return;
  oj_gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_u64 (g, "containerID", m[i].container_id);
      oj_gen_kv_u64 (g, "hostID", m[i].host_id);
      oj_gen_kv_u64 (g, "size", m[i].size);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

/* ------------------------------------------------------------------ */
/* process                                                             */

static void
emit_user (yajl_gen g, const oci_user *u)
{
  oj_gen_key (g, "user");
  yajl_gen_map_open (g);
  oj_gen_kv_u64 (g, "uid", u->uid);
  oj_gen_kv_u64 (g, "gid", u->gid);
  oj_gen_kv_opt_u32 (g, "umask", u->umask);
  if (u->additional_gids)
    {
      oj_gen_key (g, "additionalGids");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < u->n_additional_gids; i++)
        oj_gen_u64 (g, u->additional_gids[i]);
      yajl_gen_array_close (g);
    }
  oj_gen_kv_string (g, "username", u->username);
  yajl_gen_map_close (g);
}

static void
emit_capabilities (yajl_gen g, const oci_capabilities *caps)
{
  if (caps == NULL)
    return;
  oj_gen_key (g, "capabilities");
  yajl_gen_map_open (g);
  oj_gen_kv_strv (g, "bounding", &caps->bounding);
  oj_gen_kv_strv (g, "effective", &caps->effective);
  oj_gen_kv_strv (g, "inheritable", &caps->inheritable);
  oj_gen_kv_strv (g, "permitted", &caps->permitted);
  oj_gen_kv_strv (g, "ambient", &caps->ambient);
  yajl_gen_map_close (g);
}

static void
emit_rlimits (yajl_gen g, const oci_rlimit *r, size_t n)
{
  if (r == NULL)
    return;
  oj_gen_key (g, "rlimits");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "type", r[i].type);
      oj_gen_kv_u64 (g, "hard", r[i].hard);
      oj_gen_kv_u64 (g, "soft", r[i].soft);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_scheduler (yajl_gen g, const oci_scheduler *s)
{
  if (s == NULL)
    return;
  oj_gen_key (g, "scheduler");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "policy", s->policy);
  oj_gen_kv_opt_i64 (g, "nice", s->nice);
  oj_gen_kv_opt_i64 (g, "priority", s->priority);
  oj_gen_kv_strv (g, "flags", &s->flags);
  oj_gen_kv_opt_u64 (g, "runtime", s->runtime);
  oj_gen_kv_opt_u64 (g, "deadline", s->deadline);
  oj_gen_kv_opt_u64 (g, "period", s->period);
  yajl_gen_map_close (g);
}

static void
emit_io_priority (yajl_gen g, const oci_io_priority *io)
{
  if (io == NULL)
    return;
  oj_gen_key (g, "ioPriority");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "class", io->class);
  oj_gen_kv_i64 (g, "priority", io->priority);
  yajl_gen_map_close (g);
}

static void
emit_console_size (yajl_gen g, const oci_process *p)
{
  if (!p->console_height.set && !p->console_width.set)
    return;
  oj_gen_key (g, "consoleSize");
  yajl_gen_map_open (g);
  oj_gen_kv_u64 (g, "height", p->console_height.value);
  oj_gen_kv_u64 (g, "width", p->console_width.value);
  yajl_gen_map_close (g);
}

static void
emit_process (yajl_gen g, const oci_process *p)
{
  yajl_gen_map_open (g);
  if (p->terminal)
    oj_gen_kv_bool (g, "terminal", true);
  emit_console_size (g, p);
  emit_user (g, &p->user);
  oj_gen_kv_strv (g, "args", &p->args);
  oj_gen_kv_string (g, "commandLine", p->command_line);
  oj_gen_kv_strv (g, "env", &p->env);
  oj_gen_kv_string (g, "cwd", p->cwd);
  emit_capabilities (g, p->capabilities);
  emit_rlimits (g, p->rlimits, p->n_rlimits);
  if (p->no_new_privileges)
    oj_gen_kv_bool (g, "noNewPrivileges", true);
  oj_gen_kv_string (g, "apparmorProfile", p->apparmor_profile);
  oj_gen_kv_opt_i64 (g, "oomScoreAdj", p->oom_score_adj);
  emit_scheduler (g, p->scheduler);
  oj_gen_kv_string (g, "selinuxLabel", p->selinux_label);
  emit_io_priority (g, p->io_priority);
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------------ */
/* root, mounts, hooks                                                 */

static void
emit_root (yajl_gen g, const oci_spec *s)
{
  if (s->root_path == NULL)
    return;
  oj_gen_key (g, "root");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "path", s->root_path);
  if (s->root_readonly)
    oj_gen_kv_bool (g, "readonly", true);
  yajl_gen_map_close (g);
}

static void
emit_mounts (yajl_gen g, const oci_mount *m, size_t n)
{
  if (m == NULL)
    return;
  oj_gen_key (g, "mounts");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "destination", m[i].destination);
      oj_gen_kv_string (g, "type", m[i].type);
      oj_gen_kv_string (g, "source", m[i].source);
      oj_gen_kv_strv (g, "options", &m[i].options);
      emit_id_mappings (g, "uidMappings", m[i].uid_mappings,
                        m[i].n_uid_mappings);
      emit_id_mappings (g, "gidMappings", m[i].gid_mappings,
                        m[i].n_gid_mappings);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_hook_list (yajl_gen g, const char *key, const oci_hook_list *list)
{
  if (list->items == NULL)
    return;
  oj_gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < list->len; i++)
    {
      const oci_hook *h = &list->items[i];
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "path", h->path);
      oj_gen_kv_strv (g, "args", &h->args);
      oj_gen_kv_strv (g, "env", &h->env);
      oj_gen_kv_opt_i64 (g, "timeout", h->timeout);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static bool
hooks_present (const oci_hooks *h)
{
  return h->prestart.items || h->create_runtime.items
         || h->create_container.items || h->start_container.items
         || h->poststart.items || h->poststop.items;
}

static void
emit_hooks (yajl_gen g, const oci_hooks *h)
{
  if (!hooks_present (h))
    return;
  oj_gen_key (g, "hooks");
  yajl_gen_map_open (g);
  emit_hook_list (g, "prestart", &h->prestart);
  emit_hook_list (g, "createRuntime", &h->create_runtime);
  emit_hook_list (g, "createContainer", &h->create_container);
  emit_hook_list (g, "startContainer", &h->start_container);
  emit_hook_list (g, "poststart", &h->poststart);
  emit_hook_list (g, "poststop", &h->poststop);
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------------ */
/* linux.resources                                                     */

static void
emit_device_rules (yajl_gen g, const oci_device_rule *d, size_t n)
{
  if (d == NULL)
    return;
  oj_gen_key (g, "devices");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_bool (g, "allow", d[i].allow);
      oj_gen_kv_string (g, "type", d[i].type);
      oj_gen_kv_opt_i64 (g, "major", d[i].major);
      oj_gen_kv_opt_i64 (g, "minor", d[i].minor);
      oj_gen_kv_string (g, "access", d[i].access);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_memory (yajl_gen g, const oci_memory *m)
{
  if (m == NULL)
    return;
  oj_gen_key (g, "memory");
  yajl_gen_map_open (g);
  oj_gen_kv_opt_i64 (g, "limit", m->limit);
  oj_gen_kv_opt_i64 (g, "reservation", m->reservation);
  oj_gen_kv_opt_i64 (g, "swap", m->swap);
  oj_gen_kv_opt_i64 (g, "kernel", m->kernel);
  oj_gen_kv_opt_i64 (g, "kernelTCP", m->kernel_tcp);
  oj_gen_kv_opt_u64 (g, "swappiness", m->swappiness);
  oj_gen_kv_opt_bool (g, "disableOOMKiller", m->disable_oom_killer);
  oj_gen_kv_opt_bool (g, "useHierarchy", m->use_hierarchy);
  oj_gen_kv_opt_bool (g, "checkBeforeUpdate", m->check_before_update);
  yajl_gen_map_close (g);
}

static void
emit_cpu (yajl_gen g, const oci_cpu *cpu)
{
  if (cpu == NULL)
    return;
  oj_gen_key (g, "cpu");
  yajl_gen_map_open (g);
  oj_gen_kv_opt_u64 (g, "shares", cpu->shares);
  oj_gen_kv_opt_i64 (g, "quota", cpu->quota);
  oj_gen_kv_opt_u64 (g, "burst", cpu->burst);
  oj_gen_kv_opt_u64 (g, "period", cpu->period);
  oj_gen_kv_opt_i64 (g, "realtimeRuntime", cpu->realtime_runtime);
  oj_gen_kv_opt_u64 (g, "realtimePeriod", cpu->realtime_period);
  oj_gen_kv_string (g, "cpus", cpu->cpus);
  oj_gen_kv_string (g, "mems", cpu->mems);
  oj_gen_kv_opt_i64 (g, "idle", cpu->idle);
  yajl_gen_map_close (g);
}

static void
emit_blkio_devices (yajl_gen g, const char *key, const oci_blkio_device *d,
                    size_t n, bool throttle)
{
  if (d == NULL)
    return;
  oj_gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_i64 (g, "major", d[i].major);
      oj_gen_kv_i64 (g, "minor", d[i].minor);
      if (throttle)
        oj_gen_kv_u64 (g, "rate", d[i].rate);
      else
        {
          oj_gen_kv_opt_u32 (g, "weight", d[i].weight);
          oj_gen_kv_opt_u32 (g, "leafWeight", d[i].leaf_weight);
        }
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_blkio (yajl_gen g, const oci_blkio *b)
{
  if (b == NULL)
    return;
  oj_gen_key (g, "blockIO");
  yajl_gen_map_open (g);
  oj_gen_kv_opt_u32 (g, "weight", b->weight);
  oj_gen_kv_opt_u32 (g, "leafWeight", b->leaf_weight);
  emit_blkio_devices (g, "weightDevice", b->weight_device, b->n_weight_device,
                      false);
  emit_blkio_devices (g, "throttleReadBpsDevice", b->throttle_read_bps,
                      b->n_throttle_read_bps, true);
  emit_blkio_devices (g, "throttleWriteBpsDevice", b->throttle_write_bps,
                      b->n_throttle_write_bps, true);
  emit_blkio_devices (g, "throttleReadIOPSDevice", b->throttle_read_iops,
                      b->n_throttle_read_iops, true);
  emit_blkio_devices (g, "throttleWriteIOPSDevice", b->throttle_write_iops,
                      b->n_throttle_write_iops, true);
  yajl_gen_map_close (g);
}

static void
emit_hugepage_limits (yajl_gen g, const oci_hugepage_limit *h, size_t n)
{
  if (h == NULL)
    return;
  oj_gen_key (g, "hugepageLimits");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "pageSize", h[i].page_size);
      oj_gen_kv_u64 (g, "limit", h[i].limit);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_network (yajl_gen g, const oci_resources *r)
{
  if (!r->net_class_id.set && r->net_priorities == NULL)
    return;
  oj_gen_key (g, "network");
  yajl_gen_map_open (g);
  oj_gen_kv_opt_u32 (g, "classID", r->net_class_id);
  if (r->net_priorities)
    {
      oj_gen_key (g, "priorities");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < r->n_net_priorities; i++)
        {
          yajl_gen_map_open (g);
          oj_gen_kv_string (g, "name", r->net_priorities[i].name);
          oj_gen_kv_u64 (g, "priority", r->net_priorities[i].priority);
          yajl_gen_map_close (g);
        }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_rdma (yajl_gen g, const oci_rdma_limit *l, size_t n)
{
  if (l == NULL)
    return;
  oj_gen_key (g, "rdma");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < n; i++)
    {
      oj_gen_key (g, l[i].device);
      yajl_gen_map_open (g);
      oj_gen_kv_opt_u32 (g, "hcaHandles", l[i].hca_handles);
      oj_gen_kv_opt_u32 (g, "hcaObjects", l[i].hca_objects);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_resources (yajl_gen g, const oci_resources *r)
{
  if (r == NULL)
    return;
  oj_gen_key (g, "resources");
  yajl_gen_map_open (g);
  emit_device_rules (g, r->devices, r->n_devices);
  emit_memory (g, r->memory);
  emit_cpu (g, r->cpu);
  if (r->pids_limit.set)
    {
      oj_gen_key (g, "pids");
      yajl_gen_map_open (g);
      oj_gen_kv_i64 (g, "limit", r->pids_limit.value);
      yajl_gen_map_close (g);
    }
  emit_blkio (g, r->block_io);
  emit_hugepage_limits (g, r->hugepage_limits, r->n_hugepage_limits);
  emit_network (g, r);
  emit_rdma (g, r->rdma, r->n_rdma);
  oj_gen_kv_map (g, "unified", &r->unified);
  yajl_gen_map_close (g);
}

/* ------------------------------------------------------------------ */
/* linux                                                               */

static void
emit_namespaces (yajl_gen g, const oci_namespace *ns, size_t n)
{
  if (ns == NULL)
    return;
  oj_gen_key (g, "namespaces");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "type", oci_ns_type_name (ns[i].type));
      oj_gen_kv_string (g, "path", ns[i].path);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_devices (yajl_gen g, const oci_device *d, size_t n)
{
  if (d == NULL)
    return;
  oj_gen_key (g, "devices");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "path", d[i].path);
      oj_gen_kv_string (g, "type", d[i].type);
      /* Zero is what an absent major/minor reads as (fifos have none). */
      if (d[i].major != 0)
        oj_gen_kv_i64 (g, "major", d[i].major);
      if (d[i].minor != 0)
        oj_gen_kv_i64 (g, "minor", d[i].minor);
      oj_gen_kv_opt_u32 (g, "fileMode", d[i].file_mode);
      oj_gen_kv_opt_u32 (g, "uid", d[i].uid);
      oj_gen_kv_opt_u32 (g, "gid", d[i].gid);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
emit_syscall (yajl_gen g, const oci_syscall *s)
{
  yajl_gen_map_open (g);
  oj_gen_kv_strv (g, "names", &s->names);
  oj_gen_kv_string (g, "action", s->action);
  oj_gen_kv_opt_u32 (g, "errnoRet", s->errno_ret);
  if (s->args)
    {
      oj_gen_key (g, "args");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < s->n_args; i++)
        {
          yajl_gen_map_open (g);
          oj_gen_kv_u64 (g, "index", s->args[i].index);
          oj_gen_kv_u64 (g, "value", s->args[i].value);
          if (s->args[i].value_two != 0)
            oj_gen_kv_u64 (g, "valueTwo", s->args[i].value_two);
          oj_gen_kv_string (g, "op", s->args[i].op);
          yajl_gen_map_close (g);
        }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_seccomp (yajl_gen g, const oci_seccomp *s)
{
  if (s == NULL)
    return;
  oj_gen_key (g, "seccomp");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "defaultAction", s->default_action);
  oj_gen_kv_opt_u32 (g, "defaultErrnoRet", s->default_errno_ret);
  oj_gen_kv_strv (g, "architectures", &s->architectures);
  oj_gen_kv_strv (g, "flags", &s->flags);
  oj_gen_kv_string (g, "listenerPath", s->listener_path);
  oj_gen_kv_string (g, "listenerMetadata", s->listener_metadata);
  if (s->syscalls)
    {
      oj_gen_key (g, "syscalls");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < s->n_syscalls; i++)
        emit_syscall (g, &s->syscalls[i]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_personality (yajl_gen g, const oci_personality *p)
{
  if (p == NULL)
    return;
  oj_gen_key (g, "personality");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "domain", p->domain);
  oj_gen_kv_strv (g, "flags", &p->flags);
  yajl_gen_map_close (g);
}

static bool
time_offset_present (const oci_time_offset *t)
{
  return t->secs.set || t->nanosecs.set;
}

static void
emit_time_offset (yajl_gen g, const char *key, const oci_time_offset *t)
{
  if (!time_offset_present (t))
    return;
  oj_gen_key (g, key);
  yajl_gen_map_open (g);
  oj_gen_kv_opt_i64 (g, "secs", t->secs);
  oj_gen_kv_opt_u32 (g, "nanosecs", t->nanosecs);
  yajl_gen_map_close (g);
}

static void
emit_time_offsets (yajl_gen g, const oci_linux *l)
{
  if (!time_offset_present (&l->time_monotonic)
      && !time_offset_present (&l->time_boottime))
    return;
  oj_gen_key (g, "timeOffsets");
  yajl_gen_map_open (g);
  emit_time_offset (g, "monotonic", &l->time_monotonic);
  emit_time_offset (g, "boottime", &l->time_boottime);
  yajl_gen_map_close (g);
}

static void
emit_linux (yajl_gen g, const oci_linux *l)
{
  if (l == NULL)
    return;
  oj_gen_key (g, "linux");
  yajl_gen_map_open (g);
  emit_id_mappings (g, "uidMappings", l->uid_mappings, l->n_uid_mappings);
  emit_id_mappings (g, "gidMappings", l->gid_mappings, l->n_gid_mappings);
  oj_gen_kv_map (g, "sysctl", &l->sysctl);
  emit_resources (g, l->resources);
  oj_gen_kv_string (g, "cgroupsPath", l->cgroups_path);
  emit_namespaces (g, l->namespaces, l->n_namespaces);
  emit_devices (g, l->devices, l->n_devices);
  emit_seccomp (g, l->seccomp);
  oj_gen_kv_string (g, "rootfsPropagation", l->rootfs_propagation);
  oj_gen_kv_strv (g, "maskedPaths", &l->masked_paths);
  oj_gen_kv_strv (g, "readonlyPaths", &l->readonly_paths);
  oj_gen_kv_string (g, "mountLabel", l->mount_label);
  emit_personality (g, l->personality);
  emit_time_offsets (g, l);
  yajl_gen_map_close (g);
}

char *
oci_spec_to_json (const oci_spec *spec, bool pretty)
{
  /* runc writes config.json with tabs. */
  yajl_gen g = oj_gen_new (pretty, "\t");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "ociVersion", spec->oci_version);
  if (spec->process)
    {
      oj_gen_key (g, "process");
      emit_process (g, spec->process);
    }
  emit_root (g, spec);
  oj_gen_kv_string (g, "hostname", spec->hostname);
  oj_gen_kv_string (g, "domainname", spec->domainname);
  emit_mounts (g, spec->mounts, spec->n_mounts);
  emit_hooks (g, &spec->hooks);
  oj_gen_kv_map (g, "annotations", &spec->annotations);
  emit_linux (g, spec->linux_cfg);
  yajl_gen_map_close (g);
  return oj_gen_finish (g);
}
