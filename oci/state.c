/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "../src/util/cleanup.h"

static const char *const ns_type_names[OCI_NS_COUNT] = {
  [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "network",
  [OCI_NS_MOUNT] = "mount",   [OCI_NS_IPC] = "ipc",
  [OCI_NS_UTS] = "uts",       [OCI_NS_USER] = "user",
  [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

const char *
oci_ns_type_name (oci_ns_type type)
{
  if ((unsigned) type >= OCI_NS_COUNT)
    return NULL;
  return ns_type_names[type];
}

const oci_namespace *
oci_spec_find_namespace (const oci_spec *spec, oci_ns_type type)
{
  if (spec == NULL || spec->linux_cfg == NULL)
    return NULL;
  const oci_linux *l = spec->linux_cfg;
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type == type)
      return &l->namespaces[i];
  return NULL;
}

void
oci_spec_ensure_namespace (oci_spec *spec, oci_ns_type type)
{
  if (oci_spec_find_namespace (spec, type) != NULL)
    return;
  if (spec->linux_cfg == NULL)
    spec->linux_cfg = xcalloc (1, sizeof *spec->linux_cfg);
  oci_linux *l = spec->linux_cfg;
  l->namespaces
      = xrealloc (l->namespaces, (l->n_namespaces + 1) * sizeof *l->namespaces);
  l->namespaces[l->n_namespaces++]
      = (oci_namespace){ .type = type, .path = NULL };
}

void
oci_spec_append_mount (oci_spec *spec, const char *type, const char *source,
                       const char *destination, const char *const *options)
{
  size_t n = 0;
  while (options[n])
    n++;
  char **items = xcalloc (n + 1, sizeof *items);
  for (size_t i = 0; i < n; i++)
    items[i] = xstrdup (options[i]);
  spec->mounts
      = xrealloc (spec->mounts, (spec->n_mounts + 1) * sizeof *spec->mounts);
  spec->mounts[spec->n_mounts++] = (oci_mount){
    .destination = xstrdup (destination),
    .source = xstrdup (source),
    .type = xstrdup (type),
    .options = { items, n },
  };
}

const char *
oci_map_get (const oci_map *map, const char *key)
{
  if (map == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < map->len; i++)
    if (strcmp (map->items[i].key, key) == 0)
      return map->items[i].value;
  return NULL;
}

static void
gen_state (yajl_gen g, const oci_state *state)
{
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "ociVersion",
                    state->oci_version ? state->oci_version : AR_OCI_VERSION);
  oj_gen_kv_string (g, "id", state->id);
  if (state->pid > 0)
    oj_gen_kv_i64 (g, "pid", state->pid);
  oj_gen_kv_string (g, "status", state->status);
  oj_gen_kv_string (g, "bundle", state->bundle);
  oj_gen_kv_string (g, "rootfs", state->rootfs);
  oj_gen_kv_string (g, "created", state->created);
  oj_gen_kv_string (g, "owner", state->owner);
  if (state->annotations && state->annotations->len > 0)
    oj_gen_kv_map (g, "annotations", state->annotations);
  yajl_gen_map_close (g);
}

/* Key order and two-space indent follow `runc state`. Annotations are
 * left out when there are none, as runc does. */
char *
oci_state_to_json (const oci_state *state, bool pretty)
{
  yajl_gen g = oj_gen_new (pretty, "  ");
  gen_state (g, state);
  return oj_gen_finish (g);
}

char *
oci_container_process_state_to_json (const oci_state *state, pid_t pid,
                                     const char *metadata)
{
  yajl_gen g = oj_gen_new (false, "");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "ociVersion",
                    state->oci_version ? state->oci_version : AR_OCI_VERSION);
  oj_gen_key (g, "fds");
  yajl_gen_array_open (g);
  yajl_gen_string (g, (const unsigned char *) "seccompFd",
                   strlen ("seccompFd"));
  yajl_gen_array_close (g);
  oj_gen_kv_i64 (g, "pid", pid);
  oj_gen_kv_string (g, "metadata", metadata ? metadata : "");
  oj_gen_key (g, "state");
  gen_state (g, state);
  yajl_gen_map_close (g);
  return oj_gen_finish (g);
}

void
oci_strv_set (oci_strv *v, char *const *items, size_t n)
{
  for (size_t i = 0; i < v->len; i++)
    free (v->items[i]);
  free (v->items);
  v->items = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    v->items[i] = xstrdup (items[i]);
  v->len = n;
}

void
oci_strv_push (oci_strv *v, const char *item)
{
  v->items = xrealloc (v->items, (v->len + 2) * sizeof (char *));
  v->items[v->len++] = xstrdup (item);
  v->items[v->len] = NULL;
}

bool
oci_strv_has (const oci_strv *v, const char *s)
{
  for (size_t i = 0; i < v->len; i++)
    if (strcmp (v->items[i], s) == 0)
      return true;
  return false;
}

void
oci_env_set (oci_strv *env, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t key_len = eq ? (size_t) (eq - kv) : strlen (kv);
  for (size_t i = 0; i < env->len; i++)
    if (strncmp (env->items[i], kv, key_len) == 0
        && env->items[i][key_len] == '=')
      {
        free (env->items[i]);
        env->items[i] = xstrdup (kv);
        return;
      }
  oci_strv_push (env, kv);
}
