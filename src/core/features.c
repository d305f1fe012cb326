/* SPDX-License-Identifier: Apache-2.0 */
/* features.json from the tables the runtime itself uses (mounts.c,
 * seccomp.c, libcap, the namespace list), so it cannot drift from what
 * create accepts. */
#include "config.h"
#include "features.h"
#include "mount_options.h"
#include "mounts.h"
#include "seccomp.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <ctype.h>
#include <seccomp.h>
#include <selinux/selinux.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>

/* More than any table of names here holds. */
#define MAX_NAMES 256

typedef struct
{
  const char *items[MAX_NAMES];
  size_t len;
  char *owned[MAX_NAMES]; /* names built here, freed with the list */
  size_t n_owned;
} name_list;

static void
name_list_clear (name_list *l)
{
  for (size_t i = 0; i < l->n_owned; i++)
    free (l->owned[i]);
}
#define cleanup_names __attribute__ ((cleanup (name_list_clear)))

static oci_names
as_names (const name_list *l)
{
  return (oci_names){ l->items, l->len };
}

static void
fill_seccomp (name_list *l, ar_seccomp_vocabulary which)
{
  size_t n = ar_seccomp_names (which, l->items, MAX_NAMES);
  l->len = n < MAX_NAMES ? n : MAX_NAMES;
}

static void
fill_supported_flags (name_list *l)
{
  const char *known[MAX_NAMES];
  size_t n = ar_seccomp_names (AR_SECCOMP_FLAGS, known, MAX_NAMES);
  for (size_t i = 0; i < n && i < MAX_NAMES; i++)
    if (ar_seccomp_flag_supported (known[i]))
      l->items[l->len++] = known[i];
}

/* "CAP_CHOWN" ... for every capability libcap names on this kernel;
 * numbers libcap cannot name are left out. */
static void
fill_capabilities (name_list *l)
{
  int max = (int) cap_max_bits ();
  for (int v = 0; v < max && l->len < MAX_NAMES; v++)
    {
      char *name = cap_to_name ((cap_value_t) v);
      if (name == NULL)
        continue;
      if (strncmp (name, "cap_", 4) == 0)
        {
          char *upper = xstrdup (name);
          for (char *p = upper; *p; p++)
            *p = (char) toupper ((unsigned char) *p);
          l->owned[l->n_owned++] = upper;
          l->items[l->len++] = upper;
        }
      cap_free (name);
    }
}

static void
fill_namespaces (name_list *l)
{
  for (int t = 0; t < OCI_NS_COUNT; t++)
    l->items[l->len++] = oci_ns_type_name ((oci_ns_type) t);
}

/* process.apparmorProfile is applied when the host's LSM is AppArmor. */
static bool
apparmor_enabled (void)
{
  cleanup_file FILE *f
      = fopen ("/sys/module/apparmor/parameters/enabled", "re");
  return f && fgetc (f) == 'Y';
}

static const char *const hooks[]
    = { "prestart",       "createRuntime", "createContainer",
        "startContainer", "poststart",     "poststop" };

char *
ar_features_json (void)
{
  cleanup_names name_list mounts = { 0 }, actions = { 0 }, operators = { 0 },
                          archs = { 0 }, known_flags = { 0 },
                          supported_flags = { 0 }, caps = { 0 },
                          namespaces = { 0 };
  size_t n = ar_mounts_option_names (mounts.items, MAX_NAMES);
  mounts.len = n < MAX_NAMES ? n : MAX_NAMES;
  fill_seccomp (&actions, AR_SECCOMP_ACTIONS);
  fill_seccomp (&operators, AR_SECCOMP_OPERATORS);
  fill_seccomp (&archs, AR_SECCOMP_ARCHS);
  fill_seccomp (&known_flags, AR_SECCOMP_FLAGS);
  fill_supported_flags (&supported_flags);
  fill_capabilities (&caps);
  fill_namespaces (&namespaces);

  const struct scmp_version *v = seccomp_version ();
  char libseccomp[48];
  snprintf (libseccomp, sizeof libseccomp, "%u.%u.%u", v->major, v->minor,
            v->micro);
  char version[] = PACKAGE_VERSION;
  char libseccomp_key[] = "io.github.seccomp.libseccomp.version";
  char version_key[] = "run.agentrun.version";
  oci_kv kv[] = { { libseccomp_key, libseccomp }, { version_key, version } };
  oci_map annotations = { kv, sizeof kv / sizeof kv[0] };

  oci_features f = {
    .oci_version_min = "1.0.0",
    .oci_version_max = AR_OCI_VERSION,
    .hooks = { hooks, sizeof hooks / sizeof hooks[0] },
    .mount_options = as_names (&mounts),
    .namespaces = as_names (&namespaces),
    .capabilities = as_names (&caps),
    .cgroup_v1 = true,
    .cgroup_v2 = true,
    .cgroup_systemd = true, /* --systemd-cgroup */
    .cgroup_rdma = true,
    .idmap_mounts_enabled = true, /* mounts[].uidMappings, "idmap" */
    .seccomp_enabled = true,
    .seccomp_actions = as_names (&actions),
    .seccomp_operators = as_names (&operators),
    .seccomp_archs = as_names (&archs),
    .seccomp_known_flags = as_names (&known_flags),
    .seccomp_supported_flags = as_names (&supported_flags),
    .apparmor_enabled = apparmor_enabled (),
    .selinux_enabled = is_selinux_enabled () > 0,
    .annotations = &annotations,
  };
  return oci_features_to_json (&f);
}
