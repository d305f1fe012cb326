/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "oci.h"
#include "json.h"

/* Key order follows features.md. */

static void
gen_names (yajl_gen g, const char *key, const oci_names *names)
{
  oj_gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < names->len; i++)
    oj_gen_string (g, names->items[i]);
  yajl_gen_array_close (g);
}

static void
gen_enabled (yajl_gen g, const char *key, bool enabled)
{
  oj_gen_key (g, key);
  yajl_gen_map_open (g);
  oj_gen_kv_bool (g, "enabled", enabled);
  yajl_gen_map_close (g);
}

static void
gen_cgroup (yajl_gen g, const oci_features *f)
{
  oj_gen_key (g, "cgroup");
  yajl_gen_map_open (g);
  oj_gen_kv_bool (g, "v1", f->cgroup_v1);
  oj_gen_kv_bool (g, "v2", f->cgroup_v2);
  oj_gen_kv_bool (g, "systemd", f->cgroup_systemd);
  oj_gen_kv_bool (g, "systemdUser", f->cgroup_systemd_user);
  oj_gen_kv_bool (g, "rdma", f->cgroup_rdma);
  yajl_gen_map_close (g);
}

static void
gen_seccomp (yajl_gen g, const oci_features *f)
{
  oj_gen_key (g, "seccomp");
  yajl_gen_map_open (g);
  oj_gen_kv_bool (g, "enabled", f->seccomp_enabled);
  gen_names (g, "actions", &f->seccomp_actions);
  gen_names (g, "operators", &f->seccomp_operators);
  gen_names (g, "archs", &f->seccomp_archs);
  gen_names (g, "knownFlags", &f->seccomp_known_flags);
  gen_names (g, "supportedFlags", &f->seccomp_supported_flags);
  yajl_gen_map_close (g);
}

static void
gen_linux (yajl_gen g, const oci_features *f)
{
  oj_gen_key (g, "linux");
  yajl_gen_map_open (g);
  gen_names (g, "namespaces", &f->namespaces);
  gen_names (g, "capabilities", &f->capabilities);
  gen_cgroup (g, f);
  gen_seccomp (g, f);
  gen_enabled (g, "apparmor", f->apparmor_enabled);
  gen_enabled (g, "selinux", f->selinux_enabled);
  gen_enabled (g, "intelRdt", f->intel_rdt_enabled);
  oj_gen_key (g, "mountExtensions");
  yajl_gen_map_open (g);
  gen_enabled (g, "idmap", f->idmap_mounts_enabled);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

char *
oci_features_to_json (const oci_features *f)
{
  yajl_gen g = oj_gen_new (true, "\t");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "ociVersionMin", f->oci_version_min);
  oj_gen_kv_string (g, "ociVersionMax", f->oci_version_max);
  gen_names (g, "hooks", &f->hooks);
  gen_names (g, "mountOptions", &f->mount_options);
  gen_linux (g, f);
  if (f->annotations)
    oj_gen_kv_map (g, "annotations", f->annotations);
  yajl_gen_map_close (g);
  return oj_gen_finish (g);
}
