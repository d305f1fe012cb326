/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"

#include <stdlib.h>

/* Every function here accepts partly filled structs: the parser hands
 * them over as they are when it stops at an error. */

static void
free_capabilities (oci_capabilities *caps)
{
  if (caps == NULL)
    return;
  oj_strv_clear (&caps->bounding);
  oj_strv_clear (&caps->effective);
  oj_strv_clear (&caps->inheritable);
  oj_strv_clear (&caps->permitted);
  oj_strv_clear (&caps->ambient);
  free (caps);
}

static void
free_rlimits (oci_rlimit *rlimits, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (rlimits[i].type);
  free (rlimits);
}

static void
free_scheduler (oci_scheduler *s)
{
  if (s == NULL)
    return;
  free (s->policy);
  oj_strv_clear (&s->flags);
  free (s);
}

static void
free_io_priority (oci_io_priority *io)
{
  if (io == NULL)
    return;
  free (io->class);
  free (io);
}

void
oci_process_free (oci_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  free (p->user.username);
  oj_strv_clear (&p->args);
  free (p->command_line);
  oj_strv_clear (&p->env);
  free (p->cwd);
  free_capabilities (p->capabilities);
  free_rlimits (p->rlimits, p->n_rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free_scheduler (p->scheduler);
  free_io_priority (p->io_priority);
  free (p);
}

static void
free_mounts (oci_mount *mounts, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (mounts[i].destination);
      free (mounts[i].source);
      free (mounts[i].type);
      oj_strv_clear (&mounts[i].options);
      free (mounts[i].uid_mappings);
      free (mounts[i].gid_mappings);
    }
  free (mounts);
}

static void
free_hook_list (oci_hook_list *list)
{
  for (size_t i = 0; i < list->len; i++)
    {
      free (list->items[i].path);
      oj_strv_clear (&list->items[i].args);
      oj_strv_clear (&list->items[i].env);
    }
  free (list->items);
}

static void
free_hooks (oci_hooks *h)
{
  free_hook_list (&h->prestart);
  free_hook_list (&h->create_runtime);
  free_hook_list (&h->create_container);
  free_hook_list (&h->start_container);
  free_hook_list (&h->poststart);
  free_hook_list (&h->poststop);
}

static void
free_cpu (oci_cpu *cpu)
{
  if (cpu == NULL)
    return;
  free (cpu->cpus);
  free (cpu->mems);
  free (cpu);
}

static void
free_blkio (oci_blkio *b)
{
  if (b == NULL)
    return;
  free (b->weight_device);
  free (b->throttle_read_bps);
  free (b->throttle_write_bps);
  free (b->throttle_read_iops);
  free (b->throttle_write_iops);
  free (b);
}

static void
free_resources (oci_resources *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_devices; i++)
    {
      free (r->devices[i].type);
      free (r->devices[i].access);
    }
  free (r->devices);
  free (r->memory);
  free_cpu (r->cpu);
  free_blkio (r->block_io);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    free (r->hugepage_limits[i].page_size);
  free (r->hugepage_limits);
  for (size_t i = 0; i < r->n_net_priorities; i++)
    free (r->net_priorities[i].name);
  free (r->net_priorities);
  for (size_t i = 0; i < r->n_rdma; i++)
    free (r->rdma[i].device);
  free (r->rdma);
  oj_map_clear (&r->unified);
  free (r);
}

void
oci_resources_free (oci_resources *resources)
{
  free_resources (resources);
}

static void
free_syscalls (oci_syscall *syscalls, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      oj_strv_clear (&syscalls[i].names);
      free (syscalls[i].action);
      for (size_t j = 0; j < syscalls[i].n_args; j++)
        free (syscalls[i].args[j].op);
      free (syscalls[i].args);
    }
  free (syscalls);
}

static void
free_seccomp (oci_seccomp *s)
{
  if (s == NULL)
    return;
  free (s->default_action);
  oj_strv_clear (&s->architectures);
  oj_strv_clear (&s->flags);
  free (s->listener_path);
  free (s->listener_metadata);
  free_syscalls (s->syscalls, s->n_syscalls);
  free (s);
}

static void
free_personality (oci_personality *p)
{
  if (p == NULL)
    return;
  free (p->domain);
  oj_strv_clear (&p->flags);
  free (p);
}

static void
free_linux (oci_linux *l)
{
  if (l == NULL)
    return;
  free (l->uid_mappings);
  free (l->gid_mappings);
  oj_map_clear (&l->sysctl);
  free_resources (l->resources);
  free (l->cgroups_path);
  for (size_t i = 0; i < l->n_namespaces; i++)
    free (l->namespaces[i].path);
  free (l->namespaces);
  for (size_t i = 0; i < l->n_devices; i++)
    {
      free (l->devices[i].type);
      free (l->devices[i].path);
    }
  free (l->devices);
  free_seccomp (l->seccomp);
  free (l->rootfs_propagation);
  oj_strv_clear (&l->masked_paths);
  oj_strv_clear (&l->readonly_paths);
  free (l->mount_label);
  free_personality (l->personality);
  free (l);
}

void
oci_spec_freep (oci_spec **spec)
{
  oci_spec_free (*spec);
  *spec = NULL;
}

void
oci_spec_free (oci_spec *spec)
{
  if (spec == NULL)
    return;
  free (spec->oci_version);
  free (spec->root_path);
  free_mounts (spec->mounts, spec->n_mounts);
  oci_process_free (spec->process);
  free (spec->hostname);
  free (spec->domainname);
  free_hooks (&spec->hooks);
  oj_map_clear (&spec->annotations);
  free_linux (spec->linux_cfg);
  free (spec);
}
