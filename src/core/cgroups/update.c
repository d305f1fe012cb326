/* SPDX-License-Identifier: Apache-2.0 */
/* `update`: new linux.resources for the cgroup of a live container. The
 * writes are the ones create makes (ar_cg_v1_apply, ar_cg_v2_apply), aimed
 * at the directories the container's state records. */
#include "config.h"
#include "internal.h"
#include "../../util/cleanup.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The mounted hierarchy that holds `dir`; NULL when none does (the host's
 * mounts changed since create). */
static const ar_cg_hierarchy *
hierarchy_of (const ar_cg_hierarchies *all, const char *dir)
{
  for (size_t i = 0; i < all->len; i++)
    {
      const char *mp = all->items[i].mount_point;
      size_t n = strlen (mp);
      if (strncmp (dir, mp, n) == 0 && dir[n] == '/')
        return &all->items[i];
    }
  return NULL;
}

/* On v2 what counts is what reaches the leaf, not what the root offers:
 * a view of `h` whose controllers are the leaf's cgroup.controllers. */
static int
leaf_view (const ar_cg_hierarchy *h, const char *dir, ar_cg_hierarchy *view,
           char ***owned, ar_error_t **err)
{
  *view = *h;
  if (h->version != AR_CG_V2)
    return 0;
  cleanup_free char *list = NULL;
  if (ar_cg_read (dir, "cgroup.controllers", &list, err) < 0)
    return -1;
  size_t n = 0;
  char **v = xcalloc (1, sizeof *v);
  for (char *save = NULL, *w = strtok_r (list, " ", &save); w;
       w = strtok_r (NULL, " ", &save))
    {
      v = xrealloc (v, (n + 2) * sizeof *v);
      v[n++] = xstrdup (w);
      v[n] = NULL;
    }
  view->controllers = *owned = v;
  return 0;
}

typedef struct
{
  const char *dir;
  ar_cg_hierarchy view;
  char **owned_controllers;
} target;

typedef struct
{
  target *items;
  size_t len;
} targets;

static void
targets_clear (targets *t)
{
  for (size_t i = 0; i < t->len; i++)
    ar_strv_freep (&t->items[i].owned_controllers);
  free (t->items);
}
#define cleanup_targets __attribute__ ((cleanup (targets_clear)))

static int
collect_targets (const ar_cgroup *cg, const ar_cg_hierarchies *all,
                 targets *out, ar_error_t **err)
{
  out->items = xcalloc (cg->n_paths + 1, sizeof *out->items);
  for (size_t i = 0; i < cg->n_paths; i++)
    {
      const ar_cg_hierarchy *h = hierarchy_of (all, cg->paths[i]);
      if (h == NULL)
        return ar_error_set (err, 0,
                             "the container's cgroup `%s` is not in any "
                             "mounted cgroup hierarchy",
                             cg->paths[i]);
      target *t = &out->items[out->len++];
      t->dir = cg->paths[i];
      if (leaf_view (h, t->dir, &t->view, &t->owned_controllers, err) < 0)
        return -1;
    }
  return 0;
}

static const target *
target_with (const targets *t, const char *v1_name, const char *v2_name)
{
  for (size_t i = 0; i < t->len; i++)
    {
      const ar_cg_hierarchy *h = &t->items[i].view;
      if (ar_cg_has_controller (h, h->version == AR_CG_V1 ? v1_name : v2_name))
        return &t->items[i];
    }
  return NULL;
}

/* Refuse what none of the container's cgroups can enforce, before any
 * write, so a bad update changes nothing. */
static int
check_enforceable (const targets *t, const oci_resources *r, ar_error_t **err)
{
  for (size_t i = 0; i < ar_cg_n_resource_controllers; i++)
    {
      const ar_cg_resource_controller *c = &ar_cg_resource_controllers[i];
      if (ar_cg_wants (r, c->v1) && target_with (t, c->v1, c->v2) == NULL)
        return ar_error_set (err, 0,
                             "%s: the container's cgroup has no %s controller",
                             c->what, c->v1);
    }
  if (r->unified.len > 0)
    for (size_t i = 0;; i++)
      {
        if (i == t->len)
          return ar_error_set (err, 0,
                               "unified: the container has no "
                               "cgroup v2 directory");
        if (t->items[i].view.version == AR_CG_V2)
          break;
      }
  return 0;
}

static int
read_u64 (const char *dir, const char *file, uint64_t *out, ar_error_t **err)
{
  cleanup_free char *text = NULL;
  if (ar_cg_read (dir, file, &text, err) < 0)
    return -1;
  char *end;
  *out = strtoull (text, &end, 10);
  if (end == text)
    return ar_error_set (err, 0, "`%s/%s`: not a number: \"%s\"", dir, file,
                         text);
  return 0;
}

/* memory.checkBeforeUpdate: lowering the limit below what the container
 * uses would reclaim or OOM-kill right away; refuse instead. */
static int
check_memory_usage (const targets *t, const oci_memory *m, ar_error_t **err)
{
  if (m == NULL || !m->check_before_update.set || !m->check_before_update.value
      || !m->limit.set || m->limit.value <= 0)
    return 0;
  const target *mt = target_with (t, "memory", "memory");
  uint64_t usage = 0;
  if (mt == NULL
      || read_u64 (mt->dir,
                   mt->view.version == AR_CG_V1 ? "memory.usage_in_bytes"
                                                : "memory.current",
                   &usage, err)
             < 0)
    return mt == NULL ? 0 : -1;
  if ((uint64_t) m->limit.value < usage)
    return ar_error_set (err, 0,
                         "memory.limit %" PRId64 " is below the container's "
                         "current usage %" PRIu64
                         " (memory.checkBeforeUpdate is set)",
                         m->limit.value, usage);
  return 0;
}

/* v1 keeps memory+swap (memsw) at or above the memory limit and answers a
 * bare EINVAL otherwise: say what to do instead. An unlimited memory (-1)
 * lifts memsw too, as runc's does (the v1 writer). */
static int
check_memsw_room (const targets *t, const oci_memory *m, ar_error_t **err)
{
  if (m == NULL || !m->limit.set || m->limit.value <= 0 || m->swap.set)
    return 0;
  const target *mt = target_with (t, "memory", "memory");
  if (mt == NULL || mt->view.version != AR_CG_V1
      || !ar_cg_exists (mt->dir, "memory.memsw.limit_in_bytes"))
    return 0;
  uint64_t memsw = 0;
  if (read_u64 (mt->dir, "memory.memsw.limit_in_bytes", &memsw, err) < 0)
    return -1;
  if ((uint64_t) m->limit.value > memsw)
    return ar_error_set (err, 0,
                         "memory.limit %" PRId64 " is above the current "
                         "memory+swap limit %" PRIu64
                         ": give memory.swap (--memory-swap) as well",
                         m->limit.value, memsw);
  return 0;
}

int
ar_cgroup_update (const ar_cgroup *cg, const oci_resources *r, ar_error_t **err)
{
  if (r == NULL)
    return 0;
  ar_cg_hierarchies all __attribute__ ((cleanup (ar_cg_hierarchies_clear)))
  = { 0 };
  cleanup_targets targets t = { 0 };
  if (ar_cg_discover (&all, err) < 0 || collect_targets (cg, &all, &t, err) < 0
      || check_enforceable (&t, r, err) < 0
      || check_memory_usage (&t, r->memory, err) < 0
      || check_memsw_room (&t, r->memory, err) < 0)
    return -1;
  for (size_t i = 0; i < t.len; i++)
    {
      const target *x = &t.items[i];
      int ret = x->view.version == AR_CG_V1
                    ? ar_cg_v1_apply (&x->view, x->dir, r, err)
                    : ar_cg_v2_apply (&x->view, x->dir, r, err);
      if (ret < 0)
        return -1;
    }
  /* The unit's own properties too, or systemd would put the old values
   * back the next time it applies them (a daemon-reload, say). */
  if (cg->unit)
    return ar_cg_systemd_set_resources (cg->unit, r, err);
  return 0;
}
